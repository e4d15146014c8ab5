"""How the compiled kernels run: numba's threads wait passively unless the user says
otherwise (in a fresh process, with torch loaded first, and where the user set a wait
policy), the first compile of a group of kernels says so on stderr, and a second process
loads every kernel from the on-disk cache (compiles nothing)."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The OpenMP runtime numba loaded, asked for its settings (GNU's omp_display_env writes
# them to stderr): the one libgomp mapped in the process outside torch's own folder.
_SHOW_NUMBAS_OPENMP = """
import ctypes, sys
libs = sorted({line.split()[-1] for line in open('/proc/self/maps') if 'libgomp' in line and '/torch/' not in line})
if len(libs) != 1 or not hasattr(ctypes.CDLL(libs[0]), 'omp_display_env'):
    print('no GNU OpenMP with omp_display_env', file=sys.stderr, flush=True)
else:
    ctypes.CDLL(libs[0]).omp_display_env(0)
"""


def _run(code: str, **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")}
    result = subprocess.run([sys.executable, "-c", code], cwd=_ROOT, env={**environ, **env}, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return result


def _wait_policy(stderr: str) -> str:
    if "no GNU OpenMP" in stderr:
        pytest.skip("numba runs no GNU OpenMP here (another threading layer, or an older libgomp)")
    line = next(line for line in stderr.splitlines() if line.strip().startswith("OMP_WAIT_POLICY"))
    return line.split("=")[1].strip().strip("'")


@pytest.mark.parametrize("torch_first", [False, True])
def test_numbas_threads_wait_passively_in_a_fresh_process(torch_first):
    """The package starts numba's threads with OMP_WAIT_POLICY=PASSIVE (idle threads sleep
    rather than spin), whatever was imported before it, and leaves the environment as it
    was, so that torch's own OpenMP (loaded before or after) and child processes see no
    change."""
    if torch_first:
        pytest.importorskip("torch")
    code = ("import os\n" + ("import torch\n" if torch_first else "")
            + "from startups_env import Simulator\n"
            "sim = Simulator(num_players=4, batch_size=8, backend='numba')\n"
            "from startups_env.startups import numba_runtime\n"
            "print(numba_runtime.start_threads()['wait'])\n"
            "print('OMP_WAIT_POLICY' in os.environ)\n" + _SHOW_NUMBAS_OPENMP)
    result = _run(code)
    assert result.stdout.splitlines() == ["OMP_WAIT_POLICY=PASSIVE (set by startups_env)", "False"]
    assert _wait_policy(result.stderr) == "PASSIVE"


def test_a_wait_setting_of_the_user_is_kept():
    code = ("from startups_env.startups import numba_runtime\n"
            "print(numba_runtime.start_threads()['wait'])\n" + _SHOW_NUMBAS_OPENMP)
    result = _run(code, OMP_WAIT_POLICY="ACTIVE")
    assert result.stdout.splitlines() == ["OMP_WAIT_POLICY=ACTIVE"]
    assert _wait_policy(result.stderr) == "ACTIVE"
    result = _run(code, GOMP_SPINCOUNT="1000")  # (one knob set: the policy is the runtime's default)
    assert result.stdout.splitlines() == ["GOMP_SPINCOUNT=1000"]


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
