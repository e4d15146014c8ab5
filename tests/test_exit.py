"""startups_env.train.exit (expert iteration): its rounds, their files, resuming after a
crash, and the two bots it ships: the network (``ppo:PATH``) and the search with the
network as its prior (``search[prior=ppo:PATH]``)."""

import glob
import json
import os
import re

import numpy as np
import pytest
import torch
from startups_env.agents import make_agent
from startups_env.agents.base import Agent
from startups_env.agents.ppo import BELIEF_DIM, ActorCritic, checkpoint_dict, load_ppo_agent
from startups_env.agents.registry import build_agent
from startups_env.agents.search import SearchAgent
from startups_env.startups.history import History
from startups_env.startups.observe import SLICES, observe
from startups_env.startups.rules import MAX_PLAYERS, NUM_COMPANIES, Rules
from startups_env.startups.simulator import Simulator
from startups_env.startups.state import public_state
from startups_env.train import distill, exit as exit_run
from startups_env.train.common import atomic_save
from startups_env.train.distill import collect_shard, policy_targets

TINY = ["--rounds", "2", "--round-games", "6", "--shard-games", "3", "--players", "3,5",
        "--teacher", "search[determinizations=4;halving_rounds=0]", "--styles", "greedy,banker",
        "--epochs", "2", "--hidden", "16", "--eval-games", "8", "--eval-shard-games", "4"]


def run(out, *flags):
    return exit_run.main(["--out", str(out), *TINY, *flags])


def weights(path):
    return torch.load(path, weights_only=True)["model"]


def test_rounds_write_shards_policies_a_log_and_a_curve(tmp_path, capsys):
    assert run(tmp_path / "x") == 0
    out = tmp_path / "x"
    # The shards' lines add up to their round's: "50 decisions" a shard against "39 labelled
    # decisions" a round read as a contradiction; the forced moves are now named on both.
    text = capsys.readouterr().out
    for index in range(2):
        shards = re.findall(rf"^round {index} shard \d/2 vs \S+: ([\d,]+) decisions, ([\d,]+) of them with a choice",
                            text, re.M)
        done = re.search(rf"^round {index} done: ([\d,]+) labelled decisions \(those with a choice; ([\d,]+) in all",
                         text, re.M)
        assert len(shards) == 2 and done, text
        totals = [sum(int(pair[i].replace(",", "")) for pair in shards) for i in (1, 0)]
        assert totals == [int(done.group(1).replace(",", "")), int(done.group(2).replace(",", ""))], text
    assert run(tmp_path / "quiet", "--rounds", "1", "--no-progress") == 0
    quiet = capsys.readouterr().out
    assert "round 0 shard" not in quiet and "round 0: fitting" not in quiet and "round 0 done: " in quiet, quiet
    for index in range(2):
        assert len(glob.glob(str(out / f"round_{index:03d}" / "data" / "shard_*.npz"))) == 2
        agent = load_ppo_agent(str(out / f"round_{index:03d}" / "policy.pt"))
        assert agent.model.has_belief, "the network has its hand-belief head"
    lines = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [line["round"] for line in lines] == [0, 1]
    assert lines[1]["total_choice_decisions"] == lines[0]["choice_decisions"] + lines[1]["choice_decisions"]
    assert lines[1]["eval"]["greedy"]["games"] == 8 and 0 <= lines[1]["eval"]["greedy"]["win_rate"] <= 1
    assert (out / "curve.png").read_bytes()[:4] == b"\x89PNG"
    # OUT/policy.pt is the latest round's network, and plays as ppo:PATH.
    for key, value in weights(out / "round_001" / "policy.pt").items():
        assert torch.equal(value, weights(out / "policy.pt")[key])
    assert build_agent(f"ppo:{out / 'policy.pt'}").name.startswith("ppo:")
    # A second call with as many rounds does nothing more; more rounds continue the run.
    assert run(out) == 0 and not (out / "round_002").exists()
    assert exit_run.main(["--out", str(out), *TINY[2:], "--rounds", "3"]) == 0
    assert len(exit_run.read_rounds(str(out))) == 3


def test_a_crash_mid_round_loses_only_the_shard_in_progress(tmp_path, monkeypatch, capsys):
    assert run(tmp_path / "whole") == 0
    saved = []
    real_save = exit_run.save_shard

    def crash_on_the_fourth(data, path):  # round 1's second shard: round 0 and one shard of round 1 are done
        if len(saved) == 3:
            raise KeyboardInterrupt("the machine went down")
        saved.append(path)
        real_save(data, path)

    monkeypatch.setattr(exit_run, "save_shard", crash_on_the_fourth)
    capsys.readouterr()
    assert run(tmp_path / "broken") == 130  # Ctrl-C: one line, no traceback
    broken = tmp_path / "broken"
    err = capsys.readouterr().err
    assert err.strip() == f"interrupted: 3 shard(s) kept in {broken}; run the same command again to resume", err
    assert (broken / "round_000" / "policy.pt").exists() and (broken / "round_001" / "data" / "shard_0000.npz").exists()
    assert not (broken / "round_001" / "policy.pt").exists() and not glob.glob(str(broken / "**" / "*.tmp"))
    monkeypatch.setattr(exit_run, "save_shard", real_save)
    assert run(broken) == 0
    out = capsys.readouterr().out
    assert f"resuming {broken}: 1 round(s) finished there" in out
    assert f"round 1: reusing the 1 of its 2 shards already in {broken / 'round_001' / 'data'}" in out
    for index in range(2):
        for shard in range(2):
            name = f"round_{index:03d}/data/shard_{shard:04d}.npz"
            with np.load(tmp_path / "whole" / name) as a, np.load(broken / name) as b:
                for key in (*distill.SHARD_KEYS, "hands"):
                    assert np.array_equal(a[key], b[key]), f"{name}: {key} differs after the resume"
        mine, theirs = weights(broken / f"round_{index:03d}" / "policy.pt"), weights(tmp_path / "whole" / f"round_{index:03d}" / "policy.pt")
        assert all(torch.equal(mine[k], theirs[k]) for k in theirs), "the resumed run fits the same network"
    def results(out):  # (the seconds differ from run to run)
        return [{k: v for k, v in json.loads(line)["eval"]["greedy"].items() if k != "seconds_per_decision"}
                for line in (out / "log.jsonl").read_text().splitlines()]

    assert results(broken) == results(tmp_path / "whole")


def test_a_resume_with_other_settings_and_bad_flags_are_refused(tmp_path, capsys):
    out = tmp_path / "x"
    assert exit_run.main(["--out", str(out), *TINY, "--rounds", "1"]) == 0
    assert exit_run.main(["--out", str(out), *TINY, "--rounds", "2", "--seed", "5"]) == 2
    assert "seed 1 (now 5)" in capsys.readouterr().err and not (out / "round_001").exists()
    assert exit_run.main(["--out", str(tmp_path / "y"), *TINY, "--round-games", "0"]) == 2
    assert "--round-games must be >= 1" in capsys.readouterr().err
    assert exit_run.main(["--out", str(tmp_path / "y"), *TINY, "--styles", "nosuchbot"]) == 2
    assert "nosuchbot" in capsys.readouterr().err and not (tmp_path / "y").exists()


def test_each_round_plays_its_network_against_itself_a_past_self_and_the_styles():
    assert exit_run.round_players("o", 0, ["greedy", "banker"], 1) == ("greedy", ["greedy", "banker"])
    driver, opponents = exit_run.round_players("o", 1, ["greedy"], 1)
    assert driver == f"ppo:{os.path.join('o', 'round_000', 'policy.pt')}" and opponents == [driver, "greedy"]
    driver, opponents = exit_run.round_players("o", 3, ["greedy"], 1)
    assert driver.endswith(os.path.join("round_002", "policy.pt")) and opponents[0] == driver
    assert opponents[1] in {f"ppo:{os.path.join('o', f'round_00{k}', 'policy.pt')}" for k in (0, 1)}


def test_labelled_decisions_carry_the_other_seats_true_hands():
    data = collect_shard(make_agent("greedy", seed=0), "banker", games=10, players=(3, 6), seed=2)
    obs = data["obs"].astype(np.int64)
    hands = data["hands"].astype(np.int64).reshape(-1, MAX_PLAYERS - 1, NUM_COMPANIES)
    assert hands.shape[1] * hands.shape[2] == BELIEF_DIM
    players = obs[:, SLICES["num_players"]].argmax(axis=1) + 2
    seats = np.arange(1, MAX_PLAYERS)[None, :]
    assert (hands.sum(axis=2)[seats >= players[:, None]] == 0).all(), "no cards at empty seats"
    known = obs[:, SLICES["known_hands"]].reshape(-1, MAX_PLAYERS, NUM_COMPANIES)[:, 1:]
    assert (hands >= known).all(), "a hand holds the cards known to be in it"
    assert ((hands - known).sum(axis=1) <= obs[:, SLICES["unseen"]]).all(), "the rest of their hands is unseen"
    assert (hands.sum(axis=(1, 2)) > 0).all()


def test_the_belief_head_round_trips_and_old_files_load(tmp_path):
    model = ActorCritic(hidden=[8], greedy_prior=True, belief=True, generator=torch.Generator().manual_seed(0))
    path = str(tmp_path / "p.pt")
    atomic_save(checkpoint_dict(model), path)
    loaded = load_ppo_agent(path).model
    x = loaded.inputs(torch.zeros(2, loaded.obs_dim))[0]
    assert loaded.belief_counts(x).shape == (2, BELIEF_DIM) and (loaded.belief_counts(x) >= 0).all()
    old = checkpoint_dict(ActorCritic(hidden=[8]))
    del old["config"]["belief"]
    atomic_save(old, path)
    with pytest.raises(ValueError, match="no hand-belief head"):
        plain = load_ppo_agent(path).model
        plain.belief_counts(plain.inputs(torch.zeros(1, plain.obs_dim))[0])
    (tmp_path / "bad.pt").write_bytes(b"\x00garbage")
    with pytest.raises(ValueError, match="bad.pt is not a readable PPO checkpoint"):
        build_agent(f"search[prior=ppo:{tmp_path / 'bad.pt'}]")


class FavorsTheLast(Agent):
    """A prior that likes the highest-numbered legal action best."""

    def logits(self, obs, mask):
        return np.where(mask, np.arange(mask.shape[1], dtype=np.float32), -1e9)

    def act(self, obs, mask, **given):
        return self.logits(obs, mask).argmax(axis=1)


def test_the_search_ranks_its_candidates_by_its_prior(tmp_path):
    sim = Simulator(Rules(num_players=4), 6, seed=3)
    seats = sim.state.current.astype(np.intp)
    obs, mask = observe(sim.state), sim.legal_mask()
    kwargs = dict(determinizations=4, max_candidates=1, infer_hands=False)
    public = public_state(sim.state, seats)
    with_prior = SearchAgent(seed=0, prior=FavorsTheLast(), **kwargs).act(obs, mask, public=public,
                                                                          history=History(6))
    assert np.array_equal(with_prior, FavorsTheLast().act(obs, mask)), "one candidate: the prior's best"
    with pytest.raises(ValueError, match="prior must be None"):
        SearchAgent(prior="ppo")
    model = ActorCritic(hidden=[8], greedy_prior=True, generator=torch.Generator().manual_seed(0))
    atomic_save(checkpoint_dict(model), str(tmp_path / "p.pt"))
    bot = build_agent(f"search[prior=ppo:{tmp_path / 'p.pt'};max_candidates=3]", seed=1)
    assert bot.prior is not None and build_agent("search[prior=greedy]").prior is None


def test_the_search_values_every_action_it_searched():
    sim = Simulator(Rules(num_players=4), 12, seed=4)
    search = SearchAgent(seed=2, determinizations=4, halving_rounds=1)
    log = History(12)
    valued_choices = 0
    for _ in range(8):
        state = sim.state
        obs, mask = observe(state), sim.legal_mask()
        actions = search.act(obs, mask, public=public_state(state, state.current), history=log)
        values = search.last_values
        assert values.shape == mask.shape
        searched = ~np.isnan(values)
        assert not (searched & ~mask).any(), "only legal actions have values"
        choice = mask.sum(axis=1) > 1
        assert not searched[~choice].any(), "a forced move is not searched"
        assert searched[choice].sum(axis=1).min(initial=2) >= 2
        assert ((values[searched] >= 0) & (values[searched] <= 1)).all()
        assert searched[choice, actions[choice]].all(), "the choice was searched"
        valued_choices += int(choice.sum())
        log.record(state, actions)
        sim.step(actions)
    assert valued_choices > 20


def test_shards_carry_the_search_values_and_the_fit_mixes_them_with_the_choice():
    teacher = SearchAgent(seed=1, determinizations=4, halving_rounds=0)
    data = collect_shard(teacher, "greedy", games=6, players=(4,), seed=3)
    assert data["values"].shape == data["mask"].shape and data["values"].dtype == np.float16
    choice = data["mask"].sum(axis=1) > 1
    assert (~np.isnan(data["values"][choice])).sum(axis=1).min() >= 2
    targets = policy_targets(data, 0.5, 0.03)
    assert np.allclose(targets.sum(axis=1), 1.0) and (targets[~data["mask"]] == 0).all()
    rows = np.arange(targets.shape[0])
    assert (targets[rows, data["action"]] >= 0.5 - 1e-6).all(), "half the target stays on the teacher's choice"
    assert (targets[~choice].max(axis=1) == 1.0).all(), "a forced move's target is that move"
    # A hand-made decision: values 0.5 and 0.47 at temperature 0.03 weigh e:1.
    tiny = {"values": np.array([[0.5, 0.47, np.nan]]), "mask": np.array([[True, True, True]]), "action": np.array([1])}
    expected = 0.5 * np.array([np.e, 1.0, 0.0]) / (np.e + 1.0) + 0.5 * np.array([0.0, 1.0, 0.0])
    assert np.allclose(policy_targets(tiny, 0.5, 0.03), expected, atol=1e-6)
    assert np.allclose(policy_targets(tiny, 0.0, 0.03), [[0.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match="temperature"):
        policy_targets(tiny, 0.5, 0.0)
    with pytest.raises(ValueError, match="values"):
        policy_targets({k: v for k, v in tiny.items() if k != "values"}, 0.5, 0.03)


def test_runs_started_before_value_labels_resume_as_choice_only(tmp_path, capsys):
    out = tmp_path / "x"
    assert run(out, "--rounds", "1", "--value-weight", "0") == 0
    settings = json.loads((out / "settings.json").read_text())
    for key in ("value_weight", "value_temperature"):  # as an older run wrote it
        del settings[key]
    (out / "settings.json").write_text(json.dumps(settings))
    assert run(out, "--rounds", "1", "--value-weight", "0.5") == 2
    assert "value-weight 0.0 (now 0.5)" in capsys.readouterr().err
    assert run(out, "--rounds", "2", "--value-weight", "0") == 0
    assert exit_run.main(["--out", str(tmp_path / "y"), *TINY, "--value-weight", "2"]) == 2
    assert "--value-weight must be in [0, 1]" in capsys.readouterr().err


def test_the_rules_flag_plays_every_shard_and_evaluation_under_the_ruleset(tmp_path, monkeypatch, capsys):
    """startups_env.train.exit had no --rules (every other trainer has one)."""
    jobs, arenas = [], []
    real_label, real_arena = exit_run.label_timed, exit_run.run_arena
    monkeypatch.setattr(exit_run, "label_timed", lambda job, report=None: jobs.append(job) or real_label(job, report))
    monkeypatch.setattr(exit_run, "run_arena", lambda *a, **k: arenas.append(k["rules"]) or real_arena(*a, **k))
    out = tmp_path / "x"
    assert run(out, "--rounds", "1", "--rules", "summary", "--no-progress") == 0
    assert len(jobs) == 2 and all(job["rules"] == "summary" for job in jobs)
    assert arenas and all(rules.ruleset == "summary" for rules in arenas)
    assert json.loads((out / "settings.json").read_text())["rules"] == "summary"
    capsys.readouterr()
    assert run(out, "--rounds", "2") == 2  # the rulebook's flags cannot resume it
    assert "rules 'summary' (now 'rulebook')" in capsys.readouterr().err
