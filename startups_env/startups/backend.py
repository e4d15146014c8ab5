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

from startups_env.startups.openmp import openmp_environment

BACKENDS = ("numpy", "numba")

openmp_environment()  # (as the package is imported, before numba or torch may load OpenMP)



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
