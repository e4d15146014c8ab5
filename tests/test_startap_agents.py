"""Стартап's bots play legal moves, are seeded, refuse bad input, and the heuristics beat
random play."""

from __future__ import annotations

import numpy as np
import pytest

from startups_env.agents.startap_bots import STARTAP_AGENTS, make_startap_agent, play_games
from startups_env.envs.startap_aec import env
from startups_env.startap.observe import OBS_DIM, observe
from startups_env.startap.rules import NUM_ACTIONS
from startups_env.startap.simulator import Simulator


@pytest.mark.parametrize("name", sorted(STARTAP_AGENTS))
def test_a_bot_plays_only_legal_moves_to_the_end_of_every_game(name):
    bot = make_startap_agent(name, seed=0)
    sim = Simulator(32, num_players=np.arange(32) % 5 + 2, seed=1)
    while not sim.done.all():
        running = np.flatnonzero(~sim.done)
        mask = sim.legal_mask()
        actions = np.zeros(32, np.int64)
        actions[running] = bot.act(observe(sim.state)[running], mask[running])
        assert mask[running, actions[running]].all()
        sim.step(actions)


@pytest.mark.parametrize("name", sorted(STARTAP_AGENTS))
def test_a_bot_plays_the_aec_env_and_is_seeded(name):
    def game(seed):
        e = env(num_players=3)
        e.reset(seed=4)
        bot, moves = make_startap_agent(name, seed=seed), []
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            action = None if term or trunc else int(bot.act(obs["observation"], obs["action_mask"])[0])
            moves.append(action)
            e.step(action)
        return moves
    assert game(7) == game(7)


def test_bots_refuse_bad_input():
    bot = make_startap_agent("builder")
    with pytest.raises(ValueError, match=f"mask must be bool\\[2, {NUM_ACTIONS}\\]"):
        bot.act(np.zeros((2, OBS_DIM)), np.ones((2, 19), bool))
    with pytest.raises(ValueError, match=f"obs must be \\[B, {OBS_DIM}\\]"):
        bot.act(np.zeros((2, 5)), np.ones((2, NUM_ACTIONS), bool))
    with pytest.raises(ValueError, match="no legal action"):
        bot.act(np.zeros((1, OBS_DIM)), np.zeros((1, NUM_ACTIONS), bool))
    with pytest.raises(ValueError, match="unknown"):
        make_startap_agent("greedy")


@pytest.mark.parametrize("style", ["builder", "outsourcer"])
def test_each_heuristic_beats_random_play_two_handed(style):
    result = play_games([make_startap_agent(style, seed=0), make_startap_agent("random", seed=1)], 2, 100, seed=2)
    assert result["wins"][0] > 0.75


def test_the_free_rider_loses_to_builders_and_its_own_table_ends_before_the_cap():
    """The degenerate strategy (take everything, sell, never build) is kept out: a taken
    project is in work and three failures put a player out."""
    riders = play_games([make_startap_agent("freerider", seed=0)] * 4, 4, 40, seed=3)
    assert riders["truncated"] <= 0.05
    mixed = play_games([make_startap_agent("freerider", seed=0)] + [make_startap_agent("builder", seed=1)] * 3,
                       4, 80, seed=4)
    assert mixed["wins"][0] < 0.1
