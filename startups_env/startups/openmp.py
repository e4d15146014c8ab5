"""How OpenMP's idle threads wait in this process: set once, as the package is imported.

numba's compiled kernels run their parallel loops on GNU OpenMP (numba's ``omp``
threading layer), whose idle threads spin-wait by default, which made them several
times slower on a machine whose cores other jobs share
(:mod:`startups_env.startups.numba_runtime` says more). This module is imported on the
path of ``import startups_env`` (by :mod:`startups_env.startups.backend`), imports nothing
heavy, and sets the environment before numba or torch can load an OpenMP runtime.
"""

from __future__ import annotations

import functools
import os

#: The environment variables that set how OpenMP's idle threads wait (GNU's and LLVM's /
#: Intel's); where the user set any of them, the package leaves them as they are.
WAIT_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")
#: The wait policy the package sets where the user set none of :data:`WAIT_SETTINGS`.
WAIT_POLICY = "PASSIVE"


@functools.lru_cache(maxsize=1)
def openmp_environment() -> tuple[dict[str, str], bool]:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` in this process's environment unless the user set
    one of :data:`WAIT_SETTINGS`, once, as the package is imported (this module is on the
    path of ``import startups_env``): an OpenMP runtime reads its settings once, when it is
    loaded, and numba runs its threads on the first GNU OpenMP loaded in the process, which
    is torch's own where torch came first. So the variable is set before numba or torch
    loads one, and kept (torch's threads, and child processes, wait passively too).
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
    os.environ["OMP_WAIT_POLICY"] = WAIT_POLICY
    return user, loaded

