"""The ladder's matrix: every hero against every style, per table size, printed and in the
JSON and CSV files; the default ladder covers every rule-based bot as hero and style; a
ladder resumed from its saved pairings gives what an uninterrupted one gives."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import re

import numpy as np
import pytest
from startups_env.agents import ladder as ladder_module
from startups_env.agents.arena import run_arena
from startups_env.agents.ladder import (
    HEROES,
    PAIRINGS,
    STYLES,
    load_pairing,
    main,
    matrix_pairings,
    pairing_keys,
    pairing_path,
    run_ladder,
    save_pairing,
)
from startups_env.agents.registry import AGENT_NAMES


def test_the_default_ladder_is_every_bot_against_every_style():
    assert set(STYLES) == set(AGENT_NAMES) - {"search", "ppo", "exit"}  # every rule-based bot is a style
    assert HEROES == STYLES + ("search",)
    assert PAIRINGS == tuple((hero, style) for hero in HEROES for style in STYLES)


def test_the_matrix_holds_each_pairings_win_rate(capsys):
    pairings = matrix_pairings(["greedy", "search", "noisy"], ["random", "hoarder"])
    ladder = run_ladder([3, 4], 12, 0, seed=3, pairings=pairings)
    rows = {(r["players"], r["hero"], r["opponent"]): r for r in ladder["pairings"]}
    assert len(rows) == 2 * 2 * 2  # search_games 0: no search pairing is played
    assert [m["players"] for m in ladder["matrix"]] == [3, 4]
    for m in ladder["matrix"]:
        n = m["players"]
        assert m["heroes"] == ["greedy", "search", "noisy"] and m["styles"] == ["random", "hoarder"]
        for i, hero in enumerate(m["heroes"]):
            for j, style in enumerate(m["styles"]):
                if hero == "search":
                    assert m["win_rate"][i][j] is m["win_ci"][i][j] is m["games"][i][j] is None
                    continue
                row = rows[n, hero, style]
                assert (m["win_rate"][i][j], m["win_ci"][i][j], m["games"][i][j]) == (
                    row["win_rate"], row["win_ci"], row["games"])
    out = capsys.readouterr().out
    assert "4p  win rate of each hero (rows) against 3 copies of each style (columns)" in out
    lines = out.splitlines()
    head = lines.index(next(line for line in lines if line.startswith("3p  win rate of each hero")))
    greedy_line, search_line = lines[head + 2], lines[head + 3]  # after the header and the styles' line
    cell = rows[3, "greedy", "random"]
    assert greedy_line.startswith("3p   greedy  ")
    assert f"{cell['win_rate']:.3f} [{cell['win_ci'][0]:.3f}, {cell['win_ci'][1]:.3f}]" in greedy_line
    assert search_line.split()[1:] == ["search", "-", "-", "-"]


def test_the_ladder_writes_the_matrix_as_json_and_csv(tmp_path, capsys):
    out_json, out_csv = tmp_path / "ladder.json", tmp_path / "deep" / "ladder.csv"
    assert main(["--heroes", "spoiler,banker", "--styles", "greedy,noisy[epsilon=0.5]", "--players", "3,5",
                 "--games", "10", "--seed", "2", "--json", str(out_json), "--csv", str(out_csv)]) == 0
    matrices = json.loads(out_json.read_text())["matrix"]
    with open(out_csv, newline="") as f:
        table = list(csv.DictReader(f))
    assert [(int(r["players"]), r["hero"]) for r in table] == [(3, "spoiler"), (3, "banker"), (5, "spoiler"),
                                                              (5, "banker")]
    for r in table:
        m = next(m for m in matrices if m["players"] == int(r["players"]))
        i = m["heroes"].index(r["hero"])
        for j, style in enumerate(["greedy", "noisy[epsilon=0.5]"]):
            assert float(r[f"{style} win_rate"]) == pytest.approx(m["win_rate"][i][j])
            assert [float(r[f"{style} win_ci_lo"]), float(r[f"{style} win_ci_hi"])] == pytest.approx(m["win_ci"][i][j])
            assert int(r[f"{style} games"]) == m["games"][i][j] >= 10


def test_the_ladder_reads_players_as_every_tool_does(capsys):
    """``--players 3-4`` failed with "invalid literal for int() with base 10: '3-4'"."""
    assert main(["--heroes", "random", "--styles", "random", "--players", "3-4", "--games", "3", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^3p +random vs 2 x random", out, re.M) and re.search(r"^4p +random vs 3 x random", out, re.M)


def test_the_rows_line_up_whatever_the_names(capsys):
    """Names longer than 7 characters (an outside bot, a spec with settings) pushed their
    rows of ratings and pairings out of line."""
    assert main(["--heroes", "noisy[epsilon=0.5],random", "--styles", "random", "--players", "3", "--games", "3",
                 "--seed", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = lines.index(next(line for line in lines if "ladder ratings" in line))
    ratings = lines[head + 1:head + 3]
    assert [line.index("games") for line in ratings] == [ratings[0].index("games")] * 2, ratings
    assert [line.rindex("]") for line in ratings] == [ratings[0].rindex("]")] * 2, ratings
    pairings = [line for line in lines if " vs 2 x " in line]
    assert len(pairings) == 2 and len({line.index(" vs 2 x ") for line in pairings}) == 1, pairings
    assert len({line.index(" win ") for line in pairings}) == 1, pairings


def test_a_hero_alone_meets_every_style_by_default(tmp_path, capsys):
    out = tmp_path / "ladder.json"
    assert main(["--hero", "noisy", "--players", "3", "--games", "3", "--seed", "1", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["pairings"]
    assert [(r["hero"], r["opponent"]) for r in rows] == [("noisy", style) for style in STYLES]


@pytest.mark.parametrize("argv, message", [
    (["--heroes", " , "], "--hero must name at least one agent (--heroes is its other name)"),
    (["--styles", ","], "--opponents must name at least one agent (--styles is its other name)"),
])
def test_the_ladder_refuses_empty_lists_and_unwritable_files_before_any_game(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    assert message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--csv", str(tmp_path), "--players", "3", "--games", "3"])
    err = capsys.readouterr()
    assert "is a directory" in err.err and "win rate" not in err.out


def test_search_pairings_are_sized_by_search_games_whatever_their_settings():
    pairings = (("search[determinizations=2;max_candidates=2]", "random"), ("greedy", "search[determinizations=2]"))
    ladder = run_ladder([3], 300, 0, seed=1, pairings=pairings)
    assert ladder["pairings"] == []  # search_games 0 skips both, rather than playing 300 slow games
    ladder = run_ladder([3], 300, 3, seed=1, pairings=pairings[:1])
    assert [r["games"] for r in ladder["pairings"]] == [3] and "wall_per_decision" in ladder["pairings"][0]


# Resuming: a ladder interrupted and run again with the same --resume folder.

RESUME_PAIRINGS = matrix_pairings(["greedy", "random"], ["random", "noisy[epsilon=0.5]"])
WALL_FIELDS = ("wall_seconds", "wall_per_decision", "act_per_decision")


def _without_wall_times(ladder):
    rows = [{k: v for k, v in row.items() if k not in WALL_FIELDS} for row in ladder["pairings"]]
    return {**ladder, "pairings": rows}


def _count_arena_runs(monkeypatch):
    calls = []

    def counted(agents, *args, **kwargs):
        calls.append(list(agents))
        return run_arena(agents, *args, **kwargs)

    monkeypatch.setattr(ladder_module, "run_arena", counted)
    return calls


def _refuse_arena_runs(monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr(ladder_module, "run_arena", refused)


def test_an_interrupted_ladder_resumes_to_the_uninterrupted_one(tmp_path, monkeypatch, capsys):
    fresh = run_ladder([3, 4], 6, 0, seed=5, pairings=RESUME_PAIRINGS)
    fresh_out = capsys.readouterr().out
    partial = run_ladder([3], 6, 0, seed=5, pairings=RESUME_PAIRINGS[:3], resume=str(tmp_path))
    capsys.readouterr()
    calls = _count_arena_runs(monkeypatch)
    resumed = run_ladder([3, 4], 6, 0, seed=5, pairings=RESUME_PAIRINGS, resume=str(tmp_path))
    captured = capsys.readouterr()
    assert len(calls) == 2 * 4 - 3  # the 3 pairings saved by the first run are loaded
    assert "3 of 8 pairings loaded" in captured.err
    assert _without_wall_times(resumed) == _without_wall_times(fresh)

    def strip_wall(text):
        return re.sub(r"wall \S+s", "wall", text)

    assert strip_wall(captured.out) == strip_wall(fresh_out)
    # A loaded pairing reports the wall time it was played in.
    assert [row["wall_seconds"] for row in resumed["pairings"][:3]] == [
        row["wall_seconds"] for row in partial["pairings"]]


def test_a_saved_pairing_is_not_played_again(tmp_path, monkeypatch, capsys):
    first = run_ladder([3], 6, 0, seed=2, pairings=RESUME_PAIRINGS, resume=str(tmp_path))
    assert len(list(tmp_path.glob("*.json"))) == len(RESUME_PAIRINGS)
    _refuse_arena_runs(monkeypatch)
    assert run_ladder([3], 6, 0, seed=2, pairings=RESUME_PAIRINGS, resume=str(tmp_path)) == first
    calls = _count_arena_runs(monkeypatch)
    run_ladder([3], 9, 0, seed=2, pairings=RESUME_PAIRINGS, resume=str(tmp_path))
    assert len(calls) == len(RESUME_PAIRINGS)  # other games, other pairings: played, not loaded


def test_a_saved_pairing_keeps_its_whole_arena_result(tmp_path):
    key = pairing_keys(3, [("greedy", "random")], 6, 0, seed=1, sharded=False)[0]
    result = run_arena(["greedy", "random", "random"], 3, 6, seed=1, rate=False)
    path = pairing_path(str(tmp_path), key)
    save_pairing(path, key, result)
    loaded = load_pairing(path, key)
    for field in dataclasses.fields(result):
        value, stored = getattr(result, field.name), getattr(loaded, field.name)
        if isinstance(value, np.ndarray):
            assert stored.dtype == value.dtype and np.array_equal(stored, value), field.name
        else:
            assert stored == value, field.name


def test_a_pairing_file_name_is_safe_whatever_the_specs(tmp_path):
    # Both stems read 3p-search-determinizations-48-vs-ppo-runs-x-policy-pt: the hash tells them apart.
    keys = pairing_keys(3, [("search[determinizations=48]", "ppo:runs/x/policy.pt"),
                            ("search[determinizations=48]", "ppo:runs-x-policy.pt")], 6, 6, seed=1, sharded=True)
    paths = [pairing_path(str(tmp_path), key) for key in keys]
    assert len(set(paths)) == 2 and len({path.rsplit("-", 1)[0] for path in paths}) == 1
    for path in paths:
        assert os.path.dirname(path) == str(tmp_path)
        assert re.fullmatch(r"[A-Za-z0-9-]+\.json", os.path.basename(path))


@pytest.mark.parametrize("damage", ["truncated", "not json", "missing array", "other pairing"])
def test_a_bad_resume_file_is_an_error_naming_it_before_any_game(damage, tmp_path, monkeypatch, capsys):
    run_ladder([3], 6, 0, seed=4, pairings=RESUME_PAIRINGS[:2], resume=str(tmp_path))
    keys = pairing_keys(3, RESUME_PAIRINGS[:2], 6, 0, seed=4, sharded=False)
    first, last = (pairing_path(str(tmp_path), key) for key in keys)
    text = open(last).read()
    saved = json.loads(text)
    del saved["result"]["scores"]
    bad = {"truncated": text[:len(text) // 2], "not json": "\x00garbage", "missing array": json.dumps(saved),
           "other pairing": open(first).read()}[damage]
    with open(last, "w") as f:
        f.write(bad)
    _refuse_arena_runs(monkeypatch)  # the pairings after the bad file are checked before any is played
    message = "holds the pairing" if damage == "other pairing" else "cannot be read"
    with pytest.raises(ValueError, match=re.escape(f"resume file {last} {message}")):
        run_ladder([3, 4], 6, 0, seed=4, pairings=RESUME_PAIRINGS, resume=str(tmp_path))


def test_the_command_line_resumes_and_refuses_a_file_as_its_folder(tmp_path, capsys):
    argv = ["--heroes", "greedy", "--styles", "random,banker", "--players", "3", "--games", "6", "--seed", "3",
            "--resume", str(tmp_path / "pairings")]
    assert main(argv + ["--json", str(tmp_path / "a.json")]) == 0
    assert main(argv + ["--json", str(tmp_path / "b.json")]) == 0
    assert "2 of 2 pairings loaded" in capsys.readouterr().err
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit):
        main(argv[:-1] + [str(tmp_path / "file")])
    assert "is not a directory" in capsys.readouterr().err
