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
import importlib
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


#: Whether each backend can run here, and how to make it so.
_INSTALLED = {"numpy": (lambda: True, ""),
              "numba": (lambda: numba_available(), "pip install 'startups-env[fast]' (or pip install numba)")}


def resolve_backend(backend: str | None) -> str:
    """``backend`` checked (None: :func:`default_backend`); a ValueError names the choices,
    and asking for numba where it is not installed says how to install it."""
    if backend is None:
        return default_backend()
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS} or None (the fastest installed), got {backend!r}")
    installed, how = _INSTALLED[backend]
    if not installed():
        raise ValueError(f"backend={backend!r} needs {backend}: {how}")
    return backend


def pick_backend(choices: dict, backend: str | None):
    """``choices[name]`` for the backend that ``backend`` resolves to (checked as
    :func:`resolve_backend` does): the one place a game's engine, the search's operations
    or anything else with a version per backend is chosen. A ``"module:attribute"`` string
    is imported then, so that the compiled version compiles or loads its kernels on first
    use only."""
    chosen = choices[resolve_backend(backend)]
    if isinstance(chosen, str):
        module, attribute = chosen.split(":")
        return getattr(importlib.import_module(module), attribute)
    return chosen


def backend_class(backend: str | None):
    """The class of *Startups*' backend named ``backend`` (:func:`pick_backend`)."""
    return pick_backend({"numpy": "startups_env.startups.numpy_backend:NumpyBackend",
                         "numba": "startups_env.startups.numba_backend:NumbaBackend"}, backend)
