"""The compiled engine of one Стартап simulator: the kernels of
:mod:`startups_env.startap.numba_backend` bound to its state, its legal masks kept up to date."""

from __future__ import annotations

import numpy as np

from startups_env.startap import numba_backend as K
from startups_env.startap.observe import OBS_DIM
from startups_env.startap.rules import NUM_ACTIONS
from startups_env.startups.numba_backend import CallSite


class NumbaEngine:
    """The compiled engine of one :class:`~startups_env.startap.simulator.Simulator`: it keeps
    every game's legal mask up to date (the step writes those of the games it stepped) and
    follows the simulator's state, re-reading its arrays when the state object is replaced."""

    name = "numba"
    # (each kernel called straight at its compiled entry point after the first call)
    _step, _step_threaded = CallSite(K.step_games), CallSite(K.step_games_parallel)
    _step_one, _legal_rows, _start_rows = CallSite(K.step_one), CallSite(K.legal_rows), CallSite(K.start_rows)
    _observe_rows, _pick = CallSite(K.observe_rows), CallSite(K.pick_legal)

    def __init__(self, sim):
        self.sim = sim
        self._state = None
        self._arrays = None
        self._mask = np.zeros((sim.batch_size, NUM_ACTIONS), bool)
        self._over = np.zeros(sim.batch_size, bool)

    def arrays(self) -> K.StateArrays:
        """The simulator's state as :data:`StateArrays` (all masks rewritten if it was replaced)."""
        if self.sim.state is not self._state:
            self._state = self.sim.state
            self._arrays = K.arrays(self._state)
            self._legal_rows(self._mask, np.arange(self.sim.batch_size), self._arrays)
        return self._arrays

    def dealt(self, games: np.ndarray) -> None:
        """Games were dealt afresh (by the shared numpy deal): their first turn starts, and
        their masks are written."""
        s = self.arrays()
        games = np.ascontiguousarray(games, np.intp)
        self._start_rows(games, s)
        self._legal_rows(self._mask, games, s)

    def mask(self) -> np.ndarray:
        """bool[B, NUM_ACTIONS]: the legal masks (the engine's own array: do not change it)."""
        self.arrays()
        return self._mask

    def step(self, g: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Apply the legal actions ``a`` in the running games ``g``; the games that ended."""
        s = self.arrays()
        b = self.sim.batch_size
        if g.size == 1:
            self._step_one(self._mask, int(g[0]), int(a[0]), s)
            return g if s.terminated[g[0]] or s.truncated[g[0]] else g[:0]
        actions = np.zeros(b, np.int64)
        actions[g] = a
        active = np.zeros(b, bool)
        active[g] = True
        kernel = self._step_threaded if b >= K.PARALLEL_FROM else self._step
        kernel(actions, active, self._over, self._mask, s)
        return np.flatnonzero(self._over)

    def observe(self, seats: np.ndarray, games: np.ndarray) -> np.ndarray:
        """float32[k, OBS_DIM]: the observations of ``seats`` in ``games`` (compiled)."""
        out = np.empty((games.shape[0], OBS_DIM), np.float32)
        self._observe_rows(out, np.ascontiguousarray(games, np.intp), np.ascontiguousarray(seats, np.intp), self.arrays())
        return out

    def sample(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """int64[B]: a uniformly random legal action per row of ``mask`` (0 where none), from
        the same draws as numpy's ``uniform_legal``."""
        u = rng.random(mask.shape[0])
        out = np.empty(mask.shape[0], np.int64)
        self._pick(np.ascontiguousarray(mask, bool), u, out)
        return out
