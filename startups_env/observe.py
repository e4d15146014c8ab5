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

import numpy as np

from .core import State, _gather_seat
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
    """
    b = state.batch_size
    seat = state.current if seat is None else np.asarray(seat)
    if seat.shape != (b,):
        raise ValueError(f"seat must have shape [{b}], got {list(seat.shape)}")
    n = state.num_players.astype(np.intp)
    if ((seat < 0) | (seat >= n)).any():
        raise ValueError("seat out of range of the table size in some games")
    seat = seat.astype(np.intp)
    games = np.arange(b)
    if out is None:
        out = np.empty((b, OBS_DIM), np.float32)
    o = views(out)

    rel = np.arange(P)[:, None]
    absolute = (seat[None, :] + rel) % n[None, :]  # [P, B] absolute seat of each relative seat
    present = rel < n[None, :]

    o["num_players"][:] = 0
    o["num_players"][games, n - MIN_PLAYERS] = 1
    o["phase"][:] = 0
    o["phase"][games, state.phase.astype(np.intp)] = 1
    o["current_player"][:] = 0
    o["current_player"][games, (state.current.astype(np.intp) - seat) % n] = 1
    o["hand"][:] = _gather_seat(state.hand, seat).T
    portfolios = state.portfolio[absolute, :, games[None, :]]  # [P, B, C]
    o["portfolios"][:] = (portfolios * present[:, :, None]).transpose(1, 0, 2)
    o["known_hands"][:] = (state.known[absolute, :, games[None, :]] * present[:, :, None]).transpose(1, 0, 2)
    o["coins"][:] = np.where(present, state.coins[absolute, games[None, :]], 0).T
    chip = state.chip.astype(np.intp)
    holder_rel = (chip - seat[None, :]) % n[None, :]  # [C, B]
    o["chips"][:] = 0
    held = np.nonzero(chip >= 0)
    o["chips"][held[1], held[0], holder_rel[held]] = 1
    o["market_cards"][:] = state.market_count.T
    o["market_coins"][:] = state.market_coins.T
    o["take_coins"][:] = state.market_take_coins().T
    o["pile"][:, 0] = DECK_SIZE - state.pile_pos.astype(np.int16)
    o["barred"][:] = (state.barred[:, None] == np.arange(C)[None, :])
    o["unseen"][:] = state.unseen(seat).T
    o["turn"][:, 0] = state.turn
    o["round"][:] = 0
    o["round"][games, np.minimum(state.round, ROUND_GAME_ROUNDS - 1).astype(np.intp)] = 1
    o["round_points"][:] = np.where(present, state.round_points[absolute, games[None, :]], 0).T
    return out
