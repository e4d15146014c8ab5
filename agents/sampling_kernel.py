"""The search bot's world sampling compiled with numba: dealing the hidden cards of sampled
worlds, shuffling a world's hidden deck afresh, and drawing cards from a pool.

:func:`startups_env.agents.search.determinize`, ``search._reshuffle_hidden_deck`` and
``search._draw_from_pool`` are the reference: they order the cards by random keys with
numpy's ``argsort``. The kernels here take the same keys, drawn by the caller from its
generator, and sort them one world at a time, so they deal exactly the same cards
(tests/test_sampling_kernel.py); they only spare numpy's temporaries, which cost more than
the sort. The worlds are independent: from ``PARALLEL_FROM`` worlds a call they are dealt
on numba's threads, in chunks of ``CHUNK`` worlds, each chunk with its own sort buffers
(:func:`scratch`).
"""

from __future__ import annotations

import numba
import numpy as np

from startups_env import kernels, queries
from startups_env.rules import DECK_SIZE, MAX_PLAYERS, NUM_COMPANIES, NUM_REMOVED

kernels.forget_stale_cache(__file__, kernels.__file__, queries.__file__)

P, C = MAX_PLAYERS, NUM_COMPANIES
CHUNK = 64  # worlds dealt together, with one sort buffer
# Worlds a call from which they are dealt on numba's threads: reshuffling 512 worlds took 97 us
# on the calling thread and 78 on two, 1,024 worlds 331 and 152 (2-core machine, 2026-12-03).
PARALLEL_FROM = 1024


@numba.njit(cache=True, nogil=True, inline="always")
def _sort_by_key(keys, items, count):
    """Sort ``items[:count]`` by ``keys[:count]`` ascending, in place (an insertion sort:
    a world has at most 45 cards)."""
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


def _shuffle_hidden_deck(keys, pile_pos, deck, sort_keys, sort_cards):
    """For each world i, reorder the cards at its hidden deck positions (the removed cards,
    0..4, and the pile still to draw, ``pile_pos[i]``..44) by ``keys[position, i]``: the
    k-th hidden position (in position order) receives the card of the hidden position with
    the k-th smallest key. ``sort_keys`` / ``sort_cards``: :func:`scratch`."""
    for chunk in numba.prange(sort_keys.shape[0]):
        lo, hi = _chunk(chunk, deck.shape[1])
        for i in range(lo, hi):
            count = 0
            for pos in range(DECK_SIZE):
                if pos < NUM_REMOVED or pos >= pile_pos[i]:
                    sort_keys[chunk, count] = keys[pos, i]
                    sort_cards[chunk, count] = deck[pos, i]
                    count += 1
            _sort_by_key(sort_keys[chunk], sort_cards[chunk], count)
            k = 0
            for pos in range(DECK_SIZE):
                if pos < NUM_REMOVED or pos >= pile_pos[i]:
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


_deal_serial, _deal_parallel = kernels.serial_and_parallel(_deal_hidden_cards)
_shuffle_serial, _shuffle_parallel = kernels.serial_and_parallel(_shuffle_hidden_deck)
_draw_serial, _draw_parallel = kernels.serial_and_parallel(_draw_counts)


def _run(serial, parallel, count, *args):
    """One of the kernels over ``count`` worlds, on numba's threads from PARALLEL_FROM on."""
    kernel = parallel if count >= PARALLEL_FROM else serial
    kernel(*args, *scratch(count))


def deal_hidden_cards(keys, pool, need, pile_pos, hand, deck):
    """:func:`_deal_hidden_cards` over every world (``keys`` float64[m, 45], ``pool`` int64[C, m],
    ``need`` int64[7, m], ``pile_pos`` int64[m]; ``hand`` int8[7, C, m] and ``deck``
    int8[45, m] written)."""
    _run(_deal_serial, _deal_parallel, keys.shape[0], keys, pool, need, pile_pos, hand, deck)


def shuffle_hidden_deck(keys, pile_pos, deck):
    """:func:`_shuffle_hidden_deck` over every world (``keys`` float64[45, m], ``pile_pos``
    int64[m]; ``deck`` int8[45, m] shuffled in place)."""
    _run(_shuffle_serial, _shuffle_parallel, deck.shape[1], keys, pile_pos, deck)


def draw_counts(keys, pool, need) -> np.ndarray:
    """int64[C, r]: :func:`_draw_counts` of ``keys`` float64[r, 45], ``pool`` int64[C, r] and
    ``need`` int64[r]."""
    drawn = np.empty(pool.shape, np.int64)
    _run(_draw_serial, _draw_parallel, keys.shape[0], keys, pool, need, drawn)
    return drawn


def scratch(count: int) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' sort buffers for ``count`` worlds: float64 / int64 [chunks, 45], a row
    for each chunk of CHUNK worlds."""
    chunks = (count + CHUNK - 1) // CHUNK
    return np.empty((chunks, DECK_SIZE), np.float64), np.empty((chunks, DECK_SIZE), np.int64)
