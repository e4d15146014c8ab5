"""The search bot's fused rollout (startups_env.agents.search.rollout_kernel) against its rollouts
stepped by a numpy Simulator with the numpy greedy: the same worlds and plans give the
same values, game for game, at every table size, with and without a horizon, with whole
turns planned, and in the round game (a rollout ends with its round)."""

import numpy as np
import pytest
from helpers import run_uncompiled

pytest.importorskip("numba")

from startups_env.agents.greedy import GreedyParams  # noqa: E402
from startups_env.agents.search import PLAN_FIRST, PLAN_SECOND, SearchAgent, determinize, search_backend  # noqa: E402
from startups_env.agents.search.rollout_kernel import rollout, rollout_outcomes  # noqa: E402
from test_invariants import deck_counts  # noqa: E402

from startups_env import Rules, Simulator  # noqa: E402
from startups_env.startups import queries  # noqa: E402
from startups_env.startups.rules import COMPANY_SIZES, NUM_ACTIONS, NUM_REMOVED, Action  # noqa: E402
from startups_env.startups.state import public_state  # noqa: E402


def worlds_and_plans(players: int, rounds: int, seed: int, steps: int, per_game: int = 6):
    """Sampled worlds of mid-game positions and a legal plan for each: single actions, and at
    take decisions whole turns (a market take, then a put-down legal after it)."""
    sim = Simulator(Rules(num_players=players, rounds=rounds), 40, seed=seed, backend="numpy")
    for _ in range(steps):
        sim.step(sim.random_actions())
    running = np.flatnonzero(~sim.done)
    state = sim.state.take(running)
    seat = state.current.astype(np.intp)
    worlds = determinize(public_state(state, seat), seat, per_game, np.random.default_rng(seed), search_backend())
    mask = Simulator.from_state(worlds.copy(), backend="numpy").legal_mask()
    rng = np.random.default_rng(seed + 1)
    plans = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
    takes = np.flatnonzero((plans >= Action.TAKE) & (plans < Action.KEEP))[::2]
    if takes.size:  # whole turns: the take, then a legal put-down after it
        after = Simulator.from_state(worlds.take(takes), backend="numpy")
        after.step(plans[takes])
        puts = np.array([rng.choice(np.flatnonzero(row)) for row in after.legal_mask()])
        plans[takes] = NUM_ACTIONS + (plans[takes] - Action.TAKE) * (NUM_ACTIONS - Action.KEEP) + puts - Action.KEEP
    return worlds, plans, worlds.current.astype(np.intp)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("horizon", [12, 0])
def test_fused_rollouts_equal_the_numpy_ones(players, horizon):
    whole_turns = 0
    # (Games step in lockstep: an even step count is a take decision everywhere, odd a put-down.)
    for rounds, steps in ((1, 8 + 2 * players), (1, 41), (4, 30)):
        worlds, plans, mover = worlds_and_plans(players, rounds, players * 10 + steps, steps)
        rules = Rules(num_players=players, rounds=rounds)
        values = []
        for backend in ("numpy", "numba"):
            bot = SearchAgent(seed=5, backend=backend, horizon=horizon, rules=rules, opponent_model="greedy")
            values.append(bot.rollouts.values(worlds.copy(), plans, mover, bot.rng))
        np.testing.assert_array_equal(values[0], values[1], err_msg=f"{players} players, {rounds} rounds, "
                                      f"{steps} steps, horizon {horizon}")
        whole_turns += np.count_nonzero(PLAN_SECOND[plans] >= 0)
    assert whole_turns


@pytest.mark.parametrize("players", [3, 6])
@pytest.mark.parametrize("value", ["win", "rank"])
def test_every_value_agrees(players, value):
    """The 0/1 win and the rank value too: scored in the kernel in a one-round game, and in
    the round game (whose last round ranks by the whole game) by the simulator."""
    for rounds, steps in ((1, 20), (4, 30)):
        worlds, plans, mover = worlds_and_plans(players, rounds, players + steps, steps)
        rules = Rules(num_players=players, rounds=rounds)
        bots = [SearchAgent(seed=5, backend=backend, rules=rules, opponent_model="greedy", value=value)
                for backend in ("numpy", "numba")]
        values = [bot.rollouts.values(worlds.copy(), plans, mover, bot.rng) for bot in bots]
        np.testing.assert_array_equal(values[0], values[1], err_msg=f"{rounds} rounds")


def test_outcomes_are_those_of_the_scored_rollout_with_shared_chance_rows():
    """rollout_outcomes plays as rollout does: with the same generator and each rollout's
    random-move chances read through chance_row, the same rank and score margin."""
    worlds, plans, mover = worlds_and_plans(5, 1, 31, 14, per_game=4)
    rules = Rules(num_players=5)
    per_world = np.random.default_rng(2).uniform(0.0, 0.6, (7, 7))
    rows = np.random.default_rng(3).integers(0, 7, worlds.batch_size)
    finished = rollout(worlds.copy(), PLAN_FIRST[plans], PLAN_SECOND[plans], mover, rules, GreedyParams(),
                       np.random.default_rng(9), random_chance=per_world[rows])
    rank, margin = rollout_outcomes(worlds.copy(), PLAN_FIRST[plans], PLAN_SECOND[plans], mover, rules,
                                    GreedyParams(), np.random.default_rng(9), random_chance=per_world,
                                    chance_row=rows)
    g = np.arange(worlds.batch_size)
    np.testing.assert_array_equal(rank, finished.ranks[mover, g])
    seated = np.arange(7)[:, None] < finished.num_players[None, :]
    np.testing.assert_array_equal(margin, queries.score_margin(finished.scores.astype(np.float64), seated)[mover, g])
    with pytest.raises(ValueError, match="random_chance must have shape"):
        rollout_outcomes(worlds.copy(), PLAN_FIRST[plans], PLAN_SECOND[plans], mover, rules, GreedyParams(),
                         np.random.default_rng(9), random_chance=per_world, chance_row=rows + 7)


def test_rollouts_of_one_stream_meet_the_same_random_numbers():
    """Rollouts that share a stream draw the same random numbers: copies of one world
    playing one plan end alike under random moves, where each on its own stream they
    part; a stream of the wrong shape is refused."""
    worlds, plans, mover = worlds_and_plans(4, 1, 5, 10, per_game=1)
    m = worlds.batch_size
    copies = np.repeat(np.arange(m), 8)
    chance = np.full((copies.size, 7), 0.5)

    def outcomes(stream):
        return rollout_outcomes(worlds.take(copies), PLAN_FIRST[plans[copies]], PLAN_SECOND[plans[copies]],
                                mover[copies], Rules(num_players=4), GreedyParams(), np.random.default_rng(1),
                                random_chance=chance, stream=stream)

    shared = outcomes(copies)
    for values in shared:
        assert (values.reshape(m, 8) == values.reshape(m, 8)[:, :1]).all()
    own = outcomes(np.arange(copies.size))
    assert (own[1].reshape(m, 8) != own[1].reshape(m, 8)[:, :1]).any()
    with pytest.raises(ValueError, match="stream"):
        outcomes(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="stream"):
        outcomes(copies - 1)


def test_the_threaded_rollout_agrees(monkeypatch):
    """The rollout kernel's threaded version (from rollout_kernel.PARALLEL_FROM rollouts on)."""
    from startups_env.agents.search import rollout_kernel

    worlds, plans, mover = worlds_and_plans(5, 1, 21, 16)
    rules = Rules(num_players=5)
    monkeypatch.setattr(rollout_kernel, "PARALLEL_FROM", plans.size + 1)
    bot = SearchAgent(seed=5, rules=rules, opponent_model="greedy")
    serial = bot.rollouts.values(worlds.copy(), plans, mover, bot.rng)
    monkeypatch.setattr(rollout_kernel, "PARALLEL_FROM", 1)
    bot = SearchAgent(seed=5, rules=rules, opponent_model="greedy")
    threaded = bot.rollouts.values(worlds.copy(), plans, mover, bot.rng)
    np.testing.assert_array_equal(serial, threaded)


def test_the_finished_state_is_the_simulators():
    worlds, plans, mover = worlds_and_plans(4, 1, 3, 14)
    kernel = rollout(worlds.copy(), PLAN_FIRST[plans], PLAN_SECOND[plans], mover, Rules(), GreedyParams(),
                     np.random.default_rng(0))
    assert kernel.terminated.all() and not kernel.truncated.any()
    assert (kernel.ranks[:4] >= 0).all() and (kernel.ranks[4:] == -1).all()
    assert (kernel.pile_pos == 45).all()


def assert_played_legally(before, after):
    """The finished rollouts ``after`` of the worlds ``before`` are still consistent games: no
    card or coin made or lost, no count below zero, no more cards known than held. (The
    compiled step applies actions unchecked; the random moves are drawn from the compiled
    legal mask, which tests/test_kernels.py proves equal to numpy's. These checks see an
    illegal move only where it leaves such a trace.)"""
    sizes = np.array(COMPANY_SIZES)[:, None]
    for s in (before, after):
        assert (s.hand >= 0).all() and (s.known >= 0).all() and (s.known <= s.hand).all()
        assert (s.market_count >= 0).all() and (s.coins >= 0).all()
    held = after.hand.sum(axis=0, dtype=int) + after.portfolio.sum(axis=0, dtype=int) + after.market_count
    np.testing.assert_array_equal(held + deck_counts(after.deck, 0, NUM_REMOVED), np.broadcast_to(sizes, held.shape))
    np.testing.assert_array_equal(after.coins.sum(axis=0, dtype=int) + after.market_coins.sum(axis=0, dtype=int),
                                  before.coins.sum(axis=0, dtype=int) + before.market_coins.sum(axis=0, dtype=int))


@pytest.mark.parametrize("opponent_model, epsilon", [("random", 0.0), ("greedy", 0.3), ("random", 1.0)])
def test_random_moves_are_legal_reproducible_and_random(opponent_model, epsilon):
    worlds, plans, mover = worlds_and_plans(5, 1, 8, 12, per_game=10)
    chance = SearchAgent(opponent_model=opponent_model, rollout_epsilon=epsilon).rollouts.random_chance(mover, None)
    runs = []
    for seed in (1, 1, 2):
        runs.append(rollout(worlds.copy(), PLAN_FIRST[plans], PLAN_SECOND[plans], mover, Rules(num_players=5),
                            GreedyParams(), np.random.default_rng(seed), random_chance=chance))
        assert_played_legally(worlds, runs[-1])
    np.testing.assert_array_equal(runs[0].scores, runs[1].scores)
    assert not np.array_equal(runs[0].scores, runs[2].scores)
    greedy = rollout(worlds.copy(), PLAN_FIRST[plans], PLAN_SECOND[plans], mover, Rules(num_players=5),
                     GreedyParams(), np.random.default_rng(1))
    assert not np.array_equal(runs[0].scores, greedy.scores)


def test_a_rollout_checks_its_plans_shape():
    worlds, plans, mover = worlds_and_plans(3, 1, 2, 10)
    with pytest.raises(ValueError, match="first must have shape"):
        rollout(worlds, PLAN_FIRST[plans][:-1], PLAN_SECOND[plans], mover, Rules(num_players=3), GreedyParams(),
                np.random.default_rng(0))


def test_the_rollout_source_agrees_uncompiled():
    """NUMBA_DISABLE_JIT=1: the rollout kernel's Python source (so that coverage sees it)."""
    out = run_uncompiled("import test_rollout_kernel as t; "
                         "w, p, m = t.worlds_and_plans(3, 1, 4, 12, per_game=2); "
                         "import numpy as np; from startups_env.agents.search import SearchAgent; "
                         "from startups_env import Rules; r = Rules(num_players=3); "
                         "bots = [SearchAgent(seed=1, backend=b, rules=r, opponent_model='greedy') "
                         "for b in ('numpy', 'numba')]; "
                         "v = [bot.rollouts.values(w.copy(), p, m, bot.rng) for bot in bots]; "
                         "assert np.array_equal(*v); print('agree')")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "agree" in out.stdout


def test_a_finish_of_a_round_that_has_not_ended_is_refused():
    sim = Simulator(Rules(), 3, seed=0)
    with pytest.raises(ValueError, match="not at the end of a round"):
        sim.finish_rounds(np.array([1]))
