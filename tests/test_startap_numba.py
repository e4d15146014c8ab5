"""The compiled engine of Стартап (startap/numba_backend.py) equals the numpy engine, the
reference of the rules (itself proven equal to tests/startap_reference.py by
test_startap_parity.py), state for state and mask for mask, on random games at every table
size. ``STARTAP_NUMBA_GAMES`` sets the games per table size (default 300; the issue's
figure is 10,000: ``STARTAP_NUMBA_GAMES=10000 pytest tests/test_startap_numba.py``)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from helpers import run_uncompiled

from startups_env.startap import rules as R
from startups_env.startap.rules import Rules
from startups_env.startap.simulator import Simulator, uniform_legal
from startups_env.startap.observe import observe
from startups_env.startap.state import LAYOUT

pytest.importorskip("numba")

GAMES = int(os.environ.get("STARTAP_NUMBA_GAMES", "300"))


def assert_same_state(a: Simulator, b: Simulator, step: int) -> None:
    for name in LAYOUT:
        x, y = getattr(a.state, name), getattr(b.state, name)
        if not np.array_equal(x, y):
            g = np.flatnonzero((x != y).reshape(x.shape[0], -1).any(axis=1))[0]
            raise AssertionError(f"step {step}, game {g}: {name} differs: numpy {x[g]} numba {y[g]}")


def play_both(num_players, count: int, seed: int, rules: Rules | None = None) -> int:
    """``count`` random games on both engines from the same deal and the same draws; every
    field, every legal mask and every seat's reward so far (the eliminated seats' in running
    games) compared after each step. Returns the decisions played."""
    ref = Simulator(count, num_players=num_players, seed=seed, backend="numpy", rules=rules)
    fast = Simulator(count, num_players=num_players, seed=seed, backend="numba", rules=rules)
    rng_ref, rng_fast = np.random.default_rng(seed + 1), np.random.default_rng(seed + 1)
    games = np.arange(count)
    decisions = step = 0
    while not ref.done.all():
        assert_same_state(ref, fast, step)
        assert np.array_equal(ref.legal_mask(), fast.legal_mask()), f"step {step}: legal masks differ"
        assert np.array_equal(ref.rewards(games, np.float64), fast.rewards(games, np.float64)), f"step {step}: rewards"
        actions = ref.random_actions(rng=rng_ref)
        assert np.array_equal(actions, fast.random_actions(rng=rng_fast)), "the samplers differ"
        a, b = ref.step(actions), fast.step(actions)
        for x, y in zip(a, b):
            assert np.array_equal(x, y), f"step {step}: the step results differ"
        decisions += int((~ref.done).sum())
        step += 1
    assert_same_state(ref, fast, step)
    return decisions


@pytest.mark.parametrize("num_players", range(R.MIN_PLAYERS, R.MAX_PLAYERS + 1))
def test_the_compiled_engine_plays_numpys_games_state_for_state(num_players):
    for start in range(0, GAMES, 500):
        play_both(num_players, min(500, GAMES - start), seed=7919 * num_players + start)


def test_mixed_tables_and_the_one_game_path():
    play_both(np.arange(40) % 5 + 2, 40, seed=3)
    play_both(3, 1, seed=11)  # one game: the env's path (step_one)


def test_rewards_by_rank_equal_numpys():
    play_both(np.arange(200) % 5 + 2, 200, seed=5, rules=Rules(reward="rank"))


def test_re_dealt_games_equal_numpys():
    """reset_games deals on each engine (numpy's engine.deal, the compiled deal_rows), over
    finished games and running ones, at new table sizes: the same states and masks after."""
    sizes = np.arange(64) % 5 + 2
    ref = Simulator(64, num_players=sizes, seed=9, backend="numpy")
    fast = Simulator(64, num_players=sizes, seed=9, backend="numba")
    rng_ref, rng_fast = np.random.default_rng(1), np.random.default_rng(1)
    dealt = 0
    for step in range(1500):
        games = np.flatnonzero(ref.done)
        if step % 50 == 0:
            games = np.union1d(games, [step % 64])  # (a running game, whose fields are all in use)
        ref.reset_games(games, num_players=(games + step) % 5 + 2)
        fast.reset_games(games, num_players=(games + step) % 5 + 2)
        dealt += games.size
        assert_same_state(ref, fast, step)
        assert np.array_equal(ref.legal_mask(), fast.legal_mask()), f"step {step}: legal masks differ"
        actions = ref.random_actions(rng=rng_ref)
        assert np.array_equal(actions, fast.random_actions(rng=rng_fast)), "the samplers differ"
        ref.step(actions)
        fast.step(actions)
    assert dealt > 100


def test_the_compiled_sampler_picks_as_numpys():
    """Random masks of every density, rows with nothing legal or one action at either end,
    and a strided mask: the compiled sampler picks what numpy's uniform_legal picks."""
    rng = np.random.default_rng(0)
    mask = rng.random((600, R.NUM_ACTIONS)) < rng.random((600, 1)) ** 3
    mask[::7] = False
    mask[3::11] = False
    mask[3::11, R.NUM_ACTIONS - 1] = True
    mask[5::13] = False
    mask[5::13, 0] = True
    sim = Simulator(1, backend="numba")
    for seed, rows in enumerate((mask, mask[::3], mask[1:])):
        expected = uniform_legal(rows, np.random.default_rng(seed))
        assert np.array_equal(sim.random_actions(rows, rng=np.random.default_rng(seed)), expected)
        assert rows[np.arange(len(rows)), expected][rows.any(axis=1)].all()
    with pytest.raises(ValueError, match="mask must be a bool array"):
        sim.random_actions(np.ones((2, 5), bool))


def test_an_illegal_action_leaves_every_game_unchanged_on_the_compiled_engine():
    sim = Simulator(4, num_players=3, seed=0, backend="numba")
    before = sim.state.copy()
    actions = sim.random_actions()
    actions[2] = np.flatnonzero(~sim.legal_mask()[2])[0]
    with pytest.raises(ValueError, match="illegal"):
        sim.step(actions)
    for name in LAYOUT:
        assert np.array_equal(getattr(sim.state, name), getattr(before, name)), name


def test_a_replaced_state_is_followed():
    """A simulator given another State (as the search and the scenario tests do) masks and
    steps that one."""
    a = Simulator(8, num_players=4, seed=5, backend="numba")
    b = Simulator(8, num_players=4, seed=6, backend="numba")
    for _ in range(30):
        b.step(b.random_actions())
    a.state = b.state.copy()
    assert np.array_equal(a.legal_mask(), b.legal_mask())


def test_the_compiled_observation_equals_numpys_for_every_seat():
    sim = Simulator(60, num_players=np.arange(60) % 5 + 2, seed=4, backend="numba")
    rng = np.random.default_rng(0)
    games = np.arange(60)
    for step in range(400):
        for seat in range(R.MAX_PLAYERS):
            seats = np.minimum(seat, sim.state.num_players - 1).astype(np.intp)
            expected = observe(sim.state, seats, games)
            got = sim.engine.observe(seats, games)
            assert np.array_equal(got, expected), (step, seat, np.argwhere(got != expected)[:5])
        sim.step(sim.random_actions(rng=rng))
    assert sim.done.any()


def test_the_kernels_python_source_agrees_too():
    """NUMBA_DISABLE_JIT=1 runs the compiled engine's kernels as the Python they are written
    in (the prefetch hint a no-op there): they play numpy's games too."""
    out = run_uncompiled("import test_startap_numba as t; t.play_both(4, 2, seed=1); print('agree')")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "agree" in out.stdout
