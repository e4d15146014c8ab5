"""Speed benchmark: ``python -m startups_env.agents.bench``.

Prints one line per figure, each the median of ``--repeats`` timed runs of ``--seconds``
wall-clock seconds (after a short untimed warm-up), with uniformly random legal actions
and every reset included:

    numba_first_use_s=...                         importing the kernels and their first use (compile or cache load)
    numba_threads layer=omp threads=2 wait=...    how numba's threads run (startups_env.startups.numba_runtime)
    load_average before 1,5,15min=... cores=...   the machine's load before the figures (and after them)
    competitor=batch processes=1                  what runs beside the measured process (--competitor)
    batch B=16384 players=4 backend=numpy decisions_per_s=...   Simulator(auto_reset=True): random_actions() + step(),
                                                  once per installed backend
    batch_speedup B=16384 players=4 numba_over_numpy=...  numba's rate over numpy's: the median of the ratios
                                                  of each repeat's runs, one after the other
    aec players=4 backend=numba decisions_per_s=...  env(backend=...) in PettingZoo's usual random-agent loop, per backend
    aec_speedup players=4 numba_over_numpy=...    numba's rate over numpy's, as for the batch
    aec_bare players=4 decisions_per_s=...        that loop over a do-nothing env (bench._BareEnv): its ceiling
    search players=4 backend=... games=8 seconds_per_decision=...   the search bot at its default budget, per
                                                  backend, asked the decisions of seat 0 in 8 games against greedy
                                                  bots (one batch; recorded first), after an untimed game's
                                                  decisions (its kernels' first use)
    search_speedup players=4 numba_over_numpy=...  numpy's time per search decision over numba's: the median of
                                                  the ratios of runs on the same decisions, each call asked of
                                                  both backends in turn
    network players=4 bot=exit batch=1 ms_per_decision=...   each network bot of ``--networks`` asked one
                                                  decision at a time (a single game's pace), per decision
    observe B=4096 players=4 obs_per_s=...        observe.observe() of the player to act, B games at once
    state_bytes_per_game=...                      the numpy State of one game (Simulator caches excluded)

A *decision* is one action of one player (a turn is two: take, then put down). In the
batch figures every game decides in every step (finished games are re-dealt inside the
step). The AEC figures count only real actions (not the ``None`` steps of finished agents)
but time everything, including ``last()``, the mask sampling in
``action_space(agent).sample(mask)``, the dead steps and ``reset()``; the bare figure is
what the loop itself costs (PettingZoo's iteration and order-enforcing wrapper, gymnasium's
masked sampling), so an env's figure is best read as a fraction of it.

Options: ``--players 4``, ``--repeats 3``, ``--seconds 2.0`` (per run),
``--batch-sizes 1,256,4096,16384``, ``--observe-batch 4096`` (0 to skip), ``--quick``
(0.25 s runs, for a smoke test), ``--clock cpu`` (time this process's CPU time instead
of the wall clock: steadier when other jobs share the machine, but blind to time spent
waiting), ``--competitor batch|busy`` (measure beside a second process of the package's
own batch loop, B=16384 at its default settings, or beside one pure-Python busy loop per
core: the contended cases, reproducible on any machine; started after the first use,
stopped when the figures are done). The default run takes about two minutes on a 2-core
machine.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from startups_env.agents.registry import make_agent, split_names

from startups_env.envs.aec import OrderEnforcing
from startups_env.envs.aec import env as make_env
from startups_env.startups.backend import BACKENDS, numba_available
from startups_env.startups.observe import OBS_DIM, observation_bounds, observe
from startups_env.startups.rules import NUM_ACTIONS, Rules
from startups_env.startups.simulator import Simulator
from startups_env.table.driver import Table
from startups_env.table.games import DEFAULT_GAME, game_by_name
from startups_env.tools.cli import add_game_argument, add_traceback_argument, prog, report_error, table_size_arg

_CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = time.perf_counter


def _timed(run_chunk, seconds: float) -> float:
    """Call ``run_chunk()`` (which returns how many units it did) until ``seconds`` have
    passed on the chosen clock; units per second."""
    done = 0
    start = _clock()
    while True:
        done += run_chunk()
        elapsed = _clock() - start
        if elapsed >= seconds:
            return done / elapsed


def compiled_first_use(players: int) -> None:
    """Play enough random games on the numba backend that every kernel of the timed batch
    runs is compiled, or loaded from the on-disk cache, before they start: a batch large
    enough for the threaded step (``kernels.PARALLEL_FROM``) past the end of its first
    rounds (which end in bulk, on the threaded end-of-round kernel, then a few at a time, on
    the serial one), and two games past their end (the serial step). Otherwise a kernel
    first used in a timed run (the end of the rounds, about 90 steps in) counts its
    compilation in that run's rate."""
    from startups_env.startups import numba_backend as kernels

    for size, steps in ((2, 200), (kernels.PARALLEL_FROM, 200)):
        sim = Simulator(Rules(num_players=players), size, seed=0, auto_reset=True, backend="numba")
        for _ in range(steps):
            sim.step(sim.random_actions())


COMPETITORS = ("none", "batch", "busy")
COMPETITOR_BATCH = 16384  # games of the competing batch loop (--competitor batch)


def batch_loop(players: int, parent: int, batch_size: int = COMPETITOR_BATCH) -> None:
    """The package's own batch loop at its default settings (the fastest installed backend,
    random actions, auto-reset), stepped until the process is stopped or its ``parent``
    process is gone: what ``--competitor batch`` runs beside the measured process. Prints
    ``ready`` once its first steps are done (its kernels loaded)."""
    sim = Simulator(Rules(num_players=players), batch_size=batch_size, seed=1, auto_reset=True)
    for _ in range(10):
        sim.step(sim.random_actions())
    print("ready", flush=True)
    while os.getppid() == parent:
        sim.step(sim.random_actions())


# One pure-Python busy loop (a call per turn: it also ends where its parent is gone).
_BUSY_LOOP = "import os\nprint('ready', flush=True)\nwhile os.getppid() == {parent}:\n    pass"


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextlib.contextmanager
def competitor(kind: str, players: int):
    """Other processes loading the machine while the block runs, stopped (and waited for)
    when it ends, however it ends: ``"batch"``, one process of :func:`batch_loop` (a second
    job of the same kind); ``"busy"``, one pure-Python busy loop per core; ``"none"``,
    nothing. Yields the processes, once each has started its work. (Each also ends by
    itself if this process is killed.)"""
    if kind not in COMPETITORS:
        raise ValueError(f"competitor must be one of {COMPETITORS}, got {kind!r}")
    parent = os.getpid()
    if kind == "batch":
        commands = [f"from startups_env.agents.bench import batch_loop; batch_loop({int(players)}, {parent})"]
    else:
        commands = [_BUSY_LOOP.format(parent=parent)] * (_cores() if kind == "busy" else 0)
    processes = []
    try:
        for command in commands:
            processes.append(subprocess.Popen([sys.executable, "-c", command], stdout=subprocess.PIPE,
                                              stdin=subprocess.DEVNULL, text=True))
        for process in processes:
            if process.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the {kind} competitor stopped before it started (exit {process.wait()})")
        yield processes
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            process.stdout.close()


def batch_rate(players: int, batch_size: int, seconds: float, seed: int = 0, backend: str = "numpy") -> float:
    """Decisions per second of ``Simulator.random_actions`` + ``Simulator.step``."""
    sim = Simulator(Rules(num_players=players), batch_size=batch_size, seed=seed, auto_reset=True, backend=backend)
    # Enough steps per timing check that the clock is read rarely.
    chunk = max(1, 4096 // batch_size)

    def run_chunk() -> int:
        for _ in range(chunk):
            sim.step(sim.random_actions())
        return chunk * batch_size

    run_chunk()  # warm-up: caches keyed by batch size, first allocations
    return _timed(run_chunk, seconds)


def _random_agent_rate(env, seconds: float, seed: int) -> float:
    """Decisions per second of PettingZoo's usual random-agent loop over ``env`` (the
    actions of the ``None`` steps of finished agents not counted)."""
    env.reset(seed=seed)
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed + i)

    def run_episode() -> int:
        actions = 0
        for agent in env.agent_iter():
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                action = None
            else:
                action = env.action_space(agent).sample(obs["action_mask"])
                actions += 1
            env.step(action)
        env.reset()
        return actions

    run_episode()  # warm-up (and the compiled backend's first calls)
    return _timed(run_episode, seconds)


def aec_rate(players: int, seconds: float, seed: int = 0, backend: str | None = None) -> float:
    """Decisions per second of the wrapped AEC env (``env(backend=...)``) under the usual
    random-agent loop."""
    return _random_agent_rate(make_env(num_players=players, backend=backend), seconds, seed)


def aec_bare_rate(players: int, seconds: float, seed: int = 0) -> float:
    """Decisions per second of the same loop over :class:`_BareEnv`, wrapped as ``env()``
    wraps ours: the ceiling of that loop, what PettingZoo's loop and gymnasium's masked
    ``sample`` cost by themselves."""
    return _random_agent_rate(OrderEnforcing(_BareEnv(players)), seconds, seed)


class _BareEnv(AECEnv):
    """The cheapest valid AEC env with our agents and spaces: it does nothing. Every action
    is legal (the mask is all ones), the observation is one constant vector, a turn is two
    decisions of one agent as in Startups, and after ``EPISODE`` decisions every agent
    terminates with reward 0 (then come the dead steps, as in ours)."""

    EPISODE = 100  # decisions per game: about a random game's (95 at 4 players)
    metadata = {"name": "startups_bare_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self, players: int):
        super().__init__()
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        low, high = observation_bounds(Rules(num_players=players))
        self.observation_spaces = {
            agent: spaces.Dict({
                "observation": spaces.Box(low, high, (OBS_DIM,), np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            })
            for agent in self.possible_agents
        }
        self._obs = {"observation": low.copy(), "action_mask": np.ones(NUM_ACTIONS, np.int8)}

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def observe(self, agent):
        return self._obs

    def reset(self, seed=None, options=None):
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[0]
        self._decisions = 0

    def last(self, observe=True):  # (answered by the env itself, as ours)
        agent = self.agent_selection
        return (self._obs if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._decisions += 1
        if self._decisions == self.EPISODE:
            self.terminations = dict.fromkeys(self.agents, True)
        elif self._decisions % 2 == 0:  # the turn passes
            self.agent_selection = self.possible_agents[self._decisions // 2 % len(self.possible_agents)]


def observe_rate(players: int, batch_size: int, seconds: float, seed: int = 0) -> float:
    """Observation vectors per second of ``observe(state)`` on mid-game states."""
    sim = Simulator(Rules(num_players=players), batch_size=batch_size, seed=seed, auto_reset=True)
    for _ in range(40):  # spread the games over the middle of play
        sim.step(sim.random_actions())
    chunk = max(1, 4096 // batch_size)

    def run_chunk() -> int:
        for _ in range(chunk):
            observe(sim.state)
        return chunk * batch_size

    run_chunk()
    return _timed(run_chunk, seconds)


class _Recorded:
    """A bot (at seat 0), keeping the arguments of each call of its ``act``."""

    def __init__(self, bot):
        self.bot, self.needs, self.name = bot, bot.needs, bot.name
        self.calls: list[dict] = []

    def act(self, obs, mask, **given):
        self.calls.append({"obs": obs.copy(), "mask": mask.copy(), **given})  # (public, history: the table's own copies)
        return self.bot.act(obs, mask, **given)


def search_decisions(players: int, games: int, seed: int = 0) -> list[dict]:
    """The search bot's decisions in ``games`` games: seat 0 at its default budget (fastest
    installed backend) against greedy bots, all games decided in one batch as the arena
    does. Each entry is one call of its ``act``, as keyword arguments (obs, mask, public,
    history), for :func:`search_seconds_per_decision` to replay."""

    sim = Simulator(Rules(num_players=players), batch_size=games, seed=seed)
    search = _Recorded(make_agent("search", seed=seed))
    Table(sim, [search] + [make_agent("greedy", seed=seed)] * (players - 1)).play()
    return search.calls


def search_seconds_per_decision(decisions: list[dict], seed: int = 0, backends=("numpy",)) -> dict[str, float]:
    """Seconds inside a fresh search bot's ``act`` (default budget) per decision, for each of
    ``backends``, asked the recorded ``decisions`` (:func:`search_decisions`): every backend
    decides the same positions (games played through would part at the first choice in
    which the backends differ), and each call is asked of every backend in turn, so that
    the machine's drift in speed falls on all of them alike."""

    searches = {backend: make_agent("search", seed=seed, backend=backend) for backend in backends}
    seconds = dict.fromkeys(backends, 0.0)
    count = 0
    for call in decisions:
        games = np.arange(call["obs"].shape[0])
        for backend, search in searches.items():
            given = {**call, **{key: call[key].take(games) for key in ("public", "history") if key in call}}  # copies
            started = _clock()
            search.act(**given)
            seconds[backend] += _clock() - started
        count += games.size
    return {backend: total / count for backend, total in seconds.items()}


def network_ms_per_decision(players: int, name: str, games: int = 8, seed: int = 0) -> float:
    """Milliseconds on the clock per decision of the network bot ``name`` (``exit``,
    ``ppo``), asked one decision at a time, as a single game or an AEC env asks it: the
    decisions of seat 0 in ``games`` games of greedy bots (after one untimed call)."""
    sim = Simulator(Rules(num_players=players), batch_size=games, seed=seed)
    seat = _Recorded(make_agent("greedy", seed=seed))
    Table(sim, [seat] + [make_agent("greedy", seed=seed)] * (players - 1)).play()
    rows = [(call["obs"][i:i + 1], call["mask"][i:i + 1]) for call in seat.calls for i in range(call["obs"].shape[0])]
    network = make_agent(name, seed=seed)
    network.act(*rows[0])
    started = _clock()
    for obs, mask in rows:
        network.act(obs, mask)
    return (_clock() - started) / len(rows) * 1e3


def state_bytes_per_game(players: int) -> int:
    return Simulator(Rules(num_players=players), batch_size=1024, seed=0).state.nbytes_per_game()


def _median(measure, repeats: int) -> int:
    return round(statistics.median(measure(seed) for seed in range(repeats)))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog("startups_env.agents.bench"), description=__doc__.split("\n\n")[0])
    add_game_argument(parser)  # (read first by main: another game's figures are its own bench's)
    parser.add_argument("--players", type=table_size_arg, default=4, help="table size, 2-7 (default 4)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure; the median is printed (default 3)")
    parser.add_argument("--seconds", type=float, default=None, help="seconds per run on --clock (default 2, --quick 0.25)")
    parser.add_argument("--batch-sizes", default="1,256,4096,16384", help="comma-separated batch sizes (default 1,256,4096,16384)")
    parser.add_argument("--observe-batch", type=int, default=4096, help="batch size of the observe figure, 0 to skip (default 4096)")
    parser.add_argument("--search-games", type=int, default=None,
                        help="games of the search figure, 0 to skip (default 8, --quick 2)")
    parser.add_argument("--networks", default="ppo,exit",
                        help="network bots timed one decision at a time (comma-separated; '' to skip)")
    parser.add_argument("--quick", action="store_true", help="short runs, for a smoke test")
    parser.add_argument("--clock", choices=sorted(_CLOCKS), default="wall",
                        help="wall (default) or cpu: this process's CPU time, steadier on a shared, busy machine")
    add_traceback_argument(parser)
    parser.add_argument("--competitor", choices=COMPETITORS, default="none",
                        help="load the machine while measuring: batch, a second process of the package's own batch "
                             f"loop (B={COMPETITOR_BATCH}, default settings); busy, one pure-Python busy loop per "
                             "core; none (default)")
    return parser


def _checked_args(argv) -> argparse.Namespace:
    """The command line, checked (an error names the flag), with the defaults of --quick
    filled in and ``sizes`` (the batch sizes) parsed."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        args.sizes = [int(x) for x in args.batch_sizes.split(",") if x.strip()]
    except ValueError:
        parser.error(f"--batch-sizes must be comma-separated integers, got {args.batch_sizes!r}")
    if any(b < 1 for b in args.sizes):
        parser.error("--batch-sizes must be positive")
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    if args.observe_batch < 0:
        parser.error("--observe-batch must be >= 0")
    if args.search_games is None:
        args.search_games = 2 if args.quick else 8
    if args.search_games < 0:
        parser.error("--search-games must be >= 0")
    try:
        Rules(num_players=args.players)
    except ValueError as err:
        parser.error(str(err))
    if args.seconds is None:
        args.seconds = 0.25 if args.quick else 2.0
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    return args


def _print_batch_rates(players: int, sizes: list[int], seconds: float, repeats: int, backends: list[str]) -> None:
    for b in sizes:
        # Each repeat on every backend in turn, so that each ratio is taken between runs
        # seconds apart: a shared machine's speed drifts by a third within the hour, and the
        # ratio is what it measures well.
        runs = [{backend: batch_rate(players, b, seconds, seed, backend) for backend in backends}
                for seed in range(repeats)]
        for backend in backends:
            rate = round(statistics.median(run[backend] for run in runs))
            print(f"batch B={b} players={players} backend={backend} decisions_per_s={rate}", flush=True)
        if "numba" in backends:
            ratio = statistics.median(run["numba"] / run["numpy"] for run in runs)
            print(f"batch_speedup B={b} players={players} numba_over_numpy={ratio:.2f}", flush=True)


def _print_aec_rates(players: int, seconds: float, repeats: int, backends: list[str]) -> None:
    # The AEC env on each installed backend, and beside it the same loop over a do-nothing
    # env: that loop's ceiling, measured in the same run so that the ratio is fair.
    # Each repeat on every backend in turn, as the batch figures.
    runs = [{backend: aec_rate(players, seconds, seed, backend) for backend in backends} for seed in range(repeats)]
    for backend in backends:
        rate = round(statistics.median(run[backend] for run in runs))
        print(f"aec players={players} backend={backend} decisions_per_s={rate}", flush=True)
    if "numba" in backends:
        ratio = statistics.median(run["numba"] / run["numpy"] for run in runs)
        print(f"aec_speedup players={players} numba_over_numpy={ratio:.2f}", flush=True)
    rate = _median(lambda seed: aec_bare_rate(players, seconds, seed), repeats)
    print(f"aec_bare players={players} decisions_per_s={rate}", flush=True)


def _print_search_times(players: int, games: int, repeats: int, backends: list[str]) -> None:
    # One game's decisions first, untimed: the search's own compiled kernels (the rollout,
    # the hand reading, the world sampling) load from the on-disk cache, or compile, on
    # their first use, and that once-a-process cost is no decision's (numpy gets them too,
    # so that neither backend's first timed call carries the imports).
    search_seconds_per_decision(search_decisions(players, 1), 0, backends)
    runs = [search_seconds_per_decision(search_decisions(players, games, seed), seed, backends)
            for seed in range(repeats)]
    for backend in backends:
        value = statistics.median(run[backend] for run in runs)
        print(f"search players={players} backend={backend} games={games} seconds_per_decision={value:.4f}",
              flush=True)
    if "numba" in backends:
        ratio = statistics.median(run["numpy"] / run["numba"] for run in runs)
        print(f"search_speedup players={players} numba_over_numpy={ratio:.2f}", flush=True)


def _print_load(when: str) -> None:
    if hasattr(os, "getloadavg"):
        load = ",".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"load_average {when} 1,5,15min={load} cores={_cores()}", flush=True)


def main(argv=None) -> int:
    """The figures of ``--game`` (default startups); another game's are its own bench's
    (``Game.bench``, e.g. Стартап's :mod:`startups_env.agents.startap_bench`), given the
    rest of the command line."""
    chosen = argparse.ArgumentParser(add_help=False)
    add_game_argument(chosen)
    known, rest = chosen.parse_known_args(argv)
    game = game_by_name(known.game)
    if game.name != DEFAULT_GAME:
        if not game.bench:
            return report_error(_parser().prog, ValueError(f"--game {game.name}: {game.title} has no bench figures"))
        module, _, name = game.bench.partition(":")
        return getattr(importlib.import_module(module), name)(rest)
    args = _checked_args(rest)
    try:
        _measure(args)
    except (ValueError, ImportError, OSError) as exc:
        return report_error(_parser().prog, exc, args.traceback)
    return 0


def _measure(args) -> None:
    """Print every figure the command line asks for, beside the competitor it names."""
    global _clock
    _clock = _CLOCKS[args.clock]
    p = args.players
    backends = [b for b in BACKENDS if b == "numpy" or numba_available()]
    if "numba" in backends:
        start = time.perf_counter()
        compiled_first_use(p)
        print(f"numba_first_use_s={time.perf_counter() - start:.2f}  (compile, or load from the on-disk cache)",
              flush=True)
        from startups_env.startups.numba_runtime import start_threads
        print(f"numba_threads {' '.join(f'{k}={v}' for k, v in start_threads().items())}", flush=True)
    _print_load("before")
    with competitor(args.competitor, p) as processes:
        if args.competitor != "none":
            print(f"competitor={args.competitor} processes={len(processes)}", flush=True)
        _print_figures(args, backends)
    _print_load("after")


def _print_figures(args: argparse.Namespace, backends: list[str]) -> None:
    p, r = args.players, args.repeats
    _print_batch_rates(p, args.sizes, args.seconds, r, backends)
    _print_aec_rates(p, args.seconds, r, backends)
    if args.search_games:
        _print_search_times(p, args.search_games, r, backends)
    for name in split_names(args.networks):
        try:
            value = statistics.median(network_ms_per_decision(p, name, seed=seed) for seed in range(r))
        except (ImportError, FileNotFoundError, ValueError) as exc:  # no torch, or no weights
            print(f"network bot={name} skipped: {exc}", flush=True)
            continue
        print(f"network players={p} bot={name} batch=1 ms_per_decision={value:.3f}", flush=True)
    if args.observe_batch:
        rate = _median(lambda seed: observe_rate(p, args.observe_batch, args.seconds, seed), r)
        print(f"observe B={args.observe_batch} players={p} obs_per_s={rate}", flush=True)
    print(f"state_bytes_per_game={state_bytes_per_game(p)}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
