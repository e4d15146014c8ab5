"""Compile every compiled kernel ahead: ``python -m startups_env.agents.precompile``.

For a cluster image, a container build or CI: numba compiles the package's kernels on
their first use (a minute or more in all) and caches them on disk, beside their source in
the installed package (or under ``NUMBA_CACHE_DIR`` where it is set). Run this once where
the package is installed, as the user that will run it (the cache folder must be
writable), and every later process there, Ray workers included, loads the kernels in
about a second. It plays a little of everything that compiles: the simulator's random
games (small batches and one big enough for numba's threads), one game of the PettingZoo
env, one game of the search bot against greedy bots, and the same for Стартап (random
games, an env game, a game of its search against builders); then it compiles the other
version (serial or threaded) of every kernel that has two. It prints how long each part
took and how many kernels compiled; run again, it compiles none.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from startups_env.startups.backend import numba_available
from startups_env.tools.cli import prog, table_size_arg


def _simulator(players: int) -> None:
    from startups_env.agents.bench import compiled_first_use
    from startups_env.startups.numba_backend import take_games
    from startups_env.startups.rules import Rules
    from startups_env.startups.simulator import Simulator

    compiled_first_use(players)
    sim = Simulator(Rules(num_players=players), batch_size=4, seed=0, backend="numba")
    take_games(sim.state, np.arange(4))


def _play_one_game(game) -> None:
    """One game of a PettingZoo env, random legal actions."""
    game.reset(seed=0)
    for i, agent in enumerate(game.possible_agents):
        game.action_space(agent).seed(i)
    for agent in game.agent_iter():
        obs, _reward, termination, truncation, _info = game.last()
        game.step(None if termination or truncation else game.action_space(agent).sample(obs["action_mask"]))


def _env(players: int) -> None:
    from startups_env.envs.aec import env

    _play_one_game(env(num_players=players, backend="numba"))


def _search(players: int) -> None:
    from startups_env.agents.bench import search_decisions

    search_decisions(players, 1)


def _startap(players: int) -> None:
    """Стартап's compiled rules (a few random games and one of its env) and its search (a
    game of the search against builders); the threaded step compiles with the other versions."""
    from startups_env.agents.arena import run_arena
    from startups_env.envs.startap_aec import env
    from startups_env.startap.simulator import Simulator

    sim = Simulator(4, num_players=players, seed=0, backend="numba")
    while not sim.done.all():
        sim.step(sim.random_actions())
    _play_one_game(env(num_players=players, backend="numba"))
    run_arena(["search", *["builder"] * (players - 1)], players, 1, seed=0, rate=False, game="startap")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog=prog("startups_env.agents.precompile"), description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=table_size_arg, default=4, help="table size of the games played (default 4)")
    args = parser.parse_args(argv)
    if not numba_available():
        parser.exit(0, "numba is not installed: nothing to compile (pip install 'startups-env[fast]')\n")
    from startups_env.startups import numba_backend, numba_runtime

    print(f"numba_threads {' '.join(f'{k}={v}' for k, v in numba_runtime.start_threads().items())}", flush=True)
    started = time.perf_counter()
    parts = (("simulator", lambda: _simulator(args.players)), ("env", lambda: _env(args.players)),
             ("search", lambda: _search(args.players)), ("Стартап", lambda: _startap(min(args.players, 6))),
             ("other versions", numba_backend.compile_twins))
    for name, run in parts:
        start = time.perf_counter()
        run()
        print(f"{name}: {time.perf_counter() - start:.1f} s", flush=True)
    for module, seconds in numba_runtime.NOTICE.seconds.items():
        print(f"compiled {module}: {numba_runtime.NOTICE.compiles[module]} kernels in {seconds:.1f} s", flush=True)
    compiled = sum(numba_runtime.NOTICE.compiles.values())
    print(f"precompile: {compiled} kernels compiled (the others loaded from the cache) in "
          f"{time.perf_counter() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
