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
``banker``, ``search``, ``ppo``), a checkpoint (``ppo:PATH``, ``sb3:PATH``) or an outside
bot's factory (``module:callable``, importable from ``PYTHONPATH``), optionally with
arguments in brackets, e.g. ``search[determinizations=8;rollout_epsilon=0.1]``. An outside
bot plays a few trial positions first, so a broken one fails before the tournament; the
``--json``, ``--csv`` and ``--plot`` files are written only once every game is played.
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
from dataclasses import dataclass, field

import numpy as np

from startups_env.core import Simulator, check_seed, is_int, shuffled_decks
from startups_env.files import atomic_write
from startups_env.rules import DECK_SIZE, DEFAULT_TURN_CAP, MAX_PLAYERS, MIN_PLAYERS, Rules, pile_start

from startups_env.policy import as_policy, policy_name
from startups_env.table import Table

from .base import Agent
from .ratings import Ratings, format_rating, rate
from .registry import build_agent

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

    def to_json(self) -> dict:
        return {
            "agents": self.entry_stats(),
            "truncated_games": self.truncated_games,
            "players": self.players,
            "games": self.games,
            "seed": self.seed,
            "rounds": self.rounds,
            "turn_cap": self.turn_cap,
            "mean_turns": float(self.turns.mean()) if self.games else 0.0,
            "wall_seconds": self.wall_seconds,
        }

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
        lines.append(f"{self.players} players, {self.games} games ({self.games // self.players} deals x "
                     f"{self.players} seatings), seed {self.seed}; truncated by the turn cap: "
                     f"{self.truncated_games} ({100 * share:.2f}%); mean turns {self.turns.mean():.1f}; "
                     f"wall {self.wall_seconds:.1f} s")
        if self.rated:
            lines.append("rating: Plackett-Luce fit of all games, Elo-like points (mean entry 0; +100 beats 0 "
                         "in 64% of two-player games), 95% bootstrap interval over deals")
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
            ax1.errorbar(points, y, xerr=[points - ci[:, 0], ci[:, 1] - points], fmt="o", capsize=4)
            ax1.axvline(0.0, color="grey", lw=0.8, ls="--")
            ax1.set_xlabel("rating, Elo-like points (95% bootstrap CI)")
        else:
            ax1.set_xlabel("not rated")
        ax1.set_yticks(y, labels)
        ax1.invert_yaxis()
        wr = np.array([r["win_rate"] for r in rows])
        ci = np.array([r["win_ci"] for r in rows])
        ax2.errorbar(wr, y, xerr=[wr - ci[:, 0], ci[:, 1] - wr], fmt="s", capsize=4, color="tab:orange")
        ax2.axvline(1.0 / self.players, color="grey", lw=0.8, ls="--")
        ax2.set_xlabel("win rate (95% Wilson CI)")
        fig.suptitle(f"{self.players} players, {self.games} games, seed {self.seed}")
        fig.tight_layout()
        atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=100), make_folders=True)
        plt.close(fig)


def check_output_path(path: str) -> str | None:
    """Why ``path`` cannot be written by :func:`~startups_env.files.atomic_write` with
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


def _build_agents(agents, players: int, seed: int) -> tuple[list[Agent], list[str]]:
    if isinstance(agents, str):
        agents = [a for a in agents.split(",")]
    agents = list(agents)
    if len(agents) != players:
        raise ValueError(f"{players} players need {players} agents, got {len(agents)}: {agents}")
    seeds = np.random.SeedSequence(seed).spawn(len(agents) + 1)[1:]
    built, names = [], []
    for i, spec in enumerate(agents):
        if not isinstance(spec, str):  # an Agent or any other policy (startups_env.policy) plays as it is
            try:
                as_policy(spec)
            except ValueError as exc:
                raise ValueError(f"agent {i}: {exc}") from None
            built.append(spec)
            names.append(policy_name(spec, f"agent {i}"))
            continue
        built.append(build_agent(spec, seed=int(seeds[i].generate_state(1)[0]), check_players=players))
        names.append(spec.strip())
    return built, names


def run_arena(agents, players: int, games: int, seed: int = 0, *, rules: Rules | None = None,
              turn_cap: int = DEFAULT_TURN_CAP, batch_size: int | None = None, progress: bool = False,
              rate: bool = True) -> ArenaResult:
    """Play a seat-rotated duplicate tournament and return its :class:`ArenaResult`.

    agents: one entry per seat: agent specs (see the module doc), :class:`Agent` objects,
        plain policies ``f(obs, mask) -> actions``, or a comma-separated string of specs.
        Entries built from specs get seeds derived from ``seed``; Agent objects and
        policies are used as given (seed them yourself for reproducibility).
    players: table size (2-7); games: at least this many games are played (rounded up to a
        whole number of deals, one game per seat rotation).
    seed: a non-negative int; the same seed replays the same tournament.
    rules: default ``Rules(num_players=players, turn_cap=turn_cap)``. With ``rules``,
        ``turn_cap`` may be left at its default or repeat ``rules.turn_cap``; a
        different value is a ValueError rather than silently ignored.
    batch_size: games per Simulator batch, a positive int (default: all at once).
    rate: report ratings (:attr:`ArenaResult.ratings`; they are computed when first read).

    Every argument is checked before the first game is played, so that a bad one costs
    nothing.
    """
    if not is_int(players) or not (
        MIN_PLAYERS <= players <= MAX_PLAYERS
    ):
        raise ValueError(f"players must be an int between {MIN_PLAYERS} and {MAX_PLAYERS}, got {players!r}")
    players = int(players)
    if not is_int(games) or games < 1:
        raise ValueError(f"games must be a positive int, got {games!r}")
    seed = check_seed(seed, none_ok=False, sequence_ok=False)
    if batch_size is not None and (
        not is_int(batch_size) or batch_size < 1
    ):
        raise ValueError(f"batch_size must be None or a positive int, got {batch_size!r}")
    if rules is None:
        rules = Rules(num_players=players, turn_cap=turn_cap)
    elif not isinstance(rules, Rules):
        raise ValueError(f"rules must be a startups_env.Rules, got {type(rules).__name__}: {rules!r}")
    elif rules.num_players != players:
        raise ValueError(f"rules.num_players={rules.num_players} differs from players={players}")
    elif turn_cap != DEFAULT_TURN_CAP and turn_cap != rules.turn_cap:
        raise ValueError(f"turn_cap={turn_cap!r} differs from rules.turn_cap={rules.turn_cap}; "
                         "give the turn cap in rules only")
    built, names = _build_agents(agents, players, seed)
    deals = -(-int(games) // players)
    total = deals * players
    rng = np.random.default_rng(seed)
    # One deck per deal and round: every seating of a deal sees the same cards in every round.
    decks = shuffled_decks(rng, deals * rules.rounds).reshape(deals, rules.rounds, -1)
    if rules.rounds == 1:
        decks = decks[:, 0]
    # Game g = deal g // N in rotation r = g % N; entry i sits at seat (i + r) % N.
    rotation = np.arange(total) % players
    game_decks = decks[np.arange(total) // players]
    seat_entry = (np.arange(players)[None, :] - rotation[:, None]) % players  # [G, seat] -> entry
    batch = total if batch_size is None else int(batch_size)

    ranks = np.zeros((total, players), np.int16)
    scores = np.zeros((total, players), np.int32)
    truncated = np.zeros(total, bool)
    turns = np.zeros(total, np.int32)
    timings: dict[int, list] = {}  # entry -> [decisions, seconds inside act()], over all batches
    bar = None
    if progress:
        try:
            from tqdm import tqdm
        except ImportError:  # tqdm comes with the train extra; the arena needs only the core install
            print("arena: no progress bar (tqdm is not installed)", file=sys.stderr)
        else:
            bar = tqdm(total=total, unit="game", desc="arena", file=sys.stderr)
    start = time.perf_counter()
    sim_seed = np.random.SeedSequence(seed).spawn(1)[0]
    for lo in range(0, total, batch):
        hi = min(total, lo + batch)
        sim = Simulator(rules, hi - lo, seed=np.random.default_rng(sim_seed.spawn(1)[0]),
                        decks=game_decks[lo:hi])
        assignment = seat_entry[lo:hi]
        table = Table(sim, built, assignment=assignment, timings=timings, role="agent")
        shown = 0
        while not sim.done.all():
            table.step(table.act())
            if bar is not None:
                now = int(played_share(sim.state, rules.rounds).sum())
                bar.update(now - shown)
                shown = now
        if bar is not None:
            bar.update(hi - lo - shown)
        st = sim.state
        seat_ranks = st.ranks[:players].T  # [n, seat]
        seat_scores = st.scores[:players].T
        rows = np.arange(hi - lo)[:, None]
        entry_seat = (np.arange(players)[None, :] + rotation[lo:hi, None]) % players  # [n, entry] -> seat
        ranks[lo:hi] = seat_ranks[rows, entry_seat]
        scores[lo:hi] = seat_scores[rows, entry_seat]
        truncated[lo:hi] = st.capped
        turns[lo:hi] = st.turn
    if bar is not None:
        bar.close()
    wall = time.perf_counter() - start
    decisions = [timings.get(i, [0, 0.0])[0] for i in range(players)]
    act_seconds = [timings.get(i, [0, 0.0])[1] for i in range(players)]
    return ArenaResult(names=names, players=players, seed=seed, ranks=ranks, scores=scores,
                       truncated=truncated, turns=turns, decisions=decisions, act_seconds=act_seconds,
                       wall_seconds=wall, rounds=rules.rounds, turn_cap=rules.turn_cap, rated=bool(rate))


def played_share(state, rounds: int) -> np.ndarray:
    """float[B]: how far each game is played, 0 to 1 (1 once over): its rounds done plus
    the share of this round's pile drawn. The progress bar counts these, so that it moves
    while a batch whose games all end together is played (a pile empties only by draws,
    so this runs a little ahead of the turns played)."""
    start = pile_start(state.num_players.astype(np.float64))
    drawn = np.clip((state.pile_pos - start) / (DECK_SIZE - start), 0.0, 1.0)
    return np.where(state.done, 1.0, (state.round + drawn) / rounds)


# ----------------------------------------------------------------------------- command line

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m startups_env.agents.arena", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--players", type=int, default=4, help="table size, 2-7 (default 4)")
    p.add_argument("--agents", required=True,
                   help="comma-separated agent specs, one per seat, e.g. greedy,random,random,random; also "
                        "ppo:PATH, sb3:PATH and outside bots, module:callable (see startups_env.agents.registry)")
    p.add_argument("--games", type=int, default=2000, help="games to play (rounded up to whole deals)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--turn-cap", type=int, default=DEFAULT_TURN_CAP)
    p.add_argument("--rounds", type=int, default=1, choices=(1, 4), help="1 standard game, 4 round game")
    p.add_argument("--batch-size", type=int, default=None, help="games per simulator batch (default all)")
    p.add_argument("--json", help="write the results as JSON here")
    p.add_argument("--csv", help="write the per-agent table as CSV here")
    p.add_argument("--plot", help="write a PNG of ratings and win rates here")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        parser.error(f"--players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {args.players}")
    specs = [s for s in args.agents.split(",")]
    if len(specs) != args.players:
        parser.error(f"--players {args.players} needs {args.players} agents, got {len(specs)}: {args.agents}")
    if args.games < 1:
        parser.error(f"--games must be positive, got {args.games}")
    if args.seed < 0:
        parser.error(f"--seed must be non-negative, got {args.seed}")
    if args.batch_size is not None and args.batch_size < 1:
        parser.error(f"--batch-size must be positive, got {args.batch_size}")
    for flag, path in (("--json", args.json), ("--csv", args.csv), ("--plot", args.plot)):
        problem = check_output_path(path) if path else None
        if problem:
            parser.error(f"{flag} {path}: {problem}")
    if args.plot:
        try:  # here, not after the games: the plot is drawn last
            import matplotlib  # noqa: F401
        except ImportError:
            parser.error(f"--plot {args.plot}: matplotlib is not installed (pip install matplotlib, "
                         "or the train extra)")
    try:
        rules = Rules(num_players=args.players, turn_cap=args.turn_cap, rounds=args.rounds)
        result = run_arena(specs, args.players, args.games, args.seed, rules=rules,
                           batch_size=args.batch_size, progress=not args.no_progress)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))
    print(result.table())
    if args.json:
        atomic_write(args.json, lambda f: json.dump(result.to_json(), f, indent=2), binary=False, make_folders=True)
    if args.csv:
        atomic_write(args.csv, lambda f: f.write(result.to_csv()), binary=False, make_folders=True)
    if args.plot:
        result.plot(args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
