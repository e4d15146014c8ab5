"""Стартап's Game record (startups_env.startap.game.GAME) describes its simulator truly."""

from __future__ import annotations

import numpy as np
import pytest

from startups_env.game import deal_rows
from startups_env.startap.game import GAME
from startups_env.startap.simulator import Simulator
from startups_env.startap.state import LAYOUT


def test_the_record_deals_plays_and_reports_like_the_simulator():
    rules = GAME.make_rules(3)
    decks = GAME.shuffled_decks(np.random.default_rng(0), 8, rules)
    sim = GAME.make_simulator(rules, 4, seed=1, decks=deal_rows(decks, np.arange(4)))
    assert isinstance(sim, GAME.simulator_type) and (sim.state.num_players == 3).all()
    assert np.array_equal(sim.state.project_deck, decks["project_deck"][:4])
    low, high = GAME.observation_bounds(rules, (3,))
    progress = GAME.progress(sim.state, rules)
    while not sim.done.all():
        obs = GAME.observe(sim.state)
        assert obs.shape == (4, GAME.obs_dim) and (obs >= low).all() and (obs <= high).all()
        sim.step(sim.random_actions())
        now = GAME.progress(sim.state, rules)
        assert ((now >= 0) & (now <= 1)).all()
        progress = now
    assert (progress == 1).all()
    out = GAME.outcome(sim.state)
    assert (np.sort(out["ranks"][:, :3], axis=1) == [0, 1, 2]).all() and (out["ranks"][:, 3:] == -1).all()
    assert (out["scores"][:, :3] == sim.state.coins[:, :3]).all() and (out["turns"] >= 1).all()
    assert GAME.num_actions == sim.legal_mask().shape[1] and GAME.action_to_string(16) == "done"


def test_the_same_seed_deals_the_same_games_through_the_record():
    a = GAME.make_simulator(GAME.make_rules(4), 3, seed=9)
    b = Simulator(3, num_players=4, seed=9)
    assert all(np.array_equal(getattr(a.state, n), getattr(b.state, n)) for n in LAYOUT)


def test_the_record_refuses_options_and_bad_sizes():
    with pytest.raises(ValueError, match="Стартап has no setting rounds"):
        GAME.make_rules(4, rounds=2)
    with pytest.raises(ValueError, match="num_players"):
        GAME.make_rules(7)
    assert GAME.check_rules(GAME.make_rules(2)).num_players == 2


def test_a_startap_policy_file_can_start_a_training_run(tmp_path):
    """--init-policy reads the file for the run's own game (the builder's clone starts the
    shipped Стартап policy)."""
    import torch

    from startups_env.agents.ppo import ActorCritic, checkpoint_dict
    from startups_env.train.checkpoints import start_from_policy

    source = ActorCritic(GAME.obs_dim, (8,), GAME.num_actions, features=False, game=GAME.name)
    path = tmp_path / "policy.pt"
    torch.save(checkpoint_dict(source), path)
    model = ActorCritic(GAME.obs_dim, (8,), GAME.num_actions, features=False, critic_extra=3, game=GAME.name)
    start_from_policy(model, str(path))
    assert torch.equal(model.state_dict()["actor.0.weight"], source.state_dict()["actor.0.weight"])
