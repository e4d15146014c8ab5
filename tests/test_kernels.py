"""The compiled backend (startups_env.startups.numba_backend) against the numpy one, state for state.

Two simulators with the same seed, one per backend, play the same games in lockstep: after
every step the legal masks, the uniform legal actions they sample, the step results and
every field of the state must be equal. The games cover every table size 2-7 in mixed
batches, the standard and the round game, turn caps small enough that many rounds are
capped, auto-reset, and steps that advance only some games (``active=``, as the search's
rollouts and the vector adapter do). The reference games and the parity against the
plain-Python reference run on both backends in their own files (test_golden_core.py,
test_parity.py).

STARTUPS_KERNEL_GAMES sets the number of games compared (default 2000; the figures of the
compiled-backend entry in docs/experiments.md were run with 10,000).
"""

import os
from dataclasses import fields

import numpy as np
import pytest
from helpers import run_uncompiled

from startups_env import Rules, Simulator
from startups_env.startups import backend as core
from startups_env.startups.rules import NUM_ACTIONS
from startups_env.startups.state import shuffled_decks

pytest.importorskip("numba")

NUM_GAMES = int(os.environ.get("STARTUPS_KERNEL_GAMES", "2000"))
BATCH = 250
# (rounds, turn cap, auto-reset, share of games active per step) cycled over the batches.
CONFIGS = [(1, 400, False, 1.0), (4, 400, False, 1.0), (1, 25, False, 0.6), (4, 30, True, 0.7),
           (1, 400, True, 0.5), (1, 60, False, 1.0)]


def assert_same(a: Simulator, b: Simulator, what: str) -> None:
    for f in fields(a.state):
        np.testing.assert_array_equal(getattr(a.state, f.name), getattr(b.state, f.name),
                                      err_msg=f"{what}: state.{f.name}")


def play_lockstep(rules: Rules, size: int, seed: int, auto_reset: bool, active_share: float,
                  steps: int | None = None) -> int:
    """Play ``size`` seeded games on both backends in lockstep until all are over (or for
    ``steps`` steps with auto-reset); returns the number of games finished."""
    players = np.random.default_rng(seed).integers(2, 8, size)
    sims = [Simulator(rules, size, seed=seed, auto_reset=auto_reset, num_players=players, backend=backend)
            for backend in ("numpy", "numba")]
    chooser = np.random.default_rng(seed + 1)
    finished = step = 0
    assert_same(*sims, "after the deal")
    while not (sims[0].done.all() if steps is None else step >= steps):
        masks = [sim.legal_mask() for sim in sims]
        np.testing.assert_array_equal(*masks, err_msg=f"legal mask at step {step}")
        actions = [sim.random_actions() for sim in sims]
        np.testing.assert_array_equal(*actions, err_msg=f"random actions at step {step}")
        active = chooser.random(size) < active_share if active_share < 1 else None
        results = [sim.step(a, active=active) for sim, a in zip(sims, actions)]
        for name, x, y in zip(results[0]._fields, *results):
            np.testing.assert_array_equal(x, y, err_msg=f"step result {name} at step {step}")
        assert_same(*sims, f"after step {step}")
        finished += int((results[0].terminated | results[0].truncated).sum()) if auto_reset else 0
        step += 1
    return finished if auto_reset else size


def test_backends_agree_on_random_games():
    played = batch = 0
    capped = 0
    while played < NUM_GAMES:
        rounds, cap, auto_reset, share = CONFIGS[batch % len(CONFIGS)]
        size = min(BATCH, NUM_GAMES - played)
        rules = Rules(num_players=4, rounds=rounds, turn_cap=cap, reward=("win", "rank", "score", "margin")[batch % 4])
        if auto_reset:  # games are re-dealt as they end: play until about `size` have ended
            played += play_lockstep(rules, size, batch, True, share, steps=int(2.2 * 140 * rounds / share))
        else:
            played += play_lockstep(rules, size, batch, False, share)
        capped += cap < 100
        batch += 1
    assert played >= NUM_GAMES and capped


RULESET_GAMES = int(os.environ.get("STARTUPS_RULESET_KERNEL_GAMES", "1000"))


@pytest.mark.parametrize("ruleset", ["market_row", "chip_triples_coins", "payout_in_points", "summary"])
def test_backends_agree_under_each_option_of_play(ruleset):
    """Each option of play and the summary's ruleset (docs/rules.md, "Other rulesets"), in
    random games at 2-7 players: standard and round games, capped rounds, auto-reset and
    partly active steps, as above (STARTUPS_RULESET_KERNEL_GAMES games each; the figures in
    docs/experiments.md were run with 10,000)."""
    played = batch = 0
    while played < RULESET_GAMES:
        rounds, cap, auto_reset, share = CONFIGS[batch % len(CONFIGS)]
        size = min(BATCH, RULESET_GAMES - played)
        rules = Rules.preset(ruleset, rounds=rounds, turn_cap=cap, reward=("win", "rank", "score", "margin")[batch % 4])
        steps = int(2.2 * 140 * rounds / share) if auto_reset else None
        played += play_lockstep(rules, size, 1000 + batch, auto_reset, share, steps=steps)
        batch += 1
    assert played >= RULESET_GAMES


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6, 7])
def test_backends_agree_at_the_turn_cap_and_in_one_game(players):
    """A batch of one game (the PettingZoo env's path, ``step_one``) and a cap of a few turns."""
    for rules in (Rules(num_players=players, turn_cap=7), Rules(num_players=players, rounds=4, turn_cap=9),
                  Rules.preset("summary", num_players=players, turn_cap=11)):
        sims = [Simulator(rules, 1, seed=players, backend=backend) for backend in ("numpy", "numba")]
        while not sims[0].done.all():
            action = int(sims[0].random_actions()[0])
            assert action == int(sims[1].random_actions()[0])
            results = [sim.step_one(action) for sim in sims]
            assert (results[0] is None) == (results[1] is None)
            if results[0] is not None:
                for x, y in zip(*results):
                    np.testing.assert_array_equal(x, y)
            assert_same(*sims, f"{rules}")
        assert sims[1].state.truncated[0] and sims[1].state.capped[0]


def test_an_illegal_action_raises_and_changes_nothing():
    sims = [Simulator(Rules(num_players=5), 40, seed=3, backend=backend) for backend in ("numpy", "numba")]
    for _ in range(9):
        actions = sims[0].random_actions()
        for sim in sims:
            sim.step(actions)
    before = sims[1].state.copy()
    actions = sims[1].random_actions().astype(np.int64)
    mask = sims[1].legal_mask()
    bad = [3, 17]
    for g in bad:
        actions[g] = np.flatnonzero(~mask[g])[0]
    messages = []
    for sim in sims:
        with pytest.raises(ValueError, match=r"illegal actions in 2 game\(s\): game 3") as err:
            sim.step(actions)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    for f in fields(before):
        np.testing.assert_array_equal(getattr(before, f.name), getattr(sims[1].state, f.name))
    # An inactive game's illegal action is ignored, as on numpy.
    active = np.ones(40, bool)
    active[bad] = False
    for sim in sims:
        sim.step(actions, active=active)
    assert_same(*sims, "after the step that skipped the bad games")
    one = Simulator(Rules(), 1, seed=0, backend="numba")
    before = one.state.copy()
    with pytest.raises(ValueError, match=r"illegal action 7 \(keep giraffe\)"):
        one.step_one(7)  # a put-down in the take phase
    for f in fields(before):
        np.testing.assert_array_equal(getattr(before, f.name), getattr(one.state, f.name))


def test_a_state_written_in_place_is_read_afresh():
    """``state_changed()`` after writing into the arrays: both backends see the new games
    (the compiled one caches nothing but the mask)."""
    sims = [Simulator(Rules(num_players=4), 8, seed=5, backend=backend) for backend in ("numpy", "numba")]
    donor = Simulator(Rules(num_players=4), 8, seed=6)
    for _ in range(13):
        donor.step(donor.random_actions())
    for sim in sims:
        sim.state.put(np.arange(4), donor.state.take(np.arange(4)))
        sim.state_changed()
    np.testing.assert_array_equal(sims[0].legal_mask(), sims[1].legal_mask())
    play = Simulator.from_state(donor.state.copy(), backend="numba")
    np.testing.assert_array_equal(play.legal_mask(), donor.legal_mask())


def test_backend_choice_is_checked():
    with pytest.raises(ValueError, match="backend must be one of"):
        Simulator(Rules(), 2, backend="cuda")
    assert Simulator(Rules(), 2).backend == core.default_backend() == "numba"
    assert Simulator.from_state(Simulator(Rules(), 2).state, backend="numpy").backend == "numpy"


def test_asking_for_numba_without_it_says_how_to_install(monkeypatch):
    monkeypatch.setattr(core, "numba_available", lambda: False)
    assert core.default_backend() == "numpy"
    assert Simulator(Rules(), 2).backend == "numpy"
    with pytest.raises(ValueError, match=r"pip install 'startups-env\[fast\]'"):
        Simulator(Rules(), 2, backend="numba")


def test_the_kernels_python_source_agrees_too():
    """NUMBA_DISABLE_JIT=1 runs the kernels as plain Python (so that coverage sees them) on a
    few games: they must agree with numpy there too."""
    out = run_uncompiled("import test_kernels as t; from startups_env import Rules; "
                         "t.play_lockstep(Rules(num_players=3), 6, 1, False, 0.8); "
                         "t.play_lockstep(Rules(num_players=6, rounds=4, turn_cap=8), 4, 2, True, 1.0, steps=60); "
                         "print('agree')")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "agree" in out.stdout


def test_every_action_id_has_a_mask_row():
    sim = Simulator(Rules(), 3, seed=0, backend="numba")
    assert sim.legal_mask().shape == (3, NUM_ACTIONS)


def test_the_threaded_kernels_agree_too(monkeypatch):
    """The kernels' threaded versions (the step's from kernels.PARALLEL_FROM games on, where
    they pay; the end of the rounds from PARALLEL_ROUNDS_FROM finished rounds on) are separate
    compilations: the same lockstep check with every batch on them."""
    from startups_env.startups import numba_backend as kernels
    from startups_env.startups import numba_runtime

    monkeypatch.setattr(kernels, "PARALLEL_FROM", 1)
    monkeypatch.setattr(kernels, "PARALLEL_ROUNDS_FROM", 1)
    monkeypatch.setattr(numba_runtime.ThreadChoice, "threaded", lambda self: True)  # (not where it pays: always)
    play_lockstep(Rules(num_players=4, rounds=4, turn_cap=40), 200, 11, True, 0.7, steps=300)
    play_lockstep(Rules(num_players=6), 200, 12, False, 1.0)
    play_lockstep(Rules(num_players=5), 2 * kernels.STEP_BLOCK + 77, 13, True, 0.8, steps=150)


def test_games_past_the_first_block_agree_too():
    """The step kernel takes the games in blocks of ``kernels.STEP_BLOCK`` (stepped, then
    their masks written); the batches above fit in one block: here three, the last one
    partly full, on the calling thread."""
    from startups_env.startups import numba_backend as kernels

    play_lockstep(Rules(num_players=3, turn_cap=50), 2 * kernels.STEP_BLOCK + 77, 14, True, 0.8, steps=150)


def test_the_mask_of_a_block_is_the_mask_game_by_game():
    """``kernels.legal_block`` (a run of games, vectorized: the step's and ``legal_rows``')
    and ``kernels.legal_actions`` (one game: the rollouts' and ``legal_columns``') write
    the same flags, on states of every table size at both phases and in finished games."""
    from startups_env.startups import numba_backend as kernels

    sim = Simulator(Rules(turn_cap=70), 1500, seed=5, num_players=np.random.default_rng(5).integers(2, 8, 1500),
                    backend="numba")
    rng = np.random.default_rng(6)
    mixed = False  # some games over while others play
    for step in range(160):
        record = kernels.arrays(sim.state)
        block, one_by_one = kernels.new_mask(1500), kernels.new_mask(1500)
        kernels.legal_rows(block, record)
        kernels.legal_columns(np.arange(1500, dtype=np.intp), one_by_one, record)
        np.testing.assert_array_equal(block[:, :1500], one_by_one[:, :1500], err_msg=f"step {step}")
        mixed |= sim.done.any() and not sim.done.all()
        sim.step(sim.random_actions(), active=rng.random(1500) < 0.9)
    assert mixed


def test_dealing_in_runs_of_games_deals_the_same():
    """``kernels.deal_rounds`` splits the games into ``parts`` runs, one per thread when
    threaded; however many runs (here on the calling thread), the deal is the same."""
    from startups_env.startups import numba_backend as kernels

    sim = Simulator(Rules(), 50, seed=3, num_players=np.random.default_rng(3).integers(2, 8, 50), backend="numba")
    for _ in range(30):
        sim.step(sim.random_actions())
    games = np.arange(1, 50, 2, dtype=np.intp)
    decks = shuffled_decks(np.random.default_rng(4), games.size)
    starters = np.zeros(games.size, np.int8)
    dealt = []
    for parts in (1, 3, games.size):
        s = sim.state.copy()
        kernels.deal_rounds(parts, games, decks, starters, Rules().params, kernels.arrays(s))
        dealt.append(s)
    assert not np.array_equal(dealt[0].hand, sim.state.hand)
    for s in dealt[1:]:
        for f in fields(s):
            np.testing.assert_array_equal(getattr(s, f.name), getattr(dealt[0], f.name), err_msg=f.name)
