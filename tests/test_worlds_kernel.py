"""The search bot's compiled world sampling deals exactly what the numpy one deals."""

import inspect
from dataclasses import fields

import numpy as np
import pytest

pytest.importorskip("numba")

from startups_env.agents.search import (  # noqa: E402
    COMPOSITION_VALID,
    COMPOSITIONS,
    MAX_COMPOSITIONS,
    determinize,
    sample_hands,
    search_backend,
    worlds_kernel,
)
from startups_env.agents.search.worlds import deal_log_chance, draw_from_pool  # noqa: E402

from startups_env import Rules, Simulator  # noqa: E402
from startups_env.startups.state import State, public_state  # noqa: E402


def _mid_games(players: int, games: int, seed: int, steps: int) -> Simulator:
    sim = Simulator(Rules(num_players=players), games, seed=seed)
    for _ in range(steps):
        sim.step(sim.random_actions())
    return sim


def _assert_same(a, b):
    for f in fields(a):
        assert np.array_equal(getattr(a, f.name), getattr(b, f.name)), f.name


@pytest.mark.parametrize("players, steps, most", [(2, 10, 9), (4, 0, 9), (4, 37, 9), (5, 60, 9), (7, 21, 9),
                                                  (4, 37, 90)])  # (the last on numba's threads)
def test_determinize_deals_the_same_worlds_on_both_backends(players, steps, most):
    sim = _mid_games(players, 30, seed=players + steps, steps=steps)
    live = np.flatnonzero(~sim.done)
    seat = sim.state.current[live].astype(np.intp)
    public = public_state(sim.state.take(live), seat)
    count = np.random.default_rng(0).integers(1, most, live.size)
    assert (count.sum() >= worlds_kernel.PARALLEL_FROM) == (most > 9)
    worlds = [determinize(public, seat, count, np.random.default_rng(7), search_backend(backend))
              for backend in ("numpy", "numba")]
    _assert_same(*worlds)
    assert not np.array_equal(worlds[0].deck,
                              determinize(public, seat, count, np.random.default_rng(8), search_backend()).deck)


@pytest.mark.parametrize("draws", [50, 3000])  # (3,000: on numba's threads)
def test_draw_from_pool_draws_the_same_cards_on_both_backends(draws):
    rng = np.random.default_rng(draws)
    pool = rng.integers(0, 8, (6, draws))
    need = np.minimum(rng.integers(0, 6, draws), pool.sum(axis=0))
    drawn = [draw_from_pool(pool, need, np.random.default_rng(5), search_backend(backend))
             for backend in ("numpy", "numba")]
    assert np.array_equal(*drawn) and drawn[1].dtype == np.int64
    assert np.array_equal(drawn[0].sum(axis=0), need) and (drawn[0] <= pool).all()


def _posteriors(games: int, seed: int):
    """(posterior, log_deal, need, pool) of ``sample_hands`` for random tables: pools of 6-30
    unseen cards, 0-3 hidden cards for each of 2-6 other seats, some seats' records
    impossible (every composition -inf)."""
    rng = np.random.default_rng(seed)
    pool = rng.integers(1, 6, (6, games))
    need = np.where(np.arange(7)[:, None] < rng.integers(3, 8, games)[None, :], rng.integers(0, 4, (7, games)), 0)
    need[0] = 0  # the searching seat
    log_deal = np.full((7, games, MAX_COMPOSITIONS), -np.inf)
    for s in range(1, 7):
        slot = np.arange(MAX_COMPOSITIONS)
        for g in range(games):
            k = need[s, g]
            log_deal[s, g] = np.where(COMPOSITION_VALID[k, slot],
                                      deal_log_chance(np.repeat(pool[:, g][None, :], MAX_COMPOSITIONS, 0),
                                                      COMPOSITIONS[k], np.full(MAX_COMPOSITIONS, k)), -np.inf)
    posterior = log_deal + rng.normal(0.0, 2.0, log_deal.shape)
    posterior[rng.random((7, games)) < 0.1] = -np.inf
    return posterior, log_deal, need, pool


@pytest.mark.parametrize("games, most", [(12, 40), (40, 200)])  # (40 games: some 4,000 worlds, threaded)
def test_sample_hands_draws_the_same_hands_on_both_backends(games, most):
    posterior, log_deal, need, pool = _posteriors(games, games)
    count = np.random.default_rng(1).integers(1, most, games)
    drawn = [sample_hands(posterior, log_deal, need, pool, count, np.random.default_rng(5), search_backend(backend))
             for backend in ("numpy", "numba")]
    assert np.array_equal(drawn[0][0], drawn[1][0]) and drawn[1][0].dtype == np.int64
    np.testing.assert_allclose(drawn[1][1], drawn[0][1], rtol=1e-12, atol=1e-12)
    weights = drawn[0][1]
    assert np.isinf(weights).any() and np.isfinite(weights).any()  # (both kinds of worlds are met)
    assert (count.sum() >= worlds_kernel.PARALLEL_FROM) == (games == 40)


@pytest.mark.parametrize("players, steps", [(3, 0), (5, 41), (7, 90)])
def test_take_games_gathers_every_field_as_state_take_does(players, steps):
    """The engine's compiled ``State.take``, which gathers the search's rollout worlds."""
    from startups_env.startups import numba_backend as kernels

    sim = _mid_games(players, 30, seed=steps, steps=steps)
    for size in (200, kernels.PARALLEL_GATHER_FROM + 37):  # (on the calling thread, then on numba's threads)
        rows = np.random.default_rng(steps).integers(0, 30, size)
        _assert_same(kernels.take_games(sim.state, rows), sim.state.take(rows))
    assert kernels.take_games(sim.state, rows[:0]).batch_size == 0
    source = inspect.getsource(kernels._gather)
    assert all(f"(s.{f.name}, r, t.{f.name}[" in source for f in fields(State))  # (every field, by name)
    with pytest.raises(IndexError, match="rows must be games"):
        kernels.take_games(sim.state, np.array([0, 30]))


def test_the_python_source_deals_alike_without_the_compiler():
    """With NUMBA_DISABLE_JIT=1 the kernels run as the Python they are written in."""
    from helpers import run_uncompiled

    done = run_uncompiled("""
import numpy as np
from test_worlds_kernel import test_determinize_deals_the_same_worlds_on_both_backends as deal
from test_worlds_kernel import test_draw_from_pool_draws_the_same_cards_on_both_backends as draw
from test_worlds_kernel import test_sample_hands_draws_the_same_hands_on_both_backends as hands
from test_worlds_kernel import test_take_games_gathers_every_field_as_state_take_does as gather
from startups_env.agents.search import worlds_kernel
assert not hasattr(worlds_kernel._deal_serial, "py_func")  # plain Python
deal(4, 37, 9)
draw(50)
hands(12, 40)
gather(5, 41)
print("same")
""")
    assert done.returncode == 0 and done.stdout.strip() == "same", done.stderr[-3000:]
