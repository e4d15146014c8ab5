"""Стартап's search bot, ``search``: the shared determinized search
(:class:`startups_env.agents.search.determinized.DeterminizedSearch`) with Стартап's part:
its record, and a compiled rollout policy that plays on the compiled engine
(:mod:`startups_env.startap.numba_backend`), game by game to the end.

The rollout policy (:func:`rollout_action`), a worker: takes a revealed project while it
has fewer than two in progress, works the project nearest its deadline, starts a project
of its hand (the least work) while it has fewer than two, hires, pays its share into a
pool, asks 1 coin for its work and accepts help, keeps its staff; else done.
"""

from __future__ import annotations

import numba
import numpy as np

from startups_env.startap import cards as C
from startups_env.startap import numba_backend as K
from startups_env.startap import rules as R
from startups_env.startap.game import GAME
from startups_env.startups.numba_backend import forget_stale_cache

from .search.determinized import DeterminizedSearch

# (its kernels inline the engine's rules: a change there must recompile them too)
forget_stale_cache(__file__, K.__file__, C.__file__, R.__file__)

_TOTAL_WORK = C.PROJECT_WORK.sum(axis=1).astype(np.int64)


@numba.njit(cache=True, nogil=True, inline="always")
def in_progress(s, g, p):
    count = 0
    for k in range(R.SLOTS):
        count += s.slot_card[g, p, k] >= 0
    return count


@numba.njit(cache=True, nogil=True, inline="always")
def first_legal(mask, g, lo, hi):
    for a in range(lo, hi):
        if mask[g, a]:
            return a
    return -1


@numba.njit(cache=True, nogil=True, inline="always")
def main_action(mask, g, s, c):
    """The worker's decision in its part 2 (see the module docstring)."""
    best, best_weeks = -1, 100
    for k in range(R.SLOTS):
        for sp in range(C.NUM_SPECIALTIES):
            a = R.WORK_BASE + k * C.NUM_SPECIALTIES + sp
            if mask[g, a] and s.slot_deadline[g, c, k] < best_weeks:
                best, best_weeks = a, s.slot_deadline[g, c, k]
    if best >= 0:
        return best
    if in_progress(s, g, c) < 2:
        best, least = -1, 100
        for card in range(C.NUM_PROJECTS):
            if mask[g, R.PLAY_PROJECT_BASE + card] and _TOTAL_WORK[card] < least:
                best, least = R.PLAY_PROJECT_BASE + card, _TOTAL_WORK[card]
        if best >= 0:
            return best
    hire = first_legal(mask, g, R.HIRE_BASE, R.FRONT_BASE)
    return hire if hire >= 0 else R.DONE


@numba.njit(cache=True, nogil=True)
def rollout_action(mask, g, s):
    """The rollout policy's decision in game g (``mask[g]``: its legal actions)."""
    phase, c = s.phase[g], s.current[g]
    if phase == R.MAIN:
        return main_action(mask, g, s, c)
    if phase == R.PROJECT_OFFER:
        return R.TAKE if mask[g, R.TAKE] and in_progress(s, g, c) < 2 else R.PASS
    if phase == R.ANSWER:
        return R.TAKE if mask[g, R.TAKE] else R.PASS
    if phase == R.COMMIT:
        alive = K.alive_count(s, g)
        share = (np.int64(C.INCIDENT_AVOID[s.incident[g]]) + alive - 1) // alive
        while share > 0 and not mask[g, R.COMMIT_BASE + share]:
            share -= 1
        return R.COMMIT_BASE + share
    if phase == R.PRICE:
        return R.PRICE_BASE
    if phase == R.PAYDAY:
        return R.DONE
    return first_legal(mask, g, 0, R.NUM_ACTIONS)  # a target, a feature's project


@numba.njit(cache=True, nogil=True)
def play_out_games(mask, s):
    """Play every game of ``s`` to its end with :func:`rollout_action`."""
    for g in range(mask.shape[0]):
        while not (s.terminated[g] or s.truncated[g]):
            K.legal_game(mask, g, s)
            K.step_game(g, rollout_action(mask, g, s), s)
        K.legal_game(mask, g, s)


@numba.njit(cache=True, nogil=True)
def rollout_choice(mask, s):
    """The rollout policy's decision in game 0 of ``s`` (its legal mask written into ``mask``)."""
    K.legal_game(mask, 0, s)
    return rollout_action(mask, 0, s)


class StartapSearchAgent(DeterminizedSearch):
    """Стартап's ``search``: worlds from ``GAME.deal_hidden``, rollouts by the compiled worker."""

    game = GAME
    rollout_settings = {"reward": "rank"}  # (a finer signal than the win alone from a few worlds)

    def play_out(self, sim) -> None:
        mask = np.empty((sim.batch_size, R.NUM_ACTIONS), bool)
        play_out_games(mask, K.arrays(sim.state))

    def preferred(self, public, legal: np.ndarray) -> int:
        mask = np.empty((1, R.NUM_ACTIONS), bool)
        return int(rollout_choice(mask, K.arrays(public)))
