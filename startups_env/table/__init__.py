"""Seating policies at a table of games: :mod:`.policy` (the protocol every bot follows)
and :mod:`.driver` (:class:`Table`, the one loop that asks each seat's policy and steps
the simulator)."""

from startups_env.table.driver import Table, act_for_seats, play_aec_game
from startups_env.table.policy import Policy, as_policy, needs_of, policy_name

__all__ = ["Policy", "Table", "act_for_seats", "as_policy", "needs_of", "play_aec_game", "policy_name"]
