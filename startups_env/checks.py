"""Checks of arguments shared by every layer: counts, seats and seeds.

Each raises a ValueError that names what it got; callers check up front, so that bad input
is reported as such and not as a numpy error from deep inside later work.
"""

from __future__ import annotations

import numpy as np


def is_int(value) -> bool:
    """Whether ``value`` is an int or a numpy integer, bools excluded: ``True == 1`` would
    pass any range test meant for a count, a seat or a seed."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def check_seed(seed, *, none_ok: bool = True, sequence_ok: bool = True, generator_ok: bool = False):
    """``seed`` as given (an int as a Python int) if it is one of the accepted kinds, else a
    ValueError naming them: a non-negative int (bools refused: ``True`` is almost always a
    mistake), and where allowed None, a ``numpy.random.SeedSequence`` or a
    ``numpy.random.Generator``. Callers check up front, so that a bad seed is reported as
    such and not as a numpy error from deep inside a later ``reset()``."""
    if ((none_ok and seed is None) or (sequence_ok and isinstance(seed, np.random.SeedSequence))
            or (generator_ok and isinstance(seed, np.random.Generator))):
        return seed
    if is_int(seed) and seed >= 0:
        return int(seed)
    kinds = [kind for kind, ok in (("None", none_ok), ("a non-negative int", True),
                                   ("a numpy.random.SeedSequence", sequence_ok),
                                   ("a numpy.random.Generator", generator_ok)) if ok]
    raise ValueError(f"seed must be {' or '.join(kinds)}, got {seed!r}")


def game_indices(games, batch_size: int) -> np.ndarray:
    """``games`` as intp indices of distinct games of a batch of ``batch_size`` (what every
    simulator's ``reset_games`` takes), or a ValueError naming what it got."""
    idx = np.asarray(games)
    if idx.dtype == bool or not np.issubdtype(idx.dtype, np.integer) or idx.ndim != 1:
        raise ValueError(f"games must be a 1-d int array of game indices, got {games!r}")
    if idx.size and (idx.min() < 0 or idx.max() >= batch_size or np.unique(idx).size != idx.size):
        raise ValueError(f"games must be distinct indices in [0, {batch_size}), got {idx[:10].tolist()}")
    return idx.astype(np.intp)


def active_games(active, batch_size: int) -> np.ndarray:
    """A step's ``active`` as bool[batch_size] (where False, the game waits), or a
    ValueError naming what it got."""
    active = np.asarray(active)
    if active.dtype != bool or active.shape != (batch_size,):
        raise ValueError(f"active must be a bool array of shape [{batch_size}], got {active.dtype} {list(active.shape)}")
    return active
