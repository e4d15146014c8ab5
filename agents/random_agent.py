"""The uniform random baseline."""

from __future__ import annotations

import numpy as np

from .base import Agent, check_act_inputs


class RandomAgent(Agent):
    """Plays a uniformly random legal action in every game (its own seeded generator)."""

    name = "random"

    def act(self, obs, mask, public=None):
        _, mask = check_act_inputs(obs, mask)
        return uniform_legal(mask, self.rng)


def uniform_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """int64[B]: one uniformly random legal action per row of bool[B, A] (rows need one)."""
    counts = mask.sum(axis=1)
    pick = (rng.random(mask.shape[0]) * counts).astype(np.int64)  # 0..count-1
    # Index of the (pick+1)-th True of each row.
    return (mask.cumsum(axis=1) <= pick[:, None]).sum(axis=1).astype(np.int64)
