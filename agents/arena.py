"""Seat-rotated duplicate tournaments between agents, with win rates, CIs and ratings.

    python -m startups_env.agents.arena --players 4 --agents greedy,random,random,random \\
        --games 2000 --seed 1 --json out.json [--csv out.csv] [--plot out.png]

Each *deal* (a shuffled deck) is played N times, once per rotation of the seats, so every
agent entry plays every deal from every seat and card luck cancels out
(games = deals x N). All games run in lockstep on one batch Simulator; each agent is
called once per step on all the games in which it is to move.

Reported per agent entry: win rate with a 95% Wilson interval, mean score, mean rank
(1 = best), a rating and games played; plus the number of games truncated by the turn cap.
The rating (:mod:`startups_env.agents.ratings`) is a Plackett-Luce maximum-likelihood fit
of all the games' finishing orders at once, so it does not depend on the order of the
games: Elo-like points relative to the mean entry (0), with a 95% bootstrap interval that
resamples whole deals. Note that the games of one deal are correlated by design, so the
Wilson interval (which assumes independent games) is conservative for comparisons between
entries and approximate for a single entry.

Agent specs (:mod:`startups_env.agents.registry`): a built-in bot (``random``, ``greedy``,
``banker``, ``hoarder``, ``spoiler``, ``noisy``, ``search``, ``ppo``), a checkpoint (``ppo:PATH``, ``sb3:PATH``) or an outside
bot's factory (``module:callable``, importable from ``PYTHONPATH``), optionally with
arguments in brackets, e.g. ``search[determinizations=8;rollout_epsilon=0.1]``. An outside
bot plays a few trial positions first, so a broken one fails before the tournament; the
``--json``, ``--csv`` and ``--plot`` files are written only once every game is played.

**Shards and workers** (:mod:`startups_env.tools.distributed`, docs/distributed.md). The games are
played in consecutive shards of ``--batch-size`` games, each on one Simulator batch with
bots of its own, seeded from (seed, shard index) alone; the results are merged in shard
order. So a run's results depend on its seed and shard size, never on where the shards
are played: ``--workers N`` plays them on N local Ray workers, ``--ray-address`` on a
cluster, ``--workers 1`` here, all with the same table (wall times apart). By default
one shard holds every game, whose bots have the seeds they had before there were shards;
with ``--workers`` or ``--ray-address`` the shard size defaults to :data:`SHARD_GAMES`. (A
``--batch-size`` smaller than the run gave results different from those of older
versions, where one set of bots played every batch.)
"""

from __future__ import annotations

import argparse
import csv
import functools
import io
import json
import math
import os
import sys
import time
import traceback
from dataclasses import dataclass, field, fields

import numpy as np

from startups_env.checks import check_seed, is_int
from startups_env.game import Game, deal_rows
from startups_env.startups.game import played_share as _startups_played_share
from startups_env.startups.rules import DEFAULT_TURN_CAP, Rules
from startups_env.table.driver import Table
from startups_env.table.games import DEFAULT_GAME, game_by_name
from startups_env.table.policy import as_policy, policy_name
from startups_env.tools.cli import (
    add_game_argument,
    add_progress_argument,
    add_rules_argument,
    add_traceback_argument,
    game_and_ruleset,
    prog,
    table_size_arg,
)
from startups_env.tools.distributed import Workers, add_worker_arguments, progress_bar, workers_from_args
from startups_env.tools.files import atomic_write

from .base import Agent
from .ratings import Ratings, format_rating, rate
from .registry import bot_raised, build_agent, split_names

WILSON_Z = 1.959963984540054  # 95% two-sided


def wilson_interval(wins: int, n: int, z: float = WILSON_Z) -> tuple[float, float]:
    """95% Wilson score interval of a binomial proportion (0, 1 for n == 0)."""
    if n <= 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At 0 or n wins the bound is exactly 0 or 1 (the formula leaves rounding error).
    lo = 0.0 if wins == 0 else max(0.0, center - half)
    hi = 1.0 if wins == n else min(1.0, center + half)
    return lo, hi


def error_bars(points: np.ndarray, ci: np.ndarray) -> np.ndarray:
    """float[2, k]: matplotlib's ``xerr`` for points with intervals ``ci`` (float[k, 2]), the
    lengths below and above each point, at least 0. A bootstrap interval need not hold its
    point estimate (a fit on every deal can land a rounding error past the replicates'
    extreme), and matplotlib refuses a negative length."""
    return np.maximum(np.stack([points - ci[:, 0], ci[:, 1] - points]), 0.0)


@dataclass
class ArenaResult:
    """Outcome of :func:`run_arena`. Per-game arrays are indexed [game, entry]."""

    names: list[str]
    players: int
    seed: int
    ranks: np.ndarray  # int[G, N] 0-based rank of each entry (0 = winner)
    scores: np.ndarray  # int[G, N] final score of each entry
    truncated: np.ndarray  # bool[G] the game hit the turn cap
    turns: np.ndarray  # int[G] completed turns (last round)
    decisions: list[int]  # decisions each entry made
    act_seconds: list[float]  # time spent inside each entry's act()
    wall_seconds: float
    rounds: int = 1
    turn_cap: int = DEFAULT_TURN_CAP
    rated: bool = True  # report ratings (``run_arena(rate=...)``)
    extra: dict = field(default_factory=dict)
    # Games played at once on one simulator (a shard; 0: not recorded). One act() call decides
    # every game of the batch where the entry is to move, so act_seconds / decisions falls as it grows.
    batch_games: int = 0
    game: str = DEFAULT_GAME

    @property
    def games(self) -> int:
        return int(self.ranks.shape[0])

    @property
    def deals(self) -> np.ndarray:
        """int[G]: the deal of each game (game g is deal g // N in seat rotation g % N)."""
        return np.arange(self.games) // self.players

    @functools.cached_property
    def ratings(self) -> Ratings | None:
        """The entries' Plackett-Luce ratings with 95% bootstrap intervals over whole deals
        (:func:`startups_env.agents.ratings.rate`), None unless ``rated``. The bootstrap
        draws from the arena's seed: its child 0 plays the games, children 1..N seed the
        entries, child N+1 resamples the deals."""
        if not self.rated:
            return None
        return rate(self.ranks, groups=self.deals,
                    seed=np.random.SeedSequence(self.seed, spawn_key=(self.players + 1,)))

    @property
    def truncated_games(self) -> int:
        return int(self.truncated.sum())

    def entry_stats(self) -> list[dict]:
        out = []
        ratings = self.ratings
        for i, name in enumerate(self.names):
            wins = int((self.ranks[:, i] == 0).sum())
            lo, hi = wilson_interval(wins, self.games)
            out.append({
                "name": name,
                "win_rate": wins / self.games if self.games else 0.0,
                "win_ci": [lo, hi],
                "mean_score": float(self.scores[:, i].mean()) if self.games else 0.0,
                "mean_rank": float(self.ranks[:, i].mean() + 1) if self.games else 0.0,
                "rating": None if ratings is None else float(ratings.points[i]),
                "rating_ci": None if ratings is None else [float(x) for x in ratings.intervals[i]],
                "games": self.games,
                "wins": wins,
                "decisions": self.decisions[i],
                "seconds_per_decision": self.act_seconds[i] / self.decisions[i] if self.decisions[i] else 0.0,
            })
        return out

    # The per-game arrays, stored with their dtypes by to_record.
    _ARRAYS = ("ranks", "scores", "truncated", "turns")

    def to_record(self) -> dict:
        """Every field as plain JSON data, arrays with their dtypes: :meth:`from_record`
        gives back an equal result (unlike :meth:`to_json`, a summary)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data.update({name: {"dtype": str(data[name].dtype), "data": data[name].tolist()} for name in self._ARRAYS})
        data.update(decisions=[int(x) for x in self.decisions], act_seconds=[float(x) for x in self.act_seconds])
        return data

    @classmethod
    def from_record(cls, data: dict) -> "ArenaResult":
        """The result :meth:`to_record` wrote; a ValueError (or the KeyError / TypeError of
        a missing or mistyped field) if ``data`` is not one."""
        arrays = {name: np.array(data[name]["data"], dtype=np.dtype(data[name]["dtype"])) for name in cls._ARRAYS}
        result = cls(**{**data, **arrays})
        games = result.ranks.shape[0]
        if (result.ranks.shape != (games, result.players) or result.scores.shape != result.ranks.shape
                or result.truncated.shape != (games,) or result.turns.shape != (games,) or games == 0):
            raise ValueError("the per-game arrays do not fit together")
        return result

    def to_json(self) -> dict:
        return {
            "game": self.game,
            "agents": self.entry_stats(),
            "truncated_games": self.truncated_games,
            "players": self.players,
            "games": self.games,
            "seed": self.seed,
            "rounds": self.rounds,
            "turn_cap": self.turn_cap,
            "mean_turns": float(self.turns.mean()) if self.games else 0.0,
            "wall_seconds": self.wall_seconds,
            "batch_games": self.batch_games,
            **self.extra,
        }

    def played(self) -> str:
        """What was played, as the table's footer and the plot's title name it:
        :func:`game_and_ruleset` of the result's game and ruleset."""
        return game_and_ruleset(self.game, self.extra.get("rules", "rulebook"))

    def table(self) -> str:
        rows = self.entry_stats()
        width = max(8, *(len(f"{i}:{r['name']}") for i, r in enumerate(rows)))
        head = (f"{'agent':<{width}}  {'win rate':>8}  {'95% CI':>15}  {'score':>6}  {'rank':>5}  "
                f"{'rating [95% CI]':>20}  {'games':>6}  {'ms/dec':>7}")
        lines = [head, "-" * len(head)]
        for i, r in enumerate(rows):
            lo, hi = r["win_ci"]
            rating = "-" if r["rating"] is None else format_rating(r["rating"], r["rating_ci"])
            lines.append(
                f"{f'{i}:' + r['name']:<{width}}  {r['win_rate']:>8.3f}  {f'[{lo:.3f}, {hi:.3f}]':>15}  "
                f"{r['mean_score']:>6.1f}  {r['mean_rank']:>5.2f}  "
                f"{rating:>20}  {r['games']:>6}  "
                f"{1000 * r['seconds_per_decision']:>7.3f}"
            )
        share = self.truncated_games / self.games if self.games else 0.0
        deals = self.games // self.players
        lines.append(f"{self.played()}: {self.players} players, {self.games} games ({deals} deal{'s' if deals != 1 else ''} x "
                     f"{self.players} seatings), seed {self.seed}; truncated by the turn cap: "
                     f"{self.truncated_games} ({100 * share:.2f}%); mean turns {self.turns.mean():.1f}; "
                     f"wall {self.wall_seconds:.1f} s")
        if self.rated:
            lines.append("rating: Plackett-Luce fit of all games, Elo-like points (mean entry 0; +100 beats 0 "
                         "in 64% of two-player games), 95% bootstrap interval over deals")
        batch = f"{self.batch_games} games played at once" if self.batch_games else "games played in batches"
        lines.append(f"ms/dec: milliseconds inside act() per decision, {batch}: one call decides every game of "
                     "the batch where the entry is to move, so the figure falls as the batch grows (compare "
                     "figures of the same batch size)")
        return "\n".join(lines)

    def to_csv(self) -> str:
        buf = io.StringIO()
        keys = ["name", "win_rate", "win_ci_lo", "win_ci_hi", "mean_score", "mean_rank", "rating",
                "rating_ci_lo", "rating_ci_hi", "games", "wins", "decisions", "seconds_per_decision"]
        writer = csv.DictWriter(buf, fieldnames=keys)
        writer.writeheader()
        for r in self.entry_stats():
            row = {k: r[k] for k in keys if k in r}
            row["win_ci_lo"], row["win_ci_hi"] = r["win_ci"]
            row["rating_ci_lo"], row["rating_ci_hi"] = r["rating_ci"] or ("", "")
            if r["rating"] is None:
                row["rating"] = ""
            writer.writerow(row)
        return buf.getvalue()

    def plot(self, path: str) -> None:
        """Write a PNG of the entries' ratings and win rates, with their 95% intervals
        (matplotlib must be installed; without ratings, only the win rates)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        rows = self.entry_stats()
        labels = [f"{i}:{r['name']}" for i, r in enumerate(rows)]
        y = np.arange(len(rows))
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 1.2 + 0.5 * len(rows)), sharey=True)
        if self.rated:
            points = np.array([r["rating"] for r in rows])
            ci = np.array([r["rating_ci"] for r in rows])
            ax1.errorbar(points, y, xerr=error_bars(points, ci), fmt="o", capsize=4)
            ax1.axvline(0.0, color="grey", lw=0.8, ls="--")
            ax1.set_xlabel("rating, Elo-like points (95% bootstrap CI)")
        else:
            ax1.set_xlabel("not rated")
        ax1.set_yticks(y, labels)
        ax1.invert_yaxis()
        wr = np.array([r["win_rate"] for r in rows])
        ci = np.array([r["win_ci"] for r in rows])
        ax2.errorbar(wr, y, xerr=error_bars(wr, ci), fmt="s", capsize=4, color="tab:orange")
        ax2.axvline(1.0 / self.players, color="grey", lw=0.8, ls="--")
        ax2.set_xlabel("win rate (95% Wilson CI)")
        fig.suptitle(f"{self.played()}: {self.players} players, {self.games} games, seed {self.seed}")
        fig.tight_layout()
        atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=100), make_folders=True)
        plt.close(fig)


def check_output_path(path: str) -> str | None:
    """Why ``path`` cannot be written by :func:`~startups_env.tools.files.atomic_write` with
    ``make_folders`` (None if it can): it is a folder, or its folder is not one and cannot
    be made one. Checked before a run, so that a typo in an output path costs nothing
    rather than the results of the whole run."""
    full = os.path.abspath(path)
    if os.path.isdir(full):
        return f"{path} is a directory"
    folder = os.path.dirname(full)
    # The nearest existing ancestor must be a folder we may write in (it makes the rest).
    existing = folder
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        return f"{existing} is not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"cannot write in {existing}"
    return None


#: Games per shard when workers are asked for and no ``batch_size`` is given: a shard is
#: the unit a worker plays, so the run's results depend on this size, never on the count
#: of workers. Small enough that a 2,000-game search run keeps 16 workers busy.
SHARD_GAMES = 125


def _entry_seeds(players: int, seed: int, shard: int) -> list[int]:
    """The seeds of the entries built from specs in shard ``shard``: children 1..N of the
    arena's seed. Shard 0 uses those children themselves, the seeds a one-shard run (the
    default) always had, so that its results did not change; shard k > 0 uses their k-th
    children, so that every shard's bots are seeded from (seed, shard) alone."""
    keys = [(1 + i,) if shard == 0 else (1 + i, shard) for i in range(players)]
    return [int(np.random.SeedSequence(seed, spawn_key=key).generate_state(1)[0]) for key in keys]


def _build_agents(agents, players: int, seed: int, game: str) -> tuple[list, list[Agent], list[str]]:
    """(specs, agents, names): ``specs`` holds each entry's spec string (None for an Agent
    object or a policy given as is), ``agents`` the built entries of shard 0."""
    if isinstance(agents, str):
        agents = split_names(agents)
    agents = list(agents)
    if len(agents) != players:
        raise ValueError(f"{players} players need {players} agents, got {len(agents)}: {agents}")
    seeds = _entry_seeds(players, seed, 0)
    specs, built, names = [], [], []
    for i, spec in enumerate(agents):
        if not isinstance(spec, str):  # an Agent or any other policy (startups_env.table.policy) plays as it is
            try:
                as_policy(spec)
            except ValueError as exc:
                raise ValueError(f"agent {i}: {exc}") from None
            specs.append(None)
            built.append(spec)
            names.append(policy_name(spec, f"agent {i}"))
            continue
        specs.append(spec)
        built.append(build_agent(spec, seed=seeds[i], check_players=players, game=game))
        names.append(spec.strip())
    return specs, built, names


def run_arena(agents, players: int, games: int, seed: int = 0, *, rules=None,
              turn_cap: int | None = None, batch_size: int | None = None, progress: bool = False,
              rate: bool = True, workers: int | Workers | None = None, ray_address: str | None = None,
              game: str | Game = DEFAULT_GAME) -> ArenaResult:
    """Play a seat-rotated duplicate tournament and return its :class:`ArenaResult`.

    agents: one entry per seat: agent specs (see the module doc), :class:`Agent` objects,
        plain policies ``f(obs, mask) -> actions``, or a comma-separated string of specs.
        Entries built from specs get seeds derived from ``seed``; Agent objects and
        policies are used as given (seed them yourself for reproducibility) and can only
        be played in this process.
    players: table size (2-7); games: at least this many games are played (rounded up to a
        whole number of deals, one game per seat rotation).
    seed: a non-negative int; the same seed replays the same tournament.
    rules: default ``Rules(num_players=players, turn_cap=turn_cap)`` (the game's own
        settings, ``game.make_rules``, in another game). turn_cap: None for the game's
        default (400 turns in *Startups*). With ``rules``, ``turn_cap`` may be left at
        None or repeat ``rules.turn_cap``; a different value is a ValueError rather than
        silently ignored.
    batch_size: games per *shard*, a positive int: the games are played in consecutive
        shards of this many, each on one Simulator batch with its own bots, seeded from
        (seed, shard index) (see :func:`_entry_seeds`). Default: one shard of all the
        games, or :data:`SHARD_GAMES` when workers are asked for.
    rate: report ratings (:attr:`ArenaResult.ratings`; they are computed when first read).
    workers, ray_address: where the shards are played (:class:`startups_env.tools.distributed.Workers`:
        None or 1 here, N on a local Ray instance, or the cluster at ``ray_address``; or a
        started Workers, which is left running). The results depend on ``seed`` and the
        shard size only, not on where the shards are played.

    game: the game played, by name (:mod:`startups_env.table.games`) or as a Game.

    Every argument is checked, and the cluster reached, before the first game is played,
    so that a bad one costs nothing.
    """
    game = game_by_name(game)
    players, seed, rules = _checked(game, players, games, seed, rules, turn_cap, batch_size)
    pool = workers if isinstance(workers, Workers) else Workers(workers, ray_address)
    specs, built, names = _build_agents(agents, players, seed, game.name)
    if not pool.local and None in specs:
        raise ValueError("Agent objects and plain policies can only play in this process: give agent specs "
                         "(e.g. module:callable) when the games are played by workers")
    total = -(-int(games) // players) * players  # whole deals
    shard = batch_size or (SHARD_GAMES if pool.sharded else total)
    jobs = _shard_jobs(game, specs, built, rules, seed, total, shard, pool.local)
    owned = not isinstance(workers, Workers)
    pool.start()  # an unreachable cluster fails here, before any game
    start = time.perf_counter()  # the wall time leaves out Ray's start-up (ArenaResult.extra)
    try:
        played = _play_shards(pool, jobs, shard, total, players, progress)
    finally:
        if owned:
            pool.close()
    wall = time.perf_counter() - start
    extra = _context(pool, len(jobs), played.pop("cpu_seconds"), rules)
    return ArenaResult(names=names, players=players, seed=seed, wall_seconds=wall, rounds=getattr(rules, "rounds", 1),
                       turn_cap=rules.turn_cap, rated=bool(rate), extra=extra, batch_games=min(shard, total),
                       game=game.name, **played)


def _context(pool: Workers, shards: int, cpu_seconds: float, rules) -> dict:
    """ArenaResult.extra: with workers, what the scaling figures need (docs/distributed.md:
    CPU seconds inside the shards over the wall time is how many cores they kept busy,
    whatever else the machine ran) and Ray's start-up; the ruleset unless the rulebook's
    (whose results read as before the options existed)."""
    extra = {"shards": shards, "shard_cpu_seconds": cpu_seconds} if pool.sharded else {}
    if not pool.local:
        extra["ray_startup_seconds"] = pool.startup_seconds
    if getattr(rules, "option_bits", 0):
        extra["rules"] = rules.ruleset
    return extra


def _checked(game: Game, players, games, seed, rules, turn_cap, batch_size) -> tuple[int, int, object]:
    """run_arena's arguments checked (a ValueError names the bad one): the table size and
    seed as ints, and the rules (default ``game.make_rules(players)``, with ``turn_cap`` if given)."""
    if not is_int(players) or not game.min_players <= players <= game.max_players:
        raise ValueError(f"players must be an int between {game.min_players} and {game.max_players}, got {players!r}")
    players = int(players)
    if not is_int(games) or games < 1:
        raise ValueError(f"games must be a positive int, got {games!r}")
    seed = check_seed(seed, none_ok=False, sequence_ok=False)
    if batch_size is not None and (not is_int(batch_size) or batch_size < 1):
        raise ValueError(f"batch_size must be None or a positive int, got {batch_size!r}")
    if rules is None:
        return players, seed, game.make_rules(players, **({} if turn_cap is None else {"turn_cap": turn_cap}))
    game.check_rules(rules)
    if rules.num_players != players:
        raise ValueError(f"rules.num_players={rules.num_players} differs from players={players}")
    if turn_cap is not None and turn_cap != rules.turn_cap:
        raise ValueError(f"turn_cap={turn_cap!r} differs from rules.turn_cap={rules.turn_cap}; "
                         "give the turn cap in rules only")
    return players, seed, rules


def _shard_jobs(game: Game, specs, built, rules, seed: int, total: int, shard: int, local: bool) -> list[_ShardJob]:
    """The ``total`` games (whole deals) in shards of ``shard``: the cards of each deal
    (``game.shuffled_decks``), so that every seating of a deal sees the same cards; game g
    is deal g // N in rotation g % N, where entry i sits at seat (i + r) % N."""
    players = rules.num_players
    deals = total // players
    decks = game.shuffled_decks(np.random.default_rng(seed), deals, rules)
    rotation = np.arange(total) % players
    game_decks = deal_rows(decks, np.arange(total) // players)
    # In this process, shard 0 plays the entries just built (their seeds are shard 0's) and
    # every shard the objects given as they are; workers build their own from the specs.
    return [_ShardJob(specs=specs, agents=[agent if local and (k == 0 or spec is None) else None
                                           for agent, spec in zip(built, specs)],
                      game=game.name, rules=rules, seed=seed, index=k, decks=deal_rows(game_decks, slice(lo, lo + shard)),
                      rotation=rotation[lo:lo + shard])
            for k, lo in enumerate(range(0, total, shard))]


def _play_shards(pool: Workers, jobs: list[_ShardJob], shard: int, total: int, players: int, progress: bool) -> dict:
    """Play the shards on ``pool`` and gather their results: the ArenaResult fields ranks,
    scores, truncated, turns, decisions and act_seconds, and the shards' cpu_seconds."""
    played = dict(ranks=np.zeros((total, players), np.int16), scores=np.zeros((total, players), np.int32),
                  truncated=np.zeros(total, bool), turns=np.zeros(total, np.int32), decisions=[0] * players,
                  act_seconds=[0.0] * players, cpu_seconds=0.0)
    bar = progress_bar(total, "arena", "game") if progress else None

    def moved(done: int) -> None:
        bar.update(done - bar.n)

    try:
        for k, out in pool.run(_play_shard, jobs, progress=moved if bar is not None else None):
            lo = k * shard
            hi = lo + len(jobs[k].rotation)
            for name in ("ranks", "scores", "truncated", "turns"):
                played[name][lo:hi] = out[name]
            for i in range(players):
                played["decisions"][i] += out["decisions"][i]
                played["act_seconds"][i] += out["act_seconds"][i]
            played["cpu_seconds"] += out["cpu_seconds"]
    finally:
        if bar is not None:
            bar.close()
    return played


@dataclass
class _ShardJob:
    """One shard of an arena run: its games' decks and seat rotations, and its entries:
    ``agents[i]`` an object to play as is (an Agent given to run_arena, or shard 0's
    entries already built there, when played in this process), or None: built from
    ``specs[i]`` with the shard's seeds."""

    specs: list
    agents: list
    game: str
    rules: object
    seed: int
    index: int
    decks: np.ndarray
    rotation: np.ndarray


def _play_shard(job: _ShardJob, report) -> dict:
    """Play one shard's games on one Simulator batch; returns its per-game ranks, scores,
    caps and turns (indexed by entry) and each entry's decisions and seconds in act().
    ``report(games)`` is told how many of its games are played."""
    players, n = job.rules.num_players, len(job.rotation)
    cpu = time.process_time()
    # No trial games here: run_arena played them when it built shard 0's entries.
    seeds = _entry_seeds(players, job.seed, job.index)
    agents = [agent if agent is not None else build_agent(job.specs[i], seed=seeds[i], game=job.game)
              for i, agent in enumerate(job.agents)]
    # Shard k's Simulator seed is child (0, k) of the arena's seed (a one-shard run's
    # Simulator seed since before there were shards).
    game = game_by_name(job.game)
    sim = game.make_simulator(job.rules, n, np.random.default_rng(np.random.SeedSequence(job.seed, spawn_key=(0, job.index))),
                              job.decks)
    assignment = (np.arange(players)[None, :] - job.rotation[:, None]) % players  # [game, seat] -> entry
    timings: dict[int, list] = {}  # entry -> [decisions, seconds inside act()]
    table = Table(sim, agents, assignment=assignment, timings=timings, role="agent")
    shown = 0
    while not sim.done.all():
        table.step(table.act())
        now = int(game.progress(sim.state, job.rules).sum())
        if now != shown:
            report(now)
            shown = now
    report(n)
    out = game.outcome(sim.state)
    rows = np.arange(n)[:, None]
    entry_seat = (np.arange(players)[None, :] + job.rotation[:, None]) % players  # [game, entry] -> seat
    return {"ranks": out["ranks"][rows, entry_seat], "scores": out["scores"][rows, entry_seat],
            "truncated": out["truncated"], "turns": out["turns"],
            "decisions": [timings.get(i, [0, 0.0])[0] for i in range(players)],
            "act_seconds": [timings.get(i, [0, 0.0])[1] for i in range(players)],
            "cpu_seconds": time.process_time() - cpu}


def played_share(state, rounds: int) -> np.ndarray:
    """float[B]: how far each *Startups* game is played, 0 to 1 (the game's
    ``progress``, :func:`startups_env.startups.game.played_share`), for a game of ``rounds`` rounds."""
    return _startups_played_share(state, Rules(rounds=rounds))


# ----------------------------------------------------------------------------- command line

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog("startups_env.agents.arena"), description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--players", type=table_size_arg, default=4, help="table size, 2-7 (default 4)")
    p.add_argument("--agents", required=True,
                   help="comma-separated agent specs, one per seat, e.g. greedy,random,random,random or "
                        "'search[determinizations=72,horizon=0],greedy,greedy,greedy'; also "
                        "ppo:PATH, sb3:PATH and outside bots, module:callable (see startups_env.agents.registry)")
    p.add_argument("--games", type=int, default=2000, help="games to play (rounded up to whole deals)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--turn-cap", type=int, default=None,
                   help=f"turns after which a game is truncated (default: the game's own, {DEFAULT_TURN_CAP} in Startups)")
    p.add_argument("--rounds", type=int, default=None, choices=(1, 4), help="Startups: 1 standard game (default), 4 round game")
    add_game_argument(p)
    add_rules_argument(p)
    p.add_argument("--batch-size", type=int, default=None, help="games per shard, each one simulator batch with its own bots seeded from (seed, shard) "
                        f"(default: all games in one; {SHARD_GAMES} with --workers or --ray-address)")
    p.add_argument("--json", help="write the results as JSON here")
    p.add_argument("--csv", help="write the per-agent table as CSV here")
    p.add_argument("--plot", help="write a PNG of ratings and win rates here")
    add_progress_argument(p)
    add_traceback_argument(p)
    add_worker_arguments(p)
    return p


def check_outputs(parser, args) -> None:
    """Before any game, ``parser.error`` for an output flag (``--json``, ``--csv``,
    ``--plot``) whose file cannot be written, or a ``--plot`` without matplotlib."""
    for flag in ("json", "csv", "plot"):
        path = getattr(args, flag)
        problem = check_output_path(path) if path else None
        if problem:
            parser.error(f"--{flag} {path}: {problem}")
    if args.plot:
        try:  # here, not after the games: the plot is drawn last
            import matplotlib  # noqa: F401
        except ImportError:
            parser.error(f"--plot {args.plot}: matplotlib is not installed (pip install matplotlib, "
                         "or the train extra)")


def command_line_error(parser, exc: BaseException, show_traceback: bool):
    """Report ``exc`` with ``parser.error`` (exit status 2). ``show_traceback``
    (``--traceback``): Python's whole traceback first; without it, an error that a bot's own
    code raised says how to see it."""
    if show_traceback:
        traceback.print_exception(type(exc), exc, exc.__traceback__)
    elif bot_raised(exc):
        parser.error(f"{exc} (--traceback prints the whole traceback)")
    parser.error(str(exc))


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    specs = split_names(args.agents)
    if len(specs) != args.players:
        parser.error(f"--players {args.players} needs {args.players} agents, got {len(specs)}: {args.agents}")
    if args.games < 1:
        parser.error(f"--games must be positive, got {args.games}")
    if args.seed < 0:
        parser.error(f"--seed must be non-negative, got {args.seed}")
    if args.batch_size is not None and args.batch_size < 1:
        parser.error(f"--batch-size must be positive, got {args.batch_size}")
    check_outputs(parser, args)
    try:
        game = game_by_name(args.game)
        settings = {name: value for name, value in (("turn_cap", args.turn_cap), ("rounds", args.rounds))
                    if value is not None}
        rules = game.make_rules(args.players, ruleset=args.rules, **settings)
        with workers_from_args(args) as pool:  # an unreachable cluster fails here, before any game
            result = run_arena(specs, args.players, args.games, args.seed, rules=rules, game=game,
                               batch_size=args.batch_size, progress=args.progress, workers=pool)
    except (ValueError, FileNotFoundError, ConnectionError) as exc:
        command_line_error(parser, exc, args.traceback)
    print(result.table())
    if "shards" in result.extra:
        print(f"workers: {result.extra['shards']} shards, {result.extra['shard_cpu_seconds']:.1f} CPU s inside them "
              f"({result.extra['shard_cpu_seconds'] / max(result.wall_seconds, 1e-9):.2f} cores busy on average)")
    if "ray_startup_seconds" in result.extra:
        print(f"ray: {result.extra['ray_startup_seconds']:.1f} s to start or join the workers (not in the wall time)")
    if args.json:
        atomic_write(args.json, lambda f: json.dump(result.to_json(), f, indent=2), binary=False, make_folders=True)
    if args.csv:
        atomic_write(args.csv, lambda f: f.write(result.to_csv()), binary=False, make_folders=True)
    if args.plot:
        result.plot(args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
