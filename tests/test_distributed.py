"""startups_env.tools.distributed: the arena, the ladder and the search labelling give the same
results on one process and on Ray workers, survive a worker's death, and refuse a cluster
that cannot be reached before any game is played.

The Ray tests share one local instance of 2 CPUs (``ray_pool``); they are skipped when Ray
(the ``ray`` extra) is not installed."""

import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
from startups_env.agents.arena import main as arena_main
from startups_env.agents.arena import run_arena
from startups_env.agents.ladder import run_ladder

from startups_env.tools.distributed import ClusterError, Workers, check_reachable, shard_threads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A bot whose process dies once, mid-shard, on a Ray worker: the first time its act() runs
# a fifth time in a process other than the test's, when the marker file is missing, it
# makes the marker and exits at once, as a killed worker would. Otherwise it plays as the
# random bot (a seeded generator, so that a retried shard must be reseeded to match).
CRASHBOT = '''
import os
from startups_env.agents import make_agent

def make_bot(seed=None, marker="", driver_pid=0):
    inner = make_agent("random", seed=seed)
    calls = [0]
    def act(obs, mask):
        calls[0] += 1
        if calls[0] == 5 and os.getpid() != driver_pid and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)
        return inner.act(obs, mask)
    return act
'''


@pytest.fixture(scope="session")
def bot_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bots")
    (folder / "crashbot.py").write_text(CRASHBOT)
    return folder


@pytest.fixture(scope="session")
def ray_pool(bot_folder):
    """One local Ray instance (2 CPUs) for the module's tests. Started the way the command
    lines start theirs, so its workers get this process's PYTHONPATH, where the crash bot
    is."""
    pytest.importorskip("ray")
    mp = pytest.MonkeyPatch()
    mp.setenv("PYTHONPATH", os.pathsep.join([str(bot_folder), os.environ.get("PYTHONPATH", "")]))
    mp.syspath_prepend(str(bot_folder))
    pool = Workers(2)
    pool.start()
    yield pool
    pool.close()
    mp.undo()


def same_games(a, b):
    for name in ("ranks", "scores", "truncated", "turns"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.decisions == b.decisions and a.names == b.names


SPECS = "greedy,random,banker"


def test_one_process_plays_the_same_shards_as_workers_1():
    """``batch_size`` fixes the shards: workers=1 plays them here, with the same games; the
    default (one shard) is the run older versions played."""
    sharded = run_arena(SPECS, 3, 45, seed=4, batch_size=10)
    same_games(sharded, run_arena(SPECS, 3, 45, seed=4, batch_size=10, workers=1))
    one = run_arena(SPECS, 3, 45, seed=4)
    assert not np.array_equal(one.ranks, sharded.ranks), "shards have bots of their own"
    assert "ray_startup_seconds" not in sharded.extra, "no Ray for one worker"
    assert run_arena(SPECS, 3, 45, seed=4, batch_size=10, workers=1).extra["shards"] == 5


def test_bad_worker_arguments_are_value_errors():
    for bad in (0, -1, 1.5, "2"):
        with pytest.raises(ValueError, match="workers must be"):
            Workers(bad)
        with pytest.raises(ValueError, match="threads_per_worker"):
            Workers(2, threads_per_worker=bad)
    with pytest.raises(ValueError, match="ray address"):
        Workers(2, "  ")
    with pytest.raises(ValueError, match="agent specs"):
        run_arena([lambda obs, mask: mask.argmax(1), "greedy"], 2, 4, workers=Workers(address="127.0.0.1:1"))


def test_without_ray_more_workers_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as when it is not installed
    with pytest.raises(ClusterError, match=r"needs Ray, the optional extra: pip install -e \"\.\[ray\]\""):
        run_arena(SPECS, 3, 6, workers=2)
    same_games(run_arena(SPECS, 3, 6, workers=1), run_arena(SPECS, 3, 6, batch_size=125))


def test_the_ray_messages_agree_with_the_command_line_and_pyproject(monkeypatch, capsys):
    """The install hint names the Ray release pyproject's extra asks for; a missing Ray is
    blamed on what asked for it (an address is not "more than one worker"); a bad --workers
    is answered in the command line's words, not Python's."""
    from startups_env.tools.distributed import RAY_REQUIREMENT

    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:  # (tomllib is Python 3.11+)
        extra = re.search(r"^ray = \[\s*\"([^\"]+)\",?\s*\]", f.read(), re.M)
    assert extra and extra.group(1) == RAY_REQUIREMENT
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ClusterError, match=f'playing on 2 workers needs Ray.*pip install "{RAY_REQUIREMENT}"'):
        Workers(2).start()
    with pytest.raises(ClusterError, match="joining the Ray cluster at 127.0.0.1:1 needs Ray") as info:
        Workers(address="127.0.0.1:1").start()
    assert "worker" not in str(info.value)
    for bad in ("0", "-2", "two"):
        with pytest.raises(SystemExit):
            arena_main(["--players", "2", "--agents", "greedy,random", "--workers", bad])
        err = capsys.readouterr().err
        assert f"argument --workers: must be a positive number of workers (1 plays the shards in this process, " \
               f"without Ray), got '{bad}'" in err
        assert "None" not in err and "positive int" not in err


@pytest.mark.parametrize("address, message", [("127.0.0.1:1", "cannot connect"), ("no-port", "is not HOST:PORT"),
                                              ("ray://127.0.0.1:notaport", "is not HOST:PORT")])
def test_an_unreachable_address_fails_quickly(address, message):
    tick = time.perf_counter()
    with pytest.raises(ClusterError, match=message):
        check_reachable(address, timeout=2.0)
    assert time.perf_counter() - tick < 5.0


def test_the_command_line_refuses_an_unreachable_cluster_before_any_game(tmp_path, capsys):
    pytest.importorskip("ray")
    out = tmp_path / "out.json"
    tick = time.perf_counter()
    with pytest.raises(SystemExit) as exc:
        arena_main(["--players", "2", "--agents", "greedy,random", "--games", "4", "--ray-address", "127.0.0.1:1",
                    "--json", str(out), "--no-progress"])
    assert exc.value.code == 2 and time.perf_counter() - tick < 15.0
    err = capsys.readouterr().err
    assert "ray address 127.0.0.1:1: cannot connect" in err and not out.exists()


def test_workers_give_the_table_of_one_process(ray_pool):
    """The same seed, the same shards: one process and 2 Ray workers play the same games,
    with the search bot too (its own generator per shard)."""
    specs = "search[determinizations=4;horizon=4],random,greedy"
    local = run_arena(specs, 3, 18, seed=2, batch_size=6, workers=1)
    remote = run_arena(specs, 3, 18, seed=2, batch_size=6, workers=ray_pool, progress=True)
    same_games(local, remote)
    assert remote.extra["ray_startup_seconds"] >= 0.0
    local = run_arena(SPECS, 3, 45, seed=4, batch_size=10, workers=1)
    same_games(local, run_arena(SPECS, 3, 45, seed=4, batch_size=10, workers=ray_pool))
    # An int count with Ray already running uses that instance (and leaves it running).
    same_games(local, run_arena(SPECS, 3, 45, seed=4, batch_size=10, workers=2))


def test_each_worker_runs_on_the_threads_ray_reserved_for_it(ray_pool):
    """A shard on a Ray worker runs numba's kernels and torch on the CPUs Ray reserved for
    it: one by default, where it used to run numba's threads on every core, so that two
    workers on two cores ran four threads."""
    numba = pytest.importorskip("numba")
    pytest.importorskip("torch")

    def threads(job, report):  # (a local function: Ray ships it by value to the workers)
        import numba
        import torch  # imported after the worker set its threads, or before, by the first shard
        return numba.get_num_threads(), torch.get_num_threads()

    assert [out for _, out in ray_pool.run(threads, range(4))] == [(1, 1)] * 4
    two = min(2, numba.config.NUMBA_NUM_THREADS)  # numba's pool is the machine's cores
    assert [out for _, out in Workers(2, threads_per_worker=2).run(threads, range(2))] == [(two, two)] * 2
    with pytest.raises(ClusterError, match="threads_per_worker=3.*largest machine of the Ray instance has 2 CPUs"):
        Workers(2, threads_per_worker=3).start()
    # The fixture started its instance of 2 CPUs: a run of one shard gets both, or one
    # process on numba's threads would beat it.
    assert [out for _, out in ray_pool.run(threads, range(1))] == [(two, two)], "the instance is left running"


def test_a_worker_spins_numbas_threads_briefly_and_loads_the_cached_kernels(ray_pool):
    """In a Ray worker, numba's idle threads spin only briefly (the package's wait
    policy: startups_env.startups.numba_runtime), and the simulator's kernels, cached by
    this process, load without a compile."""
    pytest.importorskip("numba")
    from startups_env.agents.bench import compiled_first_use

    compiled_first_use(3)  # (here first: compiled, or loaded from the cache)

    def in_worker(job, report):  # (a local function: Ray ships it by value to the workers)
        import time

        from startups_env.agents.bench import compiled_first_use
        from startups_env.startups import numba_backend, numba_runtime
        from startups_env.startups.simulator import Simulator
        compiled_first_use(3)
        sim = Simulator(num_players=4, batch_size=numba_backend.PARALLEL_FROM, seed=0, auto_reset=True,
                        backend="numba")
        idle = 0.0
        for _ in range(100):  # CPU time while this thread sleeps after a parallel step: spinning threads'
            sim.step(sim.random_actions())
            started = time.process_time()
            time.sleep(0.005)
            idle += time.process_time() - started
        return numba_runtime.start_threads(), numba_backend.thread_count(), idle, numba_runtime.NOTICE.compiles

    # One shard: it gets both CPUs of the fixture's instance, so numba's threads run.
    [(settings, threads, idle, compiles)] = [out for _, out in ray_pool.run(in_worker, range(1))]
    # (the worker inherits the variable this process set: to it, the setting is given)
    assert settings["wait"].startswith("GOMP_SPINCOUNT=30000") or settings["layer"] != "omp", settings
    assert threads == min(2, pytest.importorskip("numba").config.NUMBA_NUM_THREADS)
    assert idle < 0.1, (idle, settings)  # (threads spinning long took 0.2-0.4 s: tests/test_numba_runtime.py)
    assert compiles == {}


def test_a_run_of_fewer_shards_than_local_cpus_shares_them():
    assert shard_threads(1, 4, 1) == 4
    assert shard_threads(1, 4, 2) == 2
    assert shard_threads(1, 4, 3) == 1
    assert shard_threads(1, 4, 9) == 1
    assert shard_threads(2, 8, 3) == 2
    assert shard_threads(2, 8, 1) == 8
    assert shard_threads(1, None, 1) == 1, "a cluster's machines are unknown: one shard may not fit on one"


def test_the_ladder_is_the_same_on_workers(ray_pool):
    pairings = (("greedy", "random"), ("banker", "greedy"))
    here = run_ladder([3], 12, 0, seed=5, pairings=pairings, workers=1)
    there = run_ladder([3], 12, 0, seed=5, pairings=pairings, workers=ray_pool)
    for a, b in zip(here["pairings"], there["pairings"]):
        a, b = dict(a), dict(b)
        a.pop("wall_seconds"), b.pop("wall_seconds")
        assert a == b
    assert here["ratings"] == there["ratings"]


def test_a_worker_that_dies_is_replayed_with_nothing_lost_or_counted_twice(ray_pool, tmp_path):
    done = tmp_path / "already-crashed"
    done.touch()
    clean = run_arena([f"crashbot:make_bot[marker={done};driver_pid={os.getpid()}]", "greedy"], 2, 24, seed=3,
                      batch_size=8, workers=ray_pool)
    marker = tmp_path / "crashed"
    crashed = run_arena([f"crashbot:make_bot[marker={marker};driver_pid={os.getpid()}]", "greedy"], 2, 24, seed=3,
                        batch_size=8, workers=ray_pool, progress=True)
    assert marker.exists(), "a worker died"
    np.testing.assert_array_equal(crashed.ranks, clean.ranks)
    np.testing.assert_array_equal(crashed.scores, clean.scores)
    np.testing.assert_array_equal(crashed.turns, clean.turns)
    assert crashed.decisions == clean.decisions, "the dead worker's decisions are not counted"
    assert crashed.games == 24


def test_distill_writes_the_same_shards_on_workers_and_resumes(ray_pool, tmp_path):
    from startups_env.train.distill import load_shards
    from startups_env.train.distill import main as distill_main

    flags = ["--games", "24", "--shard-games", "6", "--teacher", "banker", "--opponents", "greedy,random",
             "--players", "3,4", "--epochs", "1", "--eval-games", "0", "--hidden", "8"]
    assert distill_main(flags + ["--out", str(tmp_path / "one")]) == 0
    assert distill_main(flags + ["--out", str(tmp_path / "two"), "--workers", "2"]) == 0
    names = [f"shard_{k:04d}.npz" for k in range(4)]
    for name in names:
        a = load_shards([str(tmp_path / "one" / "data" / name)])
        b = load_shards([str(tmp_path / "two" / "data" / name)])
        assert a["obs"].dtype == np.uint8, "observations are stored as bytes"
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=f"{name} {key}")
    # A crash after two shards were written: the rerun keeps them and writes only the rest.
    data = tmp_path / "two" / "data"
    (data / names[1]).unlink()
    (data / names[3]).unlink()
    kept = {name: (data / name).stat().st_mtime_ns for name in (names[0], names[2])}
    assert distill_main(flags + ["--out", str(tmp_path / "two"), "--workers", "2"]) == 0
    assert {name: (data / name).stat().st_mtime_ns for name in kept} == kept
    every = load_shards([str(data / name) for name in names])
    again = load_shards([str(tmp_path / "one" / "data" / name) for name in names])
    for key in every:
        np.testing.assert_array_equal(every[key], again[key])


def test_the_command_line_ships_an_outside_bot_to_its_own_workers(tmp_path):
    """``--workers 2`` starts a Ray instance of its own and stops it; the workers import an
    outside bot from the folder the command runs in; the results are those of one process."""
    pytest.importorskip("ray")
    (tmp_path / "mybot.py").write_text("from startups_env.agents import make_agent\n\n"
                                       "def make_bot(seed=None):\n    return make_agent('random', seed=seed)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    outs = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}.json"
        done = subprocess.run([sys.executable, "-m", "startups_env.agents.arena", "--players", "2", "--agents",
                               "mybot:make_bot,greedy", "--games", "20", "--batch-size", "5", "--seed", "7",
                               "--workers", workers, "--json", str(out), "--no-progress"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        outs.append(json.loads(out.read_text()))
    assert "ray_startup_seconds" in outs[1] and "ray_startup_seconds" not in outs[0]
    for a, b in zip(outs[0]["agents"], outs[1]["agents"]):
        for key in ("wins", "mean_score", "mean_rank", "rating", "rating_ci", "decisions"):
            assert a[key] == b[key], key
