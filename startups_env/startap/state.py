"""The state of B games of *Стартап* in lockstep (game axis first), and a step's results.

``ranks`` is a strict order (0 = winner): an eliminated seat gets its rank when it is out
(below every seat still in), the others when the game ends. ``place`` is the best rank a
seat shares: seats tied on the tie-break (docs/startap.md, decision 14) have the same place
and share the mean of their ranks' rewards; ``ranks`` orders them by the lot.
``taken_by``, ``project_discard`` and ``opportunity_open`` are public history: who took
each revealed project, the project cards in the discard pile, the opportunity cards played
face up (hired, played, or discarded by an eliminated player)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from startups_env.startap.cards import NUM_INCIDENTS, NUM_LONG, NUM_OPPORTUNITIES, NUM_PROJECTS, NUM_SPECIALTIES
from startups_env.startap.rules import MAX_FAILURES, MAX_PLAYERS, SLOTS

P, S = MAX_PLAYERS, NUM_SPECIALTIES

# name: (dtype, shape after the game axis, the value of an empty game)
LAYOUT = {
    "num_players": (np.int8, (), 0), "turn": (np.int16, (), 0), "active": (np.int8, (), 0),
    "current": (np.int8, (), 0), "phase": (np.int8, (), 0), "main_seat": (np.int8, (), -1),
    "coins": (np.int16, (P,), 0), "hired": (bool, (P,), False), "failures": (np.int8, (P,), 0),
    "backup": (np.int8, (P,), 0), "employees": (np.int8, (P, S), 0), "free": (np.int8, (P, S), 0),
    "self_free": (np.int8, (P,), 0),
    "project_hand": (bool, (P, NUM_PROJECTS), False), "opportunity_hand": (bool, (P, NUM_OPPORTUNITIES), False),
    "slot_card": (np.int8, (P, SLOTS), -1), "slot_work": (np.int8, (P, SLOTS, S), 0),
    "slot_deadline": (np.int8, (P, SLOTS), 0),
    "feature_card": (np.int8, (P,), -1), "feature_work": (np.int8, (P, S), 0),
    "completed_owner": (np.int8, (NUM_PROJECTS,), -1), "features": (np.int8, (NUM_PROJECTS,), 0),
    "long_work": (np.int8, (NUM_LONG, S), 0),
    "project_deck": (np.int8, (NUM_PROJECTS,), 0), "opportunity_deck": (np.int8, (NUM_OPPORTUNITIES,), 0),
    "incident_deck": (np.int8, (NUM_INCIDENTS,), 0),
    "project_next": (np.int8, (), 0), "opportunity_next": (np.int8, (), 0), "incident_next": (np.int8, (), 0),
    "revealed": (np.int8, (), -1), "asked": (np.int8, (), 0),
    "incident": (np.int8, (), -1), "commits": (np.int8, (P,), 0), "committed": (np.int8, (), 0),
    "pending": (np.int8, (), 0),
    "sold": (bool, (), False), "played_project": (bool, (), False), "played_opportunity": (bool, (), False),
    "offers": (np.int8, (), 0), "offer_owner": (np.int8, (), -1), "offer_slot": (np.int8, (), -1),
    "offer_specialty": (np.int8, (), -1), "offer_price": (np.int8, (), 0), "situation": (np.int8, (), -1),
    "terminated": (bool, (), False), "truncated": (bool, (), False), "ranks": (np.int8, (P,), -1),
    "place": (np.int8, (P,), -1), "taken_by": (np.int8, (NUM_PROJECTS,), -1),
    "project_discard": (bool, (NUM_PROJECTS,), False), "opportunity_open": (bool, (NUM_OPPORTUNITIES,), False),
}
#: What no seat may see of another: hands, decks, the pool's sealed commitments.
HIDDEN_FIELDS = ("project_hand", "opportunity_hand", "project_deck", "opportunity_deck", "incident_deck", "commits")


@dataclass
class State:
    """B games; every field's first axis is the game (see :data:`LAYOUT`)."""

    num_players: np.ndarray
    turn: np.ndarray
    active: np.ndarray
    current: np.ndarray
    phase: np.ndarray
    main_seat: np.ndarray
    coins: np.ndarray
    hired: np.ndarray
    failures: np.ndarray
    backup: np.ndarray
    employees: np.ndarray
    free: np.ndarray
    self_free: np.ndarray
    project_hand: np.ndarray
    opportunity_hand: np.ndarray
    slot_card: np.ndarray
    slot_work: np.ndarray
    slot_deadline: np.ndarray
    feature_card: np.ndarray
    feature_work: np.ndarray
    completed_owner: np.ndarray
    features: np.ndarray
    long_work: np.ndarray
    project_deck: np.ndarray
    opportunity_deck: np.ndarray
    incident_deck: np.ndarray
    project_next: np.ndarray
    opportunity_next: np.ndarray
    incident_next: np.ndarray
    revealed: np.ndarray
    asked: np.ndarray
    incident: np.ndarray
    commits: np.ndarray
    committed: np.ndarray
    pending: np.ndarray
    sold: np.ndarray
    played_project: np.ndarray
    played_opportunity: np.ndarray
    offers: np.ndarray
    offer_owner: np.ndarray
    offer_slot: np.ndarray
    offer_specialty: np.ndarray
    offer_price: np.ndarray
    situation: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    ranks: np.ndarray
    place: np.ndarray
    taken_by: np.ndarray
    project_discard: np.ndarray
    opportunity_open: np.ndarray

    @classmethod
    def empty(cls, batch_size: int) -> "State":
        return cls(**{name: np.full((batch_size, *shape), fill, dtype)
                      for name, (dtype, shape, fill) in LAYOUT.items()})

    @property
    def batch_size(self) -> int:
        return self.current.shape[0]

    @property
    def alive(self) -> np.ndarray:
        """bool[B, P]: the seats still in the game (seated, fewer than three failures)."""
        seated = np.arange(P)[None, :] < self.num_players[:, None]
        return seated & (self.failures < MAX_FAILURES)

    @property
    def done(self) -> np.ndarray:
        """bool[B]: the game is over."""
        return self.terminated | self.truncated

    def take(self, games) -> "State":
        """A new State of the selected games (indices may repeat)."""
        games = np.asarray(games, dtype=np.intp)
        return State(**{f.name: getattr(self, f.name)[games] for f in fields(self)})

    def put(self, games, other: "State") -> None:
        """Overwrite the selected games with those of ``other`` (same order)."""
        games = np.asarray(games, dtype=np.intp)
        for f in fields(self):
            getattr(self, f.name)[games] = getattr(other, f.name)

    def clear(self, games) -> None:
        """Reset the selected games to the empty game."""
        for name, (_dtype, _shape, fill) in LAYOUT.items():
            getattr(self, name)[games] = fill

    def copy(self) -> "State":
        return State(**{f.name: getattr(self, f.name).copy() for f in fields(self)})


class StepResult(NamedTuple):
    """One row per game: rewards float32[B, 6] (non-zero on the step a game ends),
    terminated / truncated bool[B] (True from the step a game ends on), scores int16[B, 6]
    (coins) and ranks int8[B, 6] (0 = winner; -1 for empty seats and running games)."""

    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    scores: np.ndarray
    ranks: np.ndarray
