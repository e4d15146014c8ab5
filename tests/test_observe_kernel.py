"""The compiled one-game observation (``startups_env.startups.numba_backend.observe_game``) equals
``observe.observe()`` bit for bit: every observer of every game, at every table size, in the
standard and the round game, finished games and turn counts past the int8 range included;
its layout follows ``observe.PIECES``, and a changed layout stops the import."""

import importlib

import numpy as np
import pytest

pytest.importorskip("numba")

from startups_env import Rules, Simulator  # noqa: E402
from startups_env.startups import numba_backend as observe_kernel  # noqa: E402
from startups_env.startups import observe  # noqa: E402
from startups_env.startups.numba_backend import observe_game  # noqa: E402
from startups_env.startups.observe import OBS_DIM, PIECES  # noqa: E402
from startups_env.startups.rules import MAX_PLAYERS  # noqa: E402


def _states(rounds: int, seed: int, b: int = 24, every: int = 3, ruleset: str = "rulebook"):
    """States of random play at mixed table sizes 2-7, every ``every``-th decision, to the end."""
    sim = Simulator(Rules.preset(ruleset, rounds=rounds, turn_cap=200), b, seed=seed, num_players=np.resize(np.arange(2, 8), b))
    out = [sim.state.copy()]
    k = 0
    while not sim.done.all():
        sim.step(sim.random_actions())
        k += 1
        if k % every == 0:
            out.append(sim.state.copy())
    out.append(sim.state.copy())
    return out


def _assert_bitwise_equal(state, seat):
    want = observe.observe(state, seat)
    for g in range(state.batch_size):
        got = observe_game(state, g, seat[g])
        assert got.dtype == np.float32 and got.shape == (OBS_DIM,)
        if not np.array_equal(got.view(np.int32), want[g].view(np.int32)):
            wrong = np.flatnonzero(got.view(np.int32) != want[g].view(np.int32))
            names = [p.name for p in PIECES for _ in range(p.size)]
            raise AssertionError(f"game {g}, seat {seat[g]}: entries {wrong[:8].tolist()} "
                                 f"({sorted({names[i] for i in wrong})}) are {got[wrong[:8]]}, "
                                 f"observe() gives {want[g][wrong[:8]]}")


@pytest.mark.parametrize("rounds,ruleset", [(1, "rulebook"), (4, "rulebook"), (1, "summary"), (4, "market_row")])
def test_kernel_observation_equals_observe_bitwise(rounds, ruleset):
    states = _states(rounds, seed=100 + rounds, ruleset=ruleset)
    assert len(states) > 30
    for state in states:
        n = state.num_players.astype(int)
        for shift in range(MAX_PLAYERS):  # every observer (shifts past the table size wrap round)
            _assert_bitwise_equal(state, ((state.current + shift) % n).astype(np.int8))


def test_kernel_observation_of_turn_counts_past_int8():
    state = _states(1, seed=7)[10].copy()
    for turn in (127, 128, 255, 256, 29999, 30000):
        state.turn[:] = turn
        _assert_bitwise_equal(state, state.current)
        assert (observe.views(observe_game(state, 0, 0))["turn"] == turn).all()


def test_observe_game_checks_its_arguments():
    state = Simulator(Rules(num_players=3), 2, seed=0).state
    for game, seat in [(2, 0), (-1, 0), (0, 3), (0, -1)]:
        with pytest.raises(ValueError, match="must be in"):
            observe_game(state, game, seat)
    with pytest.raises(ValueError, match="out must be float32"):
        observe_game(state, 0, 0, out=np.zeros(OBS_DIM, np.float64))
    out = np.full(OBS_DIM, 9, np.float32)  # every entry is written, the stale ones too
    assert observe_game(state, 1, 2, out=out) is out
    np.testing.assert_array_equal(out, observe.observe(state, np.array([0, 2]))[1])


def test_a_changed_layout_stops_the_import(monkeypatch):
    """The kernel writes the pieces at the offsets observe.SLICES gives; a layout it does not
    write (here two pieces swapped) must fail the import rather than be written wrong."""
    swapped = list(PIECES)
    swapped[3], swapped[4] = swapped[4], swapped[3]
    monkeypatch.setattr(observe, "PIECES", tuple(swapped))
    try:
        with pytest.raises(ImportError, match="update the kernel"):
            importlib.reload(observe_kernel)
    finally:
        monkeypatch.undo()
        importlib.reload(observe_kernel)
