"""The baseline ladder: every pairing of the bots at a few table sizes, in one table.

    python -m startups_env.agents.ladder --players 3,4,6 --games 2000 --search-games 400 --seed 1 [--json ladder.json]
    python -m startups_env.agents.ladder --hero ppo --opponents greedy,random --players 3,4,6 --games 2000 --seed 1

With ``--hero``, the ladder is that agent against each of ``--opponents`` instead of the
baseline pairings (how the shipped PPO policy is rated).

Each pairing is one :func:`startups_env.agents.arena.run_arena` tournament (seat-rotated duplicate
deals): a *hero* against N-1 copies of an opponent, plus self-play tables of each
baseline (where stalling would show). Reported per pairing: the hero's win rate with its
95% CI (the fair share is 1/N), mean rank, the share of games that hit the turn cap, and
for the search bot its time per decision (arena wall time / search decisions, the figure
that counts on a shared machine, and CPU time inside ``act``).
"""

from __future__ import annotations

import argparse
import json
import sys

from startups_env.files import atomic_write

from .arena import run_arena
from .base import split_names

#: (hero, opponent) pairings; "search" games are the expensive ones.
PAIRINGS = (
    ("greedy", "random"),
    ("banker", "random"),
    ("greedy", "banker"),
    ("banker", "greedy"),
    ("random", "greedy"),
    ("greedy", "greedy"),
    ("banker", "banker"),
    ("random", "random"),
    ("search", "greedy"),
)


def run_ladder(players: list[int], games: int, search_games: int, seed: int, progress: bool = False,
               pairings=PAIRINGS) -> list[dict]:
    rows = []
    for n in players:
        for hero, opponent in pairings:
            count = search_games if "search" in (hero, opponent) else games
            if count <= 0:
                continue
            result = run_arena([hero] + [opponent] * (n - 1), n, count, seed=seed, progress=progress, rate=False)
            stats = result.entry_stats()[0]
            row = {
                "players": n,
                "hero": hero,
                "opponent": opponent,
                "games": result.games,
                "win_rate": stats["win_rate"],
                "win_ci": stats["win_ci"],
                "mean_rank": stats["mean_rank"],
                "truncated_share": result.truncated_games / result.games,
                "wall_seconds": result.wall_seconds,
            }
            if hero == "search":
                row["wall_per_decision"] = result.wall_seconds / max(stats["decisions"], 1)
                row["act_per_decision"] = stats["seconds_per_decision"]
            rows.append(row)
            print(_format(row), flush=True)
    return rows


def _format(row: dict) -> str:
    lo, hi = row["win_ci"]
    text = (f"{row['players']}p  {row['hero']:>7} vs {row['players'] - 1} x {row['opponent']:<7} "
            f"win {row['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] (fair {1 / row['players']:.3f})  "
            f"rank {row['mean_rank']:.2f}  capped {100 * row['truncated_share']:.2f}%  "
            f"games {row['games']}  wall {row['wall_seconds']:.1f}s")
    if "wall_per_decision" in row:
        text += f"  search {1000 * row['wall_per_decision']:.1f} ms/decision (wall)"
    return text


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m startups_env.agents.ladder", description=__doc__.split("\n\n")[0])
    p.add_argument("--players", default="3,4,6", help="comma-separated table sizes")
    p.add_argument("--games", type=int, default=2000, help="games per pairing of rule-based bots")
    p.add_argument("--search-games", type=int, default=400, help="games per pairing with the search bot (0: skip)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="write the rows as JSON here")
    p.add_argument("--hero", help="rate this agent (any make_agent name, e.g. ppo or ppo:PATH) against each of "
                                  "--opponents instead of the baseline pairings")
    p.add_argument("--opponents", default="greedy,random", help="comma-separated opponents of --hero")
    p.add_argument("--progress", action="store_true")
    args = p.parse_args(argv)
    pairings = PAIRINGS
    if args.hero:
        pairings = tuple((args.hero, name) for name in split_names(args.opponents))
        if not pairings:
            p.error("--opponents must name at least one agent")
    try:
        players = [int(x) for x in args.players.split(",") if x.strip()]
        rows = run_ladder(players, args.games, args.search_games, args.seed, progress=args.progress,
                          pairings=pairings)
    except (ValueError, FileNotFoundError) as exc:
        p.error(str(exc))
    if args.json:
        atomic_write(args.json, lambda f: json.dump(rows, f, indent=2), binary=False, make_folders=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
