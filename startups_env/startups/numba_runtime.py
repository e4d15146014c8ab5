"""How this process runs the compiled kernels: numba's threads, started once and set for a
machine that other jobs share, and one line on stderr when a group of kernels compiles.

**The threads.** numba's default threading layer on Linux is GNU OpenMP (``omp``), whose
idle threads spin-wait for the next parallel region before they sleep. Where the machine's
cores are all taken (other jobs, a second copy of this package, Ray workers), the spinning
threads take CPU time from the threads doing work, and each parallel region waits at its
end for a thread that the OS has set aside: the compiled step then ran several times
slower than the numpy one. Two things make it hold up there. The threads spin only
briefly, ``GOMP_SPINCOUNT`` set as the package is imported
(:func:`startups_env.startups.openmp.openmp_environment`), unless the user set one of its
:data:`~startups_env.startups.openmp.WAIT_SETTINGS`: what the user sets is kept. And the
step runs on the threads only where that is measured to pay (:class:`ThreadChoice`).
Where an OpenMP runtime was loaded before the package (``import torch`` first: numba's
threads then run on torch's OpenMP, which started with the long default spin),
:func:`start_threads` puts numba on another threading layer (``tbb`` where installed,
else numba's ``workqueue``). The measurements behind the choice are in
docs/experiments.md (2026-12-05, the compiled backend on a busy machine).

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

from startups_env.startups.openmp import SPIN_COUNT, openmp_environment

#: How to compile every kernel ahead (a cluster image, CI), named in the notice.
PRECOMPILE_COMMAND = "python -m startups_env.agents.precompile"
#: numba's threading layers in the order tried where an OpenMP runtime came before the package.
LAYERS_WITHOUT_SPIN = ["tbb", "workqueue", "omp"]

_started: dict[str, str] = {}


def start_threads() -> dict[str, str]:
    """Start numba's threads, once per process, so that idle threads spin only briefly (see
    the module docstring). Returns what is in force: ``{"layer": numba's threading layer,
    "threads": how many, "wait": "GOMP_SPINCOUNT=30000 (set by startups_env)", or the
    user's settings, or the layer used instead of a spinning OpenMP}``.

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
        wait = f"GOMP_SPINCOUNT={SPIN_COUNT} (set by startups_env)"
    _started.update(layer=layer, threads=str(threads), wait=wait)
    return dict(_started)


class ThreadChoice:
    """Whether a kernel's threaded version pays where it runs, measured as it runs: the
    threaded and the serial version compute the same thing, and which is faster depends on
    the batch, the machine and what else runs on it (on a machine whose cores other jobs
    take, a parallel region waits for a thread the OS set aside). The caller asks
    :meth:`threaded` before each call and reports its time with :meth:`record`; the
    choice is the version with the lower recent time per game, and now and then a run of
    ``RUN`` calls of the other version keeps its time current: ``EXPLORE`` calls after the
    last run, twice as long after each run that confirms the choice, up to ``EXPLORE_MAX``
    (exploring is what costs where the other version is much slower, as threads are on a
    machine whose cores other jobs take). The first call of a run is not counted: it pays
    for what the version's last pause cost (threads that went to sleep, cold caches), which
    the calls after it do not, so a version is judged by how it runs when it is the one
    chosen; and a version's time is the median of its last few calls, so that one call the
    OS held up changes nothing. Results do not depend on the choice, only the speed."""

    EXPLORE = 64  # calls from a run of the version not chosen to the next, at first
    EXPLORE_MAX = 1024  # ... at most: the interval doubles after each run that confirms the choice
    RUN = 3  # calls in a run of the version not chosen (the first not counted)
    RECENT = 5  # a version's time is the median of its last RECENT calls counted (a hiccup moves nothing)

    __slots__ = ("cost", "recent", "calls", "last", "chosen", "interval", "next_run", "run_left", "explored")

    def __init__(self):
        self.cost = [0.0, 0.0]  # recent seconds per game: serial, threaded (0: not measured yet)
        self.recent: tuple[list[float], list[float]] = ([], [])  # the last calls' seconds per game, each version
        self.calls = 0
        self.last: bool | None = None  # the version of the last call recorded (None: none yet)
        self.chosen: bool | None = None  # the version chosen at the last call outside a run
        self.interval = self.EXPLORE
        self.next_run = self.EXPLORE  # the call that starts the next run of the version not chosen
        self.run_left = 0  # calls left in the run under way
        self.explored: bool | None = None  # the version the last run explored, until it is judged

    def threaded(self) -> bool:
        """Whether the next call should run the threaded version."""
        self.calls += 1
        serial, threaded = self.cost
        if not threaded or not serial:
            return not threaded  # (each version measured first, threaded first)
        if self.run_left:
            self.run_left -= 1
            return self.explored
        chosen = threaded <= serial
        if self.explored is not None:  # a run just ended: runs that confirm the choice come rarer
            confirmed = chosen != self.explored
            self.interval = min(2 * self.interval, self.EXPLORE_MAX) if confirmed else self.EXPLORE
            self.next_run, self.explored = self.calls + self.interval, None
        elif chosen != self.chosen:  # the chosen version slowed down: look back at the other one soon
            self.interval, self.next_run = self.EXPLORE, self.calls + self.EXPLORE
        self.chosen = chosen
        if self.calls < self.next_run:
            return chosen
        self.explored, self.run_left = not chosen, self.RUN - 1
        return self.explored

    def run(self, serial, threaded, games: int, *args):
        """Call the version chosen, ``serial(*args)`` or ``threaded(*args)``, over ``games``
        games, timed and recorded; returns what it returns."""
        use = self.threaded()
        started = time.perf_counter()
        result = (threaded if use else serial)(*args)
        self.record(use, time.perf_counter() - started, games)
        return result

    def record(self, threaded: bool, seconds: float, games: int) -> None:
        """A call of the threaded (or serial) version took ``seconds`` over ``games`` games
        (not counted where the call before it ran the other version: see the class)."""
        first_of_run, self.last = threaded != self.last, threaded
        if first_of_run:
            return
        recent = self.recent[threaded]
        recent.append(seconds / max(games, 1))
        del recent[:-self.RECENT]
        self.cost[threaded] = sorted(recent)[(len(recent) - 1) // 2]


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
