"""Bots for *Startups* behind one batch interface, and the arena that ranks them.

``make_agent(name)`` builds ``random``, ``greedy``, ``banker``, the styles ``hoarder``,
``spoiler`` and ``noisy``, ``search`` or ``ppo``
(``ppo:PATH`` for a checkpoint, ``sb3:PATH`` for a MaskablePPO zip, ``module:callable``
for an outside bot; see :mod:`startups_env.agents.registry`);
``python -m startups_env.agents.arena`` plays seat-rotated duplicate tournaments between them.
Every bot is a :class:`startups_env.table.policy.Policy`; the drivers (:mod:`startups_env.table.driver`)
are re-exported here.
"""

from .base import Agent, History, PutDownLog, act_for_seats, play_aec_game
from .registry import AGENT_NAMES, UnknownAgentError, build_agent, make_agent, split_names

__all__ = ["AGENT_NAMES", "Agent", "History", "PutDownLog", "UnknownAgentError", "act_for_seats", "build_agent",
           "make_agent", "play_aec_game", "split_names"]
