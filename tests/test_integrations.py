"""Other RL libraries: the recipes of docs/integrations.md run (those whose libraries the
``dev`` and ``openspiel`` extras install; RLlib and AgileRL run through
scripts/check_integrations.sh), the wrappers of startups_env.envs.wrappers, and the global
state for centralised critics (``state()``: it shows a change of a hidden card that no
player's observation shows)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_states_equal
from pettingzoo.test import api_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from startups_env import Rules, env
from startups_env.envs.wrappers import MaskInInfos, RenameKeys, TerminateIllegal
from startups_env.startups.observe import HIDDEN_DIM, OBS_DIM, STATE_DIM, hidden_observation, state_layout_table
from startups_env.startups.rules import SORTED_DECK

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "integrations.md").read_text()
RECIPES = dict(re.findall(r"<!-- recipe: ([\w-]+) -->\n```python\n(.*?)^```", PAGE, re.S | re.M))
# Recipe -> the library it needs (the test is skipped where it is not installed).
CHEAP = {"terminate-illegal": "pettingzoo", "sb3": "sb3_contrib", "tianshou": "tianshou", "supersuit": "supersuit",
         "parallel": "pettingzoo", "openspiel": "pyspiel"}


def test_the_page_has_every_recipe():
    assert set(RECIPES) == set(CHEAP) | {"rllib", "agilerl"}
    script = (ROOT / "scripts" / "check_integrations.sh").read_text()
    assert "rllib" in script and "agilerl" in script


@pytest.mark.parametrize("name", sorted(CHEAP))
def test_recipe_runs(name, capsys, tmp_path, monkeypatch):
    """The recipe as the page prints it; it plays only legal moves (the env raises on
    any other, except under TerminateIllegal) and finishes. It prints its result and
    nothing else (Tianshou logged a warning about its own summary), and leaves no log folder
    in the temporary folder (SB3 made an empty SB3-<date> folder there at every learn())."""
    pytest.importorskip(CHEAP[name])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    exec(compile(RECIPES[name], f"docs/integrations.md:{name}", "exec"), {"__name__": "__recipe__"})
    captured = capsys.readouterr()
    assert captured.out.strip()  # each recipe prints its result
    assert captured.err == "", captured.err
    assert not list(tmp_path.glob("SB3-*"))


def test_state_layout_on_the_page_matches_the_code():
    assert state_layout_table() in PAGE, "regenerate with startups_env.startups.observe.state_layout_table()"


# ----------------------------------------------------------------- wrappers
def _play(game, pick, seed=0):
    """Play a game to the end; pick(agent, obs, info) -> action. Returns the final rewards and infos."""
    game.reset(seed=seed)
    rewards, infos = {}, {}
    for agent in game.agent_iter():
        obs, reward, termination, truncation, info = game.last()
        if termination or truncation:
            rewards[agent], infos[agent] = reward, info
            game.step(None)
        else:
            game.step(pick(agent, obs, info))
    return rewards, infos


def test_terminate_illegal_ends_the_game_with_a_penalty():
    game = TerminateIllegal(env(num_players=4), illegal_reward=-2.0)
    game.reset(seed=3)
    agent = game.agent_selection
    mask = game.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    game.step(illegal)
    assert all(game.terminations.values()) and not any(game.truncations.values())
    for other in game.possible_agents:
        assert game.infos[other] == {"illegal_action": illegal, "offender": agent}
        assert not game.observe(other)["action_mask"].any()
    seen = {}
    for a in game.agent_iter():
        _, reward, termination, _, _ = game.last()
        assert termination
        seen[a] = reward
        game.step(None)
    assert seen == {a: (-2.0 if a == agent else 0.0) for a in game.possible_agents}
    # A new game plays on normally; legal moves are untouched.
    rewards, infos = _play(game, lambda a, obs, info: game.action_space(a).sample(obs["action_mask"]))
    assert "score" in infos["player_0"] and abs(sum(rewards.values())) <= 1e-12


def test_terminate_illegal_still_raises_for_non_actions_and_the_default_raises():
    game = TerminateIllegal(env(num_players=3))
    game.reset(seed=0)
    for bad in (19, -1, 2.5, None, "draw"):
        with pytest.raises(ValueError):
            game.step(bad)
    assert not any(game.terminations.values())
    plain = env(num_players=3)
    plain.reset(seed=0)
    before = plain.unwrapped.sim.state.copy()
    illegal = int(np.flatnonzero(plain.observe(plain.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="illegal action"):
        plain.step(illegal)
    assert_states_equal(plain.unwrapped.sim.state, before)


def test_wrapped_envs_pass_pettingzoo_api_test():
    api_test(TerminateIllegal(env(num_players=3)), num_cycles=200)
    api_test(RenameKeys(env(num_players=3), observation="observations"), num_cycles=200)


def test_mask_in_infos():
    game = MaskInInfos(env(num_players=3))
    assert game.observation_space("player_0").shape == (OBS_DIM,)
    game.reset(seed=2)
    for agent in game.agent_iter():
        obs, _, termination, truncation, info = game.last()
        assert obs.shape == (OBS_DIM,) and game.observation_space(agent).contains(obs)
        masks = {a: game.infos[a]["action_mask"] for a in game.agents}
        on_turn = [a for a, m in masks.items() if m.any()]
        if termination or truncation:
            assert on_turn == [] and "score" in info
            game.step(None)
        else:
            assert on_turn == [agent]
            game.step(game.action_space(agent).sample(info["action_mask"]))
    listed = MaskInInfos(env(num_players=3), as_list=True)
    listed.reset(seed=0)
    assert isinstance(listed.infos["player_0"]["action_mask"], list)


def test_rename_keys():
    game = RenameKeys(env(num_players=2), observation="observations")
    game.reset(seed=0)
    obs = game.observe("player_0")
    assert set(obs) == {"observations", "action_mask"} and game.observation_space("player_0").contains(obs)
    with pytest.raises(ValueError):
        RenameKeys(env(), observations="x")


def test_turn_based_parallel_plays_a_whole_game():
    game = turn_based_aec_to_parallel(MaskInInfos(env(num_players=4)))
    assert game.state_space.shape == (STATE_DIM,)
    _, infos = game.reset(seed=5)
    while game.agents:
        actions = {a: game.action_space(a).sample(infos[a]["action_mask"]) for a in game.agents}
        assert game.state_space.contains(game.state())
        _, rewards, _, _, infos = game.step(actions)
    assert len(rewards) == 4 and abs(sum(rewards.values())) <= 1e-12


# ----------------------------------------------------------------- the global state
def test_state_shows_a_hidden_card_no_observation_shows():
    """Two deals that differ only in a removed card swapped with a pile card of another
    company: every player's observation is the same all game, the state differs."""
    deck = np.array(SORTED_DECK)
    np.random.default_rng(0).shuffle(deck)
    j = next(j for j in range(44, 20, -1) if deck[j] != deck[0])  # a pile card never drawn early
    other = deck.copy()
    other[[0, j]] = other[[j, 0]]
    games = [env(num_players=4), env(num_players=4)]
    for game, d in zip(games, (deck, other)):
        game.reset(options={"deck": d})
    rng = np.random.default_rng(1)
    for _ in range(6):  # a few turns in: the pile card is not drawn yet
        for i, agent in enumerate(games[0].possible_agents):
            np.testing.assert_array_equal(games[0].observe(agent)["observation"], games[1].observe(agent)["observation"])
        s0, s1 = (g.unwrapped.state() for g in games)
        assert s0.shape == (STATE_DIM,) and games[0].unwrapped.state_space.contains(s0)
        np.testing.assert_array_equal(s0[:OBS_DIM], s1[:OBS_DIM])
        assert (s0[OBS_DIM:] != s1[OBS_DIM:]).any()
        action = int(rng.choice(np.flatnonzero(games[0].observe(games[0].agent_selection)["action_mask"])))
        for g in games:
            g.step(action)


def test_state_is_seat_0s_observation_and_the_trainers_privileged_input():
    from startups_env.envs import vector
    assert vector.privileged_observation is hidden_observation and vector.PRIVILEGED_DIM == HIDDEN_DIM
    game = env(rules=Rules(num_players=5))
    game.reset(seed=4)
    for _ in range(20):
        state = game.unwrapped.state()
        np.testing.assert_array_equal(state[:OBS_DIM], game.observe("player_0")["observation"])
        np.testing.assert_array_equal(state[OBS_DIM:], hidden_observation(game.unwrapped.sim.state, np.zeros(1))[0])
        hands = state[OBS_DIM:OBS_DIM + 42].reshape(7, 6)
        np.testing.assert_array_equal(hands[:5], game.unwrapped.sim.state.hand[:5, :, 0])
        game.step(game.action_space(game.agent_selection).sample(game.observe(game.agent_selection)["action_mask"]))
    with pytest.raises(ValueError, match="reset"):
        env().unwrapped.state()
