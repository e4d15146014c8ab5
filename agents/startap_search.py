"""Стартап's search bot, ``search``: the shared determinized search
(:class:`startups_env.agents.search.determinized.DeterminizedSearch`) with Стартап's part:
its record, and rollouts that play every seat by the compiled ``builder``
(:func:`startups_env.agents.startap_builder_kernel.builder_action`, equal to the
``builder`` bot) on the compiled engine (:mod:`startups_env.startap.numba_backend`), game
by game to the end. The builder's own choice is the candidate searched first (it wins a tie).
"""

from __future__ import annotations

import numba
import numpy as np

from startups_env.startap import cards as C
from startups_env.startap import numba_backend as K
from startups_env.startap import rules as R
from startups_env.startap.game import GAME
from startups_env.startups import numba_runtime
from startups_env.startups.numba_backend import forget_stale_cache

from . import startap_builder_kernel as B
from .search.determinized import DeterminizedSearch

# (its kernels inline the engine's rules: a change there must recompile them too)
forget_stale_cache(__file__, K.__file__, C.__file__, R.__file__, B.__file__)
numba_runtime.describe_kernels(__name__, "Стартап's search rollouts", 60)


@numba.njit(cache=True, nogil=True, _nrt=False)
def play_out_games(mask, s):
    """Play every game of ``s`` to its end, every seat by the builder."""
    for g in range(mask.shape[0]):
        while not (s.terminated[g] or s.truncated[g]):
            K.legal_game(mask, g, s)
            K.step_game(g, B.builder_action(mask, g, s), s)
        K.legal_game(mask, g, s)


@numba.njit(cache=True, nogil=True, _nrt=False)
def rollout_choice(mask, s):
    """The builder's decision in game 0 of ``s`` (its legal mask written into ``mask``)."""
    K.legal_game(mask, 0, s)
    return B.builder_action(mask, 0, s)


class StartapSearchAgent(DeterminizedSearch):
    """Стартап's ``search``: worlds from ``GAME.deal_hidden``, rollouts by the compiled builder."""

    game = GAME
    rollout_settings = {"reward": "rank"}  # (a finer signal than the win alone from a few worlds)

    def play_out(self, sim) -> None:
        mask = np.empty((sim.batch_size, R.NUM_ACTIONS), bool)
        play_out_games(mask, K.arrays(sim.state))

    def preferred(self, public, legal: np.ndarray) -> int:
        mask = np.empty((1, R.NUM_ACTIONS), bool)
        return int(rollout_choice(mask, K.arrays(public)))
