"""Play any game but *Startups* against its bots in the terminal (``--game`` of
:mod:`startups_env.agents.play`, which plays *Startups* itself):

    python -m startups_env.agents.play --game startap --players 4 --opponents builder,outsourcer,random [--seat 0] [--seed 7]

Each of your decisions shows the table as you see it (the game's ``render_text``) and the
legal moves with their ids. Type an id; ``help`` lists the moves again, ``table`` reprints
the table, ``quit`` (or end of input) leaves. A bad entry gets a message and the prompt
again. ``--save game.json`` writes the game log (:mod:`startups_env.tools.game_log`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

import numpy as np

from startups_env.table.driver import Table
from startups_env.table.games import game_by_name
from startups_env.tools import game_log
from startups_env.tools.cli import add_game_argument, prog

from .base import Agent
from .registry import build_agent, split_names

QUIT_WORDS, HELP_WORDS, TABLE_WORDS = ("quit", "exit", "q"), ("help", "?", "h", "moves"), ("table", "show", "board")


class Quit(Exception):
    """The player left."""


class HumanSeat(Agent):
    """The player at the keyboard: ``act`` shows the table and reads a legal move id."""

    name = "you"

    def __init__(self, game, sim, seat: int, input_fn: Callable[[str], str], say):
        super().__init__(seed=0)
        self.game, self.sim, self.seat, self.input_fn, self.say = game, sim, seat, input_fn, say

    def _moves(self, legal) -> str:
        return "moves: " + "; ".join(f"{a} {self.game.action_to_string(a)}" for a in legal)

    def act(self, obs, mask, **given):
        legal = np.flatnonzero(np.atleast_2d(mask)[0]).tolist()
        self.say(self.game.render_text(self.sim.state, 0, self.seat))
        self.say(self._moves(legal))
        while True:
            try:
                text = self.input_fn("your move> ").strip().lower()
            except EOFError:
                raise Quit from None
            if text in QUIT_WORDS:
                raise Quit
            if text in HELP_WORDS or text in TABLE_WORDS:
                self.say(self._moves(legal) if text in HELP_WORDS else self.game.render_text(self.sim.state, 0, self.seat))
                continue
            if text.isdigit() and int(text) in legal:
                return np.array([int(text)], np.int64)
            self.say(f"{text!r} is not a legal move id here; {self._moves(legal)}")


def _args(argv):
    parser = argparse.ArgumentParser(prog=prog("startups_env.agents.play"), description="Play a game against bots.")
    add_game_argument(parser)
    parser.add_argument("--players", type=int, default=4, help="table size (default 4)")
    parser.add_argument("--opponents", default="", help="agent names for the other seats in seat order (one name: "
                                                          "all of them; default the game's last training opponent)")
    parser.add_argument("--seat", type=int, default=0, help="your seat, 0 = first to play (default 0)")
    parser.add_argument("--seed", type=int, default=None, help="deals the game and seeds the bots")
    parser.add_argument("--save", default=None, help="write the game log (JSON) here when the game ends")
    return parser.parse_args(argv)


def _setup(argv):
    args = _args(argv)
    game = game_by_name(args.game)
    game.make_rules(args.players)  # (a table size the game refuses names itself)
    if not 0 <= args.seat < args.players:
        raise ValueError(f"--seat must be in 0..{args.players - 1}, got {args.seat}")
    names = split_names(args.opponents or game.opponents[-1])
    names = names * (args.players - 1) if len(names) == 1 else names
    if len(names) != args.players - 1:
        raise ValueError(f"--opponents needs 1 or {args.players - 1} names for {args.players} players, got {len(names)}")
    if args.save is not None and not os.path.isdir(os.path.dirname(os.path.abspath(args.save))):
        raise ValueError(f"--save {args.save}: no such folder")
    seeds = np.random.SeedSequence(args.seed).spawn(len(names) + 1)
    bots = [build_agent(name, seed=seed, game=game.name) for name, seed in zip(names, seeds[1:])]
    return args, game, bots, int(seeds[0].generate_state(1)[0])


def play(argv, input_fn: Callable[[str], str], say) -> int:
    """One game in the terminal; 0 (played or left), 2 (bad arguments)."""
    try:
        args, game, bots, deal_seed = _setup(argv)
    except (ValueError, OSError) as exc:
        say(f"error: {exc}")
        return 2
    sim, deal = game_log.deal_one(game, args.players, deal_seed)
    seats: list = list(bots)
    seats.insert(args.seat, HumanSeat(game, sim, args.seat, input_fn, say))
    say(f"{game.title}: {args.players} players, you are player_{args.seat}; the others: "
        + ", ".join(bot.name for bot in bots) + ". Type a move id, help, table or quit.")
    table, actions = Table(sim, seats, role="seat"), []
    try:
        while not sim.done[0]:
            chosen = table.act()
            if int(sim.state.current[0]) != args.seat:
                say(f"player_{int(sim.state.current[0])}: {game.action_to_string(int(chosen[0]))}")
            actions.append(int(chosen[0]))
            table.step(chosen)
    except (Quit, KeyboardInterrupt):
        say("You left the game.")
        return 0
    say(game.render_text(sim.state, 0, None))
    ranks = np.asarray(game.outcome(sim.state)["ranks"])[0]
    say(f"The game is over: you placed {int(ranks[args.seat]) + 1} of {args.players}.")
    if args.save:
        game_log.save(game_log.log_of(game, sim, deal, actions, [s.name for s in seats]), args.save)
        say(f"game log written to {args.save}")
    return 0
