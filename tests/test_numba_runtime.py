"""How the compiled kernels run: numba's idle threads spin only briefly unless the user
says otherwise (in a fresh process, with torch loaded first, and where the user set a wait
policy), the first compile of a group of kernels says so on stderr, and a second process
loads every kernel from the on-disk cache (compiles nothing)."""

import ast
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# CPU seconds the process spends while its one Python thread sleeps, after each of 100 steps
# of a batch big enough for numba's threads: what numba's idle threads take by spinning.
IDLE_SPIN = """
import time
{before}
from startups_env import Simulator
{after}
from startups_env.startups import numba_backend, numba_runtime
sim = Simulator(num_players=4, batch_size=numba_backend.PARALLEL_FROM, seed=0, auto_reset=True, backend="numba")
sim.step(sim.random_actions())
idle = 0.0
for _ in range(100):
    sim.step(sim.random_actions())  # (a parallel region)
    started = time.process_time()
    time.sleep(0.005)
    idle += time.process_time() - started
{check}
print(idle)
print(numba_runtime.start_threads())
"""
# CPU seconds in the 0.5 s of sleeps: threads spinning GNU's default 300,000 turns took 0.2-0.4 s
# on a 2-core machine; the package's 30,000 turns (about 0.3 ms a step) at most 0.035 s.
SPINNING = 0.1


def _run(code: str, **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")}
    result = subprocess.run([sys.executable, "-c", code], cwd=_ROOT, env={**environ, **env}, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return result


def _idle_spin(before: str = "", after: str = "", check: str = "", **env) -> tuple[float, dict]:
    """(idle CPU seconds, numba_runtime.start_threads()) of IDLE_SPIN, with ``before`` run
    before the package is imported, ``after`` after it (before numba's threads start) and
    ``check`` at the end."""
    code = IDLE_SPIN.format(before=before, after=after, check=check)
    idle, settings = _run(code, **env).stdout.splitlines()[-2:]
    return float(idle), ast.literal_eval(settings)


def test_numbas_idle_threads_spin_only_briefly_in_a_fresh_process():
    """The package starts numba's threads so that they soon sleep when idle (GNU OpenMP's
    GOMP_SPINCOUNT, set as the package is imported and kept)."""
    idle, settings = _idle_spin(check="import os; assert os.environ['GOMP_SPINCOUNT'] == '30000'")
    assert idle < SPINNING, settings
    assert settings["wait"] == "GOMP_SPINCOUNT=30000 (set by startups_env)" or settings["layer"] != "omp"


@pytest.mark.parametrize("where", ["before", "after"])
def test_numbas_idle_threads_spin_only_briefly_with_torch_imported(where):
    """torch loads its own GNU OpenMP, and numba's threads run on the first one loaded: with
    torch imported after the package it read the short spin; imported before, it spins
    long, so numba's threads go to a layer that does not (tbb or workqueue)."""
    pytest.importorskip("torch")
    idle, settings = _idle_spin(**{where: "import torch"})
    assert idle < SPINNING, settings
    if where == "before":
        assert settings["layer"] in ("tbb", "workqueue"), settings


def test_a_wait_setting_of_the_user_is_kept():
    """OMP_WAIT_POLICY=ACTIVE (idle threads spin) is the user's to set: kept, and it spins."""
    idle, settings = _idle_spin(OMP_WAIT_POLICY="ACTIVE")
    assert settings["wait"] == "OMP_WAIT_POLICY=ACTIVE"
    if settings["layer"] == "omp":
        assert idle > SPINNING
    code = "from startups_env.startups import numba_runtime\nprint(numba_runtime.start_threads()['wait'])"
    assert _run(code, GOMP_SPINCOUNT="1000").stdout.splitlines() == ["GOMP_SPINCOUNT=1000"]


_PROBE = '''
import numba
from startups_env.startups import numba_runtime

numba_runtime.describe_kernels(__name__, "the probe's kernels", 7)


@numba.njit(cache=True)
def twice(x):
    return 2 * x


@numba.njit(cache=True)
def four_times(x):
    return twice(twice(x))
'''


def test_the_first_compile_says_so_once_and_a_second_process_compiles_nothing(tmp_path):
    """One line on stderr at the first compile of a module's kernels (what, how long, that
    it is cached), however many kernels compile; none where they load from the cache."""
    (tmp_path / "probe.py").write_text(_PROBE)
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
            "import probe\n"
            "from startups_env.startups import numba_runtime\n"
            "assert probe.four_times(3) == 12 and probe.twice(2.5) == 5.0\n"
            "print(numba_runtime.NOTICE.compiles)\n")
    first = _run(code, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    assert len(first.stderr.splitlines()) == 1, first.stderr
    assert first.stderr.startswith("startups_env: compiling the probe's kernels with numba for their first use here "
                                   "(about 7 s, once); they are cached on disk")
    assert "python -m startups_env.agents.precompile" in first.stderr
    assert first.stdout.strip() == "{'probe': 2}", "the outermost compiles, not twice() inside four_times()"
    second = _run(code, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    assert second.stderr == "" and second.stdout.strip() == "{}"


def test_the_package_kernels_load_from_the_cache_in_a_second_process():
    """After one process has used the simulator's kernels (compiled or loaded), the next
    compiles none of them and says nothing."""
    code = ("from startups_env.agents.bench import compiled_first_use\n"
            "from startups_env.startups import numba_runtime\n"
            "compiled_first_use(3)\n"
            "print(numba_runtime.NOTICE.compiles)\n")
    _run(code)
    second = _run(code)
    assert second.stdout.strip() == "{}" and "compiling" not in second.stderr


def _drive(choice, calls: int, threaded_ms: float, serial_ms: float = 2.0) -> list[bool]:
    """The choice's picks over ``calls`` calls of 1,000 games each, taking these times."""
    picks = []
    for _ in range(calls):
        threaded = choice.threaded()
        picks.append(threaded)
        choice.record(threaded, (threaded_ms if threaded else serial_ms) / 1000, 1000)
    return picks


def _runs(picks: list[bool], version: bool) -> list[tuple[int, int]]:
    """(start, length) of each run of ``version`` in ``picks``."""
    runs, start = [], None
    for i, pick in enumerate(picks + [not version]):
        if pick == version and start is None:
            start = i
        elif pick != version and start is not None:
            runs.append((start, i - start))
            start = None
    return runs


def test_the_thread_choice_runs_the_faster_version_and_explores_the_other_ever_more_rarely():
    from startups_env.startups.numba_runtime import ThreadChoice

    choice = ThreadChoice()
    # Each version measured first, threaded first; the first call of each is not counted.
    assert _drive(choice, 4, threaded_ms=4.0) == [True, True, False, False]
    assert choice.cost == [0.002 / 1000, 0.004 / 1000]
    picks = _drive(choice, 4000, threaded_ms=4.0)  # the serial version is faster here: a busy machine
    runs = _runs(picks, True)
    assert all(length == ThreadChoice.RUN for _, length in runs), "the other version runs RUN calls at a time"
    waits = [b - (a + length) for (a, length), (b, _) in zip(runs, runs[1:])]  # (calls from one run's end to the next)
    assert waits[:5] == [128, 256, 512, 1024, 1024], "each run that confirms the choice makes the next one rarer"
    assert picks.count(True) < 0.01 * len(picks)


def test_the_thread_choice_ignores_a_hiccup_and_follows_a_lasting_change():
    from startups_env.startups.numba_runtime import ThreadChoice

    choice = ThreadChoice()
    _drive(choice, 200, threaded_ms=1.0)  # a quiet machine: the threads pay
    held_up = 2  # two threaded calls in a row that the OS held up
    while held_up:
        threaded = choice.threaded()
        held_up -= threaded
        choice.record(threaded, (50.0 if threaded else 2.0) / 1000, 1000)
    assert choice.cost[1] == pytest.approx(1e-6), "two slow calls in five change nothing"
    assert _drive(choice, 20, threaded_ms=1.0).count(True) >= 20 - ThreadChoice.RUN
    busy = _drive(choice, 200, threaded_ms=4.0)  # the machine fills up: the threaded calls slow down
    assert busy[:10].count(True) <= 4, "a version is judged by its last few calls"
    assert busy.count(True) < 20
    freed = _drive(choice, 2 * ThreadChoice.EXPLORE_MAX, threaded_ms=1.0)  # the machine frees up again
    assert freed[-100:] == [True] * 100
