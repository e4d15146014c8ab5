"""Both games at the one table: the registry of games, and the table driver, the arena, the
ladder, the vector env and the trainer playing Стартап through it as they play Startups."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from startups_env.agents.arena import main as arena_main
from startups_env.agents.arena import run_arena
from startups_env.agents.ladder import default_pairings, run_ladder
from startups_env.agents.ppo import ActorCritic, CheckpointError, checkpoint_dict, load_ppo_agent
from startups_env.agents.registry import UnknownAgentError, build_agent, make_agent
from startups_env.train.common import atomic_save

from startups_env.envs.vector import SeatBatch, StartupsVecEnv
from startups_env.startap import observe as startap_observe
from startups_env.startap.rules import TURN_CAP
from startups_env.startap.simulator import Simulator as StartapSimulator
from startups_env.startups.simulator import Simulator
from startups_env.table import Table
from startups_env.table.games import GAMES, game_by_name, game_of

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STARTAP = game_by_name("startap")


def test_games_are_found_by_name_and_by_simulator():
    assert sorted(GAMES) == ["startap", "startups"]
    assert game_by_name(" Startap ") is STARTAP and game_by_name(STARTAP) is STARTAP
    assert game_of(StartapSimulator(2)) is STARTAP and game_of(Simulator()).name == "startups"
    with pytest.raises(ValueError, match="unknown game 'chess'; the games are startap, startups"):
        game_by_name("chess")
    with pytest.raises(ValueError, match="sim must be the simulator of a game"):
        Table(object(), ["random"])


def test_each_game_checks_its_own_rules():
    assert STARTAP.make_rules(5).num_players == 5 and STARTAP.make_rules(3, ruleset="rulebook").turn_cap == TURN_CAP
    with pytest.raises(ValueError, match="Стартап has one ruleset"):
        STARTAP.make_rules(4, ruleset="summary")
    with pytest.raises(ValueError, match="Стартап has no setting rounds"):
        STARTAP.make_rules(4, rounds=4)
    with pytest.raises(ValueError, match="turn cap is fixed at 60"):
        STARTAP.make_rules(4, turn_cap=400)
    with pytest.raises(ValueError, match="num_players must be an int between 2 and 6"):
        STARTAP.make_rules(7)
    with pytest.raises(ValueError, match="rules must be a startups_env.startap.rules.Rules"):
        run_arena("random,random,random", 3, 3, rules=game_by_name("startups").make_rules(3), game="startap")


def test_the_table_plays_startap_to_the_end_with_its_bots():
    sim = STARTAP.make_simulator(STARTAP.make_rules(4), 8, 3)
    bots = [make_agent(name, seed=i, game="startap") for i, name in enumerate(("builder", "outsourcer", "random", "builder"))]
    Table(sim, bots).play()
    out = STARTAP.outcome(sim.state)
    assert sim.done.all() and (out["ranks"][:, :4] >= 0).all() and (out["ranks"][:, 4:] == -1).all()
    assert (STARTAP.progress(sim.state, sim.rules) == 1.0).all()
    with pytest.raises(ValueError, match="Стартап keeps no history"):
        Table(sim, bots, history=True)


def test_the_registry_keeps_each_games_bots_apart():
    assert make_agent("builder", game="startap").name == "builder"
    with pytest.raises(UnknownAgentError, match="unknown agent 'greedy' for the game 'startap'"):
        make_agent("greedy", game="startap")
    with pytest.raises(UnknownAgentError, match="unknown agent 'builder'"):
        make_agent("builder")
    shipped = build_agent("ppo", game="startap")
    assert shipped.name == "ppo" and shipped.model.game == "startap"


def test_the_arena_plays_startap_duplicate_deals_reproducibly():
    a = run_arena("builder,outsourcer,random", 3, 12, seed=4, game="startap")
    b = run_arena(["builder", "outsourcer", "random"], 3, 12, seed=4, game="startap", batch_size=3)
    assert a.game == "startap" and a.to_json()["game"] == "startap" and a.games == 12
    c = run_arena("builder,outsourcer,random", 3, 12, seed=4, game="startap")
    np.testing.assert_array_equal(a.ranks, c.ranks)
    assert b.games == 12 and (b.ranks >= 0).all()
    # Every seating of a deal sees the same cards: three builders score alike by seat.
    same = run_arena("builder,builder,builder", 3, 6, seed=1, game="startap")
    assert (same.ranks.reshape(2, 3, 3).min(axis=2) == 0).all()


def test_the_arena_command_line_takes_the_game(capsys):
    assert arena_main(["--game", "startap", "--players", "3", "--agents", "builder,random,random", "--games", "6",
                       "--no-progress"]) == 0
    assert "3 players, 6 games" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        arena_main(["--game", "startap", "--players", "3", "--agents", "builder,random,random", "--rounds", "4"])
    assert "Стартап has no setting rounds" in capsys.readouterr().err


def test_the_ladder_takes_the_game(capsys):
    pairings = default_pairings("startap")
    assert ("builder", "outsourcer") in pairings and all("greedy" not in p for p in pairings)
    ladder = run_ladder([3], 6, 0, seed=2, pairings=(("builder", "random"),), game="startap")
    assert [row["hero"] for row in ladder["pairings"]] == ["builder"] and ladder["pairings"][0]["games"] == 6


def test_the_vector_env_serves_startap():
    batch = SeatBatch(6, [make_agent("builder", seed=1, game="startap")], players="2-6", seed=3, game="startap")
    obs = batch.reset()
    assert obs.shape == (6, STARTAP.obs_dim) and batch.privileged().shape == (6, 0)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(300):
        mask = batch.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
        obs, reward, terminated, truncated, info = batch.step(actions)
        ended += int((terminated | truncated).sum())
    assert ended > 0 and obs.shape == (6, STARTAP.obs_dim)
    env = StartupsVecEnv(4, game="startap", seed=1)
    assert env.action_space.n == STARTAP.num_actions and env.observation_space.shape == (STARTAP.obs_dim,)


def test_startap_observation_bounds_and_scale_cover_every_column():
    low, high = startap_observe.observation_bounds()
    scale = startap_observe.input_scale()
    assert low.shape == high.shape == scale.shape == (STARTAP.obs_dim,)
    sim = StartapSimulator(64, num_players=5, seed=1)
    for _ in range(60):
        sim.step(sim.random_actions())
        obs = startap_observe.observe(sim.state)
        assert (obs >= low).all() and (obs <= high).all()
    flags = np.isfinite(high)
    assert (scale[flags] == 1).all() and (scale[~flags] < 1).all()


def test_a_network_checkpoint_remembers_its_game(tmp_path):
    model = ActorCritic(STARTAP.obs_dim, [8], STARTAP.num_actions, game="startap",
                        generator=torch.Generator().manual_seed(0))
    assert not model.features and not model.greedy_prior and model.config()["game"] == "startap"
    path = str(tmp_path / "startap.pt")
    atomic_save(checkpoint_dict(model), path)
    agent = load_ppo_agent(path, game="startap")
    run_arena([agent, "random", "random"], 3, 3, seed=1, game="startap")
    with pytest.raises(CheckpointError, match="trained on the game 'startap', not 'startups'"):
        load_ppo_agent(path)


def test_the_trainer_trains_on_startap(tmp_path):
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    flags = ["--game", "startap", "--baselines", "random,builder", "--eval-opponents", "builder", "--players", "3-5",
             "--total-steps", "1024", "--num-envs", "32", "--num-steps", "16", "--hidden", "16,16",
             "--eval-games", "6", "--final-eval-games", "6", "--no-progress", "--out", str(out)]
    done = subprocess.run([sys.executable, "-m", "startups_env.train.selfplay", *flags], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ppo vs 3 x builder" in done.stdout
    agent = load_ppo_agent(str(out / "policy.pt"), game="startap")
    assert agent.model.game == "startap"
    bad = subprocess.run([sys.executable, "-m", "startups_env.train.selfplay", *flags[:2], "--baselines", "greedy",
                          "--out", str(tmp_path / "bad")], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    assert bad.returncode != 0 and "unknown agent 'greedy' for the game 'startap'" in bad.stderr


def test_a_startap_run_on_the_defaults_trains_and_resumes(tmp_path, capsys):
    """`--game startap` with nothing else trains against Стартап's bots (not the first
    game's greedy bot), and `--resume --out D` continues the run on the game its checkpoint
    records, with or without `--game startap`; another --game is refused, naming both."""
    from startups_env.train import selfplay

    out = tmp_path / "run"
    small = ["--players", "3-4", "--num-envs", "16", "--num-steps", "8", "--hidden", "16,16", "--eval-games", "2",
             "--final-eval-games", "2", "--no-progress"]
    assert selfplay.main(["--game", "startap", "--total-steps", "128", "--out", str(out), *small]) == 0
    first = torch.load(out / "checkpoint.pt", weights_only=True)
    assert first["config"]["game"] == "startap" and first["args"]["baselines"] == "random,builder"
    assert first["args"]["eval_opponents"] == "random,builder"
    assert selfplay.main(["--resume", "--out", str(out), "--total-steps", "256", "--no-progress"]) == 0
    second = torch.load(out / "checkpoint.pt", weights_only=True)
    assert second["global_step"] > first["global_step"] and second["config"]["game"] == "startap"
    assert selfplay.main(["--game", "startap", "--resume", "--out", str(out), "--total-steps", "384",
                          "--no-progress"]) == 0
    assert torch.load(out / "checkpoint.pt", weights_only=True)["global_step"] > second["global_step"]
    capsys.readouterr()
    assert selfplay.main(["--game", "startups", "--resume", "--out", str(out), "--total-steps", "512"]) == 2
    assert "trained on the game 'startap'" in capsys.readouterr().err


def test_action_names_take_numpy_integers_in_both_games():
    """action_space.sample() gives np.int64: every game names it as the same int."""
    for game in GAMES.values():
        for action in (0, game.num_actions - 1):
            assert game.action_to_string(np.int64(action)) == game.action_to_string(action)
        with pytest.raises(ValueError, match="action"):
            game.action_to_string(game.num_actions)


def test_one_front_door_serves_both_games():
    import startups_env

    for name, players in (("startups", 4), ("startap", 5)):
        env = startups_env.env(game=name, num_players=players)
        env.reset(seed=1)
        assert len(env.possible_agents) == players
        agent = env.agent_selection
        obs = env.observe(agent)
        assert obs["observation"].shape == (game_by_name(name).obs_dim,)
        env.step(env.action_space(agent).sample(obs["action_mask"]))
    assert "startap" in startups_env.env.__doc__ and "startap" in startups_env.__doc__
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        startups_env.env(game="chess")


def test_the_bench_prints_startap_figures_with_game(capsys):
    from startups_env.agents import bench

    bench.main(["--game", "startap", "--quick", "--repeats", "1", "--seconds", "0.05", "--batch-sizes", "8",
                "--games", "4", "--matches", "0", "--search-games", "0", "--clock", "cpu"])
    out = capsys.readouterr().out
    assert "batch B=8 players=4 backend=numpy decisions_per_s=" in out and "game_length players=" in out
    assert "search" not in out  # (not the first game's figures)


def test_startap_in_the_terminal_against_its_bots(tmp_path):
    """`play --game startap`: each prompt shows the table and the legal moves by id; a bad
    entry asks again; the game runs to its end and its log replays to the same result."""
    import io
    import re

    from startups_env.agents.play import main as play_main
    from startups_env.tools import game_log

    out = io.StringIO()
    asked = []

    def answer(prompt):
        moves = re.findall(r"^moves: (\d+)", out.getvalue(), re.M)
        asked.append(moves[-1])
        return "999" if len(asked) == 1 else moves[-1]  # (one bad entry first)

    path = tmp_path / "game.json"
    assert play_main(["--game", "startap", "--players", "3", "--seed", "2", "--opponents", "builder",
                      "--save", str(path)], input_fn=answer, output=out) == 0
    text = out.getvalue()
    assert "'999' is not a legal move id here" in text and "The game is over: you placed" in text
    log = game_log.load(path)
    assert log["players"] == ["you", "builder", "builder"] and len(asked) > 2
    assert game_log.replay(log).done[0]
    assert play_main(["--game", "startap", "--players", "9"], input_fn=answer, output=io.StringIO()) == 2


def test_startap_renders_an_rgb_array_picture():
    import startups_env

    env = startups_env.env(game="startap", num_players=3, render_mode="rgb_array")
    env.reset(seed=1)
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3 and first.shape[0] > 60
    assert (first != first[0, 0]).any(axis=2).sum() > 500  # text was drawn
    agent = env.agent_selection
    env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    later = env.render()
    assert later.shape != first.shape or (later != first).any()  # the picture follows the game


def test_first_game_only_bots_at_a_startap_table_are_named_as_such():
    for spec in ("openspiel:ismcts", "sb3:model.zip", "exit"):
        with pytest.raises(UnknownAgentError, match=f"agent '{spec}' plays startups only, not Стартап"):
            make_agent(spec, game="startap")
