"""The bots' base class (agents are built by name in :mod:`startups_env.agents.registry`,
which no bot imports).

An :class:`Agent` is a :class:`startups_env.table.policy.Policy` (the protocol every driver
uses) with its own seeded generator: it picks one legal action in each of B games at once
from what its player may know, the observation vector (``startups_env.startups.observe``) and,
where it declares them in ``needs``, the :func:`startups_env.startups.state.public_state` (bots
that sample hidden information: search) and the table's
:class:`startups_env.startups.history.History`. Agents never receive a full
:class:`~startups_env.startups.state.State`, so they cannot peek at hidden cards.

The drivers live in the library: :class:`startups_env.table.driver.Table` (and
:func:`~startups_env.table.driver.act_for_seats`, one step of one) for batches,
:func:`~startups_env.table.driver.play_aec_game` for one PettingZoo game; both are re-exported
here.
"""

from __future__ import annotations

import numpy as np

from startups_env.checks import check_seed
from startups_env.startups.history import History, PutDownLog
from startups_env.table.driver import act_for_seats, play_aec_game
from startups_env.table.policy import Policy, check_act_inputs

__all__ = ["Agent", "History", "PutDownLog", "act_for_seats", "check_act_inputs", "play_aec_game"]


class Agent(Policy):
    """A bot: a :class:`~startups_env.table.policy.Policy` with its own seeded generator.

    Attributes:
        name: a short display name (the arena prints it).
        needs: what :meth:`act` must be given besides obs and mask (see
            :mod:`startups_env.table.policy`): ``"public"`` for
            ``public=startups_env.startups.state.public_state(state, seats)``, ``"history"`` for the
            table's :class:`~startups_env.startups.history.History` of the same games.
        rng: the agent's generator (agents never use global random state).

    ``act(obs, mask)`` also takes one game as the PettingZoo env gives it, obs[D] and an
    int8 mask[19] (see :func:`startups_env.table.policy.check_act_inputs`), and returns int64[1].
    """

    name: str = "agent"

    def __init__(self, seed=None):
        """seed: None, a non-negative int, a ``numpy.random.SeedSequence`` or a
        ``numpy.random.Generator`` (used as it is, not copied)."""
        self.rng = np.random.default_rng(check_seed(seed, generator_ok=True))

    def seed(self, seed=None) -> None:
        """Reseed the agent's own generator; ``seed`` as for the constructor."""
        self.rng = np.random.default_rng(check_seed(seed, generator_ok=True))
