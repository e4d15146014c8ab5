"""Agents: legal play at every table size, the driver, the search bot's sampling, the
heuristics' documented behaviour on hand-built observations, and the factory's errors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from helpers import assert_states_equal
from startups_env.agents import Agent, act_for_seats, make_agent, play_aec_game
from startups_env.agents.features import features, state_features
from startups_env.agents.greedy import GreedyParams, greedy_scores
from startups_env.agents.random_agent import uniform_legal
from startups_env.agents.registry import AGENT_NAMES, split_names
from startups_env.agents.search import SearchAgent, WorldPool, determinize, put_down_log_likelihood, search_backend
from startups_env.agents.search.worlds import _resample

from startups_env import Rules, Simulator
from startups_env.startups.history import OLDER, History
from startups_env.startups.observe import OBS_DIM, observe, views
from startups_env.startups.rules import COMPANY_SIZES, DECK_SIZE, HAND_SIZE, NUM_ACTIONS, NUM_REMOVED, Action
from startups_env.startups.state import public_state
from startups_env.table.driver import Table

SMALL_SEARCH = {"determinizations": 2, "max_candidates": 2}
FASTEST = search_backend()  # the search's steps on the fastest installed backend


def _agents(seed: int) -> list[Agent]:
    return [
        make_agent("greedy", seed=seed),
        make_agent("random", seed=seed + 1),
        make_agent("banker", seed=seed + 2),
        make_agent("search", seed=seed + 3, **SMALL_SEARCH),
    ]


@pytest.mark.parametrize("players", range(2, 8))
def test_every_agent_plays_only_legal_moves(players):
    """act_for_seats raises on an illegal choice and so does Simulator.step; games end.
    (The search bot reads the table's put-downs at odd table sizes; at even ones it is
    built not to, and then needs no history.)"""
    pool = _agents(players)
    if players % 2 == 0:
        pool[3] = make_agent("search", seed=players + 3, infer_hands=False, **SMALL_SEARCH)
    seats = [pool[s % len(pool)] for s in range(players)]
    sim = Simulator(Rules(num_players=players), 24, seed=players)
    log = History(24) if players % 2 else None
    for _ in range(2000):
        if sim.done.all():
            break
        mask = sim.legal_mask()
        actions = act_for_seats(sim, seats, history=log)
        running = ~sim.done
        assert mask[running, actions[running]].all()
        sim.step(actions)
    assert sim.done.all()
    assert not sim.state.truncated.any()


def _play_to_the_end(seats: list[Agent], games: int, seed: int, rules: Rules | None = None) -> Simulator:
    """``games`` games of ``rules`` (default: the standard game at len(seats) players), seat s
    played by ``seats[s]`` until every game is over (the table checks each move and keeps
    the history for the search)."""
    sim = Simulator(rules if rules is not None else Rules(num_players=len(seats)), games, seed=seed)
    return Table(sim, seats).play()


def test_search_plays_the_round_game_legally():
    # A short turn cap keeps the four rounds brief (and truncates them, which rollouts see too).
    rules = Rules(num_players=3, rounds=4, turn_cap=12)
    seats = [make_agent("search", seed=0, rules=rules, **SMALL_SEARCH), make_agent("greedy"), make_agent("random", seed=1)]
    sim = _play_to_the_end(seats, 6, seed=2, rules=rules)
    assert (sim.state.round == 4).all()


def test_act_for_seats_groups_by_agent_and_assignment():
    """With an assignment, seat s of game g is played by agents[assignment[g, s]]."""

    class Recorder(Agent):
        name = "recorder"

        def __init__(self):
            super().__init__(0)
            self.calls = []

        def act(self, obs, mask, public=None):
            self.calls.append(obs.shape[0])
            return uniform_legal(mask, self.rng)

    a, b = Recorder(), Recorder()
    sim = Simulator(Rules(num_players=3), 4, seed=0)
    # Games 0, 1: agent a plays every seat; games 2, 3: agent b does.
    assignment = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 1], [1, 1, 1]])
    timings = {}
    act_for_seats(sim, [a, b], assignment, timings=timings)
    assert a.calls == [2] and b.calls == [2]
    assert timings[0][0] == 2 and timings[1][0] == 2
    # The same object in several entries is called once per step.
    c = Recorder()
    act_for_seats(sim, [c, c, c])
    assert c.calls == [4]


def test_act_for_seats_rejects_illegal_agents():
    class Cheater(Agent):
        name = "cheater"

        def act(self, obs, mask, public=None):
            return np.full(obs.shape[0], Action.KEEP, np.int64)  # a put-down in the take phase

    sim = Simulator(Rules(num_players=2), 3, seed=0)
    with pytest.raises(ValueError, match="illegal"):
        act_for_seats(sim, [Cheater(), Cheater()])
    with pytest.raises(ValueError, match="2 entries for tables of up to 4 players"):
        act_for_seats(Simulator(Rules(num_players=4), 2, seed=0), [Cheater(), Cheater()])


def test_random_agent_is_uniform_legal_and_seeded():
    rng = np.random.default_rng(0)
    mask = np.zeros((20000, NUM_ACTIONS), bool)
    mask[:, [0, 3, 5]] = True
    picks = uniform_legal(mask, rng)
    counts = np.bincount(picks, minlength=NUM_ACTIONS)
    assert set(np.flatnonzero(counts)) == {0, 3, 5}
    assert np.allclose(counts[[0, 3, 5]] / 20000, 1 / 3, atol=0.02)
    sim = Simulator(Rules(num_players=4), 64, seed=1)
    obs, mask = observe(sim.state), sim.legal_mask()
    one, two = make_agent("random", seed=7), make_agent("random", seed=7)
    assert np.array_equal(one.act(obs, mask), two.act(obs, mask))
    first = one.act(obs, mask)
    one.seed(7)
    two.seed(7)
    assert np.array_equal(one.act(obs, mask), two.act(obs, mask))
    assert first.dtype == np.int64


def test_state_features_match_the_observation():
    """The rollout shortcut reads exactly what observe() encodes for the player to act."""
    for players in (2, 4, 7):
        sim = Simulator(Rules(num_players=players), 64, seed=players)
        for _ in range(120):
            live = ~sim.done
            if not live.any():
                break
            a, b = features(observe(sim.state)), state_features(sim.state)
            for field in dataclasses.fields(a):
                x, y = getattr(a, field.name), getattr(b, field.name)
                assert x.dtype == y.dtype and np.array_equal(x[..., live], y[..., live]), field.name
            sim.step(sim.random_actions())


# ----------------------------------------------------------------------------- determinize

@pytest.mark.parametrize("players", [2, 4, 7])
def test_determinize_keeps_what_the_player_knows(players):
    sim = Simulator(Rules(num_players=players), 48, seed=10 + players)
    greedy = make_agent("greedy")
    for step in range(30 + players):
        actions = act_for_seats(sim, [greedy] * players)
        actions[::3] = sim.random_actions()[::3]
        sim.step(actions)
    live = np.flatnonzero(~sim.done)
    state = sim.state.take(live)
    seat = state.current.astype(np.intp)
    public = public_state(state, seat)
    k = 5
    worlds = determinize(public, seat, k, np.random.default_rng(0), FASTEST)
    rows = np.repeat(np.arange(state.batch_size), k)
    assert worlds.batch_size == state.batch_size * k
    # Everything public is unchanged, and so is the player's own hand.
    for name in ("portfolio", "known", "coins", "chip", "market_count", "market_coins", "pile_pos", "current",
                 "phase", "turn", "num_players"):
        assert np.array_equal(getattr(worlds, name), getattr(state, name)[..., rows]), name
    g = np.arange(worlds.batch_size)
    assert np.array_equal(worlds.hand[seat[rows], :, g], state.hand[seat[rows], :, rows])
    # Other hands: their known cards, and exactly their true size.
    assert (worlds.hand >= worlds.known).all()
    assert np.array_equal(worlds.hand.sum(axis=1), state.hand.sum(axis=1)[:, rows])
    # Every card is somewhere exactly once: hands, portfolios, market, pile, removed.
    pile_mask = np.arange(DECK_SIZE)[:, None] >= worlds.pile_pos[None, :]
    in_deck = pile_mask | (np.arange(DECK_SIZE)[:, None] < NUM_REMOVED)
    assert ((worlds.deck >= 0) == in_deck).all()
    for c, size in enumerate(COMPANY_SIZES):
        total = (worlds.hand[:, c].sum(axis=0) + worlds.portfolio[:, c].sum(axis=0) + worlds.market_count[c]
                 + ((worlds.deck == c) & in_deck).sum(axis=0))
        assert (total == size).all()
    # The sample varies between worlds (the unseen cards are not fixed).
    assert not np.array_equal(worlds.deck[:, 0], worlds.deck[:, 1]) or state.pile_pos[0] >= DECK_SIZE - 1
    # A sampled world plays on to the end in the simulator.
    sampled = Simulator.from_state(worlds, Rules(num_players=players), seed=0)
    while not sampled.done.all():
        sampled.step(sampled.random_actions())


def test_determinize_is_uniform_over_the_unseen_pool():
    """At the deal, a rival's hand is 3 of the 42 cards the player cannot see, uniformly."""
    sim = Simulator(Rules(num_players=3), 1, seed=4)
    state = sim.state
    public = public_state(state, state.current)
    worlds = determinize(public, state.current, 6000, np.random.default_rng(1), FASTEST)
    unseen = state.unseen(state.current.astype(np.intp))[:, 0].astype(float)
    mean_hand = worlds.hand[1].mean(axis=1)
    assert np.allclose(mean_hand, HAND_SIZE * unseen / unseen.sum(), atol=0.05)


def test_search_needs_public_state_and_validates_budget():
    sim = Simulator(Rules(num_players=3), 2, seed=0)
    agent = make_agent("search", seed=0, **SMALL_SEARCH)
    assert agent.needs == {"public", "history"}
    assert make_agent("search", infer_hands=False).needs == {"public"}
    with pytest.raises(ValueError, match="public"):
        agent.act(observe(sim.state), sim.legal_mask())
    for bad in ({"determinizations": 0}, {"rollouts": -1}, {"rollout_epsilon": 2.0}, {"max_candidates": -1},
                {"value": "best"}, {"soft_scale": 0.0}, {"max_world_factor": 0.5}, {"halving_rounds": -1}, {"turn_puts": -1},
                {"halving_width": 0}, {"inference_temperature": 0.0}, {"inference_oversample": 0},
                {"opponent_model": "search"}, {"race_z": 0.5}, {"race_z": -1.0}, {"race_z": float("nan")}):
        with pytest.raises(ValueError):
            SearchAgent(**bad)


def test_search_plays_a_forced_move_without_search():
    sim = Simulator(Rules(num_players=3), 5, seed=0)  # first move: empty market, draw is forced
    agent = make_agent("search", seed=0)
    state = sim.state
    actions = agent.act(observe(state), sim.legal_mask(), public=public_state(state, state.current),
                        history=History(5))
    assert (actions == Action.DRAW).all()


@pytest.mark.parametrize("phase", [0, 1])
def test_search_greedy_anchor_keeps_the_greedy_move_unless_another_beats_it_by_the_margin(phase):
    """With a margin larger than any difference of values the search plays the greedy bot's
    move; with none it leaves it in some games (so the margin is what kept it)."""
    sim = _mid_game(4, 24, seed=7)
    if phase:
        sim.step(act_for_seats(sim, [make_agent("greedy")] * 4), active=~sim.done)
    live = np.flatnonzero(~sim.done & (sim.state.phase == phase))
    state = sim.state.take(live)
    seat = state.current.astype(np.intp)
    mask = Simulator.from_state(state.copy(), Rules(num_players=4)).legal_mask()
    obs, public = observe(state), public_state(state, seat)
    greedy = make_agent("greedy").act(obs, mask)
    choices = {}
    for anchor in (0.0, 0.999):
        bot = SearchAgent(seed=0, determinizations=6, infer_hands=False, greedy_anchor=anchor)
        choices[anchor] = bot.act(obs, mask, public=public)
    assert np.array_equal(choices[0.999], greedy)
    assert (choices[0.0] != greedy).any()
    with pytest.raises(ValueError, match="greedy_anchor"):
        SearchAgent(greedy_anchor=1.0)


class _ScriptedSearch(SearchAgent):
    """A search whose rollouts are replaced by scripted values: plan p of game g is worth
    ``means[g, p]`` plus the world's own noise (shared by every plan of the world: common
    random numbers) plus the plan's (``plan_noise``). Records which plans each round
    evaluated."""

    def __init__(self, means, plan_noise, **options):
        super().__init__(seed=0, infer_hands=False, **options)
        self.means, self.plan_noise, self.evaluated = means, plan_noise, []

    def _evaluate(self, public, seat, candidates, worlds, pool):
        from startups_env.agents.search.search import Outcomes

        game_of_world = np.repeat(np.arange(candidates.shape[0]), worlds)
        world, plan = np.nonzero(candidates[game_of_world])
        game = game_of_world[world]
        world_noise = self.rng.normal(0.0, 1.0, game_of_world.size)[world]
        value = self.means[game, plan] + world_noise + self.rng.normal(0.0, self.plan_noise, world.size)
        self.evaluated.append((candidates.sum(axis=1).tolist(), worlds.tolist()))
        return Outcomes(game, plan, world, value)


def test_search_race_drops_clear_losers_and_stops_when_the_leader_is_clear():
    """Game 0: plan 0 beats plans 1-3 by far more than the paired noise (the worlds' own
    noise cancels in the paired difference), so racing stops it after the first half of
    the first round, where plain halving plays two rounds. Game 1: plans 0 and 1 are
    within the noise of each other, both far above plans 2-3: racing drops 2-3 after the
    first half and plays the second half on the close call alone. The same choices either
    way."""
    from startups_env.agents.search import NUM_PLANS

    candidates = np.zeros((2, NUM_PLANS), bool)
    candidates[:, :4] = True
    means = np.zeros((2, NUM_PLANS))
    means[0, :4] = [1.0, 0.0, 0.0, 0.0]
    means[1, :4] = [1.0, 1.0, 0.0, 0.0]
    public = _mid_game(4, 2, seed=1).state
    runs = {}
    for race_z in (0.0, 2.5):
        bot = _ScriptedSearch(means, 0.05, race_z=race_z, determinizations=32, halving_rounds=1)
        runs[race_z] = bot._search(public_state(public, public.current.astype(np.intp)), candidates, None)[0], bot
    plain, raced = runs[0.0], runs[2.5]
    assert plain[0][0] == raced[0][0] == 0
    assert raced[0][1] in (0, 1)
    worlds = plain[1]._worlds(public)
    assert plain[1].evaluated == [([4, 4], worlds.tolist()), ([2, 2], (2 * worlds).tolist())]
    half = (worlds + 1) // 2
    assert raced[1].evaluated == [([4, 4], half.tolist()), ([2], [worlds[1] - half[1]])]


def test_clear_losers_test_paired_differences_over_every_round():
    """A plan is a clear loser when its mean deficit to the leader over the worlds both met
    (in every round so far) is more than z standard errors of it; a deficit the same in
    every world is clear where positive; the leader never is."""
    from startups_env.agents.search import NUM_PLANS
    from startups_env.agents.search.search import Outcomes, _clear_losers

    rng = np.random.default_rng(0)

    def round_(offsets, plan_noise):  # 20 worlds of plans 0-2 of one game, the worlds' noise shared
        values = rng.normal(0, 1, (20, 1)) + rng.normal(0, 1, (20, 3)) * plan_noise + offsets
        worlds, plans = np.indices(values.shape)
        return Outcomes(np.zeros(values.size, np.int64), plans.ravel(), worlds.ravel(), values.ravel())

    def losers(rounds):
        sums = np.zeros((1, NUM_PLANS))
        for r in rounds:
            sums[0, :3] += np.bincount(r.plan, weights=r.value, minlength=3)
        sums[0, 0] += 1e-9  # plan 0 leads plan 2 (tied in every world)
        return np.flatnonzero(_clear_losers(rounds, alive, sums, 2.5)[0]).tolist()

    alive = np.zeros((1, NUM_PLANS), bool)
    alive[0, :3] = True
    # Plan 1: 0.1 lower than plan 0 in every world, plan 2 the same as plan 0.
    assert losers([round_([0.5, 0.4, 0.5], [0, 0, 0])]) == [1]
    # Plan 1: 0.3 lower on average, its own noise sd 1: not clear over 20 worlds
    # (standard error 0.22), clear over 400 in 20 rounds (0.05).
    assert losers([round_([0.5, 0.2, 0.5], [0, 1, 0])]) == []
    assert losers([round_([0.5, 0.2, 0.5], [0, 1, 0]) for _ in range(20)]) == [1]


def _mid_game(players: int, games: int, seed: int) -> Simulator:
    """Games played a few turns by greedy bots (some random moves), stopped at take decisions."""
    sim = Simulator(Rules(num_players=players), games, seed=seed)
    greedy = make_agent("greedy")
    rng = np.random.default_rng(seed)
    for _ in range(24 + 2 * int(rng.integers(0, 4))):
        actions = act_for_seats(sim, [greedy] * players)
        explore = rng.random(games) < 0.3
        actions[explore] = sim.random_actions(rng=rng)[explore]
        sim.step(actions)
    while (sim.state.phase[~sim.done] == 1).any():  # finish the turns in progress
        actions = act_for_seats(sim, [greedy] * players)
        sim.step(actions, active=sim.state.phase == 1)
    return sim


@pytest.mark.parametrize("turn_puts", [1, 3, 12])
def test_search_plans_whole_turns_after_market_takes(turn_puts):
    """With turn_puts, every market take is searched as (take, put-down) plans that are legal
    whole turns, at most turn_puts of them per take and the greedy bot's best among them;
    draws stay single actions."""
    from startups_env.agents.search import NUM_PLANS, PLAN_FIRST, PLAN_SECOND

    sim = _mid_game(4, 40, seed=3)
    live = np.flatnonzero(~sim.done)
    state = sim.state.take(live)
    seat = state.current.astype(np.intp)
    public = public_state(state, seat)
    mask = Simulator.from_state(state.copy(), Rules(num_players=4)).legal_mask()
    agent = SearchAgent(seed=0, determinizations=2, turn_puts=turn_puts)
    plans = agent._plans(public, mask)
    assert plans.shape == (state.batch_size, NUM_PLANS)
    assert np.array_equal(plans[:, Action.DRAW], mask[:, Action.DRAW])
    assert not plans[:, Action.TAKE:NUM_ACTIONS].any()  # market takes became whole turns
    takes = mask[:, Action.TAKE:Action.KEEP].sum()
    assert takes > 0
    assert plans[:, NUM_ACTIONS:].sum() > takes or turn_puts == 1
    for g, plan in zip(*np.nonzero(plans[:, NUM_ACTIONS:])):
        plan = NUM_ACTIONS + plan
        first, second = PLAN_FIRST[plan], PLAN_SECOND[plan]
        assert Action.TAKE <= first < Action.KEEP and mask[g, first]
        real = Simulator.from_state(state.take([g]), Rules(num_players=4))
        real.step([first])
        legal = real.legal_mask()[0]
        assert legal[second]  # the put-down is legal after the take (same-company rule included)
        scores = np.where(legal, greedy_scores(state_features(real.state))[:, 0], -np.inf)
        planned = plans[g, NUM_ACTIONS + (first - Action.TAKE) * 12 + np.arange(12)]
        assert planned.sum() == min(turn_puts, legal.sum())
        best = int(np.argmax(scores))
        assert planned[best - Action.KEEP]
    # The search plays legal first moves from these plans.
    actions = agent.act(observe(state), mask, public=public, history=History(state.batch_size))
    assert mask[np.arange(state.batch_size), actions].all()


def test_search_with_whole_turns_plays_legally_to_the_end():
    seats = [make_agent("search", seed=0, determinizations=2, turn_puts=2, halving_width=3), make_agent("greedy"),
             make_agent("random", seed=1)]
    assert not _play_to_the_end(seats, 8, seed=5).state.truncated.any()


@pytest.mark.parametrize("horizon", [0, 12])
def test_search_opponent_model_decides_how_rollouts_play_the_other_seats(horizon):
    # 40 copies of one sampled world: under the greedy model every rollout plays the same
    # game (greedy is deterministic); under the random model the other seats play at random.
    sim = Simulator(Rules(num_players=4), 1, seed=3)
    for _ in range(6):
        sim.step(sim.legal_mask().argmax(axis=1))
    seat = sim.state.current.astype(np.intp)
    world = determinize(public_state(sim.state, seat), seat, 1, np.random.default_rng(0), FASTEST).take(
        np.zeros(40, np.intp))
    plan = np.full(40, int(sim.legal_mask()[0].argmax()))
    mover = np.repeat(seat, 40)
    values = {}
    for model in ("greedy", "random"):
        agent = SearchAgent(seed=1, horizon=horizon, opponent_model=model)
        values[model] = agent.rollouts.values(world.take(np.arange(40)), plan, mover, agent.rng)
    assert np.unique(values["greedy"]).size == 1
    assert np.unique(values["random"]).size > 5


class _FirstLegal(Agent):
    """Plays the lowest legal action and keeps every observation it was shown."""

    name = "first-legal"

    def __init__(self):
        super().__init__()
        self.seen = []

    def act(self, obs, mask, public=None):
        self.seen.extend(np.array(obs))
        return np.asarray(mask).argmax(axis=1)


def test_search_rollout_policy_plays_the_searching_seat_in_the_rollouts():
    """A rollout with rollout_policy=P is the game in which the mover plays P from its own
    observations and every other seat plays greedy: a plain loop over the simulator gives
    the same value and shows P the same observations."""
    sim = _mid_game(4, 1, seed=8)
    seat = sim.state.current.astype(np.intp)
    world = determinize(public_state(sim.state, seat), seat, 1, np.random.default_rng(0), FASTEST)
    plan = int(sim.legal_mask()[0].argmax())
    policy = _FirstLegal()
    agent = SearchAgent(seed=1, horizon=0, rollout_policy=policy, opponent_model="greedy")
    value = agent.rollouts.values(world.copy(), np.array([plan]), seat, agent.rng)

    rules = Rules(num_players=4)
    play = Simulator.from_state(world.copy(), rules)
    play.step([plan])
    greedy, shown = make_agent("greedy"), []
    while not play.done[0]:
        mask = play.legal_mask()
        if play.state.current[0] == seat[0] and mask.sum() > 1:
            shown.append(observe(play.state)[0])
            action = mask.argmax(axis=1)
        else:
            action = greedy.act(observe(play.state), mask)
        play.step(action)
    assert len(shown) > 3
    assert np.array_equal(np.array(policy.seen), np.array(shown))
    assert value == pytest.approx(agent.rollouts.finished_value(play.state, seat)[0])
    plain = SearchAgent(seed=1, horizon=0, opponent_model="greedy")
    plain = plain.rollouts.values(world.copy(), np.array([plan]), seat, plain.rng)
    assert plain != pytest.approx(value)  # the own policy changed the game


def test_search_rollout_policy_is_checked_and_reseeded_with_the_search():
    with pytest.raises(ValueError, match="needs the public state"):
        make_agent("search", rollout_policy="search")
    with pytest.raises(ValueError, match="needs the public state"):
        SearchAgent(rollout_policy=make_agent("search"))
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("search", rollout_policy="gredy")
    with pytest.raises(ValueError, match="rollout_policy must be"):
        SearchAgent(rollout_policy=3)
    # The search module builds nothing by name (it does not import the registry).
    with pytest.raises(ValueError, match=r"rollout_policy must be an Agent.*make_agent\('search', rollout_policy='ppo'\)"):
        SearchAgent(rollout_policy="ppo")
    assert make_agent("search", rollout_policy=" greedy").rollout_policy is None
    assert SearchAgent().rollout_policy is None
    own = make_agent("random")
    agent = SearchAgent(seed=4, rollout_policy=own)
    assert own.rng is agent.rng
    agent.seed(5)
    assert own.rng is agent.rng


def test_search_with_the_ppo_rollout_policy_plays_legally():
    pytest.importorskip("torch")
    seats = [make_agent("search", seed=0, determinizations=2, rollout_policy="ppo"), make_agent("greedy"),
             make_agent("random", seed=1)]
    assert seats[0].rollout_policy.name == "ppo"
    assert not _play_to_the_end(seats, 4, seed=6).state.truncated.any()


def test_search_with_the_random_opponent_model_reads_no_hands_and_plays_legally():
    assert not SearchAgent(opponent_model="random").config.reads_hands
    assert SearchAgent(opponent_model="greedy").config.reads_hands
    seats = [make_agent("search", seed=0, determinizations=2, opponent_model="random"), make_agent("random", seed=1),
             make_agent("random", seed=2)]
    assert not _play_to_the_end(seats, 6, seed=4).state.truncated.any()


# ----------------------------------------------------------------------------- heuristics

def _obs(players=4, put=False, hand=(), portfolios=None, market=None, take_coins=None, coins=10, unseen=None,
         pile=20, chips=None):
    """A hand-built observation of the player to act (relative seat 0)."""
    obs = np.zeros((1, OBS_DIM), np.float32)
    v = {k: x[0] for k, x in views(obs).items()}
    v["num_players"][players - 2] = 1
    v["phase"][int(put)] = 1
    v["current_player"][0] = 1
    for c, n in hand:
        v["hand"][c] = n
    for (seat, c), n in (portfolios or {}).items():
        v["portfolios"][seat, c] = n
    for c, n in (market or {}).items():
        v["market_cards"][c] = n
    for c, n in (take_coins or {}).items():
        v["take_coins"][c] = n
        v["market_coins"][c] = n
    for (c, seat) in (chips or {}).items():
        v["chips"][c, seat] = 1
    v["coins"][:players] = coins
    v["pile"][0] = pile
    v["unseen"][:] = unseen if unseen is not None else (3, 3, 3, 3, 3, 3)
    return obs


def _mask(obs):
    v = views(obs)
    mask = np.zeros((1, NUM_ACTIONS), bool)
    if v["phase"][0, 1]:
        has = v["hand"][0] > 0
        mask[0, Action.KEEP:Action.MARKET] = has
        mask[0, Action.MARKET:] = has
    else:
        mask[0, Action.DRAW] = True
        mask[0, Action.TAKE:Action.KEEP] = v["market_cards"][0] > 0
    return mask


@pytest.mark.parametrize("name", ["greedy", "banker"])
def test_heuristics_send_a_lost_company_to_the_market(name):
    # A rival shows 5 octo; I hold 1 octo and 3 elephant that nobody else shows.
    obs = _obs(put=True, hand=[(3, 1), (5, 3)], portfolios={(1, 3): 5})
    assert make_agent(name).act(obs, _mask(obs))[0] == Action.MARKET + 3


@pytest.mark.parametrize("name", ["greedy", "banker"])
def test_heuristics_take_a_coin_rich_useful_card(name):
    # I lead hippo (2 in portfolio, rivals none); a hippo in the market carries 6 coins.
    obs = _obs(hand=[(4, 1), (0, 2)], portfolios={(0, 4): 2, (1, 0): 1}, market={4: 1, 2: 1},
               take_coins={4: 6, 2: 0})
    assert make_agent(name).act(obs, _mask(obs))[0] == Action.TAKE + 4


def test_greedy_draws_when_the_draw_is_cheap():
    # One coinless market card of a company a rival dominates: drawing costs 1 coin.
    obs = _obs(hand=[(5, 2), (4, 1)], portfolios={(1, 0): 4}, market={0: 1})
    assert make_agent("greedy").act(obs, _mask(obs))[0] == Action.DRAW


def test_greedy_takes_a_sole_lead_rather_than_a_tie():
    # Coinless flamingo and octo in the market, drawing is dear. A rival shows 2 of each; I
    # hold 1 flamingo (taking one only ties: nobody is paid) and 2 octo (taking one leads).
    obs = _obs(hand=[(2, 1), (3, 2)], portfolios={(1, 2): 2, (1, 3): 2}, market={2: 1, 3: 1, 0: 2, 1: 2},
               unseen=(3, 4, 2, 2, 5, 6))
    assert make_agent("greedy").act(obs, _mask(obs))[0] == Action.TAKE + 3


def test_greedy_keeps_a_deciding_card_hidden():
    # Hippo shows 1-1 but I hold 2 more in hand: laying one face up would reveal the lead.
    # I lead elephant openly (3 vs 1), so it lays an elephant instead. (Chips are left out
    # of it: chip_value=0.)
    obs = _obs(put=True, hand=[(4, 2), (5, 2)], portfolios={(0, 4): 1, (1, 4): 1, (0, 5): 3, (2, 5): 1},
               chips={4: 1, 5: 0})
    assert make_agent("greedy", chip_value=0.0).act(obs, _mask(obs))[0] == Action.KEEP + 5
    # Without the hiding rule, the sure hippo lead would be laid as readily.
    scores = greedy_scores(features(obs), GreedyParams(chip_value=0.0, hide_penalty=0.0))[:, 0]
    assert scores[Action.KEEP + 4] > scores[Action.KEEP + 5] - 0.1


# ----------------------------------------------------------------------------- factory, AEC

def test_make_agent_names_and_errors():
    for name in ("random", "greedy", "banker", "search"):
        agent = make_agent(name, seed=0)
        assert isinstance(agent, Agent) and agent.name == name
    with pytest.raises(ValueError, match="known agents: " + ", ".join(AGENT_NAMES)):
        make_agent("alphago")
    with pytest.raises(ValueError):
        make_agent("ppo:")
    with pytest.raises(TypeError):
        make_agent("greedy", no_such_option=1)


def test_split_names_reads_a_command_line_agent_list():
    assert split_names(" greedy, random,,search[determinizations=8;halving_rounds=1] ,") == [
        "greedy", "random", "search[determinizations=8;halving_rounds=1]"]
    assert split_names(" , ") == []
    # A comma inside brackets separates the spec's arguments, not agents.
    assert split_names("search[determinizations=8,horizon=0],greedy, noisy[epsilon=0.1]") == [
        "search[determinizations=8,horizon=0]", "greedy", "noisy[epsilon=0.1]"]


def test_make_agent_bad_checkpoint_is_a_clear_error():
    pytest.importorskip("torch")
    with pytest.raises((ValueError, FileNotFoundError), match="nonexistent"):
        make_agent("ppo:/nonexistent/policy.pt")


def test_play_aec_game_with_every_agent():
    aec = pytest.importorskip("startups_env.envs.aec")
    env = aec.env(num_players=4)
    agents = dict(zip(env.possible_agents, _agents(3)))
    with pytest.raises(ValueError, match=r"player_3.*history.*history=True"):
        play_aec_game(env, agents, seed=5)  # the search reads hands: the env must keep the history
    env = aec.env(num_players=4, history=True)
    result = play_aec_game(env, agents, seed=5)
    assert result["steps"] > 0 and not result["truncated"]
    assert abs(sum(result["rewards"].values())) < 1e-6  # the default "win" reward is zero-sum
    assert sorted(max(result["rewards"], key=result["rewards"].get) for _ in range(1)) == [
        next(a for a, info in result["infos"].items() if info.get("rank") == 0)]
    with pytest.raises(ValueError, match="no policy given for"):
        play_aec_game(env, {"player_0": agents["player_0"]})


def _greedy_games_with_log(players: int, games: int, seed: int, turns: int) -> tuple[Simulator, History, list]:
    """Greedy games played ``turns`` decisions with a put-down log, and every put-down
    played, as (game, seat, action, state before, take of that turn, state before that
    take) in order."""
    sim = Simulator(Rules(num_players=players), games, seed=seed)
    greedy = make_agent("greedy")
    log = History(games)
    played, takes = [], {}
    for _ in range(turns):
        state = sim.state.copy()
        actions = act_for_seats(sim, [greedy] * players, history=log)
        for g in np.flatnonzero(~state.done):
            seat = int(state.current[g])
            if state.phase[g] == 0:
                takes[(g, seat)] = (int(actions[g]), state.take([g]))
            else:
                played.append((g, seat, int(actions[g]), state.take([g])) + takes[(g, seat)])
        sim.step(actions)
    return sim, log, played


@pytest.mark.parametrize("players, turns", [(4, 60), (3, 84)])  # (at 3 players the older ring wraps)
def test_put_down_log_keeps_each_seats_last_put_downs_and_nothing_hidden(players, turns):
    sim, log, played = _greedy_games_with_log(players, 6, seed=3, turns=turns)
    history: dict = {}
    for g, seat, action, before, take, take_before in played:
        history.setdefault((g, seat), []).append((action, before, take, take_before))
    assert any(len(past) > 1 for past in history.values())
    if players == 3:
        assert max(len(past) for past in history.values()) > OLDER + 2
    for g in range(6):
        row = log.take([g])
        for seat in range(7):
            past = history.get((g, seat), [])
            if not past:
                assert row.action[seat, 0] == -1 and row.earlier_action[seat, 0] == -1
                continue
            action, before, take, take_before = past[-1]
            assert row.action[seat, 0] == action and row.take_action[seat, 0] == take
            entries = [(row.state.take([seat]), before), (row.take_state.take([seat]), take_before)]
            # The put-downs before the last two, each in some slot of the seat's ring.
            older = past[:-2][-OLDER:]
            slots = np.flatnonzero(row.older_action[:, seat, 0] >= 0)
            assert slots.size == len(older) and row.older_valid(sim.state.take([g]))[slots, seat, 0].all()
            by_turn = {int(row.older_state.turn[k * 7 + seat]): k for k in slots}
            for old_action, old_before, _, _ in older:
                k = by_turn[int(old_before.turn[0])]
                assert row.older_action[k, seat, 0] == old_action
                entries.append((row.older_state.take([k * 7 + seat]), old_before))
            if len(past) > 1:
                entries.append((row.earlier_state.take([seat]), past[-2][1]))
                assert row.earlier_action[seat, 0] == past[-2][0] and row.earlier_valid()[seat, 0]
            else:
                assert row.earlier_action[seat, 0] == -1 and not row.earlier_valid()[seat, 0]
            for logged, truth in entries:
                # The public state just before the put-down: hands reduced to their known cards, no deck.
                assert np.array_equal(logged.hand, truth.known) and (logged.deck == -1).all()
                for name in ("portfolio", "known", "coins", "chip", "market_count", "pile_pos", "current", "phase",
                             "turn"):
                    assert np.array_equal(getattr(logged, name), getattr(truth, name)), name
    assert log.valid(sim.state).sum() == len(history)
    log.reset([0])
    assert (log.action[:, 0] == -1).all() and not log.valid(sim.state)[:, 0].any()
    assert not log.earlier_valid()[:, 0].any() and not log.older_valid(sim.state)[:, :, 0].any()


def test_put_down_likelihood_prefers_the_true_hands():
    """Under the greedy model, the hands greedy players really held explain their put-downs
    far better than hands sampled from what the searching player knows."""
    sim, log, _ = _greedy_games_with_log(4, 60, seed=5, turns=40)
    state = sim.state
    live = np.flatnonzero(~state.done & (state.phase == 0))
    truth = state.take(live)
    seat = truth.current.astype(np.intp)
    public, view = public_state(truth, seat), log.take(live)
    others = view.valid(public) & (np.arange(7)[:, None] != seat[None, :])
    assert others.sum(axis=0).min() >= 2
    params = GreedyParams()
    true_ll = put_down_log_likelihood(truth, view, np.arange(live.size), others, params, 0.25, Rules(num_players=4),
                                      FASTEST)
    worlds = determinize(public, seat, 20, np.random.default_rng(0), FASTEST)
    sampled_ll = put_down_log_likelihood(worlds, view, np.repeat(np.arange(live.size), 20), others, params, 0.25,
                                         Rules(num_players=4), FASTEST)
    assert np.isfinite(true_ll).all()
    assert true_ll.mean() > sampled_ll[np.isfinite(sampled_ll)].mean() + 3.0
    # A hand that lacks a card its player was known to hold at the put-down is impossible.
    g = int(np.flatnonzero(others.any(axis=0))[0])
    s = int(np.flatnonzero(others[:, g])[0])
    before = view.state.take([s * live.size + g])
    if before.known[s].sum() > 0:
        broken = truth.take([g])
        company = int(np.flatnonzero(before.known[s, :, 0])[0])
        broken.hand[s, company, 0] = 0
        only = np.zeros_like(others[:, [g]])
        only[s] = True
        assert put_down_log_likelihood(broken, view.take([g]), np.array([0]), only, params, 0.25,
                                       Rules(num_players=4), FASTEST)[0] == -np.inf


@pytest.mark.parametrize("takes", [False, True])
def test_put_down_likelihood_is_the_weight_that_makes_sampled_hands_a_posterior(takes):
    """The weight of a sampled world (the other hands dealt uniformly from the unseen pool,
    as the player sees it now) for one other seat's latest put-downs, so that the weighted
    worlds follow the posterior of a softmax-greedy player:

    * log P(latest put-down p | hand + p), less log(unknown cards of p's company in hand + p)
      if p was not known to be in hand: the hand before held one more unknown card of that
      company than the sampled one, which the uniform deal makes that much less likely;
    * plus the log of the mean, over the cards g of hand + p not known to be there (a drawn
      card never is; a market take gains its own company only), of P(the take t of that turn
      | hand + p - g) (with ``takes``; else 1) times, with the put-down before (same round),
      P(earlier put-down q | hand + p - g + q), less log(unknown cards of q's company in
      that hand) if q was not known to be in it.

    A world whose hands lack a card known at a put-down weighs 0."""
    from startups_env.agents.search.inference import decision_log_prob

    rules, params, temperature = Rules(num_players=4), GreedyParams(), 0.5
    sim, log, _ = _greedy_games_with_log(4, 40, seed=11, turns=34)
    state = sim.state
    live = np.flatnonzero(~state.done)
    truth, view = state.take(live), log.take(live)
    seat = truth.current.astype(np.intp)
    public = public_state(truth, seat)
    n = live.size
    known = view.state.known.reshape(7, 6, 7, n)[np.arange(7), :, np.arange(7)]  # [seat, C, game] at its put-down
    cases = view.valid(public) & (np.arange(7)[:, None] != seat[None, :])
    draw_known = cases & view.earlier_valid() & (view.take_action == Action.DRAW) & (known.sum(axis=1) > 0)
    pairs = np.concatenate([np.argwhere(draw_known)[:3], np.argwhere(cases & ~draw_known)[::7][:5]])
    assert len(pairs) == 8 and view.earlier_valid()[pairs[:, 0], pairs[:, 1]].sum() >= 5
    rng = np.random.default_rng(0)
    checked = 0

    def put_down(states, s, hand, action):
        """Log-probability of the put-down, less log(unknown cards of its company) if hidden."""
        company = (action - Action.KEEP) % 6
        held = states.known[s, company, 0]
        return (decision_log_prob(states.copy(), s, hand, np.array([action]), params, temperature, rules)[0]
                - (np.log(hand[company, 0] - held) if held == 0 else 0.0))

    for s, g in pairs:
        worlds = determinize(public.take([g]), seat[[g]], 30, rng, FASTEST)
        worlds.put([0], truth.take([g]))  # the true hands among the hypotheses
        m = worlds.batch_size
        only = np.zeros((7, 1), bool)
        only[s] = True
        got = put_down_log_likelihood(worlds, view.take([g]), np.zeros(m, np.intp), only, params, temperature,
                                      rules, FASTEST, takes=takes)
        row = s * n + g
        latest, earlier = view.state.take([row]), view.earlier_state.take([row])
        at_take_state = view.take_state.take([row])
        put, put_before, take = view.action[s, g], view.earlier_action[s, g], view.take_action[s, g]
        for r in range(m):
            hand = worlds.hand[s][:, [r]].astype(np.int64)
            hand[(put - Action.KEEP) % 6] += 1
            want = put_down(latest, s, hand, put)
            free = np.maximum(hand[:, 0] - latest.known[s, :, 0], 0)
            if take != Action.DRAW:
                free = np.eye(6, dtype=np.int64)[take - Action.TAKE] * (hand[take - Action.TAKE, 0] > 0)
            terms = [-np.inf]
            for c in np.flatnonzero(free):
                at_take = hand.copy()
                at_take[c] -= 1
                term = np.log(free[c] / free.sum())
                if takes:
                    term += decision_log_prob(at_take_state.copy(), s, at_take, np.array([take]), params,
                                              temperature, rules)[0]
                if view.earlier_valid()[s, g]:
                    before = at_take.copy()
                    before[(put_before - Action.KEEP) % 6] += 1
                    term += put_down(earlier, s, before, put_before)
                terms.append(term)
            want += np.logaddexp.reduce(terms)
            if np.isfinite(want) or np.isfinite(got[r]):
                assert np.isclose(got[r], want), (s, g, r, got[r], want)
                checked += 1
        assert np.isfinite(got[0])  # the true hands are possible
    assert checked >= 100


def test_draw_from_pool_draws_what_is_needed_from_the_pool_uniformly():
    from startups_env.agents.search.worlds import draw_from_pool

    pool = np.array([[3, 0, 5], [0, 2, 5], [1, 2, 5], [0, 0, 5], [2, 0, 5], [0, 0, 5]])  # [C, 3]
    need = np.array([2, 4, 3])
    tally = np.zeros((6, 3))
    rng = np.random.default_rng(0)
    for _ in range(3000):
        drawn = draw_from_pool(pool, need, rng, FASTEST)
        assert np.array_equal(drawn.sum(axis=0), need) and (drawn <= pool).all() and (drawn >= 0).all()
        tally += drawn
    assert np.array_equal(tally[:, 1] / 3000, pool[:, 1])  # the whole pool of 4 drawn
    assert np.allclose(tally / 3000, pool * need / pool.sum(axis=0), atol=0.05)  # each card as likely


def test_older_put_down_evidence_tells_random_players_from_greedy_ones():
    """The log-odds of the greedy model against the uniform one over each seat's older
    put-downs: positive for greedy players, negative for random ones, 0 for the viewer and
    for seats with no older put-down."""
    from startups_env.agents.search import older_put_down_evidence

    sim = Simulator(Rules(num_players=4), 40, seed=2)
    bots = [make_agent("greedy"), make_agent("greedy"), make_agent("random", seed=1), make_agent("greedy")]
    log = History(40)
    for step in range(64):
        if step == 6:  # nobody has put down three cards yet
            early = older_put_down_evidence(log, public_state(sim.state, sim.state.current), sim.state.current,
                                            GreedyParams(), 0.5, Rules(), np.random.default_rng(0), FASTEST)
            assert (early == 0).all()
        sim.step(act_for_seats(sim, bots, history=log))
    live = np.flatnonzero(~sim.done)
    viewer = np.zeros(live.size, np.intp)
    public = public_state(sim.state.take(live), viewer)
    evidence = older_put_down_evidence(log.take(live), public, viewer, GreedyParams(), 0.5, Rules(),
                                       np.random.default_rng(0), FASTEST)
    older = log.take(live).older_valid(public).any(axis=0)  # [7, n]
    assert (evidence[0] == 0).all() and (evidence[4:] == 0).all() and (evidence[~older] == 0).all()
    assert older[1:4].all()
    assert evidence[[1, 3]].mean() > 1.5 and evidence[2].mean() < -1.5
    assert (evidence[[1, 3]] > 0).mean() > 0.85 and (evidence[2] < 0).mean() > 0.75


def test_resample_draws_each_games_count_by_weight():
    rng = np.random.default_rng(0)
    game = np.repeat([0, 1, 2], [4, 3, 2])
    with np.errstate(divide="ignore"):
        log_w = np.log(np.array([0.1, 0.0, 0.3, 0.6, 1.0, 1.0, 2.0, 0.0, 0.0]))  # game 2: every weight 0
    counts = np.array([5, 4, 2])
    tally = np.zeros(9)
    for _ in range(2000):
        rows = _resample(log_w, game, counts, rng)
        assert rows.shape == (11,)
        assert np.array_equal(game[rows], np.repeat([0, 1, 2], counts))
        tally += np.bincount(rows, minlength=9)
    share = tally / (2000 * counts[game])
    assert share[1] == 0
    assert np.allclose(share[:4], [0.1, 0.0, 0.3, 0.6], atol=0.02)
    assert np.allclose(share[4:7], [0.25, 0.25, 0.5], atol=0.02)
    assert np.allclose(share[7:], [0.5, 0.5], atol=0.03)  # all-zero weights: uniform


def test_world_pool_takes_games_and_samples_by_weight():
    """A pool of hand hypotheses: sampled by weight, each drawn hypothesis dealt a pile and
    removed cards of its own (the unseen cards its hands leave), games taken and renumbered."""
    sim = _mid_game(4, 6, seed=9)
    live = np.flatnonzero(~sim.done)[:3]
    state = sim.state.take(live)
    seat = state.current.astype(np.intp)
    public = public_state(state, seat)
    worlds = determinize(public, seat, 4, np.random.default_rng(0), FASTEST)
    game = np.repeat(np.arange(3), 4)
    hands = worlds.hand - public.hand[:, :, game]
    log_w = np.where(np.arange(12) % 4 == 1, 0.0, -np.inf)  # only the second hypothesis of each game
    pool = WorldPool(public, seat, hands, game, log_w).take(np.array([0, 2]))
    assert np.array_equal(pool.game, [0] * 4 + [1] * 4)
    sampled = pool.sample(np.array([3, 2]), np.random.default_rng(1), FASTEST)
    assert sampled.batch_size == 5
    expected = worlds.take([1, 1, 1, 9, 9])
    assert np.array_equal(sampled.hand, expected.hand) and np.array_equal(sampled.pile_pos, expected.pile_pos)
    in_deck = (np.arange(DECK_SIZE)[:, None] < NUM_REMOVED) | (np.arange(DECK_SIZE)[:, None] >= sampled.pile_pos)
    for g in range(5):
        assert sorted(sampled.deck[in_deck[:, g], g]) == sorted(expected.deck[in_deck[:, g], g])
    assert not np.array_equal(sampled.deck[:, 0], sampled.deck[:, 1])  # one hypothesis, two piles
    # repeat: the same draw, each world copied where it is asked for (copies share a pile).
    repeat = np.array([0, 0, 4, 2, 4, 1])
    repeated = pool.sample(np.array([3, 2]), np.random.default_rng(1), FASTEST, repeat=repeat)
    assert_states_equal(repeated, sampled.take(repeat))
    # A pool taken from a taken pool holds the same hypotheses.
    again = pool.take(np.array([1])).sample(np.array([2]), np.random.default_rng(1), FASTEST)
    assert np.array_equal(again.hand, worlds.take([9, 9]).hand)


# ----------------------------------------------------------------------------- honesty


def _scramble_hidden(state, viewer, rng):
    """A copy of ``state`` whose cards ``viewer`` (int[B]; -1: nobody's hand is seen) cannot
    see are dealt anew: the unknown cards of the other hands (``hand - known``), the pile
    still to draw and the removed cards are shuffled among those places (each keeps its
    size), and the deck's already dealt positions are shuffled among themselves. Everything
    ``viewer`` may know stays. (A public state, whose hands are their known cards and whose
    deck is blank, comes back unchanged.)"""
    out = state.copy()
    for g in range(state.batch_size):
        pos = int(state.pile_pos[g])
        others = [s for s in range(int(state.num_players[g])) if s != viewer[g]]
        unknown = [(out.hand[s, :, g] - out.known[s, :, g]).astype(np.intp) for s in others]
        deck = out.deck[:, g]  # (a view)
        places = np.flatnonzero(((np.arange(DECK_SIZE) < NUM_REMOVED) | (np.arange(DECK_SIZE) >= pos)) & (deck >= 0))
        pool = rng.permutation(np.concatenate([np.repeat(np.arange(6), u) for u in unknown] + [deck[places]]))
        start = 0
        for s, u in zip(others, unknown):
            out.hand[s, :, g] = out.known[s, :, g] + np.bincount(pool[start:start + u.sum()], minlength=6)
            start += u.sum()
        deck[places] = pool[start:]
        dealt = np.arange(NUM_REMOVED, pos)
        deck[dealt] = rng.permutation(deck[dealt])
    return out


def _scramble_log(log, rng):
    """A copy of a History with whatever hidden cards its states hold dealt anew (as
    seen by nobody); an honest log, which holds none, comes back equal."""
    twin = log.take(np.arange(log.batch_size))
    rows = np.full(twin.state.batch_size, -1)
    twin.state = _scramble_hidden(twin.state, rows, rng)
    twin.earlier_state = _scramble_hidden(twin.earlier_state, rows, rng)
    return twin


@pytest.mark.parametrize("players", [3, 5])
def test_search_decides_only_from_what_its_seat_may_know(players):
    """Two tables that differ only in cards the player to act cannot see (the other hands'
    unknown cards, the pile's order and make-up, the removed cards) give the search bot the
    same inputs through the driver, and so, with the same seed, the same sampled worlds,
    the same rollout values and the same decisions, at take and put-down decisions, with
    the table's put-downs read."""
    sim, log, _ = _greedy_games_with_log(players, 16, seed=20 + players, turns=6 * players)
    rng = np.random.default_rng(players)
    rules = Rules(num_players=players)
    for phase in (0, 1):
        state = sim.state
        live = ~state.done
        assert live.sum() >= 12 and (state.phase[live] == phase).all() and log.earlier_valid()[:, live].any()
        viewer = state.current.astype(np.intp)
        twin = _scramble_hidden(state, viewer, rng)
        unknown = state.hand - state.known
        assert (twin.hand != state.hand).any() and (twin.deck[NUM_REMOVED:] != state.deck[NUM_REMOVED:]).any()
        assert (twin.deck[:NUM_REMOVED] != state.deck[:NUM_REMOVED]).any() and unknown.sum() > 0
        assert np.array_equal(observe(twin), observe(state))
        results = []
        for table, table_log in ((state, log), (twin, _scramble_log(log, rng))):
            agent = make_agent("search", seed=0, determinizations=4, halving_rounds=1)
            values = []
            evaluate = agent._evaluate

            def recorded(*args, evaluate=evaluate, values=values):
                values.append(evaluate(*args))
                return values[-1]

            agent._evaluate = recorded
            actions = act_for_seats(Simulator.from_state(table.copy(), rules), [agent] * players, history=table_log,
                                    record=False)
            results.append((actions, values))
        (actions, values), (twin_actions, twin_values) = results
        assert len(values) >= 2 and len(values) == len(twin_values)
        for mine, theirs in zip(values, twin_values):
            assert np.array_equal(mine, theirs)
        assert np.array_equal(actions, twin_actions)
        sim.step(act_for_seats(sim, [make_agent("greedy")] * players, history=log))


@pytest.mark.parametrize("players", [3, 6])
def test_determinize_spreads_the_unseen_cards_in_proportion_mid_game(players):
    """Mid-game, with cards known in other hands: every world keeps the known cards, the
    hand sizes and all 45 cards; over many worlds each hidden place (another player's
    unknown hand slots, the pile, the removed cards) holds each company in proportion to
    the cards of it the player cannot see."""
    sim = _mid_game(players, 30, seed=40 + players)
    state = sim.state.take(np.flatnonzero(~sim.done))
    seat = state.current.astype(np.intp)
    others = (np.arange(7)[:, None] != seat[None, :]) & (np.arange(7)[:, None] < state.num_players[None, :])
    known_elsewhere = (state.known.sum(axis=1) * others).sum(axis=0)
    games = np.argsort(-known_elsewhere, kind="stable")[:3]  # the games with the most known cards in other hands
    assert known_elsewhere[games].min() > 0
    state, seat, others = state.take(games), seat[games], others[:, games]
    k = 4000
    worlds = determinize(public_state(state, seat), seat, k, np.random.default_rng(2), FASTEST)
    rows = np.repeat(np.arange(3), k)
    assert (worlds.hand >= state.known[..., rows]).all()
    assert np.array_equal(worlds.hand.sum(axis=1), state.hand.sum(axis=1)[:, rows])
    pos = np.arange(DECK_SIZE)[:, None]
    pile = pos >= worlds.pile_pos[None, :]
    removed = np.broadcast_to(pos < NUM_REMOVED, pile.shape)
    for c, size in enumerate(COMPANY_SIZES):
        total = (worlds.hand[:, c].sum(axis=0) + worlds.portfolio[:, c].sum(axis=0) + worlds.market_count[c]
                 + ((worlds.deck == c) & (pile | removed)).sum(axis=0))
        assert (total == size).all()
    unseen = state.unseen(seat).astype(float)  # [C, 3]
    share = unseen / unseen.sum(axis=0)
    for g in range(3):
        mine = rows == g
        for s in np.flatnonzero(others[:, g]):
            slots = HAND_SIZE - state.known[s, :, g].sum()
            mean = (worlds.hand[s][:, mine] - state.known[s, :, g][:, None]).mean(axis=1)
            assert np.allclose(mean, slots * share[:, g], atol=0.05), (g, s)
        for place in (pile, removed):
            counts = np.stack([((worlds.deck == c) & place)[:, mine].sum(axis=0) for c in range(6)])
            assert np.allclose(counts.mean(axis=1), place[:, mine].sum(axis=0)[0] * share[:, g], atol=0.1)


@pytest.mark.parametrize("bad", ["abc", float("nan"), float("inf"), -float("inf"), True, None])
def test_greedy_rejects_non_finite_parameters(bad):
    """A bad weight is refused when the bot is built, not by numpy in the middle of a game."""
    with pytest.raises(ValueError, match="chip_value"):
        make_agent("greedy", chip_value=bad)
    with pytest.raises(ValueError, match="spread_per_card"):
        GreedyParams(spread_per_card=bad)
    with pytest.raises(ValueError, match="params"):
        make_agent("greedy", params={"chip_value": 0.0})
    agent = make_agent("greedy", chip_value=-1, spread=np.float32(0.5))
    assert agent.params.chip_value == -1 and agent.params.spread == pytest.approx(0.5)


@pytest.mark.parametrize("overrides", [{"spread": 0.0}, {"spread": -0.3}, {"spread": 0.009}, {"spread_per_card": -0.01},
                                       {"spread": 0.0, "spread_per_card": 0.0}])
def test_greedy_rejects_spreads_that_give_no_probability(overrides):
    """A negative spread_per_card made the bot's win chances NaN, so it played its first
    legal action everywhere (argmax of NaN scores) with no error; a zero spread divides by
    zero once the pile is empty; a negative spread is the positive one squared (refused as
    meaningless); below 0.01 a card's margin overflows the logistic's exp."""
    with pytest.raises(ValueError, match="spread must be >= 0.01 and spread_per_card >= 0"):
        make_agent("greedy", **overrides)
    make_agent("greedy", spread=0.01, spread_per_card=0.0)


@pytest.mark.parametrize("bad", ["abc", float("nan"), float("inf"), True, None])
def test_banker_rejects_non_finite_parameters(bad):
    with pytest.raises(ValueError, match="min_coins"):
        make_agent("banker", min_coins=bad)
    with pytest.raises(ValueError, match="useful_bonus"):
        make_agent("banker", useful_bonus=bad)
    agent = make_agent("banker", min_coins=3, useful_bonus=np.float64(0.5))
    assert (agent.min_coins, agent.useful_bonus) == (3.0, 0.5)


def test_types_per_world_draw_each_seat_once_per_world_by_its_belief():
    """Under the adaptive model with ``types_per_world``, each sampled world plays every seat
    as greedy (no random moves) or as the second type (random moves with chance
    ``other_type_epsilon``) throughout, greedy as often as believed."""
    belief = np.array([[0.9, 0.2, 0.5, 0.0, 1.0, 0.5, 0.5], [0.1, 0.7, 0.5, 0.3, 0.6, 0.5, 0.5]])
    game_of_world = np.repeat([0, 1], 40_000)
    bot = SearchAgent(seed=0, types_per_world=True)
    drawn = bot.rollouts.world_greedy_chance(belief, game_of_world, bot.rng)
    assert set(np.unique(drawn)) == {0.0, 1.0}
    for game in (0, 1):
        np.testing.assert_allclose(drawn[game_of_world == game].mean(axis=0), belief[game], atol=0.01)
    chance = bot.rollouts.random_chance(np.zeros(game_of_world.size, np.int64), drawn)
    np.testing.assert_allclose(chance[:, 1:], (1.0 - drawn[:, 1:]) * bot.config.other_type_epsilon)
    np.testing.assert_array_equal(chance[:, 0], 0.0)  # the mover (seat 0) plays greedy
    prior = bot.rollouts.world_greedy_chance(None, game_of_world, bot.rng)
    assert abs(prior.mean() - bot.config.greedy_prior) < 0.01
    mixed = SearchAgent(seed=0, types_per_world=False)
    np.testing.assert_array_equal(mixed.rollouts.world_greedy_chance(belief, game_of_world, mixed.rng),
                                  belief[game_of_world])  # per move: the belief itself
    assert mixed.rollouts.world_greedy_chance(None, game_of_world, mixed.rng) is None


@pytest.mark.parametrize("types_per_world", [False, True])
def test_other_type_epsilon_sets_the_random_moves_of_the_adaptive_models_second_type(types_per_world):
    """The adaptive model's second type moves at random with chance ``other_type_epsilon``:
    a seat greedy with chance g (drawn 0/1 per world with ``types_per_world``) moves at
    random with chance (1 - g) * epsilon, and with ``rollout_epsilon`` r on top of that,
    1 - (1 - r)(1 - (1 - g) epsilon). The mover keeps r alone."""
    greedy = np.array([[1.0, 0.0, 0.25, 1.0, 0.0, 0.5, 0.75]] * 2)
    mover = np.array([0, 3])
    for epsilon, rollout_epsilon in ((0.4, 0.0), (0.4, 0.1), (1.0, 0.0)):
        bot = SearchAgent(seed=0, types_per_world=types_per_world, other_type_epsilon=epsilon,
                          rollout_epsilon=rollout_epsilon)
        chance = bot.rollouts.random_chance(mover, greedy)
        expected = 1.0 - (1.0 - rollout_epsilon) * (1.0 - (1.0 - greedy) * epsilon)
        expected[np.arange(2), mover] = rollout_epsilon
        np.testing.assert_allclose(chance, expected)
    for bad in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="other_type_epsilon"):
            SearchAgent(other_type_epsilon=bad)
