"""The search bot's compiled world sampling deals exactly what the numpy one deals."""

from dataclasses import fields

import numpy as np
import pytest

pytest.importorskip("numba")

from startups_env import Rules, Simulator  # noqa: E402
from startups_env.agents import sampling_kernel  # noqa: E402
from startups_env.agents.search import _draw_from_pool, determinize  # noqa: E402
from startups_env.core import public_state  # noqa: E402


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
    assert (count.sum() >= sampling_kernel.PARALLEL_FROM) == (most > 9)
    worlds = [determinize(public, seat, count, np.random.default_rng(7), backend) for backend in ("numpy", "numba")]
    _assert_same(*worlds)
    assert not np.array_equal(worlds[0].deck, determinize(public, seat, count, np.random.default_rng(8)).deck)


@pytest.mark.parametrize("draws", [50, 3000])  # (3,000: on numba's threads)
def test_draw_from_pool_draws_the_same_cards_on_both_backends(draws):
    rng = np.random.default_rng(draws)
    pool = rng.integers(0, 8, (6, draws))
    need = np.minimum(rng.integers(0, 6, draws), pool.sum(axis=0))
    drawn = [_draw_from_pool(pool, need, np.random.default_rng(5), backend) for backend in ("numpy", "numba")]
    assert np.array_equal(*drawn) and drawn[1].dtype == np.int64
    assert np.array_equal(drawn[0].sum(axis=0), need) and (drawn[0] <= pool).all()


def test_the_python_source_deals_alike_without_the_compiler():
    """With NUMBA_DISABLE_JIT=1 the kernels run as the Python they are written in."""
    from helpers import run_uncompiled

    done = run_uncompiled("""
import numpy as np
from test_sampling_kernel import test_determinize_deals_the_same_worlds_on_both_backends as deal
from test_sampling_kernel import test_draw_from_pool_draws_the_same_cards_on_both_backends as draw
from startups_env.agents import sampling_kernel
assert not hasattr(sampling_kernel._deal_serial, "py_func")  # plain Python
deal(4, 37, 9)
draw(50)
print("same")
""")
    assert done.returncode == 0 and done.stdout.strip() == "same", done.stderr[-3000:]
