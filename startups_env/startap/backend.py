"""The engines of Стартап's rules, and the one place that picks one.

An engine applies the rules to the games of one :class:`~startups_env.startap.simulator.Simulator`
and keeps their legal masks: :class:`NumpyEngine` (whole-batch numpy,
:mod:`startups_env.startap.moves`, the reference) or
:class:`~startups_env.startap.numba_engine.NumbaEngine` (compiled, game by game, proven
equal to it). The simulator resolves its ``backend=`` argument here, once (the names and
the default are the first game's: :func:`startups_env.startups.backend.resolve_backend`).
"""

from __future__ import annotations

import numpy as np

from startups_env.startap import moves
from startups_env.startap.engine import deal, rewards
from startups_env.startap.observe import observe
from startups_env.startap.rules import NUM_ACTIONS
from startups_env.startups.backend import pick_backend

_GAME_ZERO = np.zeros(1, np.intp)


class NumpyEngine:
    """The rules on numpy (:mod:`startups_env.startap.moves`), the reference."""

    name = "numpy"

    def __init__(self, sim):
        self.sim = sim
        self._mask: np.ndarray | None = None
        self._state = None

    def deal(self, games: np.ndarray, players: np.ndarray, decks: dict[str, np.ndarray]) -> None:
        """Deal ``games`` (intp[k]) afresh at ``players`` (int8[k]) seats from ``decks``
        (checked: the three decks in dealing order, int8[k, size] each); their first turn
        starts (:func:`startups_env.startap.engine.deal`)."""
        deal(self.sim.state, games, players, decks)
        self._mask = None

    def mask(self) -> np.ndarray:
        """bool[B, NUM_ACTIONS]: the legal masks (the engine's own array: do not change it)."""
        if self._mask is None or self._state is not self.sim.state:
            self._state = self.sim.state
            self._mask = moves.legal_mask(self._state)
        return self._mask

    def step(self, actions: np.ndarray, active: np.ndarray) -> np.ndarray | None:
        """Apply ``actions`` (int64[B]) in the active running games; the games that ended, or
        None (and no game changed) if one of those games' actions is out of range or illegal."""
        s = self.sim.state
        running = active & ~s.done
        g = np.flatnonzero(running)
        a = actions[g]
        if not ((a >= 0) & (a < NUM_ACTIONS)).all() or not self.mask()[g, a].all():
            return None
        moves.apply(s, g, a)
        self._mask = None
        return np.flatnonzero(running & s.done)

    def step_one(self, action: int) -> bool:
        """Apply the legal ``action`` in game 0 (running); whether that ended it."""
        moves.apply(self.sim.state, _GAME_ZERO, np.array([action], np.int64))
        self._mask = None
        return bool(self.sim.state.done[0])

    def observe(self, seats: np.ndarray, games: np.ndarray) -> np.ndarray:
        """float32[k, OBS_DIM]: the observations of ``seats`` in ``games``."""
        return observe(self.sim.state, seats, games)

    def rewards(self, games: np.ndarray, by_rank: bool) -> np.ndarray:
        """float64[k, P]: the rewards of the ranked seats of ``games`` (intp[k]), by rank or
        (``by_rank`` False) by the win (:func:`startups_env.startap.engine.rewards`)."""
        return rewards(self.sim.state, games, by_rank)

    #: No sampler of its own: the simulator's ``uniform_legal`` is numpy's.
    sample = None


def make_engine(backend: str | None, sim):
    """The engine named ``backend`` ("numpy", "numba", or None: the fastest installed) for ``sim``."""
    return pick_backend({"numpy": NumpyEngine, "numba": "startups_env.startap.numba_engine:NumbaEngine"}, backend)(sim)
