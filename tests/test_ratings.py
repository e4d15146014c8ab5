"""Plackett-Luce ratings: order-free, maximum likelihood, in agreement with the results,
with a reproducible bootstrap over deals; and the arena and ladder on the core install."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from startups_env.agents.arena import run_arena
from startups_env.agents.ladder import run_ladder
from startups_env.agents.ratings import POINTS, fit, rate


def _log_likelihood(points, games, num_entries, prior=1.0) -> float:
    """The Plackett-Luce log-likelihood written out from its definition: ``games`` is a
    list of finishing orders (entries, best first), plus ``prior`` virtual two-player
    games won each way by every pair of entries."""
    w = [math.exp(p / POINTS) for p in points]
    total = 0.0
    for order in games:
        for place in range(len(order) - 1):
            total += math.log(w[order[place]] / sum(w[e] for e in order[place:]))
    for i, j in itertools.permutations(range(num_entries), 2):
        total += prior * math.log(w[i] / (w[i] + w[j]))
    return total


def _as_ranks(games):
    """Finishing orders (entries, best first; all games the same size) as the ranks and
    entries arrays of :func:`rate`: slot s of game g is the player who finished s-th."""
    entries = np.array(games)
    ranks = np.tile(np.arange(entries.shape[1]), (entries.shape[0], 1))
    return ranks, entries


# A tiny example with copies of entries in a game (entry 2 twice, entry 0 twice) and an
# entry (3) that wins every game it plays.
TINY = [(0, 1, 2), (1, 0, 2), (2, 1, 0), (2, 2, 1), (0, 0, 1), (3, 0, 1), (3, 2, 2), (1, 2, 0)]


@pytest.mark.parametrize("prior", [1.0, 0.25])
def test_the_fit_maximises_the_likelihood(prior):
    ranks, entries = _as_ranks(TINY)
    points = fit(ranks, entries, prior=prior)
    assert points.mean() == pytest.approx(0, abs=1e-9)  # centred: the mean entry is 0
    # The gradient of the written-out likelihood vanishes at the fit ...
    h = 1e-4
    for e in range(4):
        step = h * np.eye(4)[e]
        slope = (_log_likelihood(points + step, TINY, 4, prior) - _log_likelihood(points - step, TINY, 4, prior)) / (2 * h)
        assert abs(slope) < 1e-7
    # ... and an independent maximisation finds the same point: gradient ascent on the
    # written-out likelihood with numerical gradients, from all ratings 0.
    x = np.zeros(4)
    for _ in range(5000):
        grad = np.array([(_log_likelihood(x + h * np.eye(4)[e], TINY, 4, prior)
                          - _log_likelihood(x - h * np.eye(4)[e], TINY, 4, prior)) / (2 * h) for e in range(4)])
        if np.abs(grad).max() < 1e-9:
            break
        x += 2000.0 * grad  # points per unit of log-likelihood slope: below 2 / curvature here
    x -= x.mean()
    assert np.abs(grad).max() < 1e-9
    np.testing.assert_allclose(points, x, atol=1e-4)
    # Every other rating nearby is less likely.
    best = _log_likelihood(points, TINY, 4, prior)
    rng = np.random.default_rng(0)
    for _ in range(20):
        assert _log_likelihood(points + rng.normal(0, 5, 4), TINY, 4, prior) < best


def test_two_entries_have_the_closed_form_ratio():
    """Two entries, two-player games, a wins and b losses: the maximum has
    w_A / w_B = (a + prior) / (b + prior)."""
    for wins, losses, prior in [(30, 10, 1.0), (40, 0, 1.0), (0, 7, 0.5), (5, 5, 2.0)]:
        games = [(0, 1)] * wins + [(1, 0)] * losses
        points = fit(*_as_ranks(games), prior=prior)
        assert points[0] - points[1] == pytest.approx(400 * math.log10((wins + prior) / (losses + prior)), abs=1e-8)


def test_permuting_the_games_leaves_the_ratings_unchanged():
    result = run_arena(["greedy", "banker", "random", "random"], 4, 120, seed=4, rate=False)
    base = rate(result.ranks, groups=result.deals, seed=3, replicates=200)
    order = np.random.default_rng(1).permutation(result.games)
    again = rate(result.ranks[order], groups=result.deals[order], seed=3, replicates=200)
    np.testing.assert_allclose(again.points, base.points, rtol=0, atol=1e-9)
    np.testing.assert_allclose(again.intervals, base.intervals, rtol=0, atol=1e-9)
    # Relabelling the players of every game in the same way relabels the ratings.
    slots = [2, 0, 3, 1]
    moved = rate(result.ranks[:, slots], groups=result.deals, seed=3, replicates=0)
    np.testing.assert_allclose(moved.points, base.points[slots], rtol=0, atol=1e-9)


def test_a_rigged_tournament_rates_the_winner_higher_and_finitely():
    two = np.tile([0, 1], (50, 1))  # A always beats B
    points = fit(two)
    assert points[0] > points[1] and np.isfinite(points).all()
    three = np.tile([0, 1, 2], (30, 1))  # A first, B second, C last in every game
    points = fit(three)
    assert points[0] > points[1] > points[2] and np.isfinite(points).all()
    # A weaker prior lets the gap grow; it stays finite.
    assert fit(two, prior=0.01)[0] > points[0] > 0


def _mean_rank_order_holds(mean_rank, points, margin=0.05):
    """Every pair of entries whose mean ranks differ by at least ``margin`` is rated in the
    same order (lower mean rank, higher rating)."""
    for i, j in itertools.combinations(range(len(points)), 2):
        if abs(mean_rank[i] - mean_rank[j]) >= margin:
            assert (mean_rank[i] < mean_rank[j]) == (points[i] > points[j]), (i, j, mean_rank, points)


@pytest.mark.parametrize("agents, games, seed", [
    (["greedy", "banker", "random", "random"], 200, 1),
    # OpenSkill, updated game by game, misordered 3 pairs of this run and 1 of the next.
    (["random", "random", "random", "random"], 200, 3),
    (["greedy", "greedy", "greedy", "random"], 200, 2),
    (["banker", "random", "greedy"], 150, 3),
    (["greedy", "random", "random", "banker", "random"], 200, 4),
    (["random", "greedy"], 100, 5),
])
def test_ratings_agree_with_mean_ranks_in_arena_runs(agents, games, seed):
    result = run_arena(agents, len(agents), games, seed=seed)
    rows = result.entry_stats()
    _mean_rank_order_holds([r["mean_rank"] for r in rows], [r["rating"] for r in rows])


def test_ratings_agree_with_mean_ranks_on_the_ladder(capsys):
    pairings = (("greedy", "random"), ("random", "greedy"), ("banker", "greedy"), ("random", "random"),
                ("greedy", "greedy"))
    ladder = run_ladder([3, 4], 60, 0, seed=2, pairings=pairings)
    for row in ladder["pairings"]:
        n = row["players"]
        opponents = (n * (n + 1) / 2 - row["mean_rank"]) / (n - 1)  # the copies' mean rank
        _mean_rank_order_holds([row["mean_rank"], opponents], [row["rating"], 0.0])
        assert row["rating_ci"][0] <= row["rating"] <= row["rating_ci"][1]
        if row["hero"] == row["opponent"] == "greedy":  # a deterministic bot against itself: even
            assert row["rating"] == pytest.approx(0, abs=1e-6)
    for n in (3, 4):
        by_name = {r["name"]: r["rating"] for r in ladder["ratings"] if r["players"] == n}
        assert by_name["greedy"] > by_name["random"]
    assert "ladder ratings" in capsys.readouterr().out


def test_the_bootstrap_is_reproducible_and_contains_the_estimate():
    result = run_arena(["greedy", "banker", "random"], 3, 90, seed=7, rate=False)
    first = rate(result.ranks, groups=result.deals, seed=11, replicates=300)
    again = rate(result.ranks, groups=result.deals, seed=11, replicates=300)
    other = rate(result.ranks, groups=result.deals, seed=12, replicates=300)
    assert np.array_equal(first.samples, again.samples) and np.array_equal(first.intervals, again.intervals)
    assert not np.array_equal(first.samples, other.samples)
    lo, hi = first.intervals.T
    assert (lo < first.points).all() and (first.points < hi).all()
    assert first.samples.shape == (300, 3)
    points, dlo, dhi = first.difference(0, 2)
    assert points == pytest.approx(first.points[0] - first.points[2]) and dlo < points < dhi
    # A wider level, a wider interval; no replicates, no interval.
    wide = rate(result.ranks, groups=result.deals, seed=11, replicates=300, level=0.99).intervals
    assert (wide[:, 0] <= lo).all() and (wide[:, 1] >= hi).all()
    assert np.isnan(rate(result.ranks, replicates=0).intervals).all()


def test_the_bootstrap_resamples_whole_deals():
    """Each deal is two games that cancel (A wins one, B the other): resampling whole deals
    keeps every replicate even, while resampling single games does not."""
    ranks = np.tile([[0, 1], [1, 0]], (20, 1))
    deals = np.arange(40) // 2
    by_deal = rate(ranks, groups=deals, seed=0, replicates=200)
    assert np.abs(by_deal.samples).max() < 1e-9
    by_game = rate(ranks, seed=0, replicates=200)
    assert by_game.intervals[0, 1] - by_game.intervals[0, 0] > 50


def test_the_arena_bootstrap_follows_its_seed():
    first = run_arena(["greedy", "random"], 2, 40, seed=3)
    again = run_arena(["greedy", "random"], 2, 40, seed=3)
    assert [r["rating_ci"] for r in first.entry_stats()] == [r["rating_ci"] for r in again.entry_stats()]


@pytest.mark.parametrize("kwargs, message", [
    (dict(ranks=[[0, 0, 1]]), "tied ranks"),
    (dict(ranks=[[0, 1], [1, 1]]), r"games \[1\] have tied ranks"),
    (dict(ranks=[0, 1]), "ranks must be an int array"),
    (dict(ranks=[[0.0, 1.0]]), "ranks must be an int array"),
    (dict(ranks=[[0], [0]]), "at least 2 players"),
    (dict(ranks=[[0, 1]], entries=[0, 1, 2]), "entries must be"),
    (dict(ranks=[[0, 1]], entries=[0, -1]), "non-negative"),
    (dict(ranks=[[0, 1]], entries=[0, 3], num_entries=2), "num_entries"),
    (dict(ranks=[[0, 1]], prior=0), "prior"),
    (dict(ranks=[[0, 1]], prior=float("inf")), "prior"),
    (dict(ranks=[[0, 1]], replicates=-1), "replicates"),
    (dict(ranks=[[0, 1]], level=1.0), "level"),
    (dict(ranks=[[0, 1]], seed=None), "seed"),
    (dict(ranks=[[0, 1], [1, 0]], groups=[0]), "groups"),
])
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rate(**kwargs)


# ----------------------------------------------------------------------------- the core install

# The train extra's modules (and scipy): the arena and the ladder must do without them.
_OPTIONAL = ("openskill", "tqdm", "matplotlib", "torch", "stable_baselines3", "sb3_contrib", "tensorboard",
             "PIL", "scipy")


def _run_without_optional(tmp_path, code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter in which the optional modules cannot be imported."""
    blocker = textwrap.dedent(f"""
        import sys

        class _Blocked:
            def find_spec(self, name, path=None, target=None):
                if name.partition(".")[0] in {_OPTIONAL!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by the test)", name=name)
                return None

        sys.meta_path.insert(0, _Blocked())
    """)
    return subprocess.run([sys.executable, "-c", blocker + textwrap.dedent(code)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)


def test_the_arena_and_the_ladder_run_on_the_core_install(tmp_path):
    done = _run_without_optional(tmp_path, f"""
        import json
        from startups_env.agents.arena import main
        from startups_env.agents.ladder import main as ladder
        assert main(["--players", "3", "--agents", "greedy,banker,random", "--games", "12", "--seed", "1",
                     "--json", "out.json", "--csv", "out.csv"]) == 0
        assert ladder(["--players", "3", "--games", "6", "--search-games", "0", "--json", "ladder.json"]) == 0
        loaded = sorted(m for m in sys.modules if m.partition(".")[0] in {_OPTIONAL!r})
        assert not loaded, loaded
        print("rated", [row["rating"] for row in json.load(open("out.json"))["agents"]])
    """)
    assert done.returncode == 0, done.stderr
    assert "win rate" in done.stdout and "rated [" in done.stdout and "ladder ratings" in done.stdout
    assert "no progress bar (tqdm is not installed)" in done.stderr
    assert (tmp_path / "out.csv").exists() and (tmp_path / "ladder.json").exists()


def test_plot_without_matplotlib_fails_before_the_first_game(tmp_path):
    done = _run_without_optional(tmp_path, """
        from startups_env.agents.arena import main
        main(["--players", "2", "--agents", "random,random", "--games", "2", "--plot", "out.png",
              "--json", "out.json", "--no-progress"])
    """)
    assert done.returncode == 2
    assert "--plot out.png: matplotlib is not installed" in done.stderr and "Traceback" not in done.stderr
    assert "win rate" not in done.stdout  # no game was played
    assert sorted(p.name for p in tmp_path.iterdir()) == []
