"""The uniform random baseline."""

from __future__ import annotations

from startups_env.startups import queries
from startups_env.startups.queries import uniform_legal  # (re-exported: its home was here)

from .base import Agent, check_act_inputs

__all__ = ["RandomAgent", "uniform_legal"]


class RandomAgent(Agent):
    """Plays a uniformly random legal action in every game (its own seeded generator)."""

    name = "random"

    def act(self, obs, mask, *, public=None, history=None):
        _, mask = check_act_inputs(obs, mask)
        return queries.uniform_legal(mask, self.rng)
