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
from startups_env.startap.engine import start_turn
from startups_env.startap.observe import observe
from startups_env.startups.backend import resolve_backend


class NumpyEngine:
    """The rules on numpy (:mod:`startups_env.startap.moves`), the reference."""

    name = "numpy"

    def __init__(self, sim):
        self.sim = sim
        self._mask: np.ndarray | None = None
        self._state = None

    def dealt(self, games: np.ndarray) -> None:
        """Games were dealt afresh: their first turn starts."""
        start_turn(self.sim.state, games)
        self._mask = None

    def mask(self) -> np.ndarray:
        """bool[B, NUM_ACTIONS]: the legal masks (the engine's own array: do not change it)."""
        if self._mask is None or self._state is not self.sim.state:
            self._state = self.sim.state
            self._mask = moves.legal_mask(self._state)
        return self._mask

    def step(self, g: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Apply the legal actions ``a`` in the running games ``g``; the games that ended."""
        s = self.sim.state
        was_done = s.done.copy()
        moves.apply(s, g, a)
        self._mask = None
        return np.flatnonzero(s.done & ~was_done)

    def observe(self, seats: np.ndarray, games: np.ndarray) -> np.ndarray:
        """float32[k, OBS_DIM]: the observations of ``seats`` in ``games``."""
        return observe(self.sim.state, seats, games)

    #: No sampler of its own: the simulator's ``uniform_legal`` is numpy's.
    sample = None


def make_engine(backend: str | None, sim):
    """The engine named ``backend`` ("numpy", "numba", or None: the fastest installed) for ``sim``."""
    if resolve_backend(backend) == "numba":
        from startups_env.startap.numba_engine import NumbaEngine

        return NumbaEngine(sim)
    return NumpyEngine(sim)
