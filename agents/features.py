"""What a rule-based bot reads off an observation, as named float arrays over the batch.

Everything here is computed from the observation vector alone (``startups_env.startups.observe``),
so a bot using it knows exactly what its player may know. Seats are relative: seat 0 is
the observer (the player to act), 1 the next player, and so on.

Like the simulator's State, every array keeps the **game axis last** (one contiguous row
per seat/company), so sums and maxima over seats or companies are a few whole-row
operations; the bots are called on thousands of games per step inside search rollouts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from startups_env.startups import queries
from startups_env.startups.observe import OBS_DIM, PIECES, SLICES
from startups_env.startups.rules import HAND_SIZE, MARKET_ROW, MAX_PLAYERS, MIN_PLAYERS, NUM_COMPANIES

P, C = MAX_PLAYERS, NUM_COMPANIES
_SHAPES = {p.name: p.shape for p in PIECES}


@dataclass
class Features:
    """Float arrays of B observations, game axis last."""

    num_players: np.ndarray  # [B] table size
    put_phase: np.ndarray  # bool[B] the player to act is putting a card down
    hand: np.ndarray  # [C, B] own hand
    portfolios: np.ndarray  # [P, C, B] face-up cards per relative seat
    known: np.ndarray  # [P, C, B] publicly known hand cards per relative seat
    coins: np.ndarray  # [P, B] 1-point coins per relative seat
    chip_holder: np.ndarray  # int[C, B] relative seat of the chip holder, -1 none
    market: np.ndarray  # [C, B] market cards per company
    take_coins: np.ndarray  # [C, B] coins a take of the company would collect
    pile: np.ndarray  # [B] cards left in the pile
    barred: np.ndarray  # bool[C, B] may not put this company into the market this turn
    unseen: np.ndarray  # [C, B] cards I cannot see (others' hands, pile, removed)
    others: np.ndarray  # bool[P, B] relative seats of the other players at the table
    free_draw: np.ndarray  # bool[B] the market is a row (Rules.market_row): drawing costs nothing

    @property
    def batch_size(self) -> int:
        return self.pile.shape[0]

    @property
    def chip_mine(self) -> np.ndarray:
        """bool[C, B] I hold the company's anti-monopoly chip."""
        return self.chip_holder == 0

    @property
    def holdings(self) -> np.ndarray:
        """[C, B] my cards per company that will count at the end (hand + portfolio)."""
        return self.hand + self.portfolios[0]

    def draw_cost(self) -> np.ndarray:
        """[B] coins a draw lays on the market (1 per card of a company whose chip I lack;
        none on a market row)."""
        return queries.draw_cost(self.market, queries.lacks_chip(self.chip_holder, 0)) * ~self.free_draw

    def draw_odds(self) -> np.ndarray:
        """[C, B] chance that a drawn card is of each company (the unseen mix)."""
        return self.unseen / np.maximum(self.unseen.sum(axis=0), 1.0)

    def rivals_shown(self) -> np.ndarray:
        """[C, B] the most cards any rival shows (portfolio + known hand cards)."""
        return ((self.portfolios[1:] + self.known[1:]) * self.others[1:, None, :]).max(axis=0)

    def opponent_estimate(self) -> np.ndarray:
        """[P, C, B] expected cards each other seat holds now: its portfolio, its known hand
        cards, and its unknown hand cards spread like the unseen mix (0 for my seat and
        empty seats)."""
        hidden = np.clip(HAND_SIZE - self.known.sum(axis=1), 0, None) * self.others  # [P, B]
        est = self.portfolios + self.known + hidden[:, None, :] * self.draw_odds()[None]
        return est * self.others[:, None, :]


def features(obs: np.ndarray, rules=None) -> Features:
    """Parse observations float32[B, OBS_DIM] into :class:`Features`; ``rules`` (the
    table's :class:`~startups_env.startups.rules.Rules`, default the rulebook's) say
    whether a draw is free."""
    obs = np.asarray(obs, np.float32)
    if obs.ndim != 2 or obs.shape[1] != OBS_DIM:
        raise ValueError(f"obs must be float32[B, {OBS_DIM}], got shape {list(obs.shape)}")
    t = np.ascontiguousarray(obs.T)  # [OBS_DIM, B]: one row per observation entry
    b = t.shape[1]

    def piece(name: str) -> np.ndarray:
        return t[SLICES[name]].reshape(*_SHAPES[name], b)

    n = np.argmax(piece("num_players"), axis=0) + MIN_PLAYERS
    chips = piece("chips")  # [C, P, B] one-hot relative holder
    holder = np.where(chips.sum(axis=1) > 0, np.argmax(chips, axis=1), -1)
    seats = np.arange(P)[:, None]
    return Features(
        num_players=n.astype(np.float32),
        put_phase=piece("phase")[1] > 0.5,
        hand=piece("hand"),
        portfolios=piece("portfolios"),
        known=piece("known_hands"),
        coins=piece("coins"),
        chip_holder=holder,
        market=piece("market_cards"),
        take_coins=piece("take_coins"),
        pile=piece("pile")[0],
        barred=piece("barred") > 0.5,
        unseen=piece("unseen"),
        others=(seats > 0) & (seats < n[None, :]),
        free_draw=np.full(b, rules is not None and rules.market_row),
    )


def state_features(state) -> Features:
    """:class:`Features` of the player to act in every game of a ``State``, equal to
    ``features(observe(state))`` (a test checks this) without building the observation
    vector. Used inside search rollouts, where every seat of a *sampled* world is played
    by a bot from what that seat could see there; it reads the same fields ``observe``
    does and nothing hidden from the player to act."""
    b = state.batch_size
    games = np.arange(b)
    n = state.num_players.astype(np.intp)
    seat = state.current.astype(np.intp)
    absolute, present = queries.absolute_seats(seat, n)  # [P, B]
    company_rows = np.arange(C)[:, None] * b + games[None, :]  # [C, B]
    cell = absolute[:, None, :] * (C * b) + company_rows[None]  # [P, C, B]
    shown = present[:, None, :]
    chip = state.chip.astype(np.intp)
    holder = np.where(chip >= 0, queries.relative_seat(chip, seat[None, :], n[None, :]), -1)
    f32 = np.float32
    return Features(
        num_players=n.astype(f32),
        put_phase=state.phase == 1,
        hand=state.hand.reshape(-1)[seat[None, :] * (C * b) + company_rows].astype(f32),
        portfolios=(state.portfolio.reshape(-1)[cell] * shown).astype(f32),
        known=(state.known.reshape(-1)[cell] * shown).astype(f32),
        coins=(state.coins.reshape(-1)[absolute * b + games[None, :]] * present).astype(f32),
        chip_holder=holder,
        market=state.market_count.astype(f32),
        take_coins=state.market_take_coins().astype(f32),
        pile=queries.pile_left(state.pile_pos.astype(np.int16)).astype(f32),
        barred=state.barred[None, :] == np.arange(C)[:, None],
        unseen=state.unseen(seat).astype(f32),
        others=(np.arange(P)[:, None] > 0) & present,
        free_draw=(state.options & MARKET_ROW) != 0,
    )
