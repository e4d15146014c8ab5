"""The search bot's world sampling compiled with numba: dealing the hidden cards of sampled
worlds, drawing cards from a pool, drawing the other seats' hands from their posteriors,
and gathering the rollouts' copies of the worlds.

The numpy functions (:func:`startups_env.startups.state.deal_hidden_cards`,
:func:`~.worlds.count_first_cards`, :func:`~.worlds.hands_from_draws`) are the reference:
they order the cards by random keys with numpy's ``argsort``. The kernels here take the
same keys, drawn by the caller from its generator, and sort them one world at a time, so
they deal exactly the same cards (tests/test_worlds_kernel.py); they only spare numpy's
temporaries, which cost more than the sort. The worlds are independent: from
``PARALLEL_FROM`` worlds a call they are dealt (and their rollout copies gathered) on
numba's threads, in chunks of ``CHUNK`` worlds, each chunk with its own sort buffers
(:func:`scratch`).
"""

from __future__ import annotations

import numba
import numpy as np

from startups_env.startups import numba_backend as kernels
from startups_env.startups import numba_runtime
from startups_env.startups import queries
from startups_env.startups.rules import DECK_SIZE, MAX_PLAYERS, NUM_COMPANIES, NUM_REMOVED

kernels.forget_stale_cache(__file__, kernels.__file__, queries.__file__)
numba_runtime.describe_kernels(__name__, "the search's world drawing", 15)

P, C = MAX_PLAYERS, NUM_COMPANIES
CHUNK = 64  # worlds dealt together, with one sort buffer
# Worlds a call from which they are dealt on numba's threads: reshuffling 512 worlds took 97 us
# on the calling thread and 78 on two, 1,024 worlds 331 and 152 (2-core machine, 2026-12-03).
PARALLEL_FROM = 1024


@numba.njit(cache=True, nogil=True, inline="always")
def _insertion_sort(keys, items, count):
    """Sort ``items[:count]`` by ``keys[:count]`` ascending, in place; fast where they are
    nearly sorted."""
    for a in range(1, count):
        key, item = keys[a], items[a]
        b = a - 1
        while b >= 0 and keys[b] > key:
            keys[b + 1] = keys[b]
            items[b + 1] = items[b]
            b -= 1
        keys[b + 1] = key
        items[b + 1] = item


@numba.njit(cache=True, nogil=True, inline="always")
def _sort_by_key(keys, items, count):
    """Sort ``items[:count]`` by ``keys[:count]`` (uniform in [0, 1)) ascending, in place:
    each into one of ``count`` buckets by its key, then an insertion sort of the nearly
    sorted list (a plain insertion sort's mispredicted branches cost about 1.6 times as
    much at 33-42 cards). The same order as any sort where the keys differ. ``keys`` and
    ``items`` are rows of :func:`scratch`: past slot ``DECK_SIZE`` they hold the spare
    list and the bucket bounds."""
    if count < 12:
        _insertion_sort(keys, items, count)
        return
    spare, bounds = DECK_SIZE, 2 * DECK_SIZE
    for b in range(count + 1):
        items[bounds + b] = 0
    for a in range(count):
        items[bounds + 1 + min(int(keys[a] * count), count - 1)] += 1
    for b in range(count):
        items[bounds + b + 1] += items[bounds + b]
    for a in range(count):
        b = min(int(keys[a] * count), count - 1)
        k = items[bounds + b]
        items[bounds + b] = k + 1
        keys[spare + k] = keys[a]
        items[spare + k] = items[a]
    for a in range(count):
        keys[a] = keys[spare + a]
        items[a] = items[spare + a]
    _insertion_sort(keys, items, count)


@numba.njit(cache=True, nogil=True, inline="always")
def _sorted_pool(keys, pool, i, sort_keys, sort_cards):
    """List the ``pool[:, i]`` cards (counts per company) by company into ``sort_cards``, slot
    k with key ``keys[i, k]``, and sort them by key; returns how many there are."""
    total = 0
    for c in range(C):
        for _ in range(pool[c, i]):
            sort_cards[total] = c
            sort_keys[total] = keys[i, total]
            total += 1
    _sort_by_key(sort_keys, sort_cards, total)
    return total


@numba.njit(cache=True, nogil=True, inline="always")
def _chunk(chunk, count):
    """The worlds lo..hi-1 of chunk ``chunk`` of ``count`` worlds."""
    lo = chunk * CHUNK
    return lo, min(lo + CHUNK, count)


def _deal_hidden_cards(keys, pool, need, pile_pos, hand, deck, sort_keys, sort_cards):
    """For each world i: the ``pool[:, i]`` cards (counts per company), listed by company
    and ordered by ``keys[i, :]`` (slot k of the list has key ``keys[i, k]``), go first to
    the hands, ``need[p, i]`` to seat p in seat order (added to ``hand``), then to the pile
    (deck positions ``pile_pos[i]``..44) and the removed cards (positions 0..4); the rest
    of ``deck`` is -1. ``sort_keys`` / ``sort_cards``: :func:`scratch`."""
    for chunk in numba.prange(sort_keys.shape[0]):
        lo, hi = _chunk(chunk, keys.shape[0])
        for i in range(lo, hi):
            _sorted_pool(keys, pool, i, sort_keys[chunk], sort_cards[chunk])
            k = 0
            for p in range(P):
                for _ in range(need[p, i]):
                    hand[p, sort_cards[chunk, k], i] += 1
                    k += 1
            for pos in range(DECK_SIZE):
                deck[pos, i] = -1
            for pos in range(pile_pos[i], DECK_SIZE):
                deck[pos, i] = sort_cards[chunk, k]
                k += 1
            for pos in range(NUM_REMOVED):
                deck[pos, i] = sort_cards[chunk, k]
                k += 1


def _draw_counts(keys, pool, need, drawn, sort_keys, sort_cards):
    """For each draw i: the ``pool[:, i]`` cards (counts per company), listed by company and
    ordered by ``keys[i, :]`` (as :func:`_deal_hidden_cards` orders them); the first
    ``need[i]`` of them, counted by company, are written to ``drawn[:, i]``. ``sort_keys`` /
    ``sort_cards``: :func:`scratch`."""
    for chunk in numba.prange(sort_keys.shape[0]):
        lo, hi = _chunk(chunk, keys.shape[0])
        for i in range(lo, hi):
            _sorted_pool(keys, pool, i, sort_keys[chunk], sort_cards[chunk])
            for c in range(C):
                drawn[c, i] = 0
            for k in range(need[i]):
                drawn[sort_cards[chunk, k], i] += 1


def _hands_from_draws(cumulative, draws, seats, need, log_deal, pool, game, compositions, valid, log_factorial,
                      hands, log_weight):
    """For each world i (of game ``game[i]``): every seat ``seats[k]`` holds the first
    composition (of its ``need`` hidden cards) whose cumulative chance reaches ``draws[k,
    i]``, written to ``hands[:, :, i]`` (zeros elsewhere); ``log_weight[i]`` is the log-ratio
    of the hands' joint deal from the pool to their separate deals, -inf where together
    they need more cards of a company than the pool holds (then ``hands`` stays 0 there).
    The arithmetic of :func:`.worlds.hands_from_draws`, world by world."""
    for i in numba.prange(game.shape[0]):
        g = game[i]
        log_separate = 0.0
        for k in range(seats.shape[0]):
            s, x = seats[k], draws[k, i]
            size = need[s, g]
            choice = 0
            while choice < cumulative.shape[2] and cumulative[k, g, choice] < x:
                choice += 1
            choice = min(choice, cumulative.shape[2] - 1)
            if not valid[size, choice]:  # (a padding slot, reached only by rounding)
                choice = 0
            for c in range(C):
                hands[s, c, i] = compositions[size, choice, c]
            log_separate += log_deal[s, g, choice]
        dealt_log, held_log, left_log, feasible = 0.0, 0.0, 0.0, True
        pool_total = 0
        for c in range(C):
            total = 0
            for s in range(P):
                total += hands[s, c, i]
            feasible = feasible and total <= pool[c, g]
            dealt_log += log_factorial[pool[c, g]]
            left_log += log_factorial[max(pool[c, g] - total, 0)]
            pool_total += pool[c, g]
        for s in range(P):
            for c in range(C):
                held_log += log_factorial[hands[s, c, i]]
        size_log, size_total = 0.0, 0
        for s in range(P):
            size_log += log_factorial[need[s, g]]
            size_total += need[s, g]
        if not feasible:
            for s in range(P):
                for c in range(C):
                    hands[s, c, i] = 0
            log_weight[i] = -np.inf
            continue
        log_joint = dealt_log - held_log - left_log
        log_joint -= log_factorial[pool_total] - size_log - log_factorial[max(pool_total - size_total, 0)]
        log_weight[i] = log_joint - log_separate


_deal_serial, _deal_parallel = kernels.serial_and_parallel(_deal_hidden_cards)
_draw_serial, _draw_parallel = kernels.serial_and_parallel(_draw_counts)
_hands_serial, _hands_parallel = kernels.serial_and_parallel(_hands_from_draws)


def _run(serial, parallel, count, *args):
    """One of the kernels over ``count`` worlds, on numba's threads from PARALLEL_FROM on."""
    kernel = parallel if count >= PARALLEL_FROM else serial
    kernel(*args, *scratch(count))


def deal_hidden_cards(keys, pool, need, pile_pos, hand, deck):
    """:func:`_deal_hidden_cards` over every world (``keys`` float64[m, 45], ``pool`` int64[C, m],
    ``need`` int64[7, m], ``pile_pos`` int64[m]; ``hand`` int8[7, C, m] and ``deck``
    int8[45, m] written)."""
    _run(_deal_serial, _deal_parallel, keys.shape[0], keys, pool, need, pile_pos, hand, deck)


def draw_counts(keys, pool, need) -> np.ndarray:
    """int64[C, r]: :func:`_draw_counts` of ``keys`` float64[r, 45], ``pool`` int64[C, r] and
    ``need`` int64[r]."""
    drawn = np.empty(pool.shape, np.int64)
    _run(_draw_serial, _draw_parallel, keys.shape[0], keys, pool, need, drawn)
    return drawn


def hands_from_draws(cumulative, draws, seats, need, log_deal, pool, count, compositions, valid, log_factorial
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(int64[7, C, m], float64[m]): :func:`.worlds.sample_hands` from its draws (the arguments of
    :func:`.worlds.hands_from_draws`, and its tables: ``COMPOSITIONS``, ``COMPOSITION_VALID`` and
    the log-factorials): the same hands, the log-weights to rounding (the sums run in
    another order)."""
    game = np.repeat(np.arange(count.size), count)
    hands = np.zeros((P, C, game.size), np.int64)
    log_weight = np.empty(game.size)
    kernel = _hands_parallel if game.size >= PARALLEL_FROM else _hands_serial
    kernel(np.ascontiguousarray(cumulative, np.float64), np.ascontiguousarray(draws, np.float64),
           np.ascontiguousarray(seats, np.int64), np.ascontiguousarray(need, np.int64),
           np.ascontiguousarray(log_deal, np.float64), np.ascontiguousarray(pool, np.int64), game, compositions,
           valid, log_factorial, hands, log_weight)
    return hands, log_weight


def scratch(count: int) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' sort buffers for ``count`` worlds, a row for each chunk of CHUNK
    worlds: keys float64 [chunks, 90] (the list's keys, then the spare list's) and items
    int64 [chunks, 136] (the list, the spare list, the bucket bounds: :func:`_sort_by_key`)."""
    chunks = (count + CHUNK - 1) // CHUNK
    return np.empty((chunks, 2 * DECK_SIZE), np.float64), np.empty((chunks, 3 * DECK_SIZE + 1), np.int64)
