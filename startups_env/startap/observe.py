"""What a seat of *Стартап* may see, as one float32 vector (docs/startap.md, decision 23).

Seats are relative to the observer (0 = the observer, 1 the next clockwise...); seats past
the table size are zero. Public history is in it: who took each revealed project, the
project cards in the discard pile, the opportunity cards played face up. Projects are described card by card (each card is in one place at
a time). Hidden from the observer: the other hands (only their sizes show), the decks (only
their sizes) and the pool's sealed commitments (only who has committed).
"""

from __future__ import annotations

import numpy as np

from startups_env.startap import cards as C
from startups_env.startap import engine as E
from startups_env.startap import rules as R
from startups_env.startap.state import P, S, State

#: (name, size) of each piece, in order.
PER_SEAT = (("coins", 1), ("hired", 1), ("failures", 1), ("backup", 1), ("employees", S), ("free", S),
            ("self_free", 1), ("project_hand_size", 1), ("opportunity_hand_size", 1), ("feature_work", S),
            ("committed", 1))
PER_PROJECT = (("in_own_hand", 1), ("revealed", 1), ("in_progress_seat", P), ("slot", R.SLOTS), ("work_left", S),
               ("weeks_left", 1), ("completed_seat", P), ("features", 1), ("feature_in_progress", 1),
               ("taken_by", P), ("discarded", 1))
PIECES = (("num_players", R.MAX_PLAYERS - R.MIN_PLAYERS + 1), ("phase", R.NUM_PHASES), ("turn", 1),
          ("active", P), ("current", P), ("main_seat", P),
          ("seats", P * sum(size for _n, size in PER_SEAT)),
          ("projects", C.NUM_PROJECTS * sum(size for _n, size in PER_PROJECT)),
          ("own_opportunities", C.NUM_OPPORTUNITIES), ("opportunities_open", C.NUM_OPPORTUNITIES), ("long_work", C.NUM_LONG * S),
          ("incident", len(C.IMMEDIATE_KINDS) + 2), ("pending", 1), ("decks_left", 3),
          ("turn_flags", 4), ("situation", 2), ("offer_seat", P), ("offer_slot", R.SLOTS),
          ("offer_specialty", S), ("offer_price", 1))
OBS_DIM = sum(size for _n, size in PIECES)


def _relative(seats: np.ndarray, observer: np.ndarray, n: np.ndarray) -> np.ndarray:
    """One-hot [k, P] of each absolute seat relative to the observer (all 0 for seat -1)."""
    rel = (seats - observer) % n
    return (np.arange(P)[None, :] == rel[:, None]) & (seats >= 0)[:, None]


def _seat_block(s: State, g: np.ndarray, absolute: np.ndarray, valid: np.ndarray, observer: np.ndarray) -> np.ndarray:
    """float32[k, P, per-seat size]: the public numbers of each relative seat."""
    gi = g[:, None]
    origin = E.pool_origin(s, g)[:, None]
    n = s.num_players[g, None]
    before = (absolute - origin) % n < (s.current[g, None] - origin) % n
    committed = before & s.alive[gi, absolute] & (s.phase[g] == R.COMMIT)[:, None]
    columns = [s.coins[gi, absolute, None], s.hired[gi, absolute, None], s.failures[gi, absolute, None],
               s.backup[gi, absolute, None], s.employees[gi, absolute], s.free[gi, absolute],
               s.self_free[gi, absolute, None], s.project_hand[gi, absolute].sum(-1, keepdims=True),
               s.opportunity_hand[gi, absolute].sum(-1, keepdims=True), s.feature_work[gi, absolute],
               committed[..., None]]
    return np.concatenate([c.astype(np.float32) for c in columns], axis=-1) * valid[..., None]


def _project_block(s: State, g: np.ndarray, observer: np.ndarray) -> np.ndarray:
    """float32[k, 29, per-project size]: where each project card is and how far along."""
    k = g.size
    n = s.num_players[g]
    out = np.zeros((k, C.NUM_PROJECTS, sum(size for _n, size in PER_PROJECT)), np.float32)
    out[:, :, 0] = s.project_hand[g, observer]
    out[np.arange(k), s.revealed[g], 1] = s.revealed[g] >= 0
    rows, seats, slots = np.nonzero(s.slot_card[g] >= 0)
    cards = s.slot_card[g[rows], seats, slots]
    rel = (seats - observer[rows]) % n[rows]
    out[rows, cards, 2 + rel] = 1
    out[rows, cards, 2 + P + slots] = 1
    base = 2 + P + R.SLOTS
    out[rows, cards, base:base + S] = s.slot_work[g[rows], seats, slots]
    out[rows, cards, base + S] = s.slot_deadline[g[rows], seats, slots]
    owner = s.completed_owner[g]
    rows, cards = np.nonzero(owner >= 0)
    out[rows, cards, base + S + 1 + (owner[rows, cards] - observer[rows]) % n[rows]] = 1
    out[:, :, base + S + 1 + P] = s.features[g]
    rows, seats = np.nonzero(s.feature_card[g] >= 0)
    out[rows, s.feature_card[g[rows], seats], base + S + 2 + P] = 1
    taker = s.taken_by[g]
    rows, cards = np.nonzero(taker >= 0)
    out[rows, cards, base + S + 3 + P + (taker[rows, cards] - observer[rows]) % n[rows]] = 1
    out[:, :, -1] = s.project_discard[g]
    return out


def observe(s: State, seats: np.ndarray | None = None, games: np.ndarray | None = None) -> np.ndarray:
    """float32[k, OBS_DIM]: the observation of ``seats`` (default: the seat to act) in
    ``games`` (default: all)."""
    g = np.arange(s.batch_size) if games is None else np.asarray(games, np.intp)
    observer = s.current[g].astype(np.intp) if seats is None else np.asarray(seats, np.intp)
    k, n = g.size, s.num_players[g].astype(np.intp)
    rel = np.arange(P)[None, :]
    absolute = (observer[:, None] + rel) % n[:, None]
    valid = rel < n[:, None]
    offer_seat = s.offer_owner[g]
    incident = s.incident[g]
    kind = np.where(incident >= 0, C.INCIDENT_KIND[incident], -1)
    parts = [
        np.arange(R.MIN_PLAYERS, R.MAX_PLAYERS + 1)[None, :] == n[:, None],
        np.arange(R.NUM_PHASES)[None, :] == s.phase[g, None],
        s.turn[g, None],
        _relative(s.active[g], observer, n), _relative(s.current[g], observer, n),
        _relative(s.main_seat[g], observer, n),
        _seat_block(s, g, absolute, valid, observer).reshape(k, -1),
        _project_block(s, g, observer).reshape(k, -1),
        s.opportunity_hand[g, observer],
        s.opportunity_open[g],
        s.long_work[g].reshape(k, -1),
        np.arange(len(C.IMMEDIATE_KINDS))[None, :] == kind[:, None],
        np.where(incident >= 0, C.INCIDENT_LOSS[incident], 0)[:, None],
        np.where(incident >= 0, C.INCIDENT_AVOID[incident], 0)[:, None],
        s.pending[g, None],
        np.stack([C.NUM_PROJECTS - s.project_next[g], C.NUM_OPPORTUNITIES - s.opportunity_next[g],
                  C.NUM_INCIDENTS - s.incident_next[g]], axis=1),
        np.stack([s.sold[g], s.played_project[g], s.played_opportunity[g], s.offers[g]], axis=1),
        np.array([C.TAX_AUDIT, C.LOST_BACKUP])[None, :] == s.situation[g, None],
        _relative(offer_seat, observer, n),
        np.arange(R.SLOTS)[None, :] == s.offer_slot[g, None],
        np.arange(S)[None, :] == s.offer_specialty[g, None],
        s.offer_price[g, None],
    ]
    out = np.concatenate([np.asarray(p, np.float32).reshape(k, -1) for p in parts], axis=1)
    return out


def _split(block: np.ndarray, pieces) -> dict[str, np.ndarray]:
    out, at = {}, 0
    for name, size in pieces:
        out[name] = block[..., at:at + size] if size > 1 else block[..., at]
        at += size
    return out


def views(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Named pieces of observations float32[B, OBS_DIM]: each piece of :data:`PIECES` as
    [B, size] (or [B] for size 1), except ``"seats"`` (a dict of [B, P, ...] arrays, relative
    seats, pieces of :data:`PER_SEAT`) and ``"projects"`` (a dict of [B, 29, ...] arrays,
    pieces of :data:`PER_PROJECT`)."""
    obs = np.asarray(obs, np.float32)
    if obs.ndim != 2 or obs.shape[1] != OBS_DIM:
        raise ValueError(f"observations must be float32[B, {OBS_DIM}], got {list(obs.shape)}")
    out = _split(obs, PIECES)
    out["seats"] = _split(out["seats"].reshape(len(obs), P, -1), PER_SEAT)
    out["projects"] = _split(out["projects"].reshape(len(obs), C.NUM_PROJECTS, -1), PER_PROJECT)
    return out


# ------------------------------------------------------------------ bounds and scale
#: The numbers among the pieces (everything else is a 0/1 flag), with the size a network
#: divides them by: the win line for coins, the cap for turns, a generous count otherwise.
#: A piece of several columns may name a divisor per column (None: a flag).
NUMBER_SCALE = {
    "turn": R.TURN_CAP, "coins": R.WIN_COINS, "hired": 6, "failures": R.MAX_FAILURES, "backup": R.BACKUP_WORK,
    "employees": 4, "free": 4, "self_free": 2, "project_hand_size": 6, "opportunity_hand_size": 6,
    "feature_work": 4, "work_left": 6, "weeks_left": 6, "features": 4, "long_work": 6, "pending": 10,
    "decks_left": (C.NUM_PROJECTS, C.NUM_OPPORTUNITIES, C.NUM_INCIDENTS), "offer_price": R.MAX_PRICE,
    "incident": (None,) * len(C.IMMEDIATE_KINDS) + (10, 10), "turn_flags": (2, 2, 2, R.MAX_OFFERS),
}


def _columns(pieces) -> list:
    """Per column of ``pieces``: its divisor (a number) or None (a 0/1 flag)."""
    out = []
    for name, size in pieces:
        scale = NUMBER_SCALE.get(name)
        if name == "seats":
            out += _columns(PER_SEAT) * P
        elif name == "projects":
            out += _columns(PER_PROJECT) * C.NUM_PROJECTS
        elif isinstance(scale, tuple):
            out += list(scale)
        else:
            out += [scale] * size
    return out


_COLUMNS = _columns(PIECES)  # (tests check it has OBS_DIM entries)


def observation_bounds(rules=None, players=None) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32[OBS_DIM]: 0 and 1 for the flags; 0 and no upper bound for the
    numbers (coins, counts and work are never negative). The same at every table size."""
    high = np.array([1.0 if c is None else np.inf for c in _COLUMNS], np.float32)
    return np.zeros(OBS_DIM, np.float32), high


def input_scale() -> np.ndarray:
    """float32[OBS_DIM]: what a network multiplies the observation by, 1 / :data:`NUMBER_SCALE`
    for the numbers and 1 for the flags."""
    return np.array([1.0 if c is None else 1.0 / c for c in _COLUMNS], np.float32)
