"""How OpenMP's idle threads wait in this process: set once, as the package is imported.

numba's compiled kernels run their parallel loops on GNU OpenMP (numba's ``omp``
threading layer), whose idle threads spin-wait after each parallel region, by default
300,000 turns (about 4 ms here) before they sleep. Spinning that long took the CPU of
other jobs on a machine whose cores they share, and made the compiled step several times
slower there; sleeping at once (``OMP_WAIT_POLICY=PASSIVE``) cost a quiet machine a
quarter of its speed at 4,096 games, since every step then waits for its threads to wake.
So the package sets a short spin, :data:`SPIN_COUNT` turns (about 0.3 ms): longer than the
gap between two steps of a batch loop, so that a loop's threads stay awake while it runs,
and short enough that a paused program's threads soon sleep. Where other jobs take the
cores, the threads are not used at all
(:class:`startups_env.startups.numba_runtime.ThreadChoice`). The measurements are in
docs/experiments.md (2026-12-05, the compiled backend on a busy machine).

This module is imported on the path of ``import startups_env`` (by
:mod:`startups_env.startups.backend`), imports nothing heavy, and sets the environment
before numba or torch can load an OpenMP runtime.
"""

from __future__ import annotations

import functools
import os

#: The environment variables that set how OpenMP's idle threads wait (GNU's and LLVM's /
#: Intel's); where the user set any of them, the package leaves them as they are.
WAIT_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")
#: GNU OpenMP's spin before an idle thread sleeps, as the package sets it where the user set
#: none of :data:`WAIT_SETTINGS`. (LLVM's and Intel's runtimes, which read ``KMP_BLOCKTIME``,
#: are left at their defaults: numba's ``omp`` layer is built on GNU's.)
SPIN_COUNT = "30000"


@functools.lru_cache(maxsize=1)
def openmp_environment() -> tuple[dict[str, str], bool]:
    """Set ``GOMP_SPINCOUNT`` to :data:`SPIN_COUNT` in this process's environment unless the
    user set one of :data:`WAIT_SETTINGS`, once, as the package is imported (this module is
    on the path of ``import startups_env``): an OpenMP runtime reads its settings once, when
    it is loaded, and numba runs its threads on the first GNU OpenMP loaded in the process,
    which is torch's own where torch came first. So the variable is set before numba or torch
    loads one, and kept (torch's threads, and child processes, spin as briefly).
    Returns (the user's wait settings, whether an OpenMP runtime was loaded before this
    ran: then its threads, and numba's if they run on it, spin as they started).
    :mod:`startups_env.startups.numba_runtime` starts numba's threads accordingly."""
    user = {name: os.environ[name] for name in WAIT_SETTINGS if name in os.environ}
    if user:
        return user, False
    try:
        with open("/proc/self/maps") as f:  # (Linux: the libraries mapped into this process)
            loaded = any("libgomp" in line or "libomp" in line or "libiomp" in line for line in f)
    except OSError:
        loaded = False
    os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT
    return user, loaded
