"""How this process runs the compiled kernels: numba's threads, started once and set for a
machine that other jobs share, and one line on stderr when a group of kernels compiles.

**The threads.** numba's default threading layer on Linux is GNU OpenMP (``omp``), whose
idle threads spin-wait for the next parallel region before they sleep. Where the machine's
cores are all taken (other jobs, a second copy of this package, Ray workers), the spinning
threads take CPU time from the threads doing work, and each parallel region waits at its
end for a thread that the OS has set aside: the compiled step then ran several times
slower than the numpy one. So the package runs OpenMP with ``OMP_WAIT_POLICY=PASSIVE``
(idle threads sleep at once), set as it is imported
(:func:`startups_env.startups.openmp.openmp_environment`), unless the user set one of
its :data:`~startups_env.startups.openmp.WAIT_SETTINGS`: what the user sets is kept.
Where an OpenMP runtime was loaded before the package (``import torch`` first: numba's
threads then run on torch's OpenMP, which started spinning), :func:`start_threads` puts
numba on another threading layer (``tbb`` where installed, else numba's ``workqueue``),
which does not spin. The measurements behind the choice are in docs/experiments.md
(2026-12-05, the compiled backend on a busy machine).

**The first use.** Kernels compile on their first use, which takes seconds to minutes,
and are then cached on disk beside their source (``cache=True``), so that later processes,
Ray workers included, load them in about a second. :func:`describe_kernels` names a
module's kernels and their compile time; the first time a kernel of that module compiles
in a process, one line on stderr says so (:class:`CompileNotice`). A kernel loaded from
the cache says nothing.
"""

from __future__ import annotations

import sys
import time

import numba
from numba.core import event

from startups_env.startups.openmp import WAIT_POLICY, openmp_environment

#: How to compile every kernel ahead (a cluster image, CI), named in the notice.
PRECOMPILE_COMMAND = "python -m startups_env.agents.precompile"
#: numba's threading layers in the order tried where an OpenMP runtime came before the package.
LAYERS_WITHOUT_SPIN = ["tbb", "workqueue", "omp"]

_started: dict[str, str] = {}


def start_threads() -> dict[str, str]:
    """Start numba's threads, once per process, so that idle threads do not spin (see the
    module docstring). Returns what is in force: ``{"layer": numba's threading layer,
    "threads": how many, "wait": "OMP_WAIT_POLICY=PASSIVE (set by startups_env)", or the
    user's settings, or that the layer does not spin}``.

    Called before anything runs a parallel numba function (numba starts its threads once a
    process); threads started earlier by other code keep the settings they started with."""
    if _started:
        return dict(_started)
    user, openmp_before = openmp_environment()
    moved = not user and openmp_before and numba.config.THREADING_LAYER == "default"
    if moved:
        numba.config.THREADING_LAYER_PRIORITY = list(LAYERS_WITHOUT_SPIN)
    threads = numba.get_num_threads()  # (starts numba's threads)
    layer = str(numba.threading_layer())
    if user:
        wait = " ".join(f"{k}={v}" for k, v in user.items())
    elif moved:
        wait = f"{layer} (an OpenMP runtime was loaded before startups_env, spinning: not used)"
    else:
        wait = f"OMP_WAIT_POLICY={WAIT_POLICY} (set by startups_env)"
    _started.update(layer=layer, threads=str(threads), wait=wait)
    return dict(_started)


class ThreadChoice:
    """Whether a kernel's threaded version pays where it runs, measured as it runs: the
    threaded and the serial version compute the same thing, and which is faster depends on
    the batch, the machine and what else runs on it (on a machine whose cores other jobs
    take, a parallel region waits for a thread the OS set aside). The caller asks
    :meth:`threaded` before each call and reports its time with :meth:`record`; the
    choice is the version with the lower recent time per game, and one call in
    ``EXPLORE`` runs the other version to keep its time current. Results do not depend on
    the choice, only the speed."""

    EXPLORE = 64  # calls per call of the version not chosen
    WEIGHT = 0.5  # of a new time in a version's running average

    __slots__ = ("cost", "calls")

    def __init__(self):
        self.cost = [0.0, 0.0]  # recent seconds per game: serial, threaded (0: not measured yet)
        self.calls = 0

    def threaded(self) -> bool:
        """Whether the next call should run the threaded version."""
        self.calls += 1
        serial, threaded = self.cost
        if not threaded or not serial:
            return not threaded  # (each version measured once first, threaded first)
        return (threaded <= serial) != (self.calls % self.EXPLORE == 0)

    def record(self, threaded: bool, seconds: float, games: int) -> None:
        """A call of the threaded (or serial) version took ``seconds`` over ``games`` games."""
        per_game = seconds / max(games, 1)
        old = self.cost[threaded]
        self.cost[threaded] = per_game if not old else old + self.WEIGHT * (per_game - old)


# --------------------------------------------------------------------------- the first use
_described: dict[str, tuple[str, int]] = {}


def describe_kernels(module: str, what: str, seconds: int) -> None:
    """Name the kernels of ``module`` (its ``__name__``) for the compile notice: ``what``
    they are, and about how many ``seconds`` they take to compile on a small machine."""
    _described[module] = (what, seconds)


def notice_line(module: str) -> str:
    """The line :class:`CompileNotice` writes when a kernel of ``module`` first compiles."""
    what, seconds = _described.get(module, (f"the kernels of {module}", 0))
    expected = f"about {seconds} s" if seconds else "seconds to minutes"
    return (f"startups_env: compiling {what} with numba for their first use here ({expected}, once); "
            f"they are cached on disk, so later runs load them in about a second "
            f"(`{PRECOMPILE_COMMAND}` compiles every kernel ahead)")


class CompileNotice(event.Listener):
    """numba's compile events, heard: the first compile of a kernel of a package module
    (one named by :func:`describe_kernels`, or under ``startups_env``) in this process
    writes :func:`notice_line` to stderr, once per module. Only outermost compiles count
    (a kernel compiles the functions it calls inside its own compile), and a kernel loaded
    from the on-disk cache raises no event. ``compiles`` counts the outermost compiles of
    package kernels, per module, and ``seconds`` sums their wall time."""

    def __init__(self):
        self.depth = 0
        self.compiles: dict[str, int] = {}
        self.seconds: dict[str, float] = {}
        self._started: tuple[str, float] | None = None

    def on_start(self, ev):
        self.depth += 1
        if self.depth > 1:
            return
        module = _module_of(ev.data.get("dispatcher"))
        if module is None:
            return
        if module not in self.compiles:
            print(notice_line(module), file=sys.stderr, flush=True)
        self.compiles[module] = self.compiles.get(module, 0) + 1
        self._started = module, time.perf_counter()

    def on_end(self, ev):
        self.depth -= 1
        if self.depth == 0 and self._started is not None:
            module, start = self._started
            self.seconds[module] = self.seconds.get(module, 0.0) + time.perf_counter() - start
            self._started = None


def _module_of(dispatcher) -> str | None:
    """The package module a compiled function belongs to, or None (not the package's)."""
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    return module if module in _described or module.startswith("startups_env") else None


NOTICE = CompileNotice()
event.register("numba:compile", NOTICE)
