"""Observations: a declared list of named pieces -> one flat float32 vector per game.

The observation is the same length for every table size (seats padded to 7, with the
player count included) and holds exactly what the observing player may know. Seats are
*relative* to the observer: relative seat 0 is the observer, 1 the next player in turn
order, and so on; seats past the table size are zero.

The documented layout (:func:`layout_table`) is generated from :data:`PIECES`, so the docs
cannot drift from the code.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from startups_env.startups import queries
from startups_env.startups.queries import SIZES_COLUMN, SLOTS, company_rows, read_only
from startups_env.startups.rules import (
    COMPANY_SIZES,
    DECK_SIZE,
    HAND_SIZE,
    MARKET_ROW,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_COMPANIES,
    NUM_REMOVED,
    ROUND_CHIPS,
    ROUND_GAME_ROUNDS,
    STARTING_COINS,
    Rules,
    pile_start,
)
from startups_env.startups.state import State

P, C = MAX_PLAYERS, NUM_COMPANIES


@dataclass(frozen=True)
class Piece:
    """One named block of the observation vector.

    ``bounds(rules)`` gives the piece's (low, high) at a table of ``rules``: what the rules
    allow there, reached in some game (``test_bounds_are_reached_and_never_exceeded``);
    ``range_doc`` writes it for the layout table.
    """

    name: str
    shape: tuple[int, ...]
    bounds: Callable[[Rules], tuple[int, int]]
    range_doc: str
    doc: str

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


def _fixed(low: int, high: int) -> tuple[Callable[[Rules], tuple[int, int]], str]:
    """The (bounds, range_doc) of a piece whose range does not depend on the Rules."""
    return (lambda rules: (low, high)), f"[{low}, {high}]"


_ONE_HOT = _fixed(0, 1)
_CARDS = _fixed(0, max(COMPANY_SIZES))  # all of a company's cards in one place
_HAND_CARDS = _fixed(0, HAND_SIZE + 1)  # a hand holds 3 cards, 4 between a take and a put-down
# Every coin of the table (10 per player) can end up with one player or on one company's cards.
_COINS = (lambda rules: (0, STARTING_COINS * rules.num_players)), f"[0, {STARTING_COINS}N]"


_LOWEST_TAKE = -(DECK_SIZE - NUM_REMOVED - 1)  # market_row: a take's price is its place in the row, < 40


def _take_coin_bounds(rules: Rules) -> tuple[int, int]:
    """The coins on a card, or on a market row (no coins on cards) minus the take's price."""
    return (_LOWEST_TAKE, 0) if rules.market_row else (0, STARTING_COINS * rules.num_players)


def _round_points(rules: Rules) -> tuple[int, int]:
    """+2 for every round won down to -1 for every round lost. In the standard game the points
    stay 0; the piece gets the width-1 range [0, 1] there rather than [0, 0], because
    bound-based normalisers (SuperSuit's normalize_obs_v0, gymnasium's RescaleObservation)
    divide by high - low."""
    if rules.rounds == 1:
        return 0, 1
    return ROUND_CHIPS[-1] * rules.rounds, ROUND_CHIPS[0] * rules.rounds


PIECES: tuple[Piece, ...] = (
    Piece("num_players", (MAX_PLAYERS - MIN_PLAYERS + 1,), *_ONE_HOT, "one-hot table size, 2..7 players"),
    Piece("phase", (2,), *_ONE_HOT, "one-hot phase of the player to act: take, put-down"),
    Piece("current_player", (P,), *_ONE_HOT, "one-hot relative seat of the player to act (0 = observer)"),
    Piece("hand", (C,), *_HAND_CARDS, "observer's hidden hand: cards per company"),
    Piece("portfolios", (P, C), *_CARDS, "face-up portfolio cards per relative seat and company"),
    Piece("known_hands", (P, C), *_HAND_CARDS, "hand cards everyone knows each relative seat holds (taken from the market, not provably played since)"),
    Piece("coins", (P,), *_COINS, "1-point coins per relative seat"),
    Piece("chips", (C, P), *_ONE_HOT, "per company, one-hot relative seat of the anti-monopoly chip holder (all 0: unclaimed)"),
    Piece("market_cards", (C,), *_CARDS, "market cards per company"),
    Piece("market_coins", (C,), *_COINS, "coins on all market cards of each company"),
    Piece("take_coins", (C,), _take_coin_bounds, f"[0, {STARTING_COINS}N]; market_row: [{_LOWEST_TAKE}, 0]",
          "coins on the card a take of each company would take (the richest); market_row: minus the take's price"),
    Piece("pile", (1,), lambda rules: (0, DECK_SIZE - pile_start(rules.num_players)),
          f"[0, {DECK_SIZE - NUM_REMOVED} - {HAND_SIZE}N]", "cards left in the pile"),
    Piece("barred", (C,), *_ONE_HOT, "one-hot company the player to act may not put into the market this turn"),
    Piece("unseen", (C,), *_CARDS, "cards per company the observer cannot see: others' hands, pile, removed"),
    Piece("turn", (1,), lambda rules: (0, rules.turn_cap), "[0, turn_cap]",
          "completed turns in this round (the turn cap truncates)"),
    Piece("round", (ROUND_GAME_ROUNDS,), *_ONE_HOT, "one-hot round of the round game (round 0 in the standard game)"),
    Piece("round_points", (P,), _round_points,
          f"[{ROUND_CHIPS[-1] * ROUND_GAME_ROUNDS}, {ROUND_CHIPS[0] * ROUND_GAME_ROUNDS}] (round game), [0, 1] (standard game: always 0)",
          "round-game points (+2/+1/-1 chips) per relative seat"),
)


def _slices() -> dict[str, slice]:
    out, start = {}, 0
    for piece in PIECES:
        out[piece.name] = slice(start, start + piece.size)
        start += piece.size
    return out


SLICES: dict[str, slice] = _slices()
OBS_DIM: int = sum(p.size for p in PIECES)


@functools.lru_cache(maxsize=64)
def observation_bounds(rules: Rules, players: tuple[int, ...] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32[OBS_DIM] of the observation at tables of ``rules``, piece by
    piece (:attr:`Piece.bounds`); read-only. ``players``: table sizes mixed in one batch
    (default ``rules.num_players``): the widest range over them."""
    sizes = (rules.num_players,) if players is None else tuple(operator.index(n) for n in players)
    per_size = [[p.bounds(replace(rules, num_players=n)) for p in PIECES] for n in sizes]
    lows = [min(b[i][0] for b in per_size) for i in range(len(PIECES))]
    highs = [max(b[i][1] for b in per_size) for i in range(len(PIECES))]
    low = np.concatenate([np.full(p.size, v, np.float32) for p, v in zip(PIECES, lows)])
    high = np.concatenate([np.full(p.size, v, np.float32) for p, v in zip(PIECES, highs)])
    return read_only(low, high)


# ----------------------------------------------------------------- the global state
#: The hidden part of the global state (:func:`hidden_observation`): what no single player
#: may know. The AEC env's ``state()`` is the observation of seat 0 followed by these, so
#: with the public pieces above it holds the whole deal.
HIDDEN_PIECES: tuple[Piece, ...] = (
    Piece("hands", (P, C), *_HAND_CARDS, "every seat's hand, cards per company, by relative seat (0 = the seat observed)"),
    Piece("pile_cards", (C,), *_CARDS, "cards per company left in the pile"),
    Piece("removed", (C,), *_fixed(0, NUM_REMOVED), "cards per company removed unseen at the deal"),
)
HIDDEN_DIM: int = sum(p.size for p in HIDDEN_PIECES)
STATE_PIECES: tuple[Piece, ...] = PIECES + HIDDEN_PIECES
STATE_DIM: int = OBS_DIM + HIDDEN_DIM


def hidden_observation(state: State, seat) -> np.ndarray:
    """float32[B, HIDDEN_DIM]: what ``seat`` (int[B]) may *not* know (:data:`HIDDEN_PIECES`):
    every seat's hand in relative seat order (0 = ``seat``; padded seats 0), then the cards
    per company left in the pile, then the removed cards per company. Raw counts. For
    centralised critics only (the trainer's privileged critic, ``raw_env.state()``); a policy
    must never get it."""
    b = state.batch_size
    seat = np.asarray(seat).astype(np.intp)
    if seat.shape != (b,):
        raise ValueError(f"seat must have shape [{b}], got {list(seat.shape)}")
    games = np.arange(b)
    absolute, present = queries.absolute_seats(seat, state.num_players)  # [P, B]
    hands = state.hand[absolute, :, games[None, :]] * present[:, :, None]  # [P, B, C]
    cards = state.deck[:, :, None] == np.arange(NUM_COMPANIES, dtype=np.int8)  # [45, B, C]
    pile = (cards & queries.in_pile(state.pile_pos)[:, :, None]).sum(axis=0)
    removed = cards[queries.REMOVED].sum(axis=0)
    return np.concatenate([hands.transpose(1, 0, 2).reshape(b, -1), pile, removed], axis=1).astype(np.float32)


@functools.lru_cache(maxsize=64)
def state_bounds(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32[STATE_DIM] of the global state at tables of ``rules``; read-only."""
    low, high = observation_bounds(rules)
    hidden = [p.bounds(rules) for p in HIDDEN_PIECES]
    low = np.concatenate([low] + [np.full(p.size, b[0], np.float32) for p, b in zip(HIDDEN_PIECES, hidden)])
    high = np.concatenate([high] + [np.full(p.size, b[1], np.float32) for p, b in zip(HIDDEN_PIECES, hidden)])
    return read_only(low, high)


def state_layout_table() -> str:
    """The global state's layout (``raw_env.state()``) as a Markdown table."""
    lines = ["| index | name | shape | range | meaning |", "|---|---|---|---|---|"]
    start = 0
    for p in STATE_PIECES:
        lines.append(f"| {start}-{start + p.size - 1} | `{p.name}` | {list(p.shape)} | {p.range_doc} | {p.doc} |")
        start += p.size
    return "\n".join(lines)


def views(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Named views of observations [..., OBS_DIM], each reshaped to [..., *piece.shape]."""
    obs = np.asarray(obs)
    # (checked here: a wrong width would otherwise surface as a reshape error of one piece)
    if obs.ndim == 0 or obs.shape[-1] != OBS_DIM:
        raise ValueError(f"obs must have shape [..., {OBS_DIM}] (observation vectors), got {list(obs.shape)}")
    lead = obs.shape[:-1]
    return {p.name: obs[..., SLICES[p.name]].reshape(*lead, *p.shape) for p in PIECES}


def layout_table() -> str:
    """The observation layout as a Markdown table (generated from PIECES); N is the table size."""
    lines = ["| index | name | shape | range | meaning |", "|---|---|---|---|---|"]
    for p in PIECES:
        sl = SLICES[p.name]
        lines.append(f"| {sl.start}-{sl.stop - 1} | `{p.name}` | {list(p.shape)} | {p.range_doc} | {p.doc} |")
    return "\n".join(lines)


def observe(state: State, seat: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """float32[B, OBS_DIM] observations of ``seat`` (int[B]; default: the player to act).

    Only what that player may know enters: their own hand, public portfolios, coins, chips
    and market, the pile size, and counts of cards they cannot see.

    out: optional float32[B, OBS_DIM] C-contiguous array to fill (and return) instead of
    allocating one.

    A single game (the PettingZoo env) is encoded from Python scalars (:func:`observe_one_game`),
    because there numpy's per-call overhead is the whole cost; batches use whole-batch numpy
    operations (:func:`_observe_batch`). Both give bit-identical vectors (a test checks).
    """
    b = state.batch_size
    seat = state.current if seat is None else np.asarray(seat)
    if seat.shape != (b,):
        raise ValueError(f"seat must have shape [{b}], got {list(seat.shape)}")
    if seat.dtype.kind not in "iu":  # (bool is kind "b": True would silently observe seat 1, 1.7 seat 1)
        raise ValueError(f"seat must be integer seats, got dtype {seat.dtype}")
    if out is not None and (out.shape != (b, OBS_DIM) or out.dtype != np.float32 or not out.flags.c_contiguous):
        raise ValueError(f"out must be a C-contiguous float32 array of shape [{b}, {OBS_DIM}], "
                         f"got {out.dtype} {list(out.shape)}")
    if b == 1:
        return observe_one_game(state, seat[0], out)
    return _observe_batch(state, seat, out)


_SEAT_RANGE_ERROR = "seat out of range of the table size in some games"


def _observe_batch(state: State, seat: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """The whole-batch encoding (any B; ``seat`` and ``out`` already shape-checked).

    Written for a small, fixed number of whole-batch numpy operations: every piece is one
    flat ``take`` with offsets cached per batch size, and all one-hots are set by a single
    scatter.
    """
    b = state.batch_size
    n = state.num_players.astype(np.intp)
    if np.count_nonzero((seat < 0) | (seat >= n)):
        raise ValueError(_SEAT_RANGE_ERROR)
    seat = seat.astype(np.intp)
    if out is None:
        out = np.zeros((b, OBS_DIM), np.float32)
    else:
        out.fill(0)  # the one-hot pieces below only set their ones
    t = out.T  # [OBS_DIM, B]: one row per feature, like the state's game-last arrays
    o = _seat_offsets(b, seat, n)
    portfolios = state.portfolio.reshape(-1).take(o.cell) * o.shown  # [P, C, B] by relative seat
    known = state.known.reshape(-1).take(o.cell) * o.shown
    hand = state.hand.reshape(-1).take(o.own_cell)  # [C, B]
    t[_PORTFOLIOS] = portfolios.reshape(P * C, b)
    t[_KNOWN] = known.reshape(P * C, b)
    t[_HAND] = hand
    t[_COINS] = state.coins.reshape(-1).take(o.seat_cell) * o.present
    t[_ROUND_POINTS] = state.round_points.reshape(-1).take(o.seat_cell) * o.present
    t[_MARKET_CARDS] = state.market_count
    t[_MARKET_COINS] = state.market_coins
    t[_TAKE_COINS] = state.market_take_coins()
    t[_PILE] = queries.pile_left(state.pile_pos)  # int8 is enough: 0 <= pile_pos <= 45
    t[_TURN] = state.turn
    # Unseen (as State.unseen), from the pieces gathered above (seat 0 is the observer).
    public = np.add.reduce(portfolios + known, axis=0, dtype=np.int16)
    t[_UNSEEN] = queries.unseen_count(SIZES_COLUMN, public, hand, known[0], state.market_count)

    # One-hots, one row per one-hot block: the value each block encodes (absolute seats
    # made relative below), clipped to the block, plus the block's offset; blocks whose
    # value is -1 (no chip holder, nothing barred) write a 0 instead of a 1.
    hot = np.concatenate((
        (n - MIN_PLAYERS)[None], state.phase[None], state.current[None], state.chip,
        state.barred[None], state.round[None],
    ), dtype=np.intp)  # [11, B]
    ones = hot >= 0
    np.minimum(hot, _HOT_MAX, out=hot)
    hot[_HOT_SEATS] = queries.relative_seat(hot[_HOT_SEATS], seat, n)
    hot %= _HOT_MOD  # keeps a -1 (written as a 0) inside its block
    hot += _HOT_BASE
    hot += o.vector_start
    out.reshape(-1)[hot] = ones
    return out


def observe_one_game(state: State, seat, out: np.ndarray | None) -> np.ndarray:
    """The same vector as :func:`_observe_batch` for a batch of one game (``seat`` the
    observer, a scalar), at a fraction of its cost: at B = 1 numpy's per-call overhead is
    the whole cost of its ~40 calls, so here the vector is assembled as int8 bytes
    (``tobytes`` of the int8 state fields, sliced and joined; counts are never negative, so
    Python reads those bytes as the same numbers) and converted to float32 once. Every piece
    follows the batch code above; ``test_one_game_path_matches_the_batch_path`` checks
    bit-identity on random states of every table size.
    """
    s = state
    n = s.num_players.item()
    if not 0 <= seat < n:
        raise ValueError(_SEAT_RANGE_ERROR)
    k = int(seat)  # (as the batch path's astype(intp))
    pad = P - n
    relative = _RELATIVE_HOT[n][k]  # absolute seat (-1: none) -> one-hot of its relative seat
    # int8 fields as bytes; entry a * C + c is [seat a, company c].
    hand, port, known = s.hand.tobytes(), s.portfolio.tobytes(), s.known.tobytes()
    count, head = s.market_count.tobytes(), s.market_head.tobytes()
    # The seats in relative order are two runs of absolute seats (see _SEAT_RUNS): as seat
    # rows (coins, points) and as [seat, company] rows (portfolios, known cards).
    (s0, s1), (c0, c1) = _SEAT_RUNS[n][k]
    zeros = _ZERO_BYTES[:pad * C]
    own_hand, own_known = hand[k * C:(k + 1) * C], known[k * C:(k + 1) * C]
    small = _numbers_of_one_game(s, n, own_hand, own_known, count, head, (s0, s1))
    # The int16 and computed pieces are within -128..127 in any real game (70 coins in all, 45
    # cards; unseen <= 10; a take's price on a market row < 45); anything else takes the batch
    # path rather than wrapping around.
    if min(small) < -128 or max(small) > 127:
        return _observe_batch(state, np.full(1, k), out)
    small = bytes([v & 255 for v in small])  # coins [0:7], market coins, take coins and pile [7:20], unseen [20:26]
    turn = s.turn.item()
    points = s.round_points.tobytes()
    vector = b"".join((
        _TABLE_HOT[n - MIN_PLAYERS],
        _PHASE_HOT[s.phase.item()],
        relative[s.current.item()],
        own_hand,
        port[c0], port[c1], zeros,
        known[c0], known[c1], zeros,
        small[:P],
        b"".join([relative[holder] for holder in s.chip.ravel().tolist()]),
        count,
        small[P:P + 2 * C + 1],
        _COMPANY_HOT[s.barred.item()],
        small[P + 2 * C + 1:],
        bytes((turn,)) if 0 <= turn < 128 else b"\0",  # else set below
        _ROUND_HOT[min(s.round.item(), ROUND_GAME_ROUNDS - 1)],
        points[s0], points[s1], _ZERO_BYTES[:pad],
    ))
    if out is None:
        out = np.ndarray((1, OBS_DIM), np.int8, vector).astype(np.float32)
    else:
        out[0] = np.frombuffer(vector, np.int8)
    if not 0 <= turn < 128:
        out[0, _TURN_AT] = turn
    return out


def _numbers_of_one_game(s: State, n: int, own_hand: bytes, own_known: bytes, count: bytes, head: bytes,
                         seat_runs: tuple[slice, slice]) -> list[int]:
    """The int16 and computed pieces of :func:`observe_one_game`, in vector order: coins by
    relative seat (padded), market coins, take coins, the pile, unseen cards."""
    # Unseen, as State.unseen and the batch path. A company's portfolio and known cards are
    # at most its 10 cards, so int8 holds their sum.
    public = np.add.reduce(s.portfolio[:n] + s.known[:n], axis=0, dtype=np.int8).tobytes()
    unseen = list(map(queries.unseen_count, COMPANY_SIZES, public, own_hand, own_known, count))
    # Take coins, as State.market_take_coins: the coins on each company's head card.
    paid, stamp = s.market_paid.ravel().tolist(), s.market_stamp.ravel().tolist()  # stamp entry c * SLOTS + slot
    take = [queries.take_coins(paid[c], stamp[c * SLOTS + head[c]], count[c]) for c in range(C)]
    if s.options.item() & MARKET_ROW:  # less the take's price (market_take_coins)
        take = [coins - price for coins, price in zip(take, queries.row_prices(s.market_order)[:, 0].tolist())]
    coins = s.coins.ravel().tolist()
    coins = coins[seat_runs[0]] + coins[seat_runs[1]] + _ZERO_LIST[:P - n]
    market = s.market_coins.ravel().tolist() + take + [queries.pile_left(s.pile_pos.item())]
    return coins + market + unseen


def _one_hots(size: int) -> tuple[bytes, ...]:
    """One-hot byte strings of ``size`` bytes, indexed by value; a 256-entry tuple, so that
    -1 (index 255: none) gives all zeros."""
    return tuple(bytes(int(i == j) for j in range(size)) for i in range(size)) + (bytes(size),) * (256 - size)


# Byte pieces of the one-game path.
_ZERO_BYTES = bytes(P * C)
_ZERO_LIST = [0] * P
_TABLE_HOT = _one_hots(MAX_PLAYERS - MIN_PLAYERS + 1)
_PHASE_HOT = _one_hots(2)
_SEAT_HOT = _one_hots(P)
_COMPANY_HOT = _one_hots(C)
_ROUND_HOT = _one_hots(ROUND_GAME_ROUNDS)
# _RELATIVE_HOT[n][k][a]: one-hot of absolute seat a relative to observer k at an n-player
# table (a = -1, i.e. 255: all zeros), as the batch path's.
_RELATIVE_HOT = {
    n: tuple(tuple(_SEAT_HOT[queries.relative_seat(a, k, n)] if a < P else _SEAT_HOT[-1] for a in range(256))
             for k in range(n))
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)
}


def _seat_runs(n: int, k: int) -> tuple[tuple[slice, slice], tuple[slice, slice]]:
    """The relative seat order of observer k at an n-player table (queries.absolute_seats)
    as two runs of consecutive absolute seats, each a slice of seat rows and a slice of
    [seat, company] rows (entry a * C + c); the second run may be empty."""
    absolute, _ = queries.absolute_seats(np.array([k]), np.array([n]))
    order = absolute[:n, 0].tolist()
    wrap = next((i for i in range(1, n) if order[i] != order[i - 1] + 1), n)
    runs = [(order[0], order[wrap - 1] + 1), (order[wrap], order[-1] + 1) if wrap < n else (0, 0)]
    return tuple(slice(a, b) for a, b in runs), tuple(slice(a * C, b * C) for a, b in runs)


# _SEAT_RUNS[n][k]: the relative seat order of the one-game path (see _seat_runs).
_SEAT_RUNS = {n: tuple(_seat_runs(n, k) for k in range(n)) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}


class _SeatOffsets(NamedTuple):
    """Flat offsets that depend only on the batch size, the observer seats and the table
    sizes (intp arrays, read-only)."""

    cell: np.ndarray  # [P, C, B] offset of [absolute seat of each relative seat, company, game] in a [P, C, B] array
    shown: np.ndarray  # bool[P, 1, B] relative seat is at the table
    seat_cell: np.ndarray  # [P, B] offset of [absolute seat, game] in a [P, B] array
    present: np.ndarray  # bool[P, B]
    own_cell: np.ndarray  # [C, B] offset of [observer, company, game] in a [P, C, B] array
    vector_start: np.ndarray  # [B] game * OBS_DIM, the flat offset of each game's vector


_ONE_GAME_CACHE: dict[tuple[int, int], _SeatOffsets] = {}


def _seat_offsets(b: int, seat: np.ndarray, n: np.ndarray) -> _SeatOffsets:
    """The offsets for observer seats ``seat`` and table sizes ``n`` (intp[B]). A single
    game has only 27 (seat, table size) pairs, so for B = 1 they are cached."""
    if b == 1:
        key = (int(seat[0]), int(n[0]))
        cached = _ONE_GAME_CACHE.get(key)
        if cached is not None:
            return cached
    games, vector_start, company_rows = _offsets(b)
    absolute, present = queries.absolute_seats(seat, n)  # [P, B] absolute seat of each relative seat; seated
    offsets = _SeatOffsets(
        cell=absolute[:, None, :] * (C * b) + company_rows,
        shown=present[:, None, :],
        seat_cell=absolute * b + games,
        present=present,
        own_cell=seat * (C * b) + company_rows,
        vector_start=vector_start,
    )
    if b == 1:
        for array in offsets:
            array.flags.writeable = False
        _ONE_GAME_CACHE[key] = offsets
    return offsets


_PORTFOLIOS, _KNOWN, _COINS, _ROUND_POINTS, _HAND = (SLICES[k] for k in ("portfolios", "known_hands", "coins", "round_points", "hand"))
_MARKET_CARDS, _MARKET_COINS, _TAKE_COINS = (SLICES[k] for k in ("market_cards", "market_coins", "take_coins"))
_PILE, _TURN, _UNSEEN = (SLICES[k] for k in ("pile", "turn", "unseen"))
_TURN_AT = _TURN.start
# The 11 one-hot rows: num_players, phase, current_player, chips (6 companies), barred, round.
_HOT_BASE = np.array(
    [SLICES["num_players"].start, SLICES["phase"].start, SLICES["current_player"].start]
    + [SLICES["chips"].start + c * P for c in range(C)]
    + [SLICES["barred"].start, SLICES["round"].start], np.intp)[:, None]
_HOT_SEATS = slice(2, 3 + C)  # the one-hot rows that hold seats (current player, chip holders): made relative
_HOT_MOD = np.array([MAX_PLAYERS] * 3 + [P] * C + [C, ROUND_GAME_ROUNDS], np.intp)[:, None]  # keeps -1 in its block
_HOT_MAX = np.array([MAX_PLAYERS] * (3 + C) + [C, ROUND_GAME_ROUNDS - 1], np.intp)[:, None]  # a finished round game has round = 4

@functools.lru_cache(maxsize=16)  # a few batch sizes (rollouts shrink through every size)
def _offsets(b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(games intp[B], games * OBS_DIM intp[B], c * B + game intp[C, B]), read-only, cached per batch size."""
    games = np.arange(b, dtype=np.intp)
    return read_only(games, games * OBS_DIM) + (company_rows(b),)
