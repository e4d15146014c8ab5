"""Observations: a declared list of named pieces -> one flat float32 vector per game.

The observation is the same length for every table size (seats padded to 7, with the
player count included) and holds exactly what the observing player may know. Seats are
*relative* to the observer: relative seat 0 is the observer, 1 the next player in turn
order, and so on; seats past the table size are zero.

The documented layout (:func:`layout_table`) is generated from :data:`PIECES`, so the docs
cannot drift from the code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .core import State
from .rules import (
    COMPANY_SIZES,
    DECK_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_COMPANIES,
    ROUND_GAME_ROUNDS,
    STARTING_COINS,
)

P, C = MAX_PLAYERS, NUM_COMPANIES
_TOTAL_COINS = STARTING_COINS * MAX_PLAYERS


@dataclass(frozen=True)
class Piece:
    """One named block of the observation vector."""

    name: str
    shape: tuple[int, ...]
    low: float
    high: float
    doc: str

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


PIECES: tuple[Piece, ...] = (
    Piece("num_players", (MAX_PLAYERS - MIN_PLAYERS + 1,), 0, 1, "one-hot table size, 2..7 players"),
    Piece("phase", (2,), 0, 1, "one-hot phase of the player to act: take, put-down"),
    Piece("current_player", (P,), 0, 1, "one-hot relative seat of the player to act (0 = observer)"),
    Piece("hand", (C,), 0, max(COMPANY_SIZES), "observer's hidden hand: cards per company"),
    Piece("portfolios", (P, C), 0, max(COMPANY_SIZES), "face-up portfolio cards per relative seat and company"),
    Piece("known_hands", (P, C), 0, max(COMPANY_SIZES), "hand cards everyone knows each relative seat holds (taken from the market, not provably played since)"),
    Piece("coins", (P,), 0, _TOTAL_COINS, "1-point coins per relative seat"),
    Piece("chips", (C, P), 0, 1, "per company, one-hot relative seat of the anti-monopoly chip holder (all 0: unclaimed)"),
    Piece("market_cards", (C,), 0, max(COMPANY_SIZES), "market cards per company"),
    Piece("market_coins", (C,), 0, _TOTAL_COINS, "coins on all market cards of each company"),
    Piece("take_coins", (C,), 0, _TOTAL_COINS, "coins on the card a take of each company would take (the richest)"),
    Piece("pile", (1,), 0, DECK_SIZE, "cards left in the pile"),
    Piece("barred", (C,), 0, 1, "one-hot company the player to act may not put into the market this turn"),
    Piece("unseen", (C,), 0, max(COMPANY_SIZES), "cards per company the observer cannot see: others' hands, pile, removed"),
    Piece("turn", (1,), 0, 30000, "completed turns in this round (the turn cap truncates)"),
    Piece("round", (ROUND_GAME_ROUNDS,), 0, 1, "one-hot round of the round game (round 0 in the standard game)"),
    Piece("round_points", (P,), -ROUND_GAME_ROUNDS, 2 * ROUND_GAME_ROUNDS, "round-game points (+2/+1/-1 chips) per relative seat"),
)


def _slices() -> dict[str, slice]:
    out, start = {}, 0
    for piece in PIECES:
        out[piece.name] = slice(start, start + piece.size)
        start += piece.size
    return out


SLICES: dict[str, slice] = _slices()
OBS_DIM: int = sum(p.size for p in PIECES)
OBS_LOW = np.concatenate([np.full(p.size, p.low, np.float32) for p in PIECES])
OBS_HIGH = np.concatenate([np.full(p.size, p.high, np.float32) for p in PIECES])


def views(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Named views of observations [..., OBS_DIM], each reshaped to [..., *piece.shape]."""
    lead = obs.shape[:-1]
    return {p.name: obs[..., SLICES[p.name]].reshape(*lead, *p.shape) for p in PIECES}


def layout_table() -> str:
    """The observation layout as a Markdown table (generated from PIECES)."""
    lines = ["| index | name | shape | range | meaning |", "|---|---|---|---|---|"]
    for p in PIECES:
        sl = SLICES[p.name]
        lines.append(
            f"| {sl.start}-{sl.stop - 1} | `{p.name}` | {list(p.shape)} | [{p.low:g}, {p.high:g}] | {p.doc} |"
        )
    return "\n".join(lines)


def observe(state: State, seat: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """float32[B, OBS_DIM] observations of ``seat`` (int[B]; default: the player to act).

    Only what that player may know enters: their own hand, public portfolios, coins, chips
    and market, the pile size, and counts of cards they cannot see.

    out: optional float32[B, OBS_DIM] C-contiguous array to fill (and return) instead of
    allocating one.

    Written for a small, fixed number of whole-batch numpy operations, because at B = 1
    (the PettingZoo env) their per-call overhead is the whole cost: every piece is one flat
    ``take`` with offsets cached per batch size (and, for one game, per seat and table
    size), and all one-hots are set by a single scatter.
    """
    b = state.batch_size
    seat = state.current if seat is None else np.asarray(seat)
    if seat.shape != (b,):
        raise ValueError(f"seat must have shape [{b}], got {list(seat.shape)}")
    n = state.num_players.astype(np.intp)
    if np.count_nonzero((seat < 0) | (seat >= n)):
        raise ValueError("seat out of range of the table size in some games")
    seat = seat.astype(np.intp)
    if out is None:
        out = np.zeros((b, OBS_DIM), np.float32)
    else:
        if out.shape != (b, OBS_DIM) or out.dtype != np.float32 or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous float32 array of shape [{b}, {OBS_DIM}], "
                             f"got {out.dtype} {list(out.shape)}")
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
    t[_PILE] = DECK_SIZE - state.pile_pos  # int8 is enough: 0 <= pile_pos <= 45
    t[_TURN] = state.turn
    # Unseen (as State.unseen): company size minus the cards of it the observer can see,
    # i.e. its hand, every portfolio, the known cards in the others' hands and the market.
    seen = np.add.reduce(portfolios + known, axis=0, dtype=np.int16) - known[0] + hand + state.market_count
    t[_UNSEEN] = _SIZES_COLUMN - seen

    # One-hots, one row per one-hot block: the value each block encodes (absolute seats
    # made relative below), clipped to the block, plus the block's offset; blocks whose
    # value is -1 (no chip holder, nothing barred) write a 0 instead of a 1.
    hot = np.concatenate((
        (n - MIN_PLAYERS)[None], state.phase[None], state.current[None], state.chip,
        state.barred[None], state.round[None],
    ), dtype=np.intp)  # [11, B]
    ones = hot >= 0
    np.minimum(hot, _HOT_MAX, out=hot)
    hot -= o.hot_shift
    hot %= o.hot_mod
    hot += _HOT_BASE
    hot += o.vector_start
    out.reshape(-1)[hot] = ones
    return out


class _SeatOffsets(NamedTuple):
    """Flat offsets that depend only on the batch size, the observer seats and the table
    sizes (intp arrays, read-only)."""

    cell: np.ndarray  # [P, C, B] offset of [absolute seat of each relative seat, company, game] in a [P, C, B] array
    shown: np.ndarray  # bool[P, 1, B] relative seat is at the table
    seat_cell: np.ndarray  # [P, B] offset of [absolute seat, game] in a [P, B] array
    present: np.ndarray  # bool[P, B]
    own_cell: np.ndarray  # [C, B] offset of [observer, company, game] in a [P, C, B] array
    hot_shift: np.ndarray  # [11, B] observer seat on the one-hot rows that hold seats, else 0
    hot_mod: np.ndarray  # [11, B] table size on those rows, else the block size
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
    absolute = (seat + _REL) % n  # [P, B] absolute seat of each relative seat
    present = _REL < n  # [P, B]
    offsets = _SeatOffsets(
        cell=absolute[:, None, :] * (C * b) + company_rows,
        shown=present[:, None, :],
        seat_cell=absolute * b + games,
        present=present,
        own_cell=seat * (C * b) + company_rows,
        hot_shift=seat * _HOT_RELATIVE,
        hot_mod=np.where(_HOT_RELATIVE, n, _HOT_MOD),
        vector_start=vector_start,
    )
    if b == 1:
        for array in offsets:
            array.flags.writeable = False
        _ONE_GAME_CACHE[key] = offsets
    return offsets


_REL = np.arange(P, dtype=np.intp)[:, None]
_SIZES_COLUMN = np.array(COMPANY_SIZES, np.int16)[:, None]
_PORTFOLIOS, _KNOWN, _COINS, _ROUND_POINTS, _HAND = (SLICES[k] for k in ("portfolios", "known_hands", "coins", "round_points", "hand"))
_MARKET_CARDS, _MARKET_COINS, _TAKE_COINS = (SLICES[k] for k in ("market_cards", "market_coins", "take_coins"))
_PILE, _TURN, _UNSEEN = (SLICES[k] for k in ("pile", "turn", "unseen"))
# The 11 one-hot rows: num_players, phase, current_player, chips (6 companies), barred, round.
_HOT_BASE = np.array(
    [SLICES["num_players"].start, SLICES["phase"].start, SLICES["current_player"].start]
    + [SLICES["chips"].start + c * P for c in range(C)]
    + [SLICES["barred"].start, SLICES["round"].start], np.intp)[:, None]
_HOT_RELATIVE = np.array([0, 0, 1] + [1] * C + [0, 0], np.intp)[:, None]  # 1: a seat, made relative (mod n)
_HOT_MOD = np.array([MAX_PLAYERS] * 3 + [P] * C + [C, ROUND_GAME_ROUNDS], np.intp)[:, None]  # keeps -1 in its block
_HOT_MAX = np.array([MAX_PLAYERS] * (3 + C) + [C, ROUND_GAME_ROUNDS - 1], np.intp)[:, None]  # a finished round game has round = 4

_OFFSET_CACHE: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _offsets(b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(games intp[B], games * OBS_DIM intp[B], c * B + game intp[C, B]), cached per batch size."""
    cached = _OFFSET_CACHE.get(b)
    if cached is None:
        games = np.arange(b, dtype=np.intp)
        cached = (games, games * OBS_DIM, np.arange(C, dtype=np.intp)[:, None] * b + games)
        _OFFSET_CACHE[b] = cached
    return cached
