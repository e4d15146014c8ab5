"""Стартап's bench runs and prints every figure."""

from __future__ import annotations

import pytest

from startups_env.agents import startap_bench


def test_the_quick_bench_prints_every_figure(capsys):
    startap_bench.main(["--quick", "--batch-sizes", "1,64", "--matches", "8", "--clock", "cpu"])
    out = capsys.readouterr().out
    for figure in ("batch B=1 players=4", "batch B=64", "aec players=4", "game_length players=6 bots=builder",
                   "wins players=2 builder_vs_random=", "search players=4 ms_per_decision="):
        assert figure in out


def test_the_seat_balance_splits_shared_wins_and_counts_every_ending(capsys):
    r = startap_bench.seat_balance(4, 40, "builder", seed=1)
    assert r["wins"].sum() == pytest.approx(1) and r["eliminated"] + r["reached27"] + r["cap"] == pytest.approx(1)
    startap_bench.main(["--seats", "random", "--players", "3", "--games", "20"])
    assert "seats players=3 bots=random games=20 seat0=" in capsys.readouterr().out


def test_bad_options_are_refused():
    with pytest.raises(SystemExit):
        startap_bench.main(["--batch-sizes", "x"])
    with pytest.raises(SystemExit):
        startap_bench.main(["--players", "7"])
