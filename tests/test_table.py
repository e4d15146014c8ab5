"""The policy protocol, the public history and the one table driver: what a bot is given,
how its answers are checked, and that a bot plays the same wherever it sits."""

from __future__ import annotations

import numpy as np
import pytest
from startups_env.agents import Agent, act_for_seats, make_agent

from startups_env import Rules, Simulator
from startups_env.envs.vector import SeatBatch
from startups_env.startups.history import History, PutDownLog
from startups_env.startups.observe import observe
from startups_env.startups.rules import NUM_ACTIONS, Action
from startups_env.table.driver import Table, play_aec_game
from startups_env.table.policy import FunctionPolicy, as_policy, check_act_inputs, needs_of, pettingzoo_policy
from startups_env.tools.replay import record_game

SMALL_SEARCH = {"determinizations": 2, "max_candidates": 2, "halving_rounds": 1}


def _first_legal(obs, mask):
    return mask.argmax(axis=1)


# ----------------------------------------------------------------- the protocol
def test_plain_callables_and_objects_are_policies():
    policy = as_policy(_first_legal)
    assert isinstance(policy, FunctionPolicy) and policy.name == "_first_legal" and policy.needs == frozenset()
    agent = make_agent("greedy")
    assert as_policy(agent) is agent and needs_of(agent) == {"rules"}  # (a free draw on a market row)
    assert needs_of(make_agent("random")) == frozenset()
    assert needs_of(make_agent("search")) == {"public", "history"}
    assert needs_of(make_agent("search", infer_hands=False)) == {"public"}
    assert PutDownLog is History

    class Old:
        needs_public_state = True

        def act(self, obs, mask, public=None):
            return mask.argmax(axis=1)

    with pytest.raises(ValueError, match="needs_public_state, which drivers no longer read.*needs = frozenset"):
        as_policy(Old())

    class Greedy:
        needs = {"hands"}

        def act(self, obs, mask):
            return mask.argmax(axis=1)

    with pytest.raises(ValueError, match=r"needs \['hands'\], which no driver supplies"):
        as_policy(Greedy())
    for bad in (3, None):
        with pytest.raises(ValueError, match="a policy must have an act"):
            as_policy(bad)
    with pytest.raises(ValueError, match=r"'greedy' is a bot's name, not a policy: build the bot first"):
        as_policy("greedy")


def test_every_driver_answers_a_bot_name_alike():
    """Names work in run_arena and on the command lines; the library's drivers take bots. A
    name there was answered "'greedy' is neither callable nor has an act(obs, mask) method"
    (the vector env), or, given as a bare string, was split into letters: each now says it
    is a name and how to build the bot."""
    from startups_env.envs.vector import SeatBatch, StartupsVecEnv
    from startups_env.table import act_for_seats as library_act_for_seats

    hint = r"'greedy' is a bot's name, not a policy: build the bot first, e.g. " \
           r"startups_env.agents.make_agent\('greedy', seed=0\)"
    random_bot = make_agent("random", seed=0)
    for build, where in [(lambda: StartupsVecEnv(4, opponents=["greedy"]), "opponent 0: "),
                         (lambda: SeatBatch(4, "greedy"), "opponent 0: "),
                         (lambda: SeatBatch(4, [random_bot, "greedy"]), "opponent 1: "),
                         (lambda: library_act_for_seats(Simulator(Rules(num_players=3), 2, seed=0),
                                                        [random_bot, "greedy", random_bot]), "agent 1: "),
                         (lambda: record_game(["greedy"] * 3, Rules(num_players=3), seed=0), r"policy\[0\]: ")]:
        with pytest.raises(ValueError, match=where + hint):
            build()


def test_agents_take_one_game_as_the_pettingzoo_env_gives_it():
    aec = pytest.importorskip("startups_env.envs.aec")
    env = aec.env(num_players=3)
    env.reset(seed=2)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"].dtype == np.int8 and obs["observation"].ndim == 1
    for name in ("random", "greedy", "banker"):
        action = make_agent(name, seed=1).act(obs["observation"], obs["action_mask"])
        assert action.shape == (1,) and obs["action_mask"][action[0]] == 1
    env.step(action)  # the env takes int[1]
    agent, obs = env.agent_selection, env.observe(env.agent_selection)
    search = make_agent("search", seed=0, **SMALL_SEARCH)
    with pytest.raises(ValueError, match="history"):
        search.act(obs["observation"], obs["action_mask"], public=env.public_state(agent))
    quiet = make_agent("search", seed=0, infer_hands=False, **SMALL_SEARCH)
    assert obs["action_mask"][quiet.act(obs["observation"], obs["action_mask"], public=env.public_state(agent))[0]]
    # Masks must be 0/1: anything else is a caller's bug.
    with pytest.raises(ValueError, match="other than 0 and 1"):
        check_act_inputs(obs["observation"], obs["action_mask"] * 2)
    with pytest.raises(ValueError, match="mask must be bool"):
        check_act_inputs(obs["observation"], obs["action_mask"].astype(np.float32))


def test_every_built_in_bot_takes_the_protocols_keywords():
    """Any driver may pass ``public=`` and ``history=`` by keyword to any bot (the protocol's
    signature), whatever the bot declares it needs."""
    from startups_env.startups.state import public_state

    sim = Simulator(Rules(num_players=4), batch_size=6, seed=4)
    history = History(6)
    for _ in range(9):  # a few turns in, so the history holds put-downs
        actions = sim.random_actions()
        history.record(sim.state, actions)
        sim.step(actions)
    obs, mask = observe(sim.state), sim.legal_mask()
    public = public_state(sim.state, sim.state.current)
    for name in ("random", "greedy", "banker", "ppo", "exit", "search"):
        bot = make_agent(name, seed=1, **(SMALL_SEARCH if name == "search" else {}))
        chosen = bot.act(obs, mask, public=public, history=history)
        assert mask[np.arange(6), chosen].all(), name


def test_agent_seed_takes_what_the_constructor_takes():
    sim = Simulator(Rules(num_players=4), 16, seed=1)
    obs, mask = observe(sim.state), sim.legal_mask()
    for seed in (lambda: 7, lambda: np.random.SeedSequence(7), lambda: np.random.default_rng(7)):
        agent = make_agent("random", seed=3)
        agent.seed(seed())
        assert np.array_equal(agent.act(obs, mask), make_agent("random", seed=seed()).act(obs, mask))
    agent.seed(None)  # fresh entropy, as the constructor's default
    with pytest.raises(ValueError, match="seed must be"):
        make_agent("random").seed(-1)


# ----------------------------------------------------------------- the table
def test_table_checks_every_answer_naming_policy_games_and_seats():
    sim = Simulator(Rules(num_players=3), 4, seed=0)
    answers = {
        "floats": (lambda obs, mask: mask.argmax(axis=1) + 0.0, r"agent 1 \(floats\) returned float64 \[4\] for games "
                   r"\[0, 1, 2, 3\] \(seats \[0, 0, 0, 0\]\)"),
        "short": (lambda obs, mask: mask.argmax(axis=1)[:2], r"agent 1 \(short\) returned int64 \[2\]"),
        "illegal": (lambda obs, mask: np.full(obs.shape[0], Action.KEEP), r"agent 1 \(illegal\) chose illegal actions "
                    r"\[7, 7, 7, 7\] in games \[0, 1, 2, 3\] \(seats \[0, 0, 0, 0\]\)"),
        "range": (lambda obs, mask: np.full(obs.shape[0], NUM_ACTIONS), r"agent 1 \(range\) chose illegal actions \[19"),
    }
    for name, (fn, match) in answers.items():
        policy = FunctionPolicy(fn, name=name)
        assignment = np.ones((4, 3), np.int64)  # entry 1 plays every seat
        with pytest.raises(ValueError, match=match):
            act_for_seats(sim, [_first_legal, policy], assignment)


def test_table_groups_by_object_and_times_per_entry():
    calls = []

    class Recorder(Agent):
        name = "recorder"

        def act(self, obs, mask):
            calls.append((self, obs.shape[0]))
            return mask.argmax(axis=1).astype(np.int64)

    a, b = Recorder(0), Recorder(0)
    sim = Simulator(Rules(num_players=3), 5, seed=0)
    timings: dict = {}
    # Games 0-1 by a in every seat, 2-4 by b; a also plays as entry 2 (the same object).
    assignment = np.array([[0, 2, 0]] * 2 + [[1, 1, 1]] * 3)
    table = Table(sim, [a, b, a], assignment=assignment, timings=timings)
    assert table.history is None  # nobody reads it
    table.step(table.act())
    assert calls == [(a, 2), (b, 3)]
    assert timings[0][0] == 2 and timings[1][0] == 3 and 2 not in timings
    with pytest.raises(ValueError, match=r"assignment refers to entries outside 0..2"):
        Table(sim, [a, b, a], assignment=np.full((5, 3), 3))
    with pytest.raises(ValueError, match=r"who names entries outside 0..2: \[0, 3\]"):
        table.act(who=np.array([0, 0, 3, 0, 0]))


def test_a_bot_that_needs_the_history_is_never_silently_given_none():
    sim = Simulator(Rules(num_players=3), 2, seed=0)
    search = make_agent("search", seed=0, **SMALL_SEARCH)
    with pytest.raises(ValueError, match=r"agent 0 \(search\) reads the table's history.*does not keep"):
        act_for_seats(sim, [search, _first_legal, _first_legal])
    table = Table(sim, [_first_legal] * 3)
    with pytest.raises(ValueError, match="does not keep.*history=True"):
        table.set_policies([search] * 3)
    with pytest.raises(ValueError, match="does not keep"):
        SeatBatch(2, [_first_legal], players=3, seed=0, history=False).set_opponents([search])
    with pytest.raises(ValueError, match="does not keep"):
        Table(sim, [search] * 3, history=False).act()
    # Explicitly built without hand reading, the search needs no history.
    quiet = make_agent("search", seed=0, infer_hands=False, **SMALL_SEARCH)
    assert act_for_seats(sim, [quiet] * 3).shape == (2,)


def test_table_step_logs_only_what_is_played():
    """The history logs the games stepped (active) and nothing when the step refuses."""
    sim = Simulator(Rules(num_players=3), 4, seed=1)
    table = Table(sim, [_first_legal] * 3, history=True)
    table.step(table.act())  # everyone takes
    actions = table.act()  # now everyone puts down
    active = np.array([True, False, True, False])
    table.step(actions, active=active)
    assert (table.history.action[0] >= 0).tolist() == active.tolist()
    saved = table.history.take(np.arange(4))
    bad = actions.copy()
    bad[1] = Action.DRAW  # a take in the put-down phase
    with pytest.raises(ValueError, match="illegal"):
        table.step(bad)
    assert np.array_equal(table.history.action, saved.action)
    assert np.array_equal(table.history._pending_take, saved._pending_take)


# ----------------------------------------------------------------- one bot, every driver
class _Tape:
    """A policy that plays as ``inner`` does and notes each move and whether the search
    read hands for it (drew its worlds from weighted hand hypotheses)."""

    def __init__(self, inner):
        self.inner, self.name, self.needs = inner, inner.name, inner.needs
        self.moves: list[int] = []
        self.read = 0
        hypotheses = inner._hand_hypotheses

        def counted(*args):
            pool = hypotheses(*args)
            self.read += pool is not None
            return pool

        inner._hand_hypotheses = counted

    def act(self, obs, mask, **given):
        actions = self.inner.act(obs, mask, **given)
        self.moves.extend(actions.tolist())
        return actions


def test_a_bot_plays_the_same_in_the_arena_the_training_batch_a_replay_and_a_pettingzoo_game():
    """The search bot (reading hands) with one seed, at a 3-player table with a greedy
    player, makes the same moves through the arena's table, the training batch (as the
    opponent), the replay recorder and play_aec_game: every driver gives it the same
    observation, public state and history (the greedy player's moves included)."""
    def tape():
        return _Tape(make_agent("search", seed=5, **SMALL_SEARCH))

    # The training batch picks the deal and the greedy learner's seat.
    batched = tape()
    batch = SeatBatch(1, [batched], players=3, seed=4)
    obs = batch.reset()
    learner = int(batch.learner_seat[0])
    deck = batch.sim.state.deck[:, 0].copy()
    greedy = make_agent("greedy")
    while True:
        obs, _, terminated, truncated, info = batch.step(greedy.act(obs, batch.action_masks()))
        if terminated[0] or truncated[0]:
            break
    learner_score = int(info["score"][0])

    def seats(bot):
        return [greedy if s == learner else bot for s in range(3)]

    arena = tape()
    sim = Simulator(Rules(num_players=3), 1, decks=deck[None])
    Table(sim, seats(arena)).play()
    recorded = tape()
    log = record_game(seats(recorded), Rules(num_players=3), decks=[deck.tolist()])
    assert log.result["scores"] == sim.state.scores[:3, 0].tolist()
    assert log.result["scores"][learner] == learner_score
    moves = arena.moves
    assert len(moves) > 20 and arena.read > 10, "the search read hands"
    assert recorded.moves == moves and recorded.read == arena.read
    # The batch dealt a new game at once, where the opponent may have moved already.
    assert batched.moves[:len(moves)] == moves and batched.read >= arena.read

    aec = pytest.importorskip("startups_env.envs.aec")
    single = tape()
    env = aec.env(num_players=3, history=True)
    result = play_aec_game(env, {f"player_{s}": p for s, p in enumerate(seats(single))}, options={"deck": deck})
    assert single.moves == moves and single.read == arena.read
    assert [result["infos"][f"player_{s}"]["score"] for s in range(3)] == log.result["scores"]


# ----------------------------------------------------------------- one PettingZoo game
def test_aec_env_gives_public_state_and_history_through_the_wrapper():
    aec = pytest.importorskip("startups_env.envs.aec")
    log = record_game(None, Rules(num_players=4), seed=3)
    env = aec.env(num_players=4, history=True)
    with pytest.raises(ValueError, match=r"public_state\(\) needs a game: call reset\(\) first"):
        env.public_state("player_0")
    env.reset(options={"deck": log.deck})
    sim = Simulator(Rules(num_players=4), 1, decks=np.array([log.deck]))
    table = Table(sim, [_first_legal] * 4, history=True)
    for k, action in enumerate(log.actions):
        agent = env.agent_selection
        public = env.public_state(agent)
        assert (public.deck == -1).all() and np.array_equal(public.hand, aec_public_hand(sim, int(agent[-1])))
        env.step(action)
        table.step(np.array([action]))
        if k % 17 == 0 or k == len(log.actions) - 1:
            mine, theirs = env.history, table.history
            for name in ("action", "earlier_action", "take_action"):
                assert np.array_equal(getattr(mine, name), getattr(theirs, name)), name
            assert np.array_equal(mine.state.hand, theirs.state.hand)
    assert (env.history.action >= 0).any()
    plain = aec.env(num_players=4)
    plain.reset(seed=0)
    with pytest.raises(ValueError, match="keeps no history.*history=True"):
        plain.history
    with pytest.raises(ValueError, match="unknown agent"):
        plain.public_state("player_9")


def aec_public_hand(sim, seat):
    from startups_env.startups.state import public_state

    return public_state(sim.state, np.array([seat])).hand


def test_play_aec_game_seats_outside_policies_on_a_given_deck():
    aec = pytest.importorskip("startups_env.envs.aec")
    deck = record_game(None, Rules(num_players=3), seed=8).deck

    def first_legal_one_game(observation):  # PettingZoo style: one observation dict, one int
        return int(np.flatnonzero(observation["action_mask"])[0])

    policies = [make_agent("greedy"), _first_legal, pettingzoo_policy(first_legal_one_game)]
    result = play_aec_game(aec.env(num_players=3), dict(zip(["player_0", "player_1", "player_2"], policies)),
                           options={"deck": deck}, seed=1)
    log = record_game(policies, Rules(num_players=3), decks=[deck])
    assert [result["infos"][f"player_{s}"]["score"] for s in range(3)] == log.result["scores"]
    assert result["steps"] == len(log.actions)

    def bad(observation):
        return 0.5

    with pytest.raises(ValueError, match="must return one integer action id"):
        play_aec_game(aec.env(num_players=3), {"player_0": pettingzoo_policy(bad), "player_1": _first_legal,
                                               "player_2": _first_legal}, seed=1)
    with pytest.raises(ValueError, match="not agents of this env"):
        play_aec_game(aec.env(num_players=2), {"player_0": _first_legal, "player_1": _first_legal,
                                               "player_2": _first_legal})
