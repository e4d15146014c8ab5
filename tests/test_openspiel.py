"""The OpenSpiel game (startups_env.envs.openspiel) and OpenSpiel's bots at our table
(startups_env.agents.openspiel_bots): OpenSpiel's own random simulation test; the 300
reference games replayed state for state against the simulator; the round game; returns
equal to the env's rewards; resampling; OpenSpiel's IS-MCTS, outcome-sampling MCCFR and
rl_environment on the game; the bot specs in the arena. Needs the ``openspiel`` extra."""

import dataclasses

import numpy as np
import pytest
from helpers import load_golden

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python import rl_environment  # noqa: E402
from open_spiel.python.algorithms import ismcts, mcts, outcome_sampling_mccfr  # noqa: E402

from startups_env import Rules, Simulator, env  # noqa: E402
from startups_env.agents import build_agent, make_agent  # noqa: E402
from startups_env.agents.arena import run_arena  # noqa: E402
from startups_env.agents.ladder import run_ladder  # noqa: E402
from startups_env.agents.openspiel_bots import StartupsBot  # noqa: E402
from startups_env.envs import openspiel  # noqa: E402
from startups_env.startups.observe import OBS_DIM, PIECES  # noqa: E402
from startups_env.startups.rules import DECK_SIZE, HAND_SIZE, NUM_ACTIONS, NUM_REMOVED, pile_start  # noqa: E402
from startups_env.startups.history import History  # noqa: E402
from startups_env.startups.state import public_state  # noqa: E402

GOLDEN = load_golden()
CHANCE = pyspiel.PlayerId.CHANCE


def _chance_card(state, reference_deck, reference_sim) -> int:
    """The chance outcome the reference deck deals next: a hand card, or the pile's top."""
    play = state._play
    if play.dealing:
        return int(reference_deck[NUM_REMOVED + play.dealt])
    return int(reference_deck[int(reference_sim.state.pile_pos[0])])


def _undealt_in(reference_deck, sim, dealt: int | None) -> np.ndarray:
    """The cards the reference deck has not dealt yet: during the deal, all but the first
    ``dealt`` hand cards; then its removed cards and the rest of its pile."""
    deck = np.asarray(reference_deck)
    if dealt is not None:
        rest = np.concatenate([deck[:NUM_REMOVED], deck[NUM_REMOVED + dealt:]])
    else:
        rest = np.concatenate([deck[:NUM_REMOVED], deck[int(sim.state.pile_pos[0]):]])
    return np.bincount(rest, minlength=6)


def _assert_same_game(state, sim, n: int) -> None:
    """The OpenSpiel state is the simulator's game: every State field (the deck where it
    has been dealt), every seat's observation, the legal actions."""
    mine, theirs = state._play.state, sim.state
    for f in dataclasses.fields(theirs):
        if f.name != "deck":
            np.testing.assert_array_equal(getattr(mine, f.name), getattr(theirs, f.name), err_msg=f.name)
    dealt = slice(NUM_REMOVED, int(theirs.pile_pos[0]))
    np.testing.assert_array_equal(mine.deck[dealt], theirs.deck[dealt])
    for seat in range(n):
        np.testing.assert_array_equal(np.array(state.observation_tensor(seat), np.float32), sim.observe_one(seat))
    if not state.is_terminal():
        assert state.legal_actions() == np.flatnonzero(sim.legal_mask()[0]).tolist()


def _replay(game, deck, actions, sim) -> "openspiel.StartupsState":
    """Play ``actions`` from ``deck`` in ``game`` and in ``sim`` side by side, checking
    every chance node's outcomes and every position on the way."""
    n = game.num_players()
    state = game.new_initial_state()
    for action in actions:
        while state.is_chance_node():
            dealt = state._play.dealt if state._play.dealing else None
            outcomes = dict(state.chance_outcomes())
            undealt = _undealt_in(deck, sim, dealt)
            assert outcomes == {c: k / undealt.sum() for c, k in enumerate(undealt) if k}
            state.apply_action(_chance_card(state, deck, sim))
        _assert_same_game(state, sim, n)
        assert state.current_player() == int(sim.state.current[0])
        state.apply_action(action)
        if action != 0:
            sim.step_one(action)
        else:  # the draw: its card is the next chance node
            assert state.current_player() == CHANCE
            card = _chance_card(state, deck, sim)
            sim.step_one(action)
            state.apply_action(card)
    _assert_same_game(state, sim, n)
    return state


# ----------------------------------------------------------------- OpenSpiel's own test
@pytest.mark.parametrize("params", [{}, {"players": 2, "reward": "margin"}, {"players": 3, "reward": "rank"},
                                    {"players": 7, "rounds": 4, "reward": "score", "turn_cap": 60},
                                    {"players": 5, "turn_cap": 8}])
def test_random_sim_test_passes(params):
    game = pyspiel.load_game(openspiel.GAME_NAME, params)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def test_parameters_and_their_errors():
    game = pyspiel.load_game("startups(players=5,rounds=4,reward=rank,turn_cap=100)")
    assert game.rules == Rules(num_players=5, rounds=4, reward="rank", turn_cap=100)
    assert game.num_players() == 5 and game.num_distinct_actions() == NUM_ACTIONS
    assert game.max_chance_outcomes() == 6 and game.max_game_length() == 2 * 100 * 4
    assert game.observation_tensor_shape() == [OBS_DIM]
    assert game.information_state_tensor_shape() == [OBS_DIM + 800 * NUM_ACTIONS]
    assert pyspiel.load_game("startups").rules == Rules()
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert pyspiel.load_game("startups(reward=margin)").get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    with pytest.raises(ValueError, match=r"unknown startups game parameters \['seats'\]"):
        openspiel.StartupsGame({"seats": 4})
    with pytest.raises(ValueError, match="players must be an int from 2 to 7, got 8"):
        openspiel.StartupsGame({"players": 8})
    with pytest.raises(ValueError, match="reward must be one of"):
        openspiel.StartupsGame({"reward": "points"})
    with pytest.raises(ValueError, match="rounds must be 1"):
        openspiel.StartupsGame({"rounds": 2})


# ----------------------------------------------------------------- state for state
def test_the_300_reference_games_state_for_state():
    games = {n: pyspiel.load_game("startups", {"players": n}) for n in range(2, 8)}
    for record in GOLDEN:
        n, deck = record["players"], record["deck"]
        sim = Simulator(Rules(num_players=n), 1, decks=np.array([deck]))
        state = _replay(games[n], deck, record["actions"], sim)
        assert state.is_terminal()
        assert sim.state.scores[:n, 0].tolist() == record["scores"]
        np.testing.assert_allclose(state.returns(), sim.rewards(np.zeros(1, np.intp), np.float64)[:n, 0])


@pytest.mark.parametrize("reward", ["win", "rank", "score", "margin"])
def test_returns_are_the_env_rewards(reward):
    for record in GOLDEN[::25]:
        n = record["players"]
        game = pyspiel.load_game("startups", {"players": n, "reward": reward})
        sim = Simulator(Rules(num_players=n, reward=reward), 1, decks=np.array([record["deck"]]))
        state = _replay(game, record["deck"], record["actions"], sim)
        aec = env(num_players=n, reward=reward)
        aec.reset(options={"deck": record["deck"]})
        for action in record["actions"]:
            aec.step(action)
        assert state.returns() == [aec.rewards[f"player_{i}"] for i in range(n)]


def _random_play(game, seed: int):
    """A game played at random (chance by its outcomes' chances): the final state, the
    player actions, and each round's deck rebuilt from the chance outcomes (the hands as
    dealt, the pile as drawn, the cards never drawn after it and among the removed)."""
    rng = np.random.default_rng(seed)
    state, actions, rounds, drawn = game.new_initial_state(), [], [], []
    while not state.is_terminal():
        if state.is_chance_node():
            if state._play.dealing and state._play.dealt == 0:
                rounds.append(drawn := [])
            cards, chances = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(cards, p=chances)))
            drawn.append(state.history()[-1])
        else:
            legal = state.legal_actions()
            actions.append(int(rng.choice(legal)))
            state.apply_action(actions[-1])
    n = game.num_players()
    decks = []
    for cards in rounds:
        left = np.bincount(cards, minlength=6)
        rest = np.repeat(np.arange(6), np.array([5, 6, 7, 8, 9, 10]) - left).tolist()
        decks.append(rest[:NUM_REMOVED] + cards[:HAND_SIZE * n] + cards[HAND_SIZE * n:] + rest[NUM_REMOVED:])
        assert len(decks[-1]) == DECK_SIZE
    return state, actions, decks


@pytest.mark.parametrize("players", [2, 4, 7])
def test_the_round_game_matches_the_simulator(players):
    game = pyspiel.load_game("startups", {"players": players, "rounds": 4, "reward": "score"})
    for seed in range(2):
        final, actions, decks = _random_play(game, seed)
        assert len(decks) == 4
        sim = Simulator(Rules(num_players=players, rounds=4, reward="score"), 1, decks=np.array([decks]))
        for action in actions:
            sim.step_one(action)
        assert sim.done[0]
        np.testing.assert_array_equal(final._play.state.round_points, sim.state.round_points)
        assert final.returns() == sim.rewards(np.zeros(1, np.intp), np.float64)[:players, 0].tolist()


# ----------------------------------------------------------------- observations and resampling
def _mid_game(players: int, decisions: int, seed: int = 0):
    """A state after ``decisions`` random decisions, at a decision with a choice."""
    rng = np.random.default_rng(seed)
    game = pyspiel.load_game("startups", {"players": players})
    state, made = game.new_initial_state(), 0
    while made < decisions or state.is_chance_node() or len(state.legal_actions()) < 2:
        if state.is_chance_node():
            cards, chances = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(cards, p=chances)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
            made += 1
    return game, state


def test_information_state_is_the_observation_and_the_public_record():
    game, state = _mid_game(4, 30)
    player = state.current_player()
    info = np.array(state.information_state_tensor(player), np.float32)
    np.testing.assert_array_equal(info[:OBS_DIM], state.observation_tensor(player))
    record = info[OBS_DIM:].reshape(-1, NUM_ACTIONS)
    played = [step.action for step in state.full_history() if step.player != CHANCE]
    assert record.sum() == len(played) and np.argmax(record[:len(played)], axis=1).tolist() == played
    text = state.observation_string(player)
    assert text.startswith("num_players=0,0,1,0,0,0 ") and [w.split("=")[0] for w in text.split()] == [
        p.name for p in PIECES]
    assert state.information_state_string(player) == f"{text} record={','.join(map(str, played))}"


def test_resampling_keeps_what_the_player_knows_and_redraws_the_rest():
    game, state = _mid_game(4, 40, seed=3)
    player = state.current_player()
    rng = np.random.default_rng(0)
    hands = set()
    for sampler in [rng] * 20 + [pyspiel.UniformProbabilitySampler(0.0, 1.0)] * 5:
        world = state.resample_from_infostate(player, sampler)
        assert world.information_state_string(player) == state.information_state_string(player)
        np.testing.assert_array_equal(public_state(world._play.state, np.array([player])).hand,
                                      public_state(state._play.state, np.array([player])).hand)
        assert world.legal_actions() == state.legal_actions()
        hands.add(world._play.state.hand.tobytes())
        while not world.is_terminal():  # a world plays on to its end
            world.apply_action(world.chance_outcomes()[0][0] if world.is_chance_node() else world.legal_actions()[0])
    assert len(hands) > 10  # the other hands are drawn anew
    draw = openspiel.make_resampler(7)
    first = [draw(state, player)._play.state.hand.tobytes() for _ in range(3)]
    assert first[0] == openspiel.make_resampler(7)(state, player)._play.state.hand.tobytes()  # seeded
    assert len(set(first)) > 1


def test_resampling_is_refused_where_nothing_consistent_is_hidden():
    game = pyspiel.load_game("startups", {"players": 3})
    with pytest.raises(ValueError, match="not during a deal"):
        game.new_initial_state().resample_from_infostate(0, np.random.default_rng(0))
    _, state = _mid_game(3, 10)
    with pytest.raises(ValueError, match="player must be a seat from 0 to 2, got 3"):
        state.resample_from_infostate(3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="probability_sampler must be"):
        state.resample_from_infostate(0, 0.5)


def test_illegal_actions_and_chance_outcomes_are_refused():
    _, state = _mid_game(3, 10)
    illegal = next(a for a in range(NUM_ACTIONS) if a not in state.legal_actions())
    with pytest.raises(ValueError, match=f"illegal action {illegal} for player"):
        state._apply_action(illegal)
    state = pyspiel.load_game("startups").new_initial_state()
    with pytest.raises(ValueError, match="chance outcome 6 is not a company"):
        state._apply_action(6)


def test_state_from_public_gives_the_same_decision():
    sim = Simulator(Rules(num_players=4), 1, seed=3)
    for _ in range(25):
        sim.step_one(int(np.flatnonzero(sim.legal_mask()[0])[-1]))
    game = openspiel.StartupsGame({"players": 4})
    seat = sim.state.current.astype(np.intp)
    public = public_state(sim.state, seat)
    state = openspiel.state_from_public(game, public, np.random.default_rng(0))
    assert state.current_player() == int(seat[0])
    assert state.legal_actions() == np.flatnonzero(sim.legal_mask()[0]).tolist()
    np.testing.assert_array_equal(state.observation_tensor(int(seat[0])), sim.observe_one(int(seat[0])))
    with pytest.raises(ValueError, match="running game of 3 players"):
        openspiel.state_from_public(openspiel.StartupsGame({"players": 3}), public, np.random.default_rng(0))
    later = public.copy()
    later.round[:] = 1
    with pytest.raises(ValueError, match="the table plays the round game"):
        openspiel.state_from_public(game, later, np.random.default_rng(0))


# ----------------------------------------------------------------- OpenSpiel's algorithms
def test_python_ismcts_runs_hundreds_of_simulations():
    game, state = _mid_game(3, 60, seed=1)
    random_state = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, random_state), 2.0, 300,
                           random_state=random_state)
    bot.set_resampler(openspiel.make_resampler(0))
    policy = bot.get_policy(state)
    assert bot._root_node.total_visits == 300 - 1  # (the first simulation expands the root)
    assert sorted(a for a, _ in policy) == state.legal_actions() and sum(p for _, p in policy) == pytest.approx(1)
    # Without a resampler IS-MCTS asks the state, with OpenSpiel's own sampler.
    plain = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, random_state), 2.0, 20, random_state=random_state)
    assert plain.step(state) in state.legal_actions()


def test_outcome_sampling_mccfr_runs_hundreds_of_iterations():
    game = pyspiel.load_game("startups", {"players": 2, "turn_cap": 30})
    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    for _ in range(300):
        solver.iteration()
    assert len(solver._infostates) > 1000  # (its regret and average tables, one entry per information state)
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    probs = solver.average_policy().action_probabilities(state)
    assert sorted(probs) == state.legal_actions() and sum(probs.values()) == pytest.approx(1)


def test_rl_environment_steps_the_game():
    game = pyspiel.load_game("startups", {"players": 3})
    environment = rl_environment.Environment(game, seed=0)
    assert environment.observation_spec()["info_state"] == (OBS_DIM + 800 * NUM_ACTIONS,)
    rng = np.random.default_rng(0)
    step, steps = environment.reset(), 0
    while not step.last():
        player = step.observations["current_player"]
        step = environment.step([int(rng.choice(step.observations["legal_actions"][player]))])
        steps += 1
    assert steps > 40 and sorted(step.rewards) == [-0.5, -0.5, 1.0]
    assert step.rewards == environment.get_state.returns()


# ----------------------------------------------------------------- OpenSpiel's bots at our table
def test_ismcts_and_random_bots_play_in_the_arena():
    result = run_arena(["openspiel:ismcts[max_simulations=4;uct_c=1.5]", "greedy", "openspiel:random"], 3, 3,
                       seed=1, rate=False)
    assert result.games == 3 and result.decisions[0] > 0 and result.decisions[2] > 0
    again = run_arena(["openspiel:ismcts[max_simulations=4;uct_c=1.5]", "greedy", "openspiel:random"], 3, 3,
                      seed=1, rate=False)
    np.testing.assert_array_equal(result.ranks, again.ranks)  # seeded


BOT = '''
import pyspiel

def make(game, player_id, seed, first=True):
    return pyspiel.make_uniform_random_bot(player_id, seed)

def not_a_bot(game, player_id, seed):
    return "a string"
'''


def test_an_outside_pyspiel_bot_plays_through_its_factory(tmp_path, monkeypatch):
    (tmp_path / "spiel_bot_for_tests.py").write_text(BOT)
    monkeypatch.syspath_prepend(str(tmp_path))
    agent = build_agent("openspiel:spiel_bot_for_tests:make[first=true]", seed=0, check_players=4)
    assert agent.needs == frozenset({"public"})
    result = run_arena(["openspiel:spiel_bot_for_tests:make", "greedy", "greedy"], 3, 2, seed=0, rate=False)
    assert result.decisions[0] > 0
    with pytest.raises(ValueError, match="returned a str, not a pyspiel.Bot"):
        build_agent("openspiel:spiel_bot_for_tests:not_a_bot", seed=0, check_players=3)


def test_bad_openspiel_specs_are_named():
    with pytest.raises(ValueError, match="unknown OpenSpiel bot 'mcts'"):
        build_agent("openspiel:mcts")
    with pytest.raises(ValueError, match="max_simulations must be an int >= 1, got 0"):
        build_agent("openspiel:ismcts[max_simulations=0]")
    with pytest.raises(ValueError, match="final_policy must be one of"):
        build_agent("openspiel:ismcts[final_policy=best]")
    with pytest.raises(ValueError, match=r"openspiel:random takes only the game's settings .*got \['level'\]"):
        make_agent("openspiel:random", level=2)
    with pytest.raises(ValueError, match="openspiel:ismcts.*depth"):
        build_agent("openspiel:ismcts[depth=3]")
    with pytest.raises(ValueError, match="reward must be one of"):
        build_agent("openspiel:ismcts[reward=points]")


def test_the_bot_says_what_it_needs(monkeypatch):
    agent = make_agent("openspiel:random", seed=0)
    sim = Simulator(Rules(num_players=3), 1, seed=0)
    obs = sim.observe_one(0)[None]
    with pytest.raises(ValueError, match="needs public="):
        agent.act(obs, sim.legal_mask())
    monkeypatch.setitem(__import__("sys").modules, "startups_env.agents.openspiel_bots", None)
    with pytest.raises(ValueError, match="install the project's 'openspiel' extra"):
        make_agent("openspiel:ismcts")


def test_the_deal_fills_the_deck_in_canonical_order():
    game = pyspiel.load_game("startups", {"players": 3})
    state = game.new_initial_state()
    cards = [5, 5, 5, 4, 4, 4, 0, 1, 2]
    for card in cards:
        assert state.current_player() == CHANCE
        state.apply_action(card)
    deck = state._play.state.deck[:, 0]
    assert deck[NUM_REMOVED:pile_start(3)].tolist() == cards
    assert np.bincount(deck, minlength=6).tolist() == [5, 6, 7, 8, 9, 10]
    assert state.current_player() == 0 and state.legal_actions() == [0]


def test_an_ismcts_ladder_row_reports_its_time_per_decision(capsys):
    ladder = run_ladder([3], 300, 3, seed=1, pairings=(("openspiel:ismcts[max_simulations=2]", "greedy"),))
    row, = ladder["pairings"]
    assert row["games"] == 3 and row["wall_per_decision"] > 0 and row["act_per_decision"] > 0
    assert "ismcts" in capsys.readouterr().out.split("ms/decision")[0].splitlines()[-1]


# ----------------------------------------------------------------- our bots in OpenSpiel's game
def test_the_table_history_is_the_one_a_table_keeps():
    record = GOLDEN[7]
    n, deck = record["players"], record["deck"]
    game = pyspiel.load_game("startups", {"players": n})
    sim = Simulator(Rules(num_players=n), 1, decks=np.array([deck]))
    kept = History(1)
    half = record["actions"][:len(record["actions"]) // 2]
    for action in half:
        kept.record(sim.state, np.array([action]))
        sim.step_one(action)
    state = _replay(game, deck, half, Simulator(Rules(num_players=n), 1, decks=np.array([deck])))
    replayed = state.table_history()
    for name in ("action", "earlier_action", "take_action", "older_action"):
        np.testing.assert_array_equal(getattr(replayed, name), getattr(kept, name), err_msg=name)
    for name in ("state", "earlier_state", "take_state"):
        for f in dataclasses.fields(getattr(kept, name)):
            np.testing.assert_array_equal(getattr(getattr(replayed, name), f.name),
                                          getattr(getattr(kept, name), f.name), err_msg=f"{name}.{f.name}")
    world = state.resample_from_infostate(state.current_player(), np.random.default_rng(0))
    with pytest.raises(ValueError, match="does not replay it"):
        world.table_history()


def test_our_bots_play_openspiels_game_as_pyspiel_bots():
    game = pyspiel.load_game("startups", {"players": 3})
    bots = [StartupsBot(make_agent("search", seed=0, determinizations=2), 0),
            StartupsBot(make_agent("greedy", seed=1), 1), pyspiel.make_uniform_random_bot(2, 5)]
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            cards, chances = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(cards, p=chances)))
        else:
            action = bots[state.current_player()].step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
    assert sorted(state.returns()) == [-0.5, -0.5, 1.0]
    _, other = _mid_game(3, 9)
    seat = (other.current_player() + 1) % 3
    with pytest.raises(ValueError, match=f"plays seat {seat}, the state asks seat"):
        StartupsBot(make_agent("greedy"), seat).step(other)
