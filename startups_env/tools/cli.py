"""What the command-line tools share: the name they go by in their usage and error lines,
the one reading of ``--players`` (:func:`startups_env.envs.vector.parse_players`) for all
of them, of ``--rules`` (:func:`add_rules_argument`) and of ``--game``
(:func:`add_game_argument`).

    parser = argparse.ArgumentParser(prog=prog("startups_env.agents.ladder"))
    parser.add_argument("--players", type=players_arg, default="3,4,6")   # several table sizes
    parser.add_argument("--players", type=table_size_arg, default=4)      # one table size
"""

from __future__ import annotations

import argparse
import os
import sys

from startups_env.envs.vector import parse_players
from startups_env.startups.rules import OPTIONS, RULESETS, parse_ruleset
from startups_env.table.games import DEFAULT_GAME, GAMES

#: How every ``--players`` flag is described: the forms :func:`parse_players` reads.
PLAYERS_FORMS = "a number, a range like 3-7 or a list like 3,4,6"


def prog(module: str) -> str:
    """The name of a tool in its messages: the console script as it was started
    (``startups-arena``), else its module form (``python -m startups_env.agents.arena``)."""
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return script if script.startswith("startups-") else f"python -m {module}"


def players_arg(text: str) -> tuple[int, ...]:
    """argparse ``type`` of a ``--players`` that takes several table sizes
    (:data:`PLAYERS_FORMS`): the sorted sizes."""
    try:
        return parse_players(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def table_size_arg(text: str) -> int:
    """argparse ``type`` of a ``--players`` that takes one table size: read as every
    ``--players`` is (:func:`players_arg`), then refused if it names several."""
    sizes = players_arg(text)
    if len(sizes) != 1:
        raise argparse.ArgumentTypeError(f"this tool plays one table size at a time, got {text!r} "
                                         "(the ladder, the trainer and distill take several)")
    return sizes[0]


#: How every ``--rules`` flag is described.
RULES_FORMS = f"a preset ({', '.join(RULESETS)}) or a comma-separated list of options ({', '.join(OPTIONS)})"


def rules_arg(text: str) -> str:
    """argparse ``type`` of ``--rules``: the ruleset's name as ``Rules.ruleset`` writes it
    (pass ``Rules.preset(args.rules, ...)``)."""
    try:
        on = parse_ruleset(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    names = tuple(name for name in OPTIONS if on[name])
    return next((name for name, options in RULESETS.items() if options == names), ",".join(names))


def add_rules_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--rules`` flag every tool takes: the options of play, default the rulebook's."""
    parser.add_argument("--rules", type=rules_arg, default="rulebook",
                        help=f"the ruleset: {RULES_FORMS} (default rulebook; docs/rules.md, 'Other rulesets')")


def add_game_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--game`` flag of the tools that seat bots at any game (:mod:`startups_env.table.games`)."""
    parser.add_argument("--game", choices=sorted(GAMES), default=DEFAULT_GAME,
                        help=f"the game played (default {DEFAULT_GAME}; startap: Стартап, docs/startap.md)")
