"""How a policy carries over from one ruleset to another: each hero against three copies of
a baseline (greedy by default), at a 4-player table, on each ruleset (docs/rules.md,
"Other rulesets"). ``python -m startups_env.agents.generalization``.

    python -m startups_env.agents.generalization --heroes ppo,ppo:runs/summary/policy.pt \\
        --rulesets rulebook summary --games 2000

prints one row per hero and one column per ruleset: the hero's win rate (fair share 0.25)
with its 95% Wilson interval, from seat-rotated arena games on the same deals for every
hero. A policy trained on one ruleset beside one trained on the other shows what training
on the ruleset is worth; the shipped policy (``ppo``) was trained on the rulebook's.
"""

from __future__ import annotations

import argparse
import sys

from startups_env.startups.rules import Rules
from startups_env.table.games import DEFAULT_GAME, game_by_name
from startups_env.tools.cli import (
    RULES_FORMS,
    add_progress_argument,
    add_traceback_argument,
    prog,
    report_error,
    rules_arg,
)

from .arena import run_arena
from .registry import split_names


def generalization_table(heroes: list[str], rulesets: list[str], games: int, seed: int = 0,
                         baseline: str = "greedy", players: int = 4, progress: bool = False) -> dict[str, dict[str, dict]]:
    """{hero: {ruleset: the hero's arena row}} of each hero against ``players - 1`` copies of
    ``baseline`` on each ruleset (``Rules.preset`` names), ``games`` games each; ``progress``:
    each arena run's progress bar, and a line naming the run before it."""
    table: dict[str, dict[str, dict]] = {}
    for hero in heroes:
        for ruleset in rulesets:
            rules = Rules.preset(ruleset, num_players=players)
            if progress:
                print(f"{hero} on {ruleset}", file=sys.stderr, flush=True)
            result = run_arena([hero] + [baseline] * (players - 1), players, games, seed, rules=rules, rate=False,
                               progress=progress)
            table.setdefault(hero, {})[ruleset] = result.entry_stats()[0]
    return table


def format_table(table: dict[str, dict[str, dict]], rulesets: list[str]) -> str:
    """The table as text: a row per hero, a column per ruleset."""
    width = max([4] + [len(hero) for hero in table])
    lines = [" " * width + "".join(f"  {ruleset:>20}" for ruleset in rulesets)]
    for hero, row in table.items():
        cells = "".join(f"  {r['win_rate']:.3f} [{r['win_ci'][0]:.3f}, {r['win_ci'][1]:.3f}]" for r in
                        (row[ruleset] for ruleset in rulesets))
        lines.append(f"{hero:>{width}}{cells}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog=prog("startups_env.agents.generalization"), description=__doc__.split("\n\n")[0])
    p.add_argument("--heroes", default="ppo", help="comma-separated agent specs, e.g. ppo,ppo:PATH (default ppo)")
    p.add_argument("--rulesets", nargs="+", type=rules_arg, default=["rulebook", "summary"],
                   help=f"rulesets, each {RULES_FORMS} (default: rulebook summary)")
    p.add_argument("--baseline", default="greedy", help="the opponent style, three copies (default greedy)")
    p.add_argument("--games", type=int, default=2000, help="games per hero and ruleset")
    p.add_argument("--seed", type=int, default=0)
    add_progress_argument(p, "each arena run's progress bar")
    add_traceback_argument(p)
    args = p.parse_args(argv)
    if args.games < 1:
        p.error(f"--games must be positive, got {args.games}")
    try:
        table = generalization_table(split_names(args.heroes), args.rulesets, args.games, args.seed, args.baseline,
                                     progress=args.progress)
    except (ValueError, FileNotFoundError) as exc:
        return report_error(p.prog, exc, args.traceback)
    print(f"{game_by_name(DEFAULT_GAME).title}, rulesets {', '.join(args.rulesets)}: win rate against "
          f"3 x {args.baseline} (fair share 0.250), 95% Wilson CI; {args.games} games each")
    print(format_table(table, args.rulesets))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
