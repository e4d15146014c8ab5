"""The arena: seat rotation, statistics, JSON/CSV/PNG output, determinism and errors."""

from __future__ import annotations

import json
import math
import os
import re

import numpy as np
import pytest
from startups_env.agents import Agent, act_for_seats, make_agent
from startups_env.agents.arena import ArenaResult, error_bars, main, played_share, run_arena, wilson_interval
from startups_env.agents.random_agent import uniform_legal
from startups_env.agents.registry import build_agent, parse_agent_spec

from startups_env import Rules, Simulator
from startups_env.startups.state import shuffled_decks

Z = 1.959963984540054


def test_wilson_interval_known_values():
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(Z * Z / (10 + Z * Z))
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0 and lo == pytest.approx(10 / (10 + Z * Z))
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def _rigged_result(games=40, players=3) -> ArenaResult:
    """Entry 0 wins every game, entry 1 is always second, entry 2 last."""
    ranks = np.tile(np.arange(players), (games, 1))
    scores = np.tile(np.array([30, 20, 10][:players]), (games, 1))
    return ArenaResult(names=["a", "b", "c"][:players], players=players, seed=0, ranks=ranks, scores=scores,
                       truncated=np.zeros(games, bool), turns=np.full(games, 30),
                       decisions=[5, 5, 5][:players], act_seconds=[0.5, 0.1, 0.1][:players], wall_seconds=1.0)


def test_statistics_of_a_rigged_result():
    result = _rigged_result()
    a, b, c = result.entry_stats()
    assert a["win_rate"] == 1.0 and b["win_rate"] == 0.0 and c["win_rate"] == 0.0
    assert a["win_ci"] == [pytest.approx(40 / (40 + Z * Z)), 1.0]
    assert b["win_ci"][0] == 0.0 and b["win_ci"][1] == pytest.approx(Z * Z / (40 + Z * Z))
    assert (a["mean_rank"], b["mean_rank"], c["mean_rank"]) == (1.0, 2.0, 3.0)
    assert (a["mean_score"], b["mean_score"], c["mean_score"]) == (30.0, 20.0, 10.0)
    assert a["rating"] > b["rating"] > c["rating"]
    assert a["rating_ci"][0] <= a["rating"] <= a["rating_ci"][1]
    assert sum(row["rating"] for row in (a, b, c)) == pytest.approx(0, abs=1e-9)  # the mean entry is 0
    assert a["seconds_per_decision"] == pytest.approx(0.1)
    table = result.table()
    assert "0:a" in table and "1.000" in table and "truncated by the turn cap: 0" in table
    assert f"{a['rating']:+.0f} [" in table and "Plackett-Luce" in table


def test_an_unrated_result_reports_no_rating():
    result = run_arena(["greedy", "random"], 2, 4, seed=1, rate=False)
    assert result.ratings is None
    assert all(row["rating"] is None and row["rating_ci"] is None for row in result.entry_stats())
    assert "Plackett-Luce" not in result.table()
    assert result.to_csv().splitlines()[1].split(",")[6:9] == ["", "", ""]  # rating, its interval


def test_seat_rotation_matches_games_played_by_hand():
    """Deal d, rotation r: entry i sits at seat (i + r) % N. Replaying the arena's decks with
    deterministic agents by hand gives the same per-entry scores and ranks."""
    names = ["greedy", "banker", "banker"]
    result = run_arena(names, 3, 6, seed=11, rate=False)
    decks = shuffled_decks(np.random.default_rng(11), 2)
    agents = [make_agent(n) for n in names]
    for game in range(6):
        deal, rotation = divmod(game, 3)
        sim = Simulator(Rules(num_players=3), 1, decks=decks[deal][None])
        by_seat = [agents[(s - rotation) % 3] for s in range(3)]
        while not sim.done.all():
            sim.step(act_for_seats(sim, by_seat))
        for entry in range(3):
            seat = (entry + rotation) % 3
            assert result.scores[game, entry] == sim.state.scores[seat, 0]
            assert result.ranks[game, entry] == sim.state.ranks[seat, 0]


@pytest.mark.parametrize("players", [2, 3, 5])
def test_identical_deterministic_agents_split_every_deal_evenly(players):
    """The seatings of a deal are relabellings of one another, so N copies of a deterministic
    bot each win exactly one game per deal."""
    result = run_arena(["greedy"] * players, players, players * 10, seed=3, rate=False)
    for row in result.entry_stats():
        assert row["win_rate"] == pytest.approx(1 / players)
        assert row["mean_rank"] == pytest.approx((players + 1) / 2)
    assert np.ptp([row["mean_score"] for row in result.entry_stats()]) == pytest.approx(0)
    # Every game ranks the entries as a permutation.
    assert (np.sort(result.ranks, axis=1) == np.arange(players)).all()


def test_greedy_beats_random_and_nobody_stalls():
    result = run_arena("greedy,random,random,random", 4, 200, seed=5)
    rows = result.entry_stats()
    assert rows[0]["win_rate"] > 0.6  # random alone would win about 25%
    assert rows[0]["rating"] > max(r["rating"] for r in rows[1:])
    assert result.truncated_games <= 2  # under 1% of games


def test_json_schema_and_determinism():
    first = run_arena(["greedy", "random", "banker"], 3, 30, seed=9).to_json()
    again = run_arena(["greedy", "random", "banker"], 3, 30, seed=9).to_json()
    other = run_arena(["greedy", "random", "banker"], 3, 30, seed=10).to_json()
    assert set(first) >= {"agents", "truncated_games", "players", "games", "seed"}
    assert first["players"] == 3 and first["games"] == 30 and first["seed"] == 9
    for row in first["agents"]:
        assert set(row) >= {"name", "win_rate", "win_ci", "mean_score", "mean_rank", "rating", "games"}
        assert 0 <= row["win_ci"][0] <= row["win_rate"] <= row["win_ci"][1] <= 1
        assert row["games"] == 30 and math.isfinite(row["rating"])
    assert sum(row["win_rate"] for row in first["agents"]) == pytest.approx(1.0)
    json.dumps(first)  # plain JSON types only

    def strip(data):  # timings differ from run to run
        data = json.loads(json.dumps(data))
        data.pop("wall_seconds")
        for row in data["agents"]:
            row.pop("seconds_per_decision")
        return data

    assert strip(first) == strip(again)
    assert strip(first) != strip(other)


def test_the_table_says_how_many_games_shared_each_time_per_decision():
    """The same tiny policy measured 4.55 ms/dec at 40 games and 0.43 ms at 400: the figure
    is per decision of a batch, so the table says how many games were played at once. (And
    one deal is "1 deal", not "1 deals".)"""
    one = run_arena(["greedy", "random", "random"], 3, 3, seed=0)
    assert one.batch_games == 3 and one.to_json()["batch_games"] == 3
    text = one.table()
    assert "3 games (1 deal x 3 seatings)" in text
    assert "ms/dec: milliseconds inside act() per decision, 3 games played at once" in text
    sharded = run_arena(["greedy", "random", "random"], 3, 12, seed=0, batch_size=6)
    assert sharded.batch_games == 6 and "(4 deals x 3 seatings)" in sharded.table()
    assert "6 games played at once" in sharded.table()
    assert ArenaResult.from_record(sharded.to_record()).batch_games == 6
    old = sharded.to_record()
    del old["batch_games"]  # a ladder's resume file written before the field
    assert "ms/dec: milliseconds inside act() per decision, games played in batches" in \
        ArenaResult.from_record(old).table()


def test_games_round_up_to_whole_deals():
    result = run_arena(["random", "random", "random"], 3, 7, seed=0, rate=False)
    assert result.games == 9


def test_cli_writes_json_csv_and_plot(tmp_path, capsys):
    out, table, png = tmp_path / "out.json", tmp_path / "out.csv", tmp_path / "out.png"
    code = main(["--players", "3", "--agents", "greedy,random,search[determinizations=2;max_candidates=2]",
                 "--games", "6", "--seed", "1", "--json", str(out), "--csv", str(table), "--plot", str(png),
                 "--no-progress"])
    assert code == 0
    data = json.loads(out.read_text())
    assert [row["name"] for row in data["agents"]] == ["greedy", "random", "search[determinizations=2;max_candidates=2]"]
    assert table.read_text().splitlines()[0].startswith("name,win_rate,win_ci_lo,win_ci_hi")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "win rate" in capsys.readouterr().out


def test_error_bars_never_have_negative_length():
    """A 6-game arena's bootstrap interval for the random bot's rating ended 2e-11 below its
    point (the fit on all deals and on a replicate of the same deals round apart), and the
    plot's errorbar call refused it."""
    points = np.array([-203.8954039723929, 0.5])
    ci = np.array([[-239.76528861206435, -203.8954039724164], [0.25, 0.75]])
    bars = error_bars(points, ci)
    assert bars.shape == (2, 2) and (bars >= 0).all()
    assert bars[:, 1] == pytest.approx([0.25, 0.25]) and bars[0, 0] == pytest.approx(35.87, abs=0.01)
    assert bars[1, 0] == 0.0


@pytest.mark.parametrize("argv, message", [
    (["--players", "1", "--agents", "random"], "between 2 and 7"),
    (["--players", "8", "--agents", ",".join(["random"] * 8)], "between 2 and 7"),
    (["--players", "3", "--agents", "random,random"], "needs 3 agents"),
    (["--players", "2", "--agents", "random,alphago"], "unknown agent 'alphago'"),
    (["--players", "2", "--agents", "random,search[determinizations=0]"], "determinizations"),
    (["--players", "2", "--agents", "random,search[horizon=0,determinizations=0]"], "determinizations"),
    (["--players", "2", "--agents", "random,greedy[bogus]"], "key=value"),
    (["--players", "2", "--agents", "random,search[nonsense=1]"], "'search[nonsense=1]'"),
    (["--players", "2", "--agents", "random,random", "--games", "0"], "positive"),
    (["--players", "2", "--agents", "random,random", "--games", "2", "--batch-size", "0"], "--batch-size must be"),
    (["--players", "2", "--agents", "random,random", "--games", "2", "--seed", "-1"], "--seed must be"),
    (["--players", "2", "--agents", "random,greedy[chip_value=abc]", "--games", "2"],
     "'greedy[chip_value=abc]'"),
])
def test_cli_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv + ["--no-progress"])
    assert exc.value.code != 0
    assert message in capsys.readouterr().err


def test_cli_bad_checkpoint(capsys):
    pytest.importorskip("torch")
    with pytest.raises(SystemExit) as exc:
        main(["--players", "2", "--agents", "ppo:/nonexistent/policy.pt,random", "--no-progress"])
    assert exc.value.code != 0
    assert "nonexistent" in capsys.readouterr().err


def test_run_arena_errors():
    with pytest.raises(ValueError, match=r"agent 'greedy\[nonsense=1\]'.*nonsense"):
        run_arena(["greedy[nonsense=1]", "random"], 2, 2)
    with pytest.raises(ValueError, match="between 2 and 7"):
        run_arena(["random"] * 8, 8, 8)
    with pytest.raises(ValueError, match="need 3 agents"):
        run_arena(["random"] * 2, 3, 6)
    with pytest.raises(ValueError, match="differs"):
        run_arena(["random"] * 2, 2, 2, rules=Rules(num_players=3))


class _CountingAgent(Agent):
    """A random bot that counts its calls: a bad argument must be refused before any game."""

    name = "counting"

    def __init__(self):
        super().__init__(0)
        self.calls = 0

    def act(self, obs, mask, public=None):
        self.calls += 1
        return uniform_legal(mask, self.rng)


@pytest.mark.parametrize("kwargs, message", [
    (dict(seed=None), "seed"),
    (dict(seed=-1), "seed"),
    (dict(seed=True), "seed"),
    (dict(seed=1.5), "seed"),
    (dict(batch_size=0), "batch_size"),
    (dict(batch_size=-3), "batch_size"),
    (dict(batch_size=2.5), "batch_size"),
    (dict(batch_size=True), "batch_size"),
    (dict(rules={"num_players": 2}), "rules"),
    (dict(rules=Rules(num_players=2, turn_cap=50), turn_cap=60), "turn_cap"),
])
def test_run_arena_rejects_bad_arguments_before_playing(kwargs, message):
    counting = _CountingAgent()
    with pytest.raises(ValueError, match=message):
        run_arena([counting, "random"], 2, 4, **kwargs)
    assert counting.calls == 0


def test_run_arena_turn_cap_agrees_with_rules():
    """rules carries the turn cap; turn_cap may repeat it, or be left at its default."""
    rules = Rules(num_players=2, turn_cap=50)
    assert run_arena(["random", "random"], 2, 2, rules=rules, rate=False).turn_cap == 50
    assert run_arena(["random", "random"], 2, 2, rules=rules, turn_cap=50, rate=False).turn_cap == 50
    assert run_arena(["random", "random"], 2, 2, turn_cap=60, rate=False).turn_cap == 60
    assert run_arena(["random", "random"], 2, 4, batch_size=np.int64(3), rate=False).games == 4


@pytest.mark.parametrize("spec, parameter", [
    ("greedy[chip_value=abc]", "chip_value"),
    ("greedy[spread=nan]", "spread"),
    ("greedy[draw_bonus=inf]", "draw_bonus"),
    ("greedy[hide_penalty=true]", "hide_penalty"),
    ("banker[min_coins=nan]", "min_coins"),
    ("banker[useful_bonus=abc]", "useful_bonus"),
])
def test_build_agent_rejects_non_numeric_parameters(spec, parameter):
    with pytest.raises(ValueError, match=re.escape(f"agent {spec!r}") + f".*{parameter}"):
        build_agent(spec)


@pytest.mark.parametrize("flag, make_bad, message", [
    ("--json", lambda tmp: tmp / "afile" / "out.json", "not a directory"),
    ("--plot", lambda tmp: tmp / "afile" / "deeper" / "out.png", "not a directory"),
    ("--csv", lambda tmp: tmp / "adir", "is a directory"),
])
def test_cli_checks_output_paths_before_playing(tmp_path, capsys, flag, make_bad, message):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    bad = make_bad(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["--players", "2", "--agents", "random,random", "--games", "2", flag, str(bad), "--no-progress"])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert flag in captured.err and message in captured.err and "Traceback" not in captured.err
    assert "win rate" not in captured.out  # no game was played
    assert sorted(os.listdir(tmp_path)) == ["adir", "afile"] and not os.listdir(tmp_path / "adir")


def test_cli_creates_missing_output_folders(tmp_path):
    out = tmp_path / "new" / "deeper" / "out.json"
    assert main(["--players", "2", "--agents", "random,random", "--games", "2", "--json", str(out),
                 "--no-progress"]) == 0
    assert json.loads(out.read_text())["games"] == 2


def test_parse_agent_spec():
    assert parse_agent_spec("greedy") == ("greedy", {})
    assert parse_agent_spec(" search[determinizations=8;rollout_epsilon=0.5;x=abc;flag=true] ") == (
        "search", {"determinizations": 8, "rollout_epsilon": 0.5, "x": "abc", "flag": True})
    assert parse_agent_spec("search[determinizations=8, horizon=0;value=win]") == (
        "search", {"determinizations": 8, "horizon": 0, "value": "win"})
    with pytest.raises(ValueError):
        parse_agent_spec("search[determinizations=8")
    with pytest.raises(ValueError):
        parse_agent_spec("")


def test_ladder_rates_a_hero_against_each_opponent(tmp_path, capsys):
    from startups_env.agents.ladder import main as ladder_main

    out = tmp_path / "ladder.json"
    assert ladder_main(["--hero", "greedy", "--opponents", "random,banker", "--players", "3,4",
                        "--games", "12", "--seed", "3", "--json", str(out)]) == 0
    ladder = json.loads(out.read_text())
    rows = ladder["pairings"]
    assert [(r["players"], r["hero"], r["opponent"]) for r in rows] == [
        (3, "greedy", "random"), (3, "greedy", "banker"), (4, "greedy", "random"), (4, "greedy", "banker")]
    for row in rows:
        assert row["games"] % row["players"] == 0 and row["games"] >= 12  # whole seat-rotated deals
        assert 0.0 <= row["win_ci"][0] <= row["win_rate"] <= row["win_ci"][1] <= 1.0
        assert row["rating_ci"][0] <= row["rating"] <= row["rating_ci"][1]
    for n in (3, 4):  # one rating per bot and table size, best first
        table = [r for r in ladder["ratings"] if r["players"] == n]
        assert sorted(r["name"] for r in table) == ["banker", "greedy", "random"]
        assert [r["rating"] for r in table] == sorted((r["rating"] for r in table), reverse=True)
    out = capsys.readouterr().out
    assert "3p   greedy vs 2 x random" in out and "3p  ladder ratings" in out


@pytest.mark.parametrize("argv, message", [
    (["--hero", "greedy", "--opponents", ","], "--opponents must name at least one agent"),
    (["--hero", "nosuchbot", "--players", "3", "--games", "3"], "nosuchbot"),
    (["--hero", "ppo:/no/such/policy.pt", "--players", "3", "--games", "3"], "not found: /no/such/policy.pt"),
])
def test_ladder_errors(argv, message, capsys):
    from startups_env.agents.ladder import main as ladder_main

    with pytest.raises(SystemExit):
        ladder_main(argv)
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("rounds", [1, 4])
def test_played_share_runs_from_zero_to_one_without_going_back(rounds):
    sim = Simulator(Rules(num_players=5, rounds=rounds), batch_size=16, seed=2)
    share = played_share(sim.state, rounds)
    assert np.array_equal(share, np.zeros(16))
    while not sim.done.all():
        sim.step(sim.random_actions())
        now = played_share(sim.state, rounds)
        assert (now >= share).all() and (now <= 1).all()
        assert (now[sim.done] == 1).all()
        share = now
    assert (share == 1).all()
