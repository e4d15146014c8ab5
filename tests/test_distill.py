"""startups_env.train.distill: recording a teacher's decisions, behaviour cloning, and starting PPO from the result."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from startups_env.agents import make_agent
from startups_env.agents.arena import run_arena
from startups_env.agents.ppo import ActorCritic, CheckpointError, checkpoint_dict, load_ppo_agent
from startups_env.train.checkpoints import start_from_policy
from startups_env.train.common import atomic_save
from startups_env.train.distill import collect_shard, fit, load_shards, main, save_shard

from startups_env.startups.observe import OBS_DIM
from startups_env.startups.rules import NUM_ACTIONS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_distill(*flags, timeout=180):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "startups_env.train.distill", *flags], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_shards_hold_the_teachers_legal_decisions(tmp_path):
    data = collect_shard(make_agent("banker", seed=0), "random", games=12, players=(3, 5), seed=4)
    n = data["action"].size
    assert data["obs"].shape == (n, OBS_DIM) and data["mask"].shape == (n, NUM_ACTIONS)
    assert data["mask"][np.arange(n), data["action"]].all(), "every recorded action is legal"
    assert set(np.unique(data["game"])) == set(range(12)), "the teacher moved in every game"
    # Recorded decisions are what the teacher plays from those observations.
    again = make_agent("banker", seed=0).act(data["obs"].astype(np.float32), data["mask"])
    assert np.array_equal(again, data["action"])
    path = str(tmp_path / "shard.npz")
    save_shard(data, path)
    both = load_shards([path, path])
    assert both["action"].size == 2 * n and np.unique(both["game"]).size == 24, "games renumbered per shard"
    (tmp_path / "bad.npz").write_bytes(b"not a shard")
    with pytest.raises(ValueError, match="bad.npz is not a readable distillation shard"):
        load_shards([str(tmp_path / "bad.npz")])


def test_a_driver_plays_while_the_teacher_labels():
    teacher_games = collect_shard(make_agent("banker", seed=0), "greedy", games=10, players=(4,), seed=3)
    data = collect_shard(make_agent("banker", seed=0), "greedy", games=10, players=(4,), seed=3,
                         driver=make_agent("random", seed=1))
    assert np.array_equal(make_agent("banker", seed=0).act(data["obs"].astype(np.float32), data["mask"]),
                          data["action"]), "the labels are the teacher's choices"
    assert data["mask"][np.arange(data["action"].size), data["action"]].all()
    # The positions are the driver's, not those of the teacher's own games.
    assert data["obs"].shape != teacher_games["obs"].shape or not np.array_equal(data["obs"], teacher_games["obs"])


def test_fit_imitates_a_teacher_the_greedy_prior_does_not():
    data = collect_shard(make_agent("banker", seed=1), "greedy", games=120, players=(4,), seed=5)
    model, report = fit(data, [64, 64], epochs=20, batch_size=64, seed=0, log=lambda _: None)
    assert report["greedy_agreement"] < 0.8
    assert report["accuracy"] > report["greedy_agreement"] + 0.08, report


def test_a_ppo_run_starts_from_the_policy_file(tmp_path):
    source = ActorCritic(hidden=[16, 16], greedy_prior=True, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        for p in source.parameters():
            p.add_(0.1 * torch.randn(p.shape, generator=torch.Generator().manual_seed(1)))
    path = str(tmp_path / "policy.pt")
    atomic_save(checkpoint_dict(source, kind="policy"), path)
    target = ActorCritic(hidden=[16, 16], greedy_prior=True, critic_extra=5)
    start_from_policy(target, path)
    obs = torch.rand(32, OBS_DIM) * 3
    mask = torch.rand(32, NUM_ACTIONS) > 0.3
    torch.testing.assert_close(target.masked_logits(obs, mask), source.masked_logits(obs, mask))
    extra = torch.rand(32, 5)
    torch.testing.assert_close(target.value(obs, extra), source.value(obs), msg="extra inputs start at zero weight")
    with pytest.raises(ValueError, match="differs from this run's"):
        start_from_policy(ActorCritic(hidden=[8, 8], greedy_prior=True), path)
    privileged = str(tmp_path / "privileged.pt")
    atomic_save(checkpoint_dict(target, kind="policy"), privileged)
    with pytest.raises(ValueError, match="critic takes more inputs"):
        start_from_policy(ActorCritic(hidden=[16, 16], greedy_prior=True), privileged)
    (tmp_path / "bad.pt").write_bytes(b"junk")
    with pytest.raises(CheckpointError):
        start_from_policy(target, str(tmp_path / "bad.pt"))


def test_command_line_run_resumes_from_its_shards(tmp_path):
    flags = ["--games", "8", "--shard-games", "4", "--players", "3-4", "--teacher", "search[determinizations=4]",
             "--hidden", "16,16", "--epochs", "2", "--eval-games", "8", "--out", str(tmp_path)]
    proc = run_distill(*flags)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("shard ") == 2 and "held-out accuracy" in proc.stdout and "vs 3 greedy" in proc.stdout
    assert sorted(os.listdir(tmp_path / "data")) == ["shard_0000.npz", "shard_0001.npz"]
    # --help promises eval.json in --out: the final table as data.
    evaluation = json.loads((tmp_path / "eval.json").read_text())
    assert sorted(evaluation) == ["greedy", "random"] and evaluation["greedy"]["games"] == 8
    assert str(tmp_path / "eval.json") in proc.stdout
    agent = load_ppo_agent(str(tmp_path / "policy.pt"))
    assert run_arena([agent, "random", "random"], players=3, games=6, seed=0, rate=False).games == 6
    meta = torch.load(tmp_path / "policy.pt", weights_only=True)
    assert meta["kind"] == "policy" and meta["fit"]["decisions"] > 0 and meta["command"].startswith("python -m")
    # A rerun records nothing new: the shards on disk are the data.
    proc = run_distill(*flags)
    assert proc.returncode == 0 and "shard " not in proc.stdout
    proc = run_distill(*flags[:-1], str(tmp_path / "other"), "--teacher", "nobody")
    assert proc.returncode == 2 and "unknown agent 'nobody'" in proc.stderr
    # A DAgger round: the first policy plays, the teacher labels, both rounds' shards are fitted.
    proc = run_distill(*flags[:-1], str(tmp_path / "round2"), "--driver", f"ppo:{tmp_path / 'policy.pt'}",
                       "--extra-data", str(tmp_path / "data"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert torch.load(tmp_path / "round2" / "policy.pt", weights_only=True)["fit"]["decisions"] > meta["fit"]["decisions"]
    proc = run_distill(*flags[:-1], str(tmp_path / "round3"), "--extra-data", str(tmp_path / "nothing"))
    assert proc.returncode == 2 and "no shard_*.npz files" in proc.stderr
    proc = run_distill(*flags[:-1], str(tmp_path / "round4"), "--opponents", " , ")
    assert proc.returncode == 2 and "--opponents names no agent" in proc.stderr
    # PPO continues from the distilled policy.
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    trainer = [sys.executable, "-m", "startups_env.train.selfplay", "--init-policy", str(tmp_path / "policy.pt"), "--players", "4",
               "--total-steps", "512", "--num-envs", "32", "--eval-games", "4", "--final-eval-games", "4",
               "--no-progress", "--out", str(tmp_path / "ppo")]
    proc = subprocess.run([*trainer, "--hidden", "16,16"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert torch.load(tmp_path / "ppo" / "checkpoint.pt", weights_only=True)["args"]["init_policy"].endswith("policy.pt")
    trainer[-1] = str(tmp_path / "ppo2")  # (the first folder holds a run now: a new one would be refused there)
    proc = subprocess.run(trainer, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 2 and "differs from this run's" in proc.stderr


def test_a_run_that_cannot_start_leaves_no_folder(tmp_path, monkeypatch, capsys):
    """--workers 2 without Ray used to fail after --out/data had been made, leaving it empty."""
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails, as where Ray is not installed
    out = tmp_path / "run"
    assert main(["--out", str(out), "--games", "2", "--shard-games", "2", "--workers", "2"]) == 2
    assert "Ray" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("flag", ["--teacher", "--driver"])
@pytest.mark.parametrize("spec, message", [("ppo:/no/such/policy.pt", "PPO checkpoint not found: /no/such/policy.pt"),
                                           ("search[nonsense=1]", "agent 'search[nonsense=1]'")])
def test_a_bad_agent_is_a_clear_error(flag, spec, message, tmp_path, capsys):
    assert main(["--out", str(tmp_path), "--games", "2", "--shard-games", "2", flag, spec]) == 2
    assert message in capsys.readouterr().err


def test_a_fit_can_start_from_a_trained_policy(tmp_path):
    """--init-policy: the network starts from the file's weights (Стартап here: any game), and
    a file of other layers is refused by name."""
    teacher = make_agent("builder", seed=0, game="startap")
    data = collect_shard(teacher, "builder", games=2, players=(3,), seed=1, game="startap")
    first, _ = fit(data, [16], 1, seed=1, log=lambda line: None, game="startap")
    path = str(tmp_path / "first.pt")
    atomic_save(checkpoint_dict(first), path)
    again, _ = fit(data, [16], 1, learning_rate=1e-12, seed=2, log=lambda line: None, game="startap",
                   init_policy=path)
    fresh, _ = fit(data, [16], 1, learning_rate=1e-12, seed=2, log=lambda line: None, game="startap")
    for name, weights in first.state_dict().items():
        assert torch.allclose(again.state_dict()[name], weights, atol=1e-6), name
    assert not torch.allclose(fresh.state_dict()["actor.0.weight"], first.state_dict()["actor.0.weight"])
    with pytest.raises(ValueError, match="differs from this run's"):
        fit(data, [8], 1, seed=2, log=lambda line: None, game="startap", init_policy=path)
    privileged = ActorCritic(first.obs_dim, [16], first.num_actions, critic_extra=5, game="startap")
    atomic_save(checkpoint_dict(privileged), str(tmp_path / "privileged.pt"))
    again, _ = fit(data, [16], 1, learning_rate=1e-12, seed=2, log=lambda line: None, game="startap",
                   init_policy=str(tmp_path / "privileged.pt"))  # (its critic's extra inputs are dropped)
    assert torch.allclose(again.state_dict()["critic.0.weight"], privileged.state_dict()["critic.0.weight"][:, :-5])
