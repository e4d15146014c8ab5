"""What the command-line tools share: the name they go by in their usage and error lines,
the one reading of ``--players`` (:func:`startups_env.envs.vector.parse_players`) for all
of them, of ``--rules`` (:func:`add_rules_argument`) and of ``--game``
(:func:`add_game_argument`), and one convention for the rest:

* progress is shown by default, and ``--no-progress`` hides it (:func:`add_progress_argument`);
* an error is one line on stderr, ``PROG: error: MESSAGE``, exit status 2, and
  ``--traceback`` prints Python's whole traceback before it (:func:`add_traceback_argument`,
  :func:`report_error`; argparse's own errors read the same);
* results name what was played, the game and the ruleset (:func:`game_and_ruleset`).

    parser = argparse.ArgumentParser(prog=prog("startups_env.agents.ladder"))
    parser.add_argument("--players", type=players_arg, default="3,4,6")   # several table sizes
    parser.add_argument("--players", type=table_size_arg, default=4)      # one table size
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import difflib
import inspect
import os
import sys
import textwrap
import traceback
import typing

from startups_env.envs.vector import parse_players
from startups_env.startups.rules import OPTIONS, RULESETS, parse_ruleset
from startups_env.table.games import DEFAULT_GAME, GAMES, game_by_name

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


def game_and_ruleset(game: str, ruleset: str) -> str:
    """What was played, as every tool's results name it: the game's title and the ruleset's
    name (``"Startups, ruleset summary"``)."""
    return f"{game_by_name(game).title}, ruleset {ruleset}"


def add_progress_argument(parser: argparse.ArgumentParser, what: str = "a progress bar") -> None:
    """The progress flag of every tool: ``args.progress``, True unless ``--no-progress``."""
    parser.add_argument("--no-progress", dest="progress", action="store_false",
                        help=f"hide the progress ({what}; shown by default)")


def add_traceback_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--traceback`` flag of every tool (:func:`report_error`)."""
    parser.add_argument("--traceback", action="store_true",
                        help="on an error, print Python's whole traceback before the message (e.g. of an outside "
                             "bot that raised)")


def report_error(name: str, exc: BaseException, show_traceback: bool = False, hint: str = "") -> int:
    """Report ``exc`` as every tool reports an error: ``NAME: error: MESSAGE`` (``name`` the
    tool's :func:`prog`, ``hint`` appended) on stderr, after Python's whole traceback if
    ``show_traceback`` (``--traceback``). Returns 2, the tools' exit status for an error."""
    if show_traceback:
        traceback.print_exception(type(exc), exc, exc.__traceback__)
    print(f"{name}: error: {exc}{hint}", file=sys.stderr, flush=True)
    return 2


def dataclass_parser(cls, prog: str, description: str) -> argparse.ArgumentParser:
    """A parser with one ``--field-name`` flag per field of the dataclass ``cls`` (fields of
    int, float, str or bool; ``--flag/--no-flag`` for a bool), each helped by the docstring
    under its field; abbreviations are not read (a tool may need to know which flags were
    given). Read it with :func:`parse_dataclass`."""
    parser = argparse.ArgumentParser(prog=prog, description=description, allow_abbrev=False)
    types, docs = typing.get_type_hints(cls), _field_docs(cls)
    for f in dataclasses.fields(cls):
        flag, kind = "--" + f.name.replace("_", "-"), types[f.name]
        text = docs.get(f.name, "").replace("%", "%%") + f" (default: {f.default})"
        if kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=text)
        else:
            parser.add_argument(flag, type=kind, default=f.default, metavar=kind.__name__.upper(), help=text)
    return parser


def parse_dataclass(parser: argparse.ArgumentParser, argv) -> argparse.Namespace:
    """``parser.parse_args(argv)``, but an unknown flag's error names the nearest known one."""
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        flags = [flag for action in parser._actions for flag in action.option_strings]
        near = difflib.get_close_matches(unknown[0].split("=")[0], flags, n=1)
        parser.error(f"unrecognized arguments: {' '.join(unknown)}" + (f" (did you mean {near[0]}?)" if near else ""))
    return args


def _field_docs(cls) -> dict[str, str]:
    """The docstring under each field of the class ``cls``, on one line (none where its
    source cannot be read)."""
    try:
        body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    except OSError:
        return {}
    return {node.target.id: " ".join(after.value.value.split()) for node, after in zip(body, body[1:])
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)}
