"""The self-play trainer (tiny subprocess runs, CleanRL style) and PPO checkpoints."""

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from startups_env.agents import build_agent, make_agent
from startups_env.agents.arena import run_arena
from startups_env.agents.ppo import (
    DEFAULT_WEIGHTS,
    EXIT_WEIGHTS,
    ActorCritic,
    CheckpointError,
    PPOAgent,
    checkpoint_dict,
    load_ppo_agent,
    model_from_checkpoint,
    read_checkpoint,
)
from startups_env.train.common import atomic_save
from startups_env.train.selfplay import Args, check_args, parse_args

from startups_env import Simulator
from startups_env.startups.observe import OBS_DIM, observe

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ["--num-envs", "32", "--num-steps", "16", "--hidden", "16,16", "--players", "3-5",
        "--snapshot-every", "512", "--eval-every", "1024", "--eval-games", "8", "--final-eval-games", "8",
        "--checkpoint-every", "1024", "--no-progress"]


def run_trainer(*flags, timeout=120):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "startups_env.train.selfplay", *flags], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A 2048-step run (then reused by the resume test)."""
    out = tmp_path_factory.mktemp("run")
    proc = run_trainer("--total-steps", "2048", "--out", str(out), "--seed", "3", *TINY)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc


def test_tiny_run_writes_a_checkpoint_the_arena_plays(tiny_run):
    out, proc = tiny_run
    for name in ("checkpoint.pt", "policy.pt", "eval.json", "learning_curve.png"):
        assert (out / name).is_file(), name
    assert (out / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert any(f.startswith("events.out.tfevents") for f in os.listdir(out))
    assert not [f for f in os.listdir(out) if ".tmp." in f], "no temporary files left behind"
    assert "final evaluation" in proc.stdout and "decisions/s" in proc.stdout
    assert "evaluations during training" in proc.stdout
    # The run ends by saying where each output went, and how to open the logs.
    for name in ("policy.pt", "checkpoint.pt", "eval.json", "learning_curve.png"):
        assert str(out / name) in proc.stdout, name
    assert f"tensorboard --logdir {out}" in proc.stdout
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(out), size_guidance={"scalars": 0})
    events.Reload()
    tags = events.Tags()["scalars"]
    assert {"charts/win_rate_vs_self", "charts/win_rate_vs_random", "charts/win_rate_vs_greedy"} <= set(tags)
    assert [p.step for p in events.Scalars("eval/win_rate_vs_random")][0] == 0, "the curve starts before training"
    # Checkpoints are plain data.
    data = torch.load(out / "checkpoint.pt", weights_only=True)
    assert data["kind"] == "training" and data["global_step"] >= 2048
    assert data["args"]["hidden"] == "16,16" and data["rules"]["players"] == "3-5"
    assert data["decisions"] > data["global_step"], "opponents' decisions are counted too"
    assert {e["kind"] for e in data["pool"]} == {"self", "baseline", "snapshot"}
    assert "state" in data["optimizer"] and data["rng"]["torch"].dtype == torch.uint8
    for name in ("policy.pt", "checkpoint.pt"):
        agent = make_agent(f"ppo:{out / name}", seed=0)
        result = run_arena([agent, "random", "random"], players=3, games=12, seed=0, rate=False)
        assert result.games == 12 and result.entry_stats()[0]["decisions"] > 0


def test_a_seeded_run_repeats_exactly(tiny_run, tmp_path):
    """Same seed, same flags, under the default time cap (--max-seconds): the same weights,
    optimizer state, pool snapshots and evaluations. The learning rate decays by steps, not
    by the clock, so the run's speed (a busy machine) changes nothing."""
    out, _ = tiny_run
    assert Args().max_seconds > 0, "the default run has a time cap"
    proc = run_trainer("--total-steps", "2048", "--out", str(tmp_path), "--seed", "3", *TINY)
    assert proc.returncode == 0, proc.stderr[-3000:]
    first = torch.load(out / "policy.pt", weights_only=True)["model"]
    again = torch.load(tmp_path / "policy.pt", weights_only=True)["model"]
    assert first.keys() == again.keys() and all(torch.equal(first[k], again[k]) for k in first)
    a, b = (torch.load(d / "checkpoint.pt", weights_only=True) for d in (out, tmp_path))
    assert a["global_step"] == b["global_step"] == 2048 and a["history"] == b["history"]
    for key in a["optimizer"]["state"]:
        assert all(torch.equal(a["optimizer"]["state"][key][k], b["optimizer"]["state"][key][k])
                   for k in ("exp_avg", "exp_avg_sq"))
    snaps = [(x, y) for x, y in zip(a["pool"], b["pool"]) if x["kind"] == "snapshot"]
    assert snaps and all(torch.equal(x["model"][k], y["model"][k]) for x, y in snaps for k in x["model"])
    assert [x["score"] for x in a["pool"]] == [y["score"] for y in b["pool"]]


def test_resume_continues_the_run(tiny_run, tmp_path):
    out, _ = tiny_run
    before = torch.load(out / "checkpoint.pt", weights_only=True)
    # A torn temporary file from a crashed writer must not matter.
    (out / "checkpoint.pt.tmp.999").write_bytes(b"\x00" * 10)
    proc = run_trainer("--resume", "--total-steps", "4096", "--out", str(out), "--no-progress",
                       "--final-eval-games", "8")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "resumed from" in proc.stderr
    after = torch.load(out / "checkpoint.pt", weights_only=True)
    assert after["global_step"] >= 4096 > before["global_step"]
    assert after["updates"] > before["updates"]
    assert after["decisions"] > before["decisions"]
    assert after["args"]["total_steps"] == 4096 and after["args"]["hidden"] == "16,16"  # saved args kept
    assert after["args"]["num_envs"] == 32
    assert len(after["history"]) > len(before["history"])
    assert any(not torch.equal(after["model"][k], before["model"][k]) for k in before["model"])
    load_ppo_agent(str(out / "policy.pt"))
    # The network shape cannot change on resume.
    proc = run_trainer("--resume", "--total-steps", "8192", "--out", str(out), "--hidden", "8,8", "--no-progress")
    assert proc.returncode == 2 and "hidden" in proc.stderr
    assert after["config"]["greedy_prior"], "the trainer's default starts from the greedy bot"
    proc = run_trainer("--resume", "--total-steps", "8192", "--out", str(out), "--no-greedy-prior", "--no-progress")
    assert proc.returncode == 2 and "--greedy-prior False differs" in proc.stderr


def test_a_new_run_refuses_a_folder_that_holds_a_run(tiny_run, capsys):
    """Training again into a run's folder without --resume used to replace its policy and
    checkpoint and leave TensorBoard events of both runs in it: now it is refused, naming
    --resume and --overwrite, and nothing in the folder changes."""
    import startups_env.train.selfplay as selfplay

    out, _ = tiny_run
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert selfplay.main(["--out", str(out), "--total-steps", "512", *TINY]) == 2
    err = capsys.readouterr().err
    assert f"--out {out} already holds a training run" in err and "--resume" in err and "--overwrite" in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_overwrite_replaces_a_run_and_only_its_files(tmp_path):
    import startups_env.train.selfplay as selfplay

    out = tmp_path / "run"
    out.mkdir()
    for name in ("policy.pt", "checkpoint.pt", "events.out.tfevents.1.old.0"):
        (out / name).write_bytes(b"an earlier run")
    (out / "notes.txt").write_text("mine")
    flags = ["--out", str(out), "--total-steps", "512", "--num-envs", "32", "--num-steps", "8", "--num-minibatches",
             "2", "--final-eval-games", "0", "--eval-games", "4", "--hidden", "16", "--no-progress"]
    assert selfplay.main(flags) == 2
    assert (out / "policy.pt").read_bytes() == b"an earlier run"
    assert selfplay.main(flags + ["--overwrite"]) == 0
    assert (out / "notes.txt").read_text() == "mine", "files the trainer did not write stay"
    assert not (out / "events.out.tfevents.1.old.0").exists(), "the old run's events would mix with the new ones"
    assert len(list(out.glob("events.out.tfevents.*"))) == 1
    assert read_checkpoint(str(out / "policy.pt"))["global_step"] == 512
    with pytest.raises(ValueError, match="--resume continues .* --overwrite replaces"):
        check_args(Args(out=str(out), resume=True, overwrite=True))


def test_a_run_that_cannot_start_leaves_no_folder(tmp_path, capsys):
    """A corrupt --init-policy used to fail after --out had been made, leaving it empty."""
    import startups_env.train.selfplay as selfplay

    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a policy")
    out = tmp_path / "bad"
    assert selfplay.main(["--out", str(out), "--init-policy", str(corrupt), "--total-steps", "512", *TINY]) == 2
    assert f"--init-policy: {corrupt} is not a readable PPO checkpoint" in capsys.readouterr().err
    assert not out.exists()


def test_resume_with_a_corrupt_checkpoint_fails_clearly(tmp_path):
    (tmp_path / "checkpoint.pt").write_bytes(b"not a checkpoint at all")
    proc = run_trainer("--resume", "--out", str(tmp_path), "--total-steps", "64", *TINY, timeout=60)
    assert proc.returncode == 2
    assert "not a readable PPO checkpoint" in proc.stderr


def test_checkpoint_round_trip(tmp_path):
    gen = torch.Generator().manual_seed(0)
    model = ActorCritic(hidden=[24, 12], generator=gen, critic_extra=5)
    path = tmp_path / "m.pt"
    atomic_save(checkpoint_dict(model, kind="policy", note="x"), str(path))
    data = read_checkpoint(str(path))
    assert data["note"] == "x" and data["config"]["hidden"] == [24, 12]
    loaded = model_from_checkpoint(data)
    sim = Simulator(batch_size=64, seed=1)
    obs = torch.from_numpy(observe(sim.state))
    mask = torch.from_numpy(sim.legal_mask())
    extra = torch.rand(64, 5)
    with torch.no_grad():
        for a, b in zip(model(obs, mask, extra), loaded(obs, mask, extra)):
            assert torch.equal(a, b)
    with pytest.raises(ValueError, match="extra inputs"):
        loaded.value(obs)  # a privileged critic needs its inputs; the policy does not
    # Deterministic play is the argmax of the masked logits; sampled play is legal and seeded.
    agent = load_ppo_agent(str(path), seed=5)
    logits = agent.logits(obs.numpy(), mask.numpy())
    assert np.array_equal(agent.act(obs.numpy(), mask.numpy()), logits.argmax(axis=1))
    sampled = [load_ppo_agent(str(path), seed=5, deterministic=False).act(obs.numpy(), mask.numpy())
               for _ in range(2)]
    assert np.array_equal(*sampled)
    assert mask.numpy()[np.arange(64), sampled[0]].all()


def test_greedy_prior_starts_from_the_greedy_bot_and_round_trips(tmp_path):
    from startups_env.agents.features import features
    from startups_env.agents.greedy import greedy_actions

    model = ActorCritic(hidden=[16], generator=torch.Generator().manual_seed(0), greedy_prior=True)
    sim = Simulator(batch_size=256, seed=4)
    for _ in range(30):  # positions of both phases, well into the game
        sim.step(sim.random_actions())
    obs, mask = observe(sim.state), sim.legal_mask()
    untrained = PPOAgent(model).act(obs, mask)
    greedy = greedy_actions(features(obs), mask)
    assert mask[np.arange(256), untrained].all()
    assert (untrained == greedy).mean() > 0.9, "the untrained policy plays like the greedy bot"
    path = tmp_path / "prior.pt"
    atomic_save(checkpoint_dict(model, kind="policy"), str(path))
    loaded = load_ppo_agent(str(path))
    assert loaded.model.greedy_prior and read_checkpoint(str(path))["config"]["greedy_prior"]
    assert np.array_equal(loaded.logits(obs, mask), PPOAgent(model).logits(obs, mask))


def test_bad_checkpoints_give_clear_errors(tmp_path):
    model = ActorCritic(hidden=[8])
    good = tmp_path / "good.pt"
    atomic_save(checkpoint_dict(model), str(good))
    raw = good.read_bytes()

    with pytest.raises(FileNotFoundError, match="not found"):
        load_ppo_agent(str(tmp_path / "missing.pt"))
    with pytest.raises(FileNotFoundError):
        make_agent(f"ppo:{tmp_path / 'missing.pt'}")
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        load_ppo_agent(str(truncated))
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"hello")
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        make_agent(f"ppo:{junk}")
    # Each kind of wrong file gets a message of its own, in this package's words: no ANSI codes,
    # no advice to unpickle with weights_only=False, no bare "KeyError: 101", a folder not "not found".
    module = tmp_path / "module.pt"
    torch.save(torch.nn.Linear(2, 2), module)
    text = tmp_path / "text.pt"
    text.write_text("hello\nworld\n")
    folder = tmp_path / "folder.pt"
    folder.mkdir()
    expected = {module: "pickled Python objects", text: "not a file torch.save wrote", folder: "is a folder"}
    for path, words in expected.items():
        with pytest.raises(CheckpointError) as info:
            make_agent(f"ppo:{path}")
        message = str(info.value)
        assert words in message and str(path) in message, message
        assert "\x1b" not in message and "weights_only" not in message and "101" not in message, message
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, other)
    with pytest.raises(CheckpointError, match="not a startups-ppo checkpoint"):
        load_ppo_agent(str(other))
    # Trained on another observation size: refused before any weight is loaded.
    data = checkpoint_dict(ActorCritic(obs_dim=OBS_DIM - 5, hidden=[8]))
    wrong = tmp_path / "wrong_dim.pt"
    torch.save(data, wrong)
    with pytest.raises(CheckpointError, match="obs_dim"):
        load_ppo_agent(str(wrong))
    data = checkpoint_dict(model)
    data["config"]["obs_layout"] = "something:197"
    torch.save(data, tmp_path / "layout.pt")
    with pytest.raises(CheckpointError, match="observation layout"):
        load_ppo_agent(str(tmp_path / "layout.pt"))
    data = checkpoint_dict(model)
    data["config"]["hidden"] = [9]  # weights no longer fit the declared network
    torch.save(data, tmp_path / "shape.pt")
    with pytest.raises(CheckpointError, match="do not match"):
        load_ppo_agent(str(tmp_path / "shape.pt"))
    data = checkpoint_dict(model)
    data["model"]["actor.0.weight"][0, 0] = float("nan")  # what a diverged run would have written
    torch.save(data, tmp_path / "nan.pt")
    with pytest.raises(CheckpointError, match="non-finite .* actor.0.weight"):
        load_ppo_agent(str(tmp_path / "nan.pt"))
    with pytest.raises(ValueError):
        PPOAgent("not a model")


def test_args_cli():
    args, given = parse_args(["--total-steps", "100", "--players", "4", "--no-anneal-lr", "--pfsp-power", "0.5"])
    assert args.total_steps == 100 and args.players == "4" and args.anneal_lr is False and args.pfsp_power == 0.5
    assert set(given) == {"total_steps", "players", "anneal_lr", "pfsp_power"}
    assert Args().num_envs == parse_args([])[0].num_envs
    check_args(args)
    for bad in ({"players": "9"}, {"reward": "money"}, {"hidden": "a,b"}, {"num_envs": 0},
                {"self_play_share": 1.5}, {"num_envs": 3, "num_minibatches": 4, "num_steps": 1}):
        with pytest.raises(ValueError):
            check_args(Args(**bad))
    with pytest.raises(SystemExit):
        parse_args(["--no-such-flag"])


@pytest.mark.parametrize("bad, message", [
    ({"gamma": 1.5}, "--gamma must be a finite number in \\[0, 1\\], got 1.5"),
    ({"gae_lambda": -0.1}, "--gae-lambda"),
    ({"ent_coef": float("nan")}, "--ent-coef must be a finite number in \\[0, inf\\), got nan"),
    ({"learning_rate": 0.0}, "--learning-rate must be a finite number in \\(0, inf\\)"),
    ({"clip_coef": -0.2}, "--clip-coef"),
    ({"vf_coef": -1.0}, "--vf-coef"),
    ({"max_grad_norm": float("inf")}, "--max-grad-norm"),
    ({"target_kl": -1.0}, "--target-kl"),
    ({"pfsp_power": float("nan")}, "--pfsp-power"),
    ({"max_seconds": -5.0}, "--max-seconds"),
    ({"seed": -1}, "--seed"),
    ({"out": ""}, "--out"),
])
def test_bad_numbers_fail_before_training(bad, message):
    """A NaN or out-of-range hyperparameter used to train on (an --ent-coef nan run wrote a
    policy of NaN weights and exited 0)."""
    with pytest.raises(ValueError, match=message):
        check_args(Args(**bad))


def test_a_diverging_run_stops_without_writing_its_nan_weights(tmp_path, monkeypatch, capsys):
    import startups_env.train.selfplay as selfplay

    real_step = torch.optim.Adam.step

    def poisoned_step(self, *args, **kwargs):  # the first update breaks the weights
        out = real_step(self, *args, **kwargs)
        with torch.no_grad():
            self.param_groups[0]["params"][0].fill_(float("nan"))
        return out

    monkeypatch.setattr(torch.optim.Adam, "step", poisoned_step)
    out = tmp_path / "run"
    code = selfplay.main(["--out", str(out), "--total-steps", "512", "--num-envs", "32", "--num-steps", "8",
                          "--num-minibatches", "2", "--final-eval-games", "0", "--eval-games", "4",
                          "--no-progress", "--baselines", "random", "--eval-opponents", "random"])
    assert code == 2
    assert "training diverged at step 256" in capsys.readouterr().err
    assert not (out / "policy.pt").exists() and not (out / "checkpoint.pt").exists()


def test_a_run_without_the_privileged_critic(tmp_path):
    """--no-privileged-critic trains (its critic's extra inputs are an empty [n, 0] block;
    flattening them used to fail at the first update)."""
    import startups_env.train.selfplay as selfplay

    out = tmp_path / "run"
    code = selfplay.main(["--out", str(out), "--total-steps", "512", "--num-envs", "32", "--num-steps", "8",
                          "--num-minibatches", "2", "--final-eval-games", "0", "--eval-games", "4", "--hidden", "16",
                          "--no-progress", "--no-privileged-critic"])
    assert code == 0
    assert read_checkpoint(str(out / "policy.pt"))["config"]["critic_extra"] == 0


def test_a_short_run_is_evaluated_ten_times_and_the_bar_says_what_it_counts():
    from startups_env.train.selfplay import eval_interval, eval_text, thousands

    rollout = 1024 * 16
    assert eval_interval(Args(total_steps=300_000)) == 2 * rollout  # a tenth of the run, in whole rollouts
    assert eval_interval(Args(total_steps=1000)) == rollout
    assert eval_interval(Args(total_steps=300_000, eval_every=5000)) == 5000
    assert eval_text([{"step": 0, "random": 0.79, "greedy": 0.271}]) == "vs random 0.79, vs greedy 0.27"
    assert eval_text([]) == "none yet"
    assert (thousands(3771.0), thousands(16644.0), thousands(512.4)) == ("3.8k", "16.6k", "512")
    # The run ends by printing its curve, first evaluation (before training) to last.
    from startups_env.train.selfplay import curve_text

    lines = curve_text([{"step": 0, "random": 0.2, "greedy": 0.105},
                        {"step": 311_296, "random": 0.685, "greedy": 0.24}], 4, 200).splitlines()
    assert "3 copies of each opponent, 200 games a point" in lines[0]
    assert [line.split() for line in lines[1:]] == [["learner", "steps", "vs", "random", "vs", "greedy"],
                                                    ["0", "0.200", "0.105"], ["311.3k", "0.685", "0.240"]]


@pytest.mark.parametrize("bad, message", [
    ({"baselines": "greedy,ppo:/no/such/policy.pt"}, "--baselines: PPO checkpoint not found: /no/such/policy.pt"),
    ({"baselines": "alphago"}, "--baselines: unknown agent 'alphago'"),
    ({"eval_opponents": "search[nonsense=1]"}, "--eval-opponents: .*nonsense"),
])
def test_bad_opponents_fail_before_training(bad, message):
    """A typo or a missing checkpoint in an opponent list is caught by check_args, not
    after the training time has been spent (the evaluation opponents are built last)."""
    with pytest.raises(ValueError, match=message):
        check_args(Args(**bad))


def test_baselines_take_arena_specs():
    check_args(Args(baselines="greedy,search[determinizations=4]", eval_opponents="random,greedy[]"))


def test_help_lists_every_flag(capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for field in dataclasses.fields(Args):
        assert "--" + field.name.replace("_", "-") in text


@pytest.mark.skipif(not os.path.isfile(DEFAULT_WEIGHTS), reason="shipped weights not built yet")
def test_shipped_weights_load_and_beat_random():
    agent = make_agent("ppo", seed=0)
    assert agent.name == "ppo"
    result = run_arena([agent, "random", "random", "random"], players=4, games=200, seed=11, rate=False)
    assert result.entry_stats()[0]["win_rate"] > 0.6  # random alone wins 25%
    meta = torch.load(DEFAULT_WEIGHTS, weights_only=True)
    assert os.path.getsize(DEFAULT_WEIGHTS) < 5 * 2**20 and meta["kind"] == "policy"


def test_the_shipped_expert_iteration_network_loads_and_guides_the_search():
    agent = make_agent("exit", seed=0)
    assert agent.name == "exit"
    result = run_arena([agent, "random", "random", "random"], players=4, games=200, seed=11, rate=False)
    assert result.entry_stats()[0]["win_rate"] > 0.6  # random alone wins 25%
    meta = torch.load(EXIT_WEIGHTS, weights_only=True)
    assert os.path.getsize(EXIT_WEIGHTS) < 5 * 2**20 and meta["kind"] == "policy"
    guided = build_agent("search[prior=exit;max_candidates=4;determinizations=2]", seed=0)
    assert guided.prior.name == "exit"
    result = run_arena([guided, "greedy", "greedy", "greedy"], players=4, games=4, seed=11, rate=False)
    assert result.entry_stats()[0]["games"] == 4


def test_sb3_compare_trains_both_learners_and_reports(tmp_path):
    """``python -m startups_env.train.sb3_compare`` (the measurement behind the native-vs-SB3
    choice in docs/experiments.md) runs end to end: both learners train, play the arena and land in compare.json,
    with SB3's logs in --out rather than a stray folder in /tmp."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SB3_LOGDIR", None)
    proc = subprocess.run([sys.executable, "-m", "startups_env.train.sb3_compare", "--seconds", "1", "--eval-games", "4",
                           "--hidden", "16", "--num-envs", "8", "--num-steps", "16", "--out", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((tmp_path / "compare.json").read_text())
    for side in ("sb3", "native"):
        assert report[side]["steps"] > 0 and report[side]["decisions"] >= report[side]["steps"]
        for opp in ("random", "greedy"):
            assert 0.0 <= report[side][f"win_rate_vs_{opp}"] <= 1.0
    assert list((tmp_path / "sb3").glob("*/events.out.tfevents.*")), "SB3's TensorBoard logs belong in --out"
    assert (tmp_path / "native" / "policy.pt").is_file()
