"""Derived public quantities of a position, each written once.

The simulator (:mod:`startups_env.startups.simulator`) holds the rules; several other places need
numbers that *follow* from a position: the observation (:mod:`startups_env.startups.observe`), the
rule-based bots and their features, the search bot's sampled worlds, the training
adapters. Each such number is computed here and nowhere else, so that a bot cannot drift
from the game it plays:

* seats relative to an observer: :func:`absolute_seats`, :func:`relative_seat`;
* the deck layout (removed cards, dealt hands, pile): :data:`REMOVED`, :data:`HANDS`,
  :func:`in_pile`, :func:`pile_left`;
* the market: :func:`card_coins`, :func:`take_coins`, :func:`market_take_coins`, and where
  it is a row (``Rules.market_row``) :func:`row_prices`;
* a draw's price and the chip: :func:`lacks_chip`, :func:`draw_cost`, :func:`takes_chip`;
* what a seat cannot see: :func:`unseen_count`, :func:`unseen`;
* results: :func:`score_margin`, :func:`rank_value`;
* the uniform legal sampler: :func:`legal_choice`, :func:`uniform_legal`.

Conventions (as :class:`~startups_env.startups.state.State`): arrays keep the **game axis last**
([C, B] per company, [P, B] per seat, [45, B] per deck position); seats are absolute
(0..num_players-1) unless a name says relative; padded seats (>= num_players) hold zeros.
The element-wise pieces (:func:`card_coins`, :func:`take_coins`, :func:`unseen_count`,
:func:`relative_seat`, :func:`takes_chip`, :func:`pile_left`, :func:`rank_value`) are plain
arithmetic: they take numpy arrays of any shape, or Python ints (the one-game observation
builds its vector from Python scalars), and keep the caller's dtype, so that an integer
count stays exact and a float result keeps its precision and order of operations.

This module imports only the rules (:mod:`.rules`); the state, the backends and the bots import it.
"""

from __future__ import annotations

import functools

import numpy as np

from startups_env.startups.rules import (
    COMPANY_SIZES,
    DECK_SIZE,
    HAND_SIZE,
    MARKET_ROW,
    MAX_PLAYERS,
    NUM_COMPANIES,
    NUM_REMOVED,
)

P, C = MAX_PLAYERS, NUM_COMPANIES
SLOTS = max(COMPANY_SIZES)  # market ring-buffer slots per company (see state.State)
SIZES_COLUMN = np.array(COMPANY_SIZES, np.int16)[:, None]  # int16[C, 1] cards of each company
SMALL_BATCH = 32  # up to this many games, one numpy reduction beats a loop over rows


def read_only(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    for array in arrays:
        array.flags.writeable = False
    return arrays


# Offsets cached per batch size, a few sizes only: a search bot's rollouts shrink their
# batches to every size in turn, and an unbounded cache of them held gigabytes.
@functools.lru_cache(maxsize=16)
def company_rows(batch_size: int) -> np.ndarray:
    """intp[C, B] (read-only): c * B + game, the flat offset of row c of a [C, B] array."""
    rows = (np.arange(C)[:, None] * batch_size + np.arange(batch_size)[None, :]).astype(np.intp)
    return read_only(rows)[0]


@functools.lru_cache(maxsize=16)
def _slot_rows(batch_size: int) -> np.ndarray:
    """intp[C, B] (read-only): c * SLOTS * B + game, the flat offset of slot 0 of company c
    in a [C, SLOTS, B] array."""
    rows = (np.arange(C)[:, None] * (SLOTS * batch_size) + np.arange(batch_size)[None, :]).astype(np.intp)
    return read_only(rows)[0]


# ----------------------------------------------------------------------------- seats
_RELATIVE = np.arange(P, dtype=np.intp)[:, None]  # [P, 1] relative seats 0..6


def absolute_seats(seat: np.ndarray, num_players: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The table as ``seat`` sees it. seat, num_players: int[B] (the observer, the table
    size). Returns (absolute intp[P, B], present bool[P, B]): row r is relative seat r,
    0 the observer, 1 the next player in turn order, and so on; ``absolute[r]`` is its
    seat at the table, and ``present[r]`` is False past the table size (where ``absolute``
    wraps round and must not be read)."""
    seat = np.asarray(seat).astype(np.intp, copy=False)
    n = np.asarray(num_players).astype(np.intp, copy=False)
    return (seat + _RELATIVE) % n, _RELATIVE < n


def relative_seat(absolute, seat, num_players):
    """The relative seat of ``absolute`` as ``seat`` sees it, ``(absolute - seat) %
    num_players``: 0 for the observer itself, 1 for the next player, ... Element-wise (arrays
    broadcast; ints give an int); the result has the operands' dtype. Read the other way
    round, it is how many turns back ``seat`` played when ``absolute`` is to act."""
    return (absolute - seat) % num_players


# ----------------------------------------------------------------------------- deck layout
# The canonical deck order of a round (docs/rules.md, "Canonical deck encoding"): positions
# 0..4 the removed cards, then the dealt hands (seat i: HAND_SIZE cards from NUM_REMOVED +
# HAND_SIZE * i), then the pile from ``rules.pile_start(num_players)`` on, drawn from the
# front (``State.pile_pos`` is the next one; 45 when it is used up).
REMOVED = slice(0, NUM_REMOVED)
"""Deck positions of the removed cards (never dealt, never seen in play)."""
HANDS = slice(NUM_REMOVED, NUM_REMOVED + HAND_SIZE * P)
"""Deck positions of the hands dealt to seats 0..6, HAND_SIZE consecutive cards a seat
(only the first ``num_players`` of them are dealt; the pile starts after those)."""
_POSITIONS = np.arange(DECK_SIZE)[:, None]  # [45, 1]


def in_pile(pile_pos: np.ndarray) -> np.ndarray:
    """bool[45, B]: the deck position holds a pile card still to be drawn (at or after
    ``pile_pos`` int[B])."""
    return _POSITIONS >= np.asarray(pile_pos)[None, :]


def pile_left(pile_pos):
    """Cards left in the pile, ``45 - pile_pos`` (element-wise, in ``pile_pos``'s dtype: cast
    first where a wider or a float result is wanted)."""
    return DECK_SIZE - pile_pos


# ----------------------------------------------------------------------------- market
def card_coins(paid, stamp):
    """Coins on a market card: the coins laid on its company since it entered (``paid``, as
    ``State.market_paid``) less those laid before (its ``stamp``). Element-wise."""
    return paid - stamp


def take_coins(paid, head_stamp, count):
    """Coins a take of a company would collect: those on its oldest (richest) market card,
    whose stamp is ``head_stamp``; 0 where the company has no market card (``count`` 0: its
    head slot is stale). Element-wise, in the coins' dtype."""
    return card_coins(paid, head_stamp) * (count > 0)


def market_take_coins(state) -> np.ndarray:
    """int16[C, B]: the coins a take of company c would gain in the games of ``state`` (a
    :class:`~startups_env.startups.state.State`): those on the card it takes (0 if none),
    less its price where the market is a row (:func:`row_prices`: then never positive)."""
    b = state.batch_size
    cell = state.market_head.astype(np.intp) * b + _slot_rows(b)  # flat offset of [c, head, game]
    coins = take_coins(state.market_paid, state.market_stamp.reshape(-1).take(cell), state.market_count)
    if np.count_nonzero(state.options & MARKET_ROW):  # (elsewhere market_order is all -1: every price 0)
        coins -= row_prices(state.market_order)
    return coins


_COMPANY_IDS = np.arange(C, dtype=np.int8)[:, None, None]


def row_prices(market_order: np.ndarray) -> np.ndarray:
    """int16[C, B]: what a take of company c costs where the market is a row
    (``Rules.market_row``): one coin for each card in front of c's front-most card, i.e.
    that card's place in ``market_order`` (int8[45, B], companies in entry order, -1 past
    the end); 0 where c has no market card."""
    return (market_order[None] == _COMPANY_IDS).argmax(axis=1).astype(np.int16)


# ----------------------------------------------------------------------------- draw and chip
def lacks_chip(chip: np.ndarray, seat) -> np.ndarray:
    """bool[C, B]: ``seat`` (int[B], or an int) does not hold company c's anti-monopoly chip
    (``chip`` int[C, B], the holder's seat, -1 none): it may take c from the market, and a
    draw lays a coin on each of c's market cards."""
    return chip != seat


def draw_cost(market_count: np.ndarray, lacks: np.ndarray) -> np.ndarray:
    """[B]: coins a draw lays on the market, one per market card (``market_count`` [C, B])
    of a company whose chip the drawer lacks (``lacks`` bool[C, B], see :func:`lacks_chip`).

    Integer counts give int16 for a few games and the counts' dtype for many (a draw costs
    at most 45 coins); float counts (features read off an observation) give their float
    dtype, exact as the counts are whole numbers."""
    if market_count.shape[1] <= SMALL_BATCH:  # one call
        dtype = np.int16 if market_count.dtype.kind in "iu" else market_count.dtype
        return np.add.reduce(market_count, axis=0, dtype=dtype, where=lacks)
    laid = market_count * lacks
    # (for many games six row adds are several times faster than a reduction over axis 0)
    return laid[0] + laid[1] + laid[2] + laid[3] + laid[4] + laid[5]


def takes_chip(holder, mine, theirs):
    """Whether a seat that has just laid a card of a company face up, and now shows ``mine``
    cards of it, holds that company's chip afterwards: the chip goes to the first owner
    (``holder`` -1: unclaimed), later only to a strictly larger portfolio than the
    holder's (``theirs``; a tie leaves it where it is). A holder adding to its own
    portfolio keeps it (``mine > theirs``). Element-wise, bool."""
    return (holder < 0) | (mine > theirs)


# ----------------------------------------------------------------------------- unseen cards
def unseen_count(size, public, own_hand, own_known, market):
    """Cards of a company a seat cannot see (others' hidden hand cards, the pile, the
    removed cards): the company's ``size`` less what it sees, i.e. ``public`` (every
    seat's portfolio plus the hand cards everyone knows of, summed over seats), its own
    hand cards it holds beyond those known (``own_hand - own_known``) and the ``market``
    cards. Element-wise; pass ``public`` wide enough for the sum (int16)."""
    return size - (public + (own_hand - own_known)) - market


def unseen(state, seat: np.ndarray) -> np.ndarray:
    """int16[C, B]: cards of each company that ``seat`` (int[B]) cannot see (others' hands,
    pile, removed cards); :func:`unseen_count` over a
    :class:`~startups_env.startups.state.State`."""
    cell = seat.astype(np.intp) * (C * seat.shape[0]) + company_rows(seat.shape[0])
    own = state.hand.reshape(-1).take(cell)
    own_known = state.known.reshape(-1).take(cell)
    public = np.add.reduce(state.known + state.portfolio, axis=0, dtype=np.int16)  # each <= 10: no int8 overflow
    return unseen_count(SIZES_COLUMN, public, own, own_known, state.market_count)


# ----------------------------------------------------------------------------- results
def score_margin(values: np.ndarray, seated: np.ndarray) -> np.ndarray:
    """[P, B] in ``values``' float dtype: each seated seat's value (``values`` float[P, B],
    e.g. scores) less the best value among the *other* seated seats (``seated`` bool[P,
    B]); >= 0 for a winner (0 for one tied with another), 0 at empty seats. Exact for whole
    numbers, so float32 and float64 callers get the same margins."""
    value = np.where(seated, values, -np.inf)
    top2 = -np.partition(-value, 1, axis=0)[:2]  # [2, B] best and second-best
    best_other = np.where(value == top2[0][None, :], top2[1][None, :], top2[0][None, :])
    return np.where(seated, value - best_other, 0.0)


def rank_value(rank, num_players):
    """``1 - 2 rank / (num_players - 1)``: +1 for the winner (rank 0) down to -1 for the last.
    Element-wise, in the operands' float dtype (pass float ranks and table sizes)."""
    return 1.0 - 2.0 * rank / (num_players - 1)


# ----------------------------------------------------------------------------- legal sampler
def legal_choice(rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """int8[B]: a legal action per game chosen by the uniform numbers ``u`` (float[B] in
    [0, 1)): the (k+1)-th legal row of ``rows`` (bool[A, B], legal actions game-last, A <= 127)
    for ``k = floor(u * legal count)``, computed in ``u``'s float dtype (the simulator draws
    float32, the bots float64). A game without a legal row gets A - 1.

    With u uniform, every legal action of a game is equally likely."""
    b = rows.shape[1]
    if b <= SMALL_BATCH:
        # Few games: numpy's per-call cost dominates, so count with one cumulative sum.
        seen = np.cumsum(rows, axis=0, dtype=np.int8)  # legal rows up to and including each row
        pick = (u * seen[-1]).astype(np.int8)  # 0..count-1
        # The number of rows before the (pick+1)-th legal one.
        return np.add.reduce(seen[:-1] <= pick, axis=0, dtype=np.int8)
    pick = (u * rows.sum(axis=0, dtype=np.int8)).astype(np.int8)  # 0..count-1
    choice = np.zeros(b, np.int8)
    seen = np.zeros(b, np.int8)
    for row in rows[:-1]:
        seen += row
        choice += seen <= pick
    return choice


def uniform_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """int64[B]: one uniformly random legal action per row of ``mask`` bool[B, A] (0 where a
    row has none), from one float64 draw per row of ``rng``: the bots' and opponents'
    sampler (the simulator's ``random_actions`` draws float32, see :func:`legal_choice`)."""
    mask = np.asarray(mask, bool)
    choice = legal_choice(mask.T, rng.random(mask.shape[0])).astype(np.int64)
    choice *= mask.any(axis=1)
    return choice
