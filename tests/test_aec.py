"""The PettingZoo AEC environment (startups_env.envs.aec): PettingZoo's own api/seed tests at
every table size, golden games replayed through env(), random games state for state beside
the batch simulator (rewards, endings, dead steps), the observation of any agent
checked against a plain per-game reading of the state, masks, illegal input, the deck
option, truncation, the round game, rendering, and the environment card."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import assert_states_equal, load_golden, market_cards
from pettingzoo.test import api_test, seed_test

from startups_env import Rules, Simulator
from startups_env.envs import aec
from startups_env.envs.aec import env, raw_env
from startups_env.startups import observe
from startups_env.startups.observe import OBS_DIM, views
from startups_env.startups.rules import COMPANY_SIZES, DECK_SIZE, NUM_ACTIONS, SORTED_DECK

GAMES = load_golden()


def _random_play(e, rng, on_step=None) -> dict:
    """Play one game with random legal actions; returns each agent's final info (as seen
    in ``last()`` on its dead step, the PettingZoo way)."""
    final = {}
    for agent in e.agent_iter():
        obs, reward, termination, truncation, info = e.last()
        if termination or truncation:
            action = None
            final[agent] = dict(info, reward=reward)
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        if on_step is not None:
            on_step(e, agent, obs)
        e.step(action)
    return final


def _snapshot(e):
    """Everything step() may change: the game state and the AEC bookkeeping."""
    u = e.unwrapped
    return (u.sim.state.copy(), u.agent_selection, list(u.agents), dict(u.rewards), dict(u._cumulative_rewards),
            dict(u.terminations), dict(u.truncations), {k: dict(v) for k, v in u.infos.items()})


def _assert_unchanged(e, before):
    after = _snapshot(e)
    assert_states_equal(before[0], after[0], "state changed")
    assert before[1:] == after[1:]


# ----------------------------------------------------------------- PettingZoo's own tests
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6, 7])
def test_pettingzoo_api(players):
    with warnings.catch_warnings():
        # Expected for every env with dict observations (as in PettingZoo's classic envs):
        # "Observation is not a NumPy array", "...should be box or discrete", and the
        # warning for api_test's own unknown reset option.
        warnings.simplefilter("ignore", UserWarning)
        api_test(env(num_players=players), num_cycles=1000)


@pytest.mark.parametrize("players", [2, 5])
def test_pettingzoo_seed(players):
    seed_test(lambda: env(num_players=players), num_cycles=300)


def test_seed_reproduces_and_reset_without_seed_continues():
    def deals(e, seeds):
        out = []
        for s in seeds:
            e.reset(seed=s)
            out.append(e.unwrapped.sim.state.deck[:, 0].copy())
        return out

    a, b = deals(env(), [7, None, None]), deals(env(), [7, None, None])
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], a[1])  # an unseeded reset deals a new game


# ----------------------------------------------------------------- golden games
@pytest.mark.parametrize("index", range(0, len(GAMES), 6))
def test_golden_game_through_env(index):
    g = GAMES[index]
    n = g["players"]
    e = env(num_players=n)
    e.reset(options={"deck": g["deck"]})
    assert e.unwrapped.sim.state.deck[:, 0].tolist() == g["deck"]
    actions = iter(g["actions"])
    taken = 0
    final = {}
    for agent in e.agent_iter():
        obs, _reward, termination, truncation, info = e.last()
        if termination or truncation:
            final[agent] = info
            e.step(None)
            continue
        action = next(actions)
        assert obs["action_mask"][action] == 1, f"golden action {action} not legal for {agent}"
        e.step(action)
        taken += 1
    assert taken == len(g["actions"])
    u = e.unwrapped
    assert sorted(final) == sorted(e.possible_agents) and e.agents == []
    assert not any(info["truncated"] for info in final.values())
    scores = [final[f"player_{i}"]["score"] for i in range(n)]
    ranks = [final[f"player_{i}"]["rank"] for i in range(n)]
    threes = [final[f"player_{i}"]["threes"] for i in range(n)]
    assert scores == g["scores"]
    assert threes == g["threes"]
    assert sorted(range(n), key=lambda i: ranks[i]) == g["ranking"]
    assert int(u.sim.state.turn[0]) == g["turns"]


def test_golden_game_final_step_infos_and_rewards():
    g = next(g for g in GAMES if g["players"] == 4)
    e = env(num_players=4)
    e.reset(options={"deck": g["deck"]})
    for action in g["actions"][:-1]:
        e.step(action)
        assert not any(e.terminations.values()) and all(r == 0 for r in e.rewards.values())
        assert all(info == {} for info in e.infos.values())
    e.step(g["actions"][-1])
    assert all(e.terminations.values()) and not any(e.truncations.values())
    winner = g["ranking"][0]
    for i in range(4):
        agent = f"player_{i}"
        info = e.infos[agent]
        assert info == {"score": g["scores"][i], "threes": g["threes"][i], "rank": g["ranking"].index(i),
                        "truncated": False}
        assert e.rewards[agent] == pytest.approx(1.0 if i == winner else -1.0 / 3)
    # Every agent sees its reward in last() during the dead steps, then leaves.
    seen = {}
    for agent in e.agent_iter():
        obs, reward, termination, truncation, info = e.last()
        assert termination and not truncation and not obs["action_mask"].any()
        seen[agent] = reward
        e.step(None)
    assert seen == {f"player_{i}": pytest.approx(1.0 if i == winner else -1.0 / 3) for i in range(4)}
    assert e.agents == []


@pytest.mark.parametrize("players,kwargs", [
    (2, {}), (7, {}), (3, {"rounds": 4}), (5, {"turn_cap": 15, "reward": "rank"}),
    (4, {"rounds": 4, "turn_cap": 12, "reward": "score"}),
])
def test_env_matches_the_batch_simulator_state_for_state(players, kwargs):
    """One game through env() beside the same deck(s) in a batch Simulator of 3 copies
    (its batch paths of step and observe), with the same random actions: before every
    decision the states, every agent's observation, the mask and the agent to act agree,
    and no reward or info is given; on the step the game ends rewards, terminations,
    truncations and infos equal the simulator's result; then each agent gets its reward
    and info in last() on its own dead step, and leaves."""
    rules = Rules(num_players=players, **kwargs)
    rng = np.random.default_rng(players)
    decks = np.stack([rng.permutation(SORTED_DECK) for _ in range(rules.rounds)])  # [rounds, 45]
    e = env(rules=rules)
    e.reset(options={"deck": decks if rules.rounds > 1 else decks[0]})
    sim = Simulator(rules, 3, decks=np.stack([decks] * 3))
    u, end, end_infos, dead, decisions = e.unwrapped, None, {}, {}, 0
    for agent in e.agent_iter():
        obs, reward, termination, truncation, info = e.last()
        assert_states_equal(u.sim.state, sim.state.take([1]), f"after {decisions} decisions")
        for i, other in enumerate(e.possible_agents):
            np.testing.assert_array_equal(e.observe(other)["observation"],
                                          observe.observe(sim.state, np.full(3, i))[1], err_msg=other)
        if termination or truncation:
            dead[agent] = (reward, info)
            e.step(None)
            continue
        assert end is None and reward == 0 and info == {}
        assert not any(e.rewards.values()) and not any(e._cumulative_rewards.values())
        assert agent == f"player_{sim.state.current[1]}"
        mask = sim.legal_mask()[1]
        np.testing.assert_array_equal(obs["action_mask"], mask.astype(np.int8))
        action = int(rng.choice(np.flatnonzero(mask)))
        e.step(action)
        result = sim.step(np.full(3, action))
        decisions += 1
        assert all(e.terminations[a] == bool(result.terminated[1]) for a in e.possible_agents)
        assert all(e.truncations[a] == bool(result.truncated[1]) for a in e.possible_agents)
        if result.terminated[1] or result.truncated[1]:
            end = result
            for i, a in enumerate(e.possible_agents):
                # The env hands out float64 rewards, the batch float32 ones (one rounding apart).
                assert e.rewards[a] == e._cumulative_rewards[a] == pytest.approx(result.rewards[1, i], abs=1e-6)
                want = {"score": result.scores[1, i], "threes": sim.state.threes[i, 1], "rank": result.ranks[1, i],
                        "truncated": bool(result.truncated[1])}
                if rules.rounds > 1:
                    want["round_points"] = sim.state.round_points[i, 1]
                assert e.infos[a] == want
                end_infos[a] = want
    assert end is not None and e.agents == [] and sorted(dead) == sorted(e.possible_agents)
    assert bool(end.truncated[1]) == ("turn_cap" in kwargs)
    for i, a in enumerate(e.possible_agents):
        assert dead[a] == (pytest.approx(end.rewards[1, i], abs=1e-6), end_infos[a])


# ----------------------------------------------------------------- observations and masks
def _slow_observation(state, g: int, seat: int) -> dict:
    """The documented observation of ``seat`` in game ``g``, read one value at a time."""
    n = int(state.num_players[g])
    rel = [(seat + r) % n for r in range(n)]  # absolute seat of each relative seat
    expect = {name: np.zeros(p.shape, np.float32) for name, p in zip(observe.SLICES, observe.PIECES)}
    expect["num_players"][n - 2] = 1
    expect["phase"][int(state.phase[g])] = 1
    expect["current_player"][(int(state.current[g]) - seat) % n] = 1
    expect["hand"][:] = state.hand[seat, :, g]
    for r, a in enumerate(rel):
        expect["portfolios"][r] = state.portfolio[a, :, g]
        expect["known_hands"][r] = state.known[a, :, g]
        expect["coins"][r] = state.coins[a, g]
        expect["round_points"][r] = state.round_points[a, g]
    market = market_cards(state, g)
    for c in range(6):
        holder = int(state.chip[c, g])
        if holder >= 0:
            expect["chips"][c, (holder - seat) % n] = 1
        expect["market_cards"][c] = len(market[c])
        expect["market_coins"][c] = sum(market[c])
        expect["take_coins"][c] = max(market[c], default=0)
        seen = state.hand[seat, c, g] + state.portfolio[:n, c, g].sum() + len(market[c])
        seen += sum(int(state.known[a, c, g]) for a in range(n) if a != seat)
        expect["unseen"][c] = COMPANY_SIZES[c] - seen
    expect["pile"][0] = DECK_SIZE - int(state.pile_pos[g])
    if int(state.barred[g]) >= 0:
        expect["barred"][int(state.barred[g])] = 1
    expect["turn"][0] = state.turn[g]
    expect["round"][min(int(state.round[g]), 3)] = 1
    return expect


@pytest.mark.parametrize("players,kwargs", [(3, {}), (7, {}), (2, {"rounds": 4}), (5, {"turn_cap": 12})])
def test_observation_of_every_agent_every_step(players, kwargs):
    e = env(num_players=players, **kwargs)
    e.reset(seed=players)
    rng = np.random.default_rng(players)
    checked = []

    def check(e, agent, obs_on_turn):
        u = e.unwrapped
        state = u.sim.state
        running = not state.done[0]
        mask_on_turn = u.sim.legal_mask()[0]
        for other in e.possible_agents:
            obs = e.observe(other)
            assert e.observation_space(other).contains(obs), other
            assert obs["observation"].shape == (OBS_DIM,) and obs["observation"].dtype == np.float32
            assert obs["action_mask"].shape == (NUM_ACTIONS,) and obs["action_mask"].dtype == np.int8
            seat = u.agent_name_mapping[other]
            got = views(obs["observation"])
            for name, want in _slow_observation(state, 0, seat).items():
                np.testing.assert_array_equal(got[name], want, err_msg=f"{other}: {name}")
            if other == agent and running:
                np.testing.assert_array_equal(obs["action_mask"], mask_on_turn.astype(np.int8))
                assert obs["action_mask"].any()
                assert seat == int(state.current[0])
            else:
                assert not obs["action_mask"].any(), f"{other} is not on turn but has legal actions"
        checked.append(1)

    _random_play(e, rng, check)
    assert len(checked) > 2 * players


def test_observations_are_fresh_arrays():
    e = env()
    e.reset(seed=0)
    first = e.observe("player_0")
    kept = {k: v.copy() for k, v in first.items()}
    e.step(int(np.flatnonzero(first["action_mask"])[0]))
    e.observe("player_0")
    for key, value in kept.items():
        np.testing.assert_array_equal(first[key], value)


# ----------------------------------------------------------------- bad input
def test_illegal_action_raises_and_changes_nothing():
    e = env(num_players=4)
    e.reset(seed=3)
    mask = e.observe(e.agent_selection)["action_mask"]
    assert mask[7:].sum() == 0  # take phase: no put-down ids
    before = _snapshot(e)
    with pytest.raises(ValueError, match="illegal action 7 .*take phase.*legal actions: 0 \\(draw\\)"):
        e.step(7)
    _assert_unchanged(e, before)
    e.step(0)  # the market is empty: drawing is free
    before = _snapshot(e)
    for bad in (0, 19, -1, 2.0, 1.5, True, None, "0", np.array([0, 1])):
        with pytest.raises(ValueError):
            e.step(bad)
        _assert_unchanged(e, before)
    # numpy integers and one-element integer arrays are fine
    legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
    e.step(np.array([legal[0]], np.int64))


def test_step_after_the_end_needs_none():
    e = env(num_players=3, turn_cap=2)
    e.reset(seed=0)
    while not any(e.truncations.values()):
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    with pytest.raises(ValueError):
        e.step(0)


@pytest.mark.parametrize("deck,match", [
    (list(SORTED_DECK[:-1]), "shape"),
    (list(SORTED_DECK[:-1]) + [0], "not a permutation"),
    ([float(c) for c in SORTED_DECK], "integer"),
    ([list(SORTED_DECK)] * 2, "shape"),
])
def test_bad_deck_option_raises_and_changes_nothing(deck, match):
    e = env()
    e.reset(seed=1)
    e.step(0)
    before = _snapshot(e)
    with pytest.raises(ValueError, match=match):
        e.reset(options={"deck": deck})
    _assert_unchanged(e, before)


def test_deck_option_in_the_round_game():
    rng = np.random.default_rng(0)
    decks = np.stack([rng.permutation(SORTED_DECK) for _ in range(4)])
    e = env(num_players=3, rounds=4)
    e.reset(options={"deck": decks[0]})
    assert e.unwrapped.sim.state.deck[:, 0].tolist() == decks[0].tolist()
    e.reset(options={"deck": decks})
    rounds_seen = {}

    def note(e, agent, obs):
        s = e.unwrapped.sim.state
        if not s.done[0]:
            rounds_seen.setdefault(int(s.round[0]), s.deck[:, 0].tolist())

    _random_play(e, np.random.default_rng(1), note)
    assert rounds_seen == {r: decks[r].tolist() for r in range(4)}


@pytest.mark.parametrize("kwargs", [
    {"num_players": 1}, {"num_players": 8}, {"rounds": 2}, {"turn_cap": 0}, {"reward": "money"},
    {"colour": "red"}, {"render_mode": "pdf"}, {"rules": Rules(num_players=3), "num_players": 4},
    {"rules": Rules(), "turn_cap": 9}, {"rules": "standard"},
])
def test_bad_constructor_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        env(**kwargs)


def test_rules_object_and_keywords():
    assert env(rules=Rules(num_players=6, reward="rank")).unwrapped.rules == Rules(num_players=6, reward="rank")
    e = raw_env(num_players=5, reward="score", turn_cap=50)
    assert e.rules == Rules(num_players=5, reward="score", turn_cap=50)
    assert e.possible_agents == [f"player_{i}" for i in range(5)]
    assert e.metadata["name"] == "startups_v0" and e.metadata["is_parallelizable"] is False


# ----------------------------------------------------------------- endings
def test_turn_cap_truncates_with_scores():
    e = env(num_players=4, turn_cap=6, reward="rank")
    e.reset(seed=5)
    steps = 0
    while not (any(e.truncations.values()) or any(e.terminations.values())):
        e.step(int(np.random.default_rng(steps).choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
        steps += 1
    assert steps == 12  # 6 turns of two decisions
    assert all(e.truncations.values()) and not any(e.terminations.values())
    ranks = sorted(info["rank"] for info in e.infos.values())
    assert ranks == [0, 1, 2, 3]
    assert all(info["truncated"] is True for info in e.infos.values())
    for agent, info in e.infos.items():
        assert e.rewards[agent] == pytest.approx(1 - 2 * info["rank"] / 3)
    assert abs(sum(e.rewards.values())) <= 1e-12


@pytest.mark.parametrize("players", range(2, 8))
@pytest.mark.parametrize("scheme", ["win", "rank", "score"])
def test_zero_sum_rewards_sum_to_zero_in_float64(players, scheme):
    """Under the zero-sum schemes one game's rewards sum to 0 to float64 precision, also in
    the round game and when the turn cap ends it; they are Python floats (float32's -1/3
    would leave about 3e-8)."""
    for rules in (Rules(num_players=players, reward=scheme), Rules(num_players=players, reward=scheme, rounds=4),
                  Rules(num_players=players, reward=scheme, turn_cap=9)):
        e = env(rules=rules)
        paid = False  # (a tied game pays nothing; not all of them may be ties)
        for seed in range(6):
            e.reset(seed=seed)
            rng = np.random.default_rng(seed)  # the moves are seeded too, so the test is deterministic
            returns = dict.fromkeys(e.possible_agents, 0.0)
            for agent in e.agent_iter():
                obs, reward, termination, truncation, _ = e.last()
                assert type(reward) is float
                returns[agent] += reward
                e.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            paid |= any(returns.values())
            assert abs(sum(returns.values())) <= 1e-12, (rules, seed, returns)
        assert paid, rules


def test_round_game_runs_four_rounds():
    e = env(num_players=3, rounds=4, reward="win")
    e.reset(seed=11)
    starters = []

    def note(e, agent, obs):
        s = e.unwrapped.sim.state
        if int(s.turn[0]) == 0 and int(s.phase[0]) == 0 and not s.done[0]:
            starters.append((int(s.round[0]), agent))

    final = _random_play(e, np.random.default_rng(2), note)
    assert sorted(r for r, _ in starters) == [0, 1, 2, 3] and starters[0] == (0, "player_0")
    assert sorted(info["rank"] for info in final.values()) == [0, 1, 2]
    points = {agent: info["round_points"] for agent, info in final.items()}
    assert sum(points.values()) == 4 * (2 + 1 - 1)
    best = max(points.values())
    assert points[next(a for a, info in final.items() if info["rank"] == 0)] == best


# ----------------------------------------------------------------- rendering and docs
def test_render_modes(capsys):
    e = env(num_players=3, render_mode="ansi")
    e.reset(seed=4)
    e.step(0)
    text = e.render()
    assert isinstance(text, str)
    for word in ("market", "coins", "giraffe", "elephant", "your hand"):
        assert word in text
    viewer = e.unwrapped.agent_name_mapping[e.agent_selection]
    assert f"P{viewer}" in text
    e = env(num_players=3, render_mode="human")
    e.reset(seed=4)
    assert "market" in capsys.readouterr().out
    e.step(0)
    assert "market" in capsys.readouterr().out
    e = env(num_players=3, render_mode="rgb_array")
    e.reset(seed=4)
    img = e.render()
    assert isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    e.close()


def test_environment_card_matches_the_code():
    doc = aec.__doc__
    assert observe.layout_table() in doc
    assert f"({OBS_DIM},)" in doc and f"Discrete({NUM_ACTIONS})" in doc
    from startups_env.startups.rules import action_to_string

    rows = [line for line in doc.splitlines() if line.startswith("| ") and line.split("|")[1].strip().isdigit()]
    ids = [int(line.split("|")[1]) for line in rows if "take" in line or "put" in line or "draw" in line]
    assert sorted(ids) == list(range(NUM_ACTIONS))
    for line in rows:
        a = int(line.split("|")[1])
        if a < NUM_ACTIONS and ("take" in line or "put" in line or "draw" in line):
            kind = action_to_string(a).split()[0]
            assert {"draw": "draw", "take": "take", "keep": "portfolio", "market": "into the market"}[kind] in line
