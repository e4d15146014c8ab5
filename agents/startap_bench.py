"""Стартап's figures: ``python -m startups_env.agents.startap_bench``.

Prints one line per figure (speeds are the median of ``--repeats`` runs of ``--seconds``
wall-clock seconds, random legal actions, finished games re-dealt inside the timed loop):

    batch B=... players=4 backend=... decisions_per_s=...   Simulator(backend=...): random_actions() + step(),
                                                 once per backend (--backends), each repeat on every backend in turn
    batch B=... players=4 numba_over_numpy=...   the ratio of the two in this run
    aec players=4 backend=... decisions_per_s=...   the PettingZoo env(backend=...) in the usual random-agent loop
    aec players=4 numba_over_numpy=...
    game_length players=N bots=random decisions=... turns=...   mean of --games games at each table size
    game_length players=N bots=builder decisions=... turns=...  the same with the builder bot in every seat
    wins players=N A_vs_B=...                    share of --matches seat-rotated games that A wins, A and B
                                                 alternating round the table (N: 2, and --players made even)
    search players=N ms_per_decision=... decisions=...   the ``search`` bot's time (by --clock) a decision
                                                 at seat 0 of --search-games games against builders

With ``--seats BOT`` it prints instead the seat balance of ``--games`` games at ``--players``
with BOT in every seat (no rotation: seat 0 is the first active player):

    seats players=N bots=BOT games=G seat0=... seat1=... eliminated=... reached27=... cap=... shared=... turns=...

each seat's share of the wins (a shared win split between the sharers) with its 95% normal
interval, and the share of games that ended with one player left, with 27 coins, at the
turn cap, and in a shared win.

A decision is one action of one player. Options: ``--players 4``, ``--repeats 3``,
``--seconds 2.0``, ``--batch-sizes 1,256,4096``, ``--backends numpy,numba`` (those installed), ``--games 1000``, ``--matches 400`` (0 to
skip), ``--search-games 4`` (0 to skip), ``--quick`` (short runs and few games, for a smoke test), ``--clock cpu`` (time this
process's CPU time: steadier on a shared machine).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

import numpy as np

from startups_env.envs.startap_aec import env as make_env
from startups_env.startap.observe import observe
from startups_env.startap.simulator import Simulator
from startups_env.startups.backend import BACKENDS, numba_available
from startups_env.table.driver import Table
from startups_env.tools.cli import prog, table_size_arg

from .startap_bots import make_startap_agent, play_games
from .startap_search import StartapSearchAgent


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def batch_rate(batch: int, players: int, seconds: float, clock=time.perf_counter, backend: str = "numpy") -> float:
    sim = Simulator(batch, num_players=players, seed=0, backend=backend)
    sim.step(sim.random_actions())  # (the compiled engine's first call out of the timing)
    decisions, start = 0, clock()
    while clock() - start < seconds:
        finished = np.flatnonzero(sim.done)
        if finished.size:
            sim.reset_games(finished)
        sim.step(sim.random_actions())
        decisions += batch
    return decisions / (clock() - start)


def aec_rate(players: int, seconds: float, clock=time.perf_counter, backend: str = "numpy") -> float:
    e = make_env(num_players=players, backend=backend)
    e.reset(seed=0)  # (the compiled engine's first call out of the timing)
    decisions, start, seed = 0, clock(), 0
    while clock() - start < seconds:
        e.reset(seed=seed)
        seed += 1
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            e.step(e.action_space(agent).sample(obs["action_mask"]))
            decisions += 1
    return decisions / (clock() - start)


def game_length(players: int, games: int, bot: str) -> tuple[float, float]:
    """Mean decisions and turns of a game with ``bot`` in every seat."""
    sim = Simulator(games, num_players=players, seed=players)
    agent = make_startap_agent(bot, seed=0)
    decisions = np.zeros(games)
    while not sim.done.all():
        running = np.flatnonzero(~sim.done)
        actions = np.zeros(games, np.int64)
        actions[running] = agent.act(observe(sim.state, games=running), sim.legal_mask()[running])
        sim.step(actions)
        decisions[running] += 1
    return float(decisions.mean()), float(sim.state.turn.mean() + 1)


def seat_balance(players: int, games: int, bot: str, seed: int = 0) -> dict:
    """``games`` games of ``players`` seats with ``bot`` in every seat, on the table driver:
    ``{"wins": float[players]`` (each seat's share of the wins, a shared win split),
    ``"eliminated"``, ``"reached27"``, ``"cap"``, ``"shared"`` (shares of the games that ended
    so) and ``"turns"`` (mean)}."""
    sim = Simulator(games, num_players=players, seed=seed)
    Table(sim, [make_startap_agent(bot, seed=seed)] * players).play()
    s = sim.state
    first = s.place[:, :players] == 0
    wins = (first / first.sum(axis=1, keepdims=True)).mean(axis=0)
    alone = s.alive[:, :players].sum(axis=1) == 1
    return {"wins": wins, "eliminated": float(alone.mean()), "cap": float(s.truncated.mean()),
            "reached27": float((~alone & ~s.truncated).mean()), "shared": float((first.sum(axis=1) > 1).mean()),
            "turns": float(s.turn.mean() + 1)}


def print_seat_balance(players: int, games: int, bot: str) -> None:
    r = seat_balance(players, games, bot)
    half = 1.96 * np.sqrt(r["wins"] * (1 - r["wins"]) / games)
    seats = " ".join(f"seat{i}={w:.3f}±{h:.3f}" for i, (w, h) in enumerate(zip(r["wins"], half)))
    print(f"seats players={players} bots={bot} games={games} {seats} eliminated={r['eliminated']:.3f} "
          f"reached27={r['reached27']:.3f} cap={r['cap']:.3f} shared={r['shared']:.3f} turns={r['turns']:.1f}",
          flush=True)


class _Clocked:
    """An agent that adds up the time (by ``clock``) and the decisions of its ``act`` calls."""

    def __init__(self, agent, clock):
        self.agent, self.clock, self.name, self.needs = agent, clock, agent.name, agent.needs
        self.seconds, self.decisions = 0.0, 0

    def act(self, obs, mask, **given):
        started = self.clock()
        chosen = self.agent.act(obs, mask, **given)
        self.seconds += self.clock() - started
        self.decisions += len(chosen)
        return chosen


def search_cost(players: int, games: int, clock=time.perf_counter) -> tuple[float, int]:
    """(ms a decision, decisions) of the ``search`` bot at seat 0 of ``games`` games against
    ``players - 1`` builders, on the table driver; its forced decisions count too. (A game
    of a small search first compiles its kernels, untimed.)"""
    builders = [make_startap_agent("builder", seed=seat) for seat in range(1, players)]
    Table(Simulator(1, num_players=players, seed=1),
          [StartapSearchAgent(seed=0, worlds=1, max_candidates=2)] + builders).play()
    search = _Clocked(StartapSearchAgent(seed=0), clock)
    Table(Simulator(games, num_players=players, seed=0), [search] + builders).play()
    return 1000.0 * search.seconds / max(search.decisions, 1), search.decisions


def print_rates(label: str, repeats: int, backends: list[str], rate) -> None:
    """The median of ``repeats`` runs of ``rate(backend)`` per backend (each repeat on every
    backend in turn, so that the ratio is taken between runs of the same minutes)."""
    runs = [{backend: rate(backend) for backend in backends} for _ in range(repeats)]
    medians = {backend: statistics.median(run[backend] for run in runs) for backend in backends}
    for backend, value in medians.items():
        print(f"{label} backend={backend} decisions_per_s={value:.0f}", flush=True)
    if {"numpy", "numba"} <= set(medians):
        print(f"{label} numba_over_numpy={medians['numba'] / medians['numpy']:.2f}", flush=True)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog("startups_env.agents.startap_bench"),
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=table_size_arg, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--batch-sizes", default="1,256,4096")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--matches", type=int, default=400)
    parser.add_argument("--search-games", type=int, default=4)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    parser.add_argument("--seats", default=None, help="print the seat balance of this bot instead")
    parser.add_argument("--backends", default=",".join(b for b in BACKENDS if b != "numba" or numba_available()))
    return parser


def main(argv=None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        sizes = [int(x) for x in args.batch_sizes.split(",")]
    except ValueError:
        parser.error(f"--batch-sizes must be comma-separated ints, got {args.batch_sizes!r}")
    if args.quick:
        args.repeats, args.seconds, args.games, args.matches = 1, 0.25, 16, min(args.matches, 16)
        args.search_games = min(args.search_games, 1)
    if args.seats is not None:
        print_seat_balance(args.players, args.games, args.seats)
        return
    if not 2 <= args.players <= 6 or args.repeats < 1 or args.seconds <= 0 or min(sizes) < 1 or args.games < 1:
        parser.error("need 2-6 players, repeats >= 1, seconds > 0, batch sizes >= 1 and games >= 1")
    backends = args.backends.split(",")
    for b in sizes:
        print_rates(f"batch B={b} players={args.players}", args.repeats, backends,
                    lambda backend, b=b: batch_rate(b, args.players, args.seconds, CLOCKS[args.clock], backend))
    print_rates(f"aec players={args.players}", args.repeats, backends,
                lambda backend: aec_rate(args.players, args.seconds, CLOCKS[args.clock], backend))
    for bot, n in itertools.product(("random", "builder"), range(2, 7)):
        decisions, turns = game_length(n, args.games, bot)
        print(f"game_length players={n} bots={bot} decisions={decisions:.1f} turns={turns:.2f}", flush=True)
    if args.matches:
        for n, (a, b) in itertools.product(sorted({2, args.players - args.players % 2}),
                                           itertools.combinations(("builder", "outsourcer", "random"), 2)):
            bots = [make_startap_agent((a, b)[seat % 2], seed=seat) for seat in range(n)]
            wins = play_games(bots, n, args.matches, seed=7)["wins"]
            print(f"wins players={n} {a}_vs_{b}={wins[0::2].sum():.3f}", flush=True)
    if args.search_games > 0:
        ms, decisions = search_cost(args.players, args.search_games, CLOCKS[args.clock])
        print(f"search players={args.players} ms_per_decision={ms:.1f} decisions={decisions}", flush=True)


if __name__ == "__main__":
    main()
