"""The modules' old paths, kept for one release: ``import startups_env.core`` (and the
others of :data:`MOVED`) still works, with a FutureWarning naming the new home.

Until release 0.2 the package was one flat folder. An old path is served by a module that
looks each name up in its new homes, so that old imports keep the very same objects (one
``State`` class, not two); ``python -m startups_env.bench`` and the other old commands run
the new module's code.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

# old module -> its new homes, looked up in this order
MOVED = {
    "core": ("startups_env.startups.simulator", "startups_env.startups.state", "startups_env.checks"),
    "rules": ("startups_env.startups.rules",),
    "queries": ("startups_env.startups.queries",),
    "kernels": ("startups_env.startups.numba_backend",),
    "observe": ("startups_env.startups.observe",),
    "observe_kernel": ("startups_env.startups.numba_backend",),
    "history": ("startups_env.startups.history",),
    "render": ("startups_env.startups.render",),
    "aec": ("startups_env.envs.aec",),
    "vector": ("startups_env.envs.vector",),
    "wrappers": ("startups_env.envs.wrappers",),
    "policy": ("startups_env.table.policy",),
    "replay": ("startups_env.tools.replay",),
    "distributed": ("startups_env.tools.distributed",),
    "docs": ("startups_env.tools.docs",),
    "files": ("startups_env.tools.files",),
    "bench": ("startups_env.agents.bench",),
}
_PREFIX = "startups_env."


class _OldPath(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``startups_env.<old>`` and serves it as a proxy of its new homes."""

    def find_spec(self, fullname, path=None, target=None):
        old = fullname[len(_PREFIX):] if fullname.startswith(_PREFIX) else None
        if old not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        homes = MOVED[spec.name[len(_PREFIX):]]
        warnings.warn(f"{spec.name} has moved to {homes[0]}; the old path goes in release 0.3",
                      FutureWarning, stacklevel=2)
        module = types.ModuleType(spec.name, f"Moved to {homes[0]}.")

        def lookup(name):
            for home in homes:
                found = importlib.import_module(home)
                if hasattr(found, name):
                    return getattr(found, name)
            raise AttributeError(f"module {spec.name!r} (moved to {homes[0]}) has no attribute {name!r}")

        module.__getattr__ = lookup
        return module

    def exec_module(self, module):
        pass

    def get_code(self, fullname):
        """The new module's code, for ``python -m`` on an old path."""
        spec = importlib.util.find_spec(MOVED[fullname[len(_PREFIX):]][0])
        return spec.loader.get_code(spec.name)


def install() -> None:
    """Serve the old paths (once per interpreter)."""
    if not any(isinstance(finder, _OldPath) for finder in sys.meta_path):
        sys.meta_path.append(_OldPath())
