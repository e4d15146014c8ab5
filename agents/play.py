"""Play *Startups* against the bots in the terminal (``--game startap`` and any other game:
:mod:`startups_env.agents.table_play`).

    python -m startups_env.agents.play --players 4 --opponents greedy,banker,random [--seat 0] [--seed 7]

Each of your decisions shows the table as you see it (your hand only; others show hand
sizes and the cards known to be in them) and the legal moves with their canonical ids.
Type a number or a move name (``draw``, ``take octo``, ``keep hippo``, ``market giraffe``;
unambiguous prefixes such as ``t oc`` or ``k hip`` work too). ``help`` lists the
moves again, ``table`` reprints the table, ``quit`` (or end of input) leaves. A bad entry
gets a message and the prompt again. At the end the final scoring is shown company by
company; ``--save game.json`` writes the game log (see ``startups_env.tools.replay``).

The driver is :func:`main` (``main(argv, input_fn=..., output=...)``) so that tests and
notebooks can script a game.

``--web`` opens the table in a browser instead, for either game (``--game startap``):

    python -m startups_env.agents.play --web [--game startap] [--port 8000] [--host 127.0.0.1]

It prints the address to open; the page starts games (any seat, or watch the bots), and
``--players``, ``--seat``, ``--opponents`` and ``--seed`` fill its form. It serves
127.0.0.1 unless ``--host`` names another address, and then only with the token it prints
(:mod:`startups_env.tools.web`).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence

import numpy as np

from startups_env.startups import queries
from startups_env.startups.render import table_text
from startups_env.startups.rules import COMPANY_NAMES, NUM_ACTIONS, Action, Rules, action_to_string
from startups_env.startups.simulator import Simulator
from startups_env.table import Table
from startups_env.table.games import DEFAULT_GAME, GAMES, game_by_name
from startups_env.tools.cli import add_game_argument, add_rules_argument, add_traceback_argument, prog, table_size_arg
from startups_env.tools.replay import Recorder, describe_action
from startups_env.tools.web import LOOPBACK, WebTable, make_server, url_of

from . import table_play
from .base import Agent
from .registry import AGENT_NAMES, build_agent, split_names

QUIT_WORDS = ("quit", "exit", "q")
HELP_WORDS = ("help", "?", "h", "moves")
TABLE_WORDS = ("table", "show", "board")


class _Quit(Exception):
    """The player asked to leave (``quit`` or end of input)."""


class _HumanSeat(Agent):
    """Stands in for the person in the list of seats; it is never asked to act."""

    name = "you"

    def act(self, obs, mask, *, public=None, history=None):  # pragma: no cover - never called
        raise RuntimeError("the human seat is played from the terminal")


def parse_move(text: str, legal: Sequence[int]) -> int:
    """The legal action named by ``text``: a canonical id, a full name (``take octo``) or
    word prefixes (``t oc``). ValueError with a message for the player otherwise."""
    words = text.strip().lower().split()
    legal = [int(a) for a in legal]
    names = ", ".join(f"{a} {action_to_string(a)}" for a in legal)
    if not words:
        raise ValueError("type a move: its number or its name")
    if len(words) == 1 and words[0].lstrip("-").isdigit():
        action = int(words[0])
        if not 0 <= action < NUM_ACTIONS:
            raise ValueError(f"there is no move {action}; legal now: {names}")
        if action not in legal:
            raise ValueError(f"{action} ({action_to_string(action)}) is not legal now; legal: {names}")
        return action
    matches = []
    for action in range(NUM_ACTIONS):
        parts = action_to_string(action).split()
        if len(parts) == len(words) and all(p.startswith(w) for p, w in zip(parts, words)):
            matches.append(action)
    if not matches:
        raise ValueError(f"unknown move {text.strip()!r}; legal now: {names}")
    playable = [a for a in matches if a in legal]
    if not playable:
        shown = ", ".join(action_to_string(a) for a in matches)
        raise ValueError(f"{shown} is not legal now; legal: {names}")
    if len(playable) > 1:
        raise ValueError(f"{text.strip()!r} is ambiguous: {', '.join(action_to_string(a) for a in playable)}")
    return playable[0]


def _draw_cost(sim: Simulator) -> int:
    """Coins a draw would cost the player to act (none on a market row)."""
    s = sim.state
    if sim.rules.market_row:
        return 0
    return int(queries.draw_cost(s.market_count, queries.lacks_chip(s.chip, s.current))[0])


def _moves_text(sim: Simulator, legal: Sequence[int]) -> str:
    state = sim.state
    lines = []
    for a in legal:
        note = ""
        if a == Action.DRAW:
            cost = _draw_cost(sim)
            note = f"lay {cost} coin{'s' if cost != 1 else ''} on market cards" if cost else "free"
        elif Action.TAKE <= a < Action.KEEP:
            coins = int(state.market_take_coins()[a - Action.TAKE, 0])  # (less its price on a market row)
            verb = "gain" if coins >= 0 else "pay"
            note = f"{verb} {abs(coins)} coin{'s' if abs(coins) != 1 else ''}"
        lines.append(f"  {a:>2}  {action_to_string(a):<16}{note}".rstrip())
    return "\n".join(lines)


HELP = (
    "Enter a move by number or name: 'draw', 'take <company>', 'keep <company>' (into your portfolio),\n"
    "'market <company>'; prefixes work ('t oc', 'k hip'). Companies: " + ", ".join(COMPANY_NAMES) + ".\n"
    "Other commands: 'table' shows the table again, 'help' this text, 'quit' leaves the game."
)


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        # main reports bad arguments on its output and returns 2; argparse would exit the
        # caller's process (a notebook's kernel) and write to stderr.
        raise ValueError(message)


def _parse_args(argv):
    parser = _ArgumentParser(prog=prog("startups_env.agents.play"), description="Play Startups against bots.")
    add_game_argument(parser)  # (read first by main: another game is table_play's)
    parser.add_argument("--players", type=table_size_arg, default=4, help="table size, 2-7 (default 4)")
    parser.add_argument(
        "--opponents",
        default=None,
        help="comma-separated agent names for the other seats in seat order (one name: all of them), "
        "e.g. greedy,banker,random, search[determinizations=8],ppo or an outside bot, mybot:make_bot "
        "(default greedy; on the web table the game's first default opponent)",
    )
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0 = first to play (default 0)")
    add_rules_argument(parser)
    parser.add_argument("--seed", type=int, default=None, help="shuffles the deck and seeds the bots")
    parser.add_argument("--rounds", type=int, default=1, choices=(1, 4), help="4: the optional round game")
    parser.add_argument("--save", default=None, help="write the game log (JSON) here when the game ends or you quit")
    add_traceback_argument(parser)
    parser.add_argument("--web", action="store_true", help="serve the table to a browser instead (either game)")
    parser.add_argument("--host", default=LOOPBACK,
                        help=f"--web: the address to serve on (default {LOOPBACK}; any other needs the printed token)")
    parser.add_argument("--port", type=int, default=8000, help="--web: the port (default 8000; 0: any free one)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None, input_fn: Callable[[str], str] = input, output=None,
         serve: Callable | None = None) -> int:
    """Run one game in the terminal (with ``--web``, serve the web table: :func:`web_main`,
    which ``serve`` goes to). Returns 0 (played or quit), 2 (bad arguments)."""
    out = sys.stdout if output is None else output

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    if argv is None:
        argv = sys.argv[1:]
    if "--web" in argv:
        return web_main(argv, output=out, serve=serve)
    chosen = argparse.ArgumentParser(add_help=False)
    add_game_argument(chosen)
    try:
        known, rest = chosen.parse_known_args(argv)
    except SystemExit:
        say(f"{prog('startups_env.agents.play')}: error: --game: the games are {', '.join(sorted(GAMES))}")
        return 2
    if known.game != DEFAULT_GAME:  # another game: the generic terminal game over its record
        return table_play.play(argv, input_fn, say)
    try:
        args, names, rules, bots, seeds = _setup(rest)
    except (ValueError, TypeError, ImportError, OSError) as e:  # bad names, arguments, missing weights
        if "--traceback" in (sys.argv[1:] if argv is None else argv):  # (the arguments may be what failed)
            traceback.print_exception(type(e), e, e.__traceback__, file=out)
        say(f"{prog('startups_env.agents.play')}: error: {e}")
        return 2
    seat_agents: list[Agent] = list(bots)
    seat_agents.insert(args.seat, _HumanSeat())
    labels = [f"P{i} ({'you' if i == args.seat else names[i - (i > args.seat)]})" for i in range(args.players)]
    recorder = Recorder(
        rules,
        seed=np.random.default_rng(seeds[0]),
        players=["you" if a is seat_agents[args.seat] else a.name for a in seat_agents],
    )
    sim, me = recorder.sim, args.seat
    say(f"Startups: {args.players} players, you are P{me}. Seats: " + ", ".join(labels) + ".")
    say(HELP)
    # The bots are seated as everywhere else; the table keeps the game's history (your
    # moves included) for bots that read it (search).
    table = Table(sim, seat_agents, role="seat")
    try:
        _play_out(recorder, table, me, labels, args.players, lambda: _ask_human(recorder, me, input_fn, say), say)
    except _Quit:
        say("You left the game.")
        _save(recorder, args.save, say)
        return 0
    except KeyboardInterrupt:
        say("\nInterrupted.")
        _save(recorder, args.save, say)
        return 0
    _say_result(sim, rules, me, args.players, say)
    _save(recorder, args.save, say)
    return 0


def _setup(argv):
    """The command line checked (a ValueError names the problem, before any game), and the
    opponents built: (args, opponent names, rules, bots, seeds)."""
    args = _parse_args(argv)
    if not 0 <= args.seat < args.players:
        raise ValueError(f"--seat must be in 0..{args.players - 1}, got {args.seat}")
    names = split_names(args.opponents or "greedy")
    if len(names) == 1:
        names *= args.players - 1
    if len(names) != args.players - 1:
        raise ValueError(f"--opponents needs 1 or {args.players - 1} names for {args.players} players, got {len(names)}")
    if args.save is not None:  # checked now, not after a whole game
        folder = os.path.dirname(os.path.abspath(args.save))
        if os.path.isdir(args.save):
            raise ValueError(f"--save {args.save}: is a folder, not a file")
        if not os.path.isdir(folder):
            raise ValueError(f"--save {args.save}: no such folder {folder}")
    rules = Rules.preset(args.rules, num_players=args.players, rounds=args.rounds)
    seeds = np.random.SeedSequence(args.seed).spawn(len(names) + 1)
    # e.g. search[determinizations=8]; an outside bot plays trial positions first
    bots = [build_agent(spec, seed=int(child.generate_state(1)[0]), check_players=args.players)
            for spec, child in zip(names, seeds[1:])]
    return args, names, rules, bots, seeds


def _ask_human(recorder: Recorder, me: int, input_fn: Callable[[str], str], say) -> int:
    """The human's move, asked until it is a legal one (help and the table on request)."""
    sim = recorder.sim
    legal = recorder.legal_actions()
    say()
    say(table_text(sim, viewer=me))
    say(_moves_text(sim, legal))
    while True:
        try:
            text = input_fn("your move> ")
        except EOFError:
            raise _Quit from None
        word = text.strip().lower()
        if word in QUIT_WORDS:
            raise _Quit
        if word in HELP_WORDS:
            say(HELP)
            say(_moves_text(sim, legal))
            continue
        if word in TABLE_WORDS:
            say(table_text(sim, viewer=me))
            say(_moves_text(sim, legal))
            continue
        try:
            return parse_move(text, legal)
        except ValueError as e:
            say(f"  ! {e}")


def _play_out(recorder: Recorder, table: Table, me: int, labels: list[str], players: int, ask, say) -> None:
    """Play the game to its end: the human's moves from ``ask()``, the bots' from the table."""
    sim = recorder.sim
    while not recorder.done:
        seat = int(sim.state.current[0])
        if seat == me:
            action = ask()
            say(f"you: {describe_action(sim.state, action, viewer=me, seat_prefix=False)}")
        else:
            action = int(table.act()[0])
            say(f"{labels[seat]}: {describe_action(sim.state, action, viewer=me, seat_prefix=False)}")
        table.record(np.array([action]))
        round_before = int(sim.state.round[0])
        recorder.step(action)
        if not recorder.done and int(sim.state.round[0]) != round_before:
            say(f"--- round {round_before + 1} over; round points: {sim.state.round_points[:players, 0].tolist()}")


def _say_result(sim: Simulator, rules: Rules, me: int, players: int, say) -> None:
    say()
    say("=== Game over ===")
    say(table_text(sim, viewer=me))
    state = sim.state
    rank = int(state.ranks[me, 0])
    place = {0: "1st", 1: "2nd", 2: "3rd"}.get(rank, f"{rank + 1}th")
    if rules.rounds > 1:  # ranked by round points; scores are the last round's
        result = f"{int(state.round_points[me, 0])} round points (last round: {int(state.scores[me, 0])} points)"
    else:
        result = f"{int(state.scores[me, 0])} points"
    say(f"You (P{me}) finished {place} of {players} with {result}.")


def _save(recorder: Recorder, path, say) -> None:
    if path:
        recorder.log.save(path)
        say(f"game log saved to {path} (replay: python -m startups_env.tools.replay {path})")


def web_bot(spec: str, seed: int | None, game: str, players: int):
    """A bot of the web table: built from its name or spec as the arena builds it, checked
    on trial games of the table's size."""
    return build_agent(spec, seed=seed, check_players=players, game=game)


def web_bot_names(game: str) -> list[str]:
    """The bot names the web page offers for ``game``."""
    bots = list(game_by_name(game).bots)
    return [*AGENT_NAMES] if not bots else [*bots, "ppo"]


def web_main(argv: Sequence[str], output=None, serve: Callable | None = None) -> int:
    """Serve the web table until interrupted (``serve(server)``, default ``serve_forever``).
    Returns 0, or 2 for bad arguments or an address it cannot bind."""
    out = sys.stdout if output is None else output
    try:
        args = _parse_args(argv)
        game = game_by_name(args.game)
        defaults = {"game": game.name, "players": args.players, "seat": args.seat, "seed": args.seed,
                    "bots": args.opponents or game.opponents[0], "ruleset": args.rules}
        table = WebTable(make_bot=web_bot, bot_names=web_bot_names, defaults=defaults)
        server = make_server(table, args.host, args.port)
    except (ValueError, OSError) as e:
        print(f"{prog('startups_env.agents.play')}: error: {e}", file=out, flush=True)
        return 2
    print(f"The web table serves {', '.join(g.title for g in GAMES.values())}: open {url_of(server, table)}",
          file=out, flush=True)
    if table.token:
        print("It is bound beyond this machine: the page needs the token in that address.", file=out, flush=True)
    try:
        (serve or (lambda s: s.serve_forever()))(server)
    except KeyboardInterrupt:
        print("\nStopped.", file=out, flush=True)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
