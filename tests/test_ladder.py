"""The ladder's matrix: every hero against every style, per table size, printed and in the
JSON and CSV files; the default ladder covers every rule-based bot as hero and style."""

from __future__ import annotations

import csv
import json

import pytest

from startups_env.agents.ladder import HEROES, PAIRINGS, STYLES, main, matrix_pairings, run_ladder
from startups_env.agents.registry import AGENT_NAMES


def test_the_default_ladder_is_every_bot_against_every_style():
    assert set(STYLES) == set(AGENT_NAMES) - {"search", "ppo"}  # every rule-based bot is a style
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
