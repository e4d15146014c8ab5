"""The PettingZoo env on its two backends: ``env(backend="numba")`` (the compiled step and
observation) plays the same games as ``env(backend="numpy")``, seed for seed, with the same
observations, masks, rewards, terminations, truncations, infos, agent order and errors; a
backend that is not one raises a clear ValueError."""

import warnings

import numpy as np
import pytest
from helpers import INSTALLED_BACKENDS
from pettingzoo.test import api_test, seed_test

from startups_env import Rules
from startups_env.envs.aec import env


def _step_both(envs, action):
    """Step every env with ``action``; the same outcome (an error or none) everywhere."""
    errors = []
    for e in envs:
        try:
            e.step(action)
            errors.append(None)
        except ValueError as err:
            errors.append(str(err))
    assert errors[0] == errors[1], errors
    return errors[0]


def _same_view(a, b, agent, where):
    oa, ob = a.observe(agent), b.observe(agent)
    for key in ("observation", "action_mask"):
        assert oa[key].dtype == ob[key].dtype and oa[key].shape == ob[key].shape, (where, key)
        assert oa[key].tobytes() == ob[key].tobytes(), (where, agent, key)


def _same_table(a, b, where):
    assert a.agents == b.agents and a.agent_selection == b.agent_selection, where
    for name in ("rewards", "_cumulative_rewards", "terminations", "truncations", "infos"):
        assert getattr(a, name) == getattr(b, name), (where, name)
    if not a.agents:  # (last() has no agent to answer for)
        return
    for x, y in zip(a.last(), b.last()):
        if isinstance(x, dict) and "observation" in x:
            assert all(x[k].tobytes() == y[k].tobytes() for k in x), where
        else:
            assert x == y and type(x) is type(y), where


def _play_both(rules: Rules, seed: int, rng: np.random.Generator) -> int:
    """One random game on both backends, compared at every step; returns its decisions."""
    numpy_env, numba_env = env(rules=rules, backend="numpy"), env(rules=rules, backend="numba")
    both = (numpy_env, numba_env)
    for e in both:
        e.reset(seed=seed)
    assert numba_env.unwrapped.backend == "numba" and numpy_env.unwrapped.backend == "numpy"
    decisions = 0
    for agent in numpy_env.agent_iter():
        where = f"{rules}, seed {seed}, decision {decisions}"
        _same_table(numpy_env, numba_env, where)
        # Every agent's view now and then (the agent on turn's is compared above, by last()).
        if decisions % 7 == 0:
            for other in numpy_env.agents:
                _same_view(numpy_env, numba_env, other, where)
        obs, _reward, termination, truncation, _info = numpy_env.last()
        if termination or truncation:
            _step_both(both, None)
            continue
        mask = obs["action_mask"]
        if decisions % 11 == 5:  # an illegal action: the same error, nothing changes
            illegal = np.flatnonzero(mask == 0)
            assert _step_both(both, int(rng.choice(illegal))) is not None
            _same_table(numpy_env, numba_env, where)
        _step_both(both, int(rng.choice(np.flatnonzero(mask))))
        decisions += 1
    _same_table(numpy_env, numba_env, "after the game")
    return decisions


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6, 7])
def test_numba_backend_plays_the_same_games_as_numpy(players):
    pytest.importorskip("numba")
    rng = np.random.default_rng(players)
    decisions = sum(_play_both(Rules(num_players=players), seed, rng) for seed in range(40))
    assert decisions > 40 * 50


@pytest.mark.parametrize("kwargs", [dict(rounds=4), dict(turn_cap=25), dict(reward="margin")])
def test_numba_backend_same_in_round_game_truncation_and_rewards(kwargs):
    pytest.importorskip("numba")
    rng = np.random.default_rng(1)
    for seed in range(8):
        _play_both(Rules(num_players=3 + seed % 3, **kwargs), seed, rng)


@pytest.mark.parametrize("backend", INSTALLED_BACKENDS)
def test_pettingzoo_api_and_seed_tests_on_each_backend(backend):
    """(test_aec.py runs them on the default backend.)"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # as in test_aec.py
        api_test(env(num_players=3, backend=backend), num_cycles=500)
    seed_test(lambda: env(num_players=4, backend=backend), num_cycles=200)


def test_default_backend_is_numba_where_installed():
    pytest.importorskip("numba")
    assert env().unwrapped.backend == "numba"  # the fastest installed
    assert env(backend=None).unwrapped.sim.backend == "numba"


def test_bad_backend_raises():
    assert env(backend="numpy").unwrapped.backend == "numpy"  # always there
    for bad in ("cuda", "NUMBA", 1):
        with pytest.raises(ValueError, match="backend must be one of"):
            env(backend=bad)
