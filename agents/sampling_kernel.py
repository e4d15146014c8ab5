"""The search bot's world sampling compiled with numba: dealing the hidden cards of sampled
worlds, and shuffling a world's hidden deck afresh.

:func:`startups_env.agents.search.determinize` and ``search._reshuffle_hidden_deck`` are the
reference: they order the cards by random keys with numpy's ``argsort``. The kernels here
take the same keys, drawn by the caller from its generator, and sort them one world at a
time, so they deal exactly the same cards (tests/test_sampling_kernel.py); they only spare
numpy's temporaries, which cost more than the sort.
"""

from __future__ import annotations

import numba
import numpy as np

from startups_env import kernels, queries
from startups_env.rules import DECK_SIZE, MAX_PLAYERS, NUM_COMPANIES, NUM_REMOVED

kernels.forget_stale_cache(__file__, kernels.__file__, queries.__file__)

P, C = MAX_PLAYERS, NUM_COMPANIES


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


@numba.njit(cache=True, nogil=True, _nrt=False)
def deal_hidden_cards(keys, pool, need, pile_pos, hand, deck, sort_keys, sort_cards):
    """For each world i: the ``pool[:, i]`` cards (counts per company), listed by company
    and ordered by ``keys[i, :]`` (slot k of the list has key ``keys[i, k]``), go first to
    the hands, ``need[p, i]`` to seat p in seat order (added to ``hand``), then to the pile
    (deck positions ``pile_pos[i]``..44) and the removed cards (positions 0..4); the rest
    of ``deck`` is -1. ``sort_keys`` / ``sort_cards``: float64[45] / int64[45] scratch."""
    for i in range(keys.shape[0]):
        total = 0
        for c in range(C):
            for _ in range(pool[c, i]):
                sort_cards[total] = c
                sort_keys[total] = keys[i, total]
                total += 1
        _sort_by_key(sort_keys, sort_cards, total)
        k = 0
        for p in range(P):
            for _ in range(need[p, i]):
                hand[p, sort_cards[k], i] += 1
                k += 1
        for pos in range(DECK_SIZE):
            deck[pos, i] = -1
        for pos in range(pile_pos[i], DECK_SIZE):
            deck[pos, i] = sort_cards[k]
            k += 1
        for pos in range(NUM_REMOVED):
            deck[pos, i] = sort_cards[k]
            k += 1


@numba.njit(cache=True, nogil=True, _nrt=False)
def shuffle_hidden_deck(keys, pile_pos, deck, sort_keys, sort_cards):
    """For each world i, reorder the cards at its hidden deck positions (the removed cards,
    0..4, and the pile still to draw, ``pile_pos[i]``..44) by ``keys[position, i]``: the
    k-th hidden position (in position order) receives the card of the hidden position with
    the k-th smallest key. ``sort_keys`` / ``sort_cards``: float64[45] / int64[45] scratch."""
    for i in range(deck.shape[1]):
        count = 0
        for pos in range(DECK_SIZE):
            if pos < NUM_REMOVED or pos >= pile_pos[i]:
                sort_keys[count] = keys[pos, i]
                sort_cards[count] = deck[pos, i]
                count += 1
        _sort_by_key(sort_keys, sort_cards, count)
        k = 0
        for pos in range(DECK_SIZE):
            if pos < NUM_REMOVED or pos >= pile_pos[i]:
                deck[pos, i] = sort_cards[k]
                k += 1


def scratch() -> tuple[np.ndarray, np.ndarray]:
    """The kernels' sort buffers."""
    return np.empty(DECK_SIZE, np.float64), np.empty(DECK_SIZE, np.int64)
