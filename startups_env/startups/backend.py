"""The backends of the rules, and the one place that picks one.

A backend is a class whose instances apply the rules to the games of one
:class:`~startups_env.startups.simulator.Simulator`: :class:`~.numpy_backend.NumpyBackend`
(whole-batch numpy, the reference) or :class:`~.numba_backend.NumbaBackend` (compiled,
game by game, proven equal to it). The simulator resolves its ``backend=`` argument here,
once, and from then on every caller (the env, the search, the bench) uses the object it
holds (``sim.engine``) or asks the simulator.
"""

from __future__ import annotations

import functools
import importlib.util
import os

BACKENDS = ("numpy", "numba")

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


openmp_environment()


@functools.lru_cache(maxsize=1)
def numba_available() -> bool:
    """Whether the compiled backend can run here (numba is installed; looked up once)."""
    return importlib.util.find_spec("numba") is not None


def default_backend() -> str:
    """The fastest installed backend: ``"numba"`` where numba is installed, else ``"numpy"``."""
    return "numba" if numba_available() else "numpy"


def resolve_backend(backend: str | None) -> str:
    """``backend`` checked (None: :func:`default_backend`); a ValueError names the choices,
    and asking for numba where it is not installed says how to install it."""
    if backend is None:
        return default_backend()
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS} or None (the fastest installed), got {backend!r}")
    if backend == "numba" and not numba_available():
        raise ValueError("backend='numba' needs numba: pip install 'startups-env[fast]' (or pip install numba)")
    return backend


def backend_class(backend: str | None):
    """The class of the backend named ``backend`` (checked as :func:`resolve_backend` does),
    imported on first use: the compiled one compiles or loads its kernels then."""
    name = resolve_backend(backend)
    if name == "numba":
        from startups_env.startups.numba_backend import NumbaBackend

        return NumbaBackend
    from startups_env.startups.numpy_backend import NumpyBackend

    return NumpyBackend
