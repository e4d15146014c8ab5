"""The contract every game fulfils (docs/architecture.md, "The contract of a game"), run over
every registered game and the games that live only in the tests (``tests/games/``): the
PettingZoo API and seeding, no leak of what a seat cannot see, bad input refused with the
state unchanged, parity with the game's reference where it has one, render and a game log
that replays, the arena and the ladder, a training run interrupted and resumed, and
OpenSpiel's random_sim_test where the game has an OpenSpiel game. Nothing here names a
game but the parity checks, which run each game's own reference."""

from __future__ import annotations

import dataclasses
import html

import numpy as np
import pytest
import torch
from pettingzoo.test import api_test, seed_test

import startups_env
from startups_env.agents.arena import main as arena_main
from startups_env.agents.arena import run_arena
from startups_env.agents.ladder import default_pairings, run_ladder
from startups_env.agents.registry import make_agent
from startups_env.tools import game_log
from startups_env.train import distill, selfplay
from startups_env.train import exit as exit_run
from startups_env.train.common import reference_bots



def _startups_parity():
    from test_parity import test_parity_single_table_size

    test_parity_single_table_size(4, "numpy")


def _startap_parity():
    from test_startap_parity import play_both

    assert play_both(4, 8, seed=11) > 0


#: Each game's check against its independent reference (tests/reference.py,
#: tests/startap_reference.py), where it has one.
PARITY = {"startups": _startups_parity, "startap": _startap_parity}


def _table(game):
    return min(max(3, game.min_players), game.max_players)


def _played(game, games=6, seed=5, decisions=10):
    """A simulator of ``games`` games, each some random decisions in (finished ones stay)."""
    sim = game.make_simulator(game.make_rules(_table(game)), games, seed)
    rng = np.random.default_rng(seed)
    for _ in range(decisions):
        mask = sim.legal_mask()
        if not mask.any():
            break
        sim.step(np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in mask]),
                 active=mask.any(axis=1))
    return sim


def _arrays(state) -> dict:
    return {f.name: np.array(getattr(state, f.name), copy=True) for f in dataclasses.fields(state)}


def test_the_pettingzoo_api_and_seeding(game):
    api_test(startups_env.env(game=game.name, num_players=_table(game)), num_cycles=40)
    seed_test(lambda: startups_env.env(game=game.name, num_players=_table(game)), num_cycles=20)


def test_a_redeal_of_what_a_seat_cannot_see_leaves_its_observation_unchanged(game):
    if game.deal_hidden is None:
        pytest.skip(f"{game.title} hides nothing from a seat")
    sim = _played(game, games=12, decisions=6)
    state, seats = sim.state, np.asarray(sim.state.current, np.intp)
    worlds = [game.deal_hidden(state, seats, np.random.default_rng(k)) for k in range(3)]
    for world in worlds:
        np.testing.assert_array_equal(game.observe(world, seats), game.observe(state, seats))
    # (not vacuous: the re-deals change what the seats cannot see)
    assert any(not np.array_equal(a, b) for world in worlds
               for a, b in zip(_arrays(world).values(), _arrays(state).values()))


def test_bad_input_is_refused_and_changes_nothing(game):
    sim = _played(game)
    before = _arrays(sim.state)
    mask = sim.legal_mask()
    running = np.flatnonzero(mask.any(axis=1))
    illegal = np.where(mask, 0, 1).argmax(axis=1)  # an action illegal in each game, where there is one
    for bad in (np.full(sim.batch_size, game.num_actions), np.full(sim.batch_size, -1),
                np.zeros(sim.batch_size + 1, int), np.full(sim.batch_size, 0.5)):
        with pytest.raises(ValueError, match="action"):  # (out of range, mis-shaped, not integers)
            sim.step(bad)
    if (~mask[running]).any(axis=1).all():
        with pytest.raises(ValueError, match="illegal"):
            sim.step(illegal)
    after = _arrays(sim.state)
    assert all(np.array_equal(before[name], after[name]) for name in before)
    env = startups_env.env(game=game.name, num_players=_table(game))
    env.reset(seed=1)
    agent = env.agent_selection
    with pytest.raises(ValueError, match=agent):
        env.step(game.num_actions)
    assert env.agent_selection == agent
    with pytest.raises(ValueError):
        game.make_rules(game.max_players + 1)
    with pytest.raises(ValueError):
        game.make_rules(_table(game), ruleset="no-such-ruleset")
    with pytest.raises(ValueError):
        game.action_to_string(game.num_actions)


def test_parity_with_the_reference(game):
    if game.name not in PARITY:
        pytest.skip(f"{game.title} has no independent reference")
    PARITY[game.name]()


def test_render_and_a_game_log_that_replays(game, tmp_path):
    """A game log (the deal and every decision) saved, loaded and replayed gives the same game,
    picture for picture; its HTML page shows each decision by name; a log whose decision
    the game refuses is an error naming that decision."""
    bots = [make_agent(name, seed=seat, game=game.name) for seat, name in
            enumerate((list(game.bots) or ["random"]) * game.max_players)][:_table(game)]
    log = game_log.record(game, bots, seed=9)
    assert log["actions"] and log["players"] == [bot.name for bot in bots]
    game_log.save(log, tmp_path / "game.json")
    back = game_log.load(tmp_path / "game.json")
    first = [game.render_text(sim.state, 0, None) for _step, sim in game_log.frames(log)]
    again = [game.render_text(sim.state, 0, None) for _step, sim in game_log.frames(back)]
    assert first == again and all(isinstance(text, str) and text for text in first)
    assert bool(game_log.replay(back).done[0])
    game_log.write_html(back, tmp_path / "game.html")
    page = (tmp_path / "game.html").read_text()
    assert page.count("<details") == len(log["actions"]) + 1
    assert html.escape(game.action_to_string(log["actions"][-1])) in page
    broken = dict(back, actions=[*back["actions"][:-1], game.num_actions])
    with pytest.raises(ValueError, match=f"decision {len(log['actions']) - 1} of the log"):
        game_log.replay(broken)


def test_the_arena_and_the_ladder(game, capsys):
    n = _table(game)
    bots = [*game.bots] or ["random"]
    lineup = [bots[k % len(bots)] for k in range(n)]
    first = run_arena(lineup, n, 2 * n, seed=3, game=game.name)
    again = run_arena(",".join(lineup), n, 2 * n, seed=3, game=game.name)
    assert first.game == game.name and first.games == 2 * n
    np.testing.assert_array_equal(first.ranks, again.ranks)
    assert arena_main(["--game", game.name, "--players", str(n), "--agents", ",".join(lineup), "--games", str(n)]) == 0
    assert "games" in capsys.readouterr().out
    pairings = [p for p in default_pairings(game.name) if "search" not in p][:2]
    ladder = run_ladder([n], 2 * n, 0, seed=1, pairings=tuple(pairings), game=game.name)
    assert len(ladder["pairings"]) == len(pairings)


def test_a_training_run_interrupted_and_resumed(game, tmp_path):
    out = str(tmp_path / "run")
    small = ["--players", str(_table(game)), "--num-envs", "16", "--num-steps", "8", "--hidden", "8,8",
             "--eval-games", "2", "--final-eval-games", "2", "--no-progress", "--no-features", "--no-greedy-prior"]
    assert selfplay.main(["--game", game.name, "--total-steps", "128", "--out", out, *small]) == 0
    first = torch.load(f"{out}/checkpoint.pt", weights_only=True)
    assert selfplay.main(["--resume", "--out", out, "--total-steps", "256", "--no-progress"]) == 0
    second = torch.load(f"{out}/checkpoint.pt", weights_only=True)
    assert second["config"]["game"] == game.name and second["global_step"] > first["global_step"]
    assert second["updates"] > first["updates"]
    agent = make_agent(f"ppo:{out}/policy.pt", game=game.name)
    run_arena([agent, *[game.opponents[0]] * (_table(game) - 1)], _table(game), 2, seed=1, game=game.name)


def test_distillation_and_expert_iteration(game, tmp_path):
    """Both label a teacher's decisions in the game (here its reference bot: the test is about
    the plumbing, not a search's cost), fit a policy of the game that plays at its table, and
    expert iteration resumes a finished run without relabelling."""
    n, teacher = _table(game), reference_bots(game)[0]
    out = tmp_path / "distill"
    assert distill.main(["--game", game.name, "--teacher", teacher, "--players", str(n), "--games", "2",
                         "--shard-games", "1", "--epochs", "1", "--hidden", "8", "--eval-games", "0",
                         "--out", str(out), "--no-progress"]) == 0
    data = distill.load_shards(sorted(map(str, out.glob("data/shard_*.npz"))))
    assert data["obs"].shape[1] == game.obs_dim and data["mask"].shape[1] == game.num_actions
    assert data["mask"][np.arange(data["action"].size), data["action"]].all(), "every label is legal"
    agent = make_agent(f"ppo:{out}/policy.pt", game=game.name)
    run_arena([agent, *[teacher] * (n - 1)], n, 2, seed=1, game=game.name)
    tiny = ["--game", game.name, "--teacher", teacher, "--players", str(n), "--round-games", "2", "--shard-games", "1",
            "--epochs", "1", "--hidden", "8", "--value-weight", "0", "--eval-games", "2", "--eval-shard-games", "2",
            "--eval-players", str(n), "--out", str(tmp_path / "exit"), "--no-progress"]
    assert exit_run.main([*tiny, "--rounds", "1"]) == 0
    assert exit_run.main([*tiny, "--rounds", "2"]) == 0
    rounds = exit_run.read_rounds(str(tmp_path / "exit"))
    assert [r["round"] for r in rounds] == [0, 1] and rounds[1]["eval"][teacher]["games"] >= 2
    assert make_agent(f"ppo:{tmp_path}/exit/policy.pt", game=game.name).model.game == game.name


def test_openspiel_random_sim_test(game):
    if not game.openspiel:
        pytest.skip(f"{game.title} has no OpenSpiel game")
    pyspiel = pytest.importorskip("pyspiel")
    from startups_env.envs import openspiel, openspiel_games

    if game.openspiel == openspiel_games.short_name(game):
        openspiel_games.register(game)  # (a game of the tests is registered with pyspiel here)
    assert game.openspiel in (openspiel.GAME_NAME, openspiel_games.short_name(game))
    pyspiel.random_sim_test(pyspiel.load_game(game.openspiel, {"players": _table(game)}), num_sims=2,
                            serialize=True, verbose=False)
