"""The compiled engine of one Стартап simulator: the kernels of
:mod:`startups_env.startap.numba_backend` bound to its state, its legal masks kept up to date."""

from __future__ import annotations

import numpy as np

from startups_env.startap import numba_backend as K
from startups_env.startap.observe import OBS_DIM
from startups_env.startap.rules import NUM_ACTIONS
from startups_env.startap.state import P
from startups_env.startups.numba_backend import CallSite
from startups_env.startups.numba_runtime import ThreadChoice


class NumbaEngine:
    """The compiled engine of one :class:`~startups_env.startap.simulator.Simulator`: it keeps
    every game's legal mask up to date (the step writes those of the games it stepped) and
    follows the simulator's state, re-reading its arrays when the state object is replaced."""

    name = "numba"
    # (each kernel called straight at its compiled entry point after the first call)
    _step, _step_threaded = CallSite(K.step_games), CallSite(K.step_games_parallel)
    _step_one, _legal_rows, _deal_rows = CallSite(K.step_one), CallSite(K.legal_rows), CallSite(K.deal_rows)
    _observe_rows, _pick = CallSite(K.observe_rows), CallSite(K.pick_legal)
    _rewards_rows = CallSite(K.rewards_rows)

    def __init__(self, sim):
        self.sim = sim
        self._state = None
        self._arrays = None
        self._empty = None
        # (the kernels write rows of whole sampler words; the mask is their first NUM_ACTIONS columns)
        self._rows = np.zeros((sim.batch_size, K.MASK_ROW), bool)
        self._mask = self._rows[:, :NUM_ACTIONS]
        self._over = np.zeros(sim.batch_size, bool)
        self._threads = ThreadChoice()  # whether the threaded step pays, measured

    def arrays(self) -> K.StateArrays:
        """The simulator's state as :data:`StateArrays` (all masks rewritten if it was replaced)."""
        if self.sim.state is not self._state:
            self._state = self.sim.state
            self._arrays = K.arrays(self._state)
            self._empty = None
            self._legal_rows(self._rows, np.arange(self.sim.batch_size), self._arrays)
        return self._arrays

    def deal(self, games: np.ndarray, players: np.ndarray, decks: dict[str, np.ndarray]) -> None:
        """Deal ``games`` (intp[k]) afresh at ``players`` (int8[k]) seats from ``decks``
        (checked: the three decks in dealing order, int8[k, size] each), compiled
        (:func:`~startups_env.startap.numba_backend.deal_rows`): their first turn starts and
        their masks are written."""
        s = self.arrays()
        if self._empty is None:
            self._empty = K.empty_groups(self._state)
        self._deal_rows(self._rows, games, np.ascontiguousarray(players, np.int8),
                        *(np.ascontiguousarray(decks[name], np.int8)
                          for name in ("project_deck", "opportunity_deck", "incident_deck")), self._empty, s)

    def mask(self) -> np.ndarray:
        """bool[B, NUM_ACTIONS]: the legal masks (the engine's own array: do not change it)."""
        self.arrays()
        return self._mask

    def step(self, actions: np.ndarray, active: np.ndarray) -> np.ndarray | None:
        """Apply ``actions`` (int64[B]) in the active running games; the games that ended, or
        None (and no game changed) if one of those games' actions is out of range or illegal."""
        s = self.arrays()
        b = self.sim.batch_size
        if b < K.PARALLEL_FROM:
            stepped = self._step(actions, active, self._over, self._rows, s)
        else:  # (threaded where that pays here and now)
            stepped = self._threads.run(self._step, self._step_threaded, b, actions, active, self._over, self._rows, s)
        if not stepped:
            return None
        return np.flatnonzero(self._over)

    def step_one(self, action: int) -> bool:
        """Apply the legal ``action`` in game 0 (running); whether that ended it."""
        s = self.arrays()
        self._step_one(self._rows, 0, int(action), s)
        return bool(s.terminated[0] or s.truncated[0])

    def observe(self, seats: np.ndarray, games: np.ndarray) -> np.ndarray:
        """float32[k, OBS_DIM]: the observations of ``seats`` in ``games`` (compiled)."""
        out = np.empty((games.shape[0], OBS_DIM), np.float32)
        self._observe_rows(out, np.ascontiguousarray(games, np.intp), np.ascontiguousarray(seats, np.intp), self.arrays())
        return out

    def rewards(self, games: np.ndarray, by_rank: bool) -> np.ndarray:
        """float64[k, P]: the rewards of the ranked seats of ``games`` (intp[k]), by rank or
        (``by_rank`` False) by the win (compiled: :func:`~startups_env.startap.numba_backend.rewards_rows`)."""
        out = np.empty((games.shape[0], P), np.float64)
        self._rewards_rows(out, np.ascontiguousarray(games, np.intp), bool(by_rank), self.arrays())
        return out

    def sample(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """int64[k]: a uniformly random legal action per row of ``mask`` (bool[k,
        NUM_ACTIONS], checked by the simulator; 0 where none), from the same draws as
        numpy's ``uniform_legal``. (The engine's own mask is read in place; another is
        copied into rows of whole words first.)"""
        u = rng.random(mask.shape[0])
        if mask is self._mask:
            rows = self._rows
        else:
            rows = np.zeros((mask.shape[0], K.MASK_ROW), bool)
            rows[:, :NUM_ACTIONS] = mask
        out = np.empty(mask.shape[0], np.int64)
        self._pick(rows, rows.view(np.uint64), u, out)
        return out
