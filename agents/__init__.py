"""Bots for *Startups* behind one batch interface, and the arena that ranks them.

``make_agent(name)`` builds ``random``, ``greedy``, ``banker``, ``search`` or ``ppo``
(``ppo:PATH`` for a checkpoint); ``python -m startups_env.agents.arena`` plays seat-rotated duplicate
tournaments between them.
"""

from .base import AGENT_NAMES, Agent, PutDownLog, act_for_seats, make_agent, play_aec_game

__all__ = ["AGENT_NAMES", "Agent", "PutDownLog", "act_for_seats", "make_agent", "play_aec_game"]
