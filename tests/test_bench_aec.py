"""The do-nothing env of the benchmark's ``aec_bare`` figure is a valid PettingZoo env with
ours' agents and spaces, whose games last its episode (the printed lines: test_bench.py)."""

import warnings

import pytest
from pettingzoo.test import api_test
from startups_env.agents import bench

from startups_env.envs.aec import OrderEnforcing, raw_env


@pytest.mark.parametrize("players", [2, 4, 7])
def test_bare_env_is_a_valid_aec_env_with_our_agents_and_spaces(players):
    bare, ours = OrderEnforcing(bench._BareEnv(players)), raw_env(players, backend="numpy")
    assert bare.possible_agents == ours.possible_agents
    for agent in ours.possible_agents:
        assert bare.action_space(agent) == ours.action_space(agent)
        assert bare.observation_space(agent) == ours.observation_space(agent)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's advice (e.g. on observation bounds)
        api_test(bare, num_cycles=300)


def test_bare_env_games_last_their_episode_then_every_agent_steps_dead():
    env = OrderEnforcing(bench._BareEnv(3))
    env.reset(seed=0)
    decisions, seen = 0, []
    for agent in env.agent_iter():
        _obs, reward, termination, truncation, _info = env.last()
        seen.append(agent)
        if termination or truncation:
            assert reward == 0
            env.step(None)
        else:
            env.step(env.action_space(agent).sample(env.last()[0]["action_mask"]))
            decisions += 1
    assert decisions == bench._BareEnv.EPISODE
    assert seen[:6] == ["player_0", "player_0", "player_1", "player_1", "player_2", "player_2"]
    assert sorted(seen[-3:]) == ["player_0", "player_1", "player_2"]  # the dead steps
