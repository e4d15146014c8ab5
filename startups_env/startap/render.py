"""One game of *Стартап* as text: the public table, and the hands a viewer may see."""

from __future__ import annotations

import numpy as np

from startups_env.startap import cards as C
from startups_env.startap.rules import PHASE_NAMES


def table_text(s, game: int = 0, viewer: int | None = None) -> str:
    """The table of game ``game`` of the state ``s``, with the hand of ``viewer`` only
    (None: every hand, as a spectator of a finished game sees them)."""
    g = game
    n = int(s.num_players[g])
    lines = [f"turn {int(s.turn[g]) + 1}, active player_{int(s.active[g])}, "
             f"player_{int(s.current[g])} to act ({PHASE_NAMES[int(s.phase[g])]})"]
    if s.revealed[g] >= 0:
        lines.append(f"offered: {C.PROJECTS[int(s.revealed[g])].name}")
    if s.incident[g] >= 0:
        lines.append(f"incident: {C.INCIDENTS[int(s.incident[g])].title} ({int(s.committed[g])} committed)")
    for k, kind in enumerate(C.LONG_KINDS):
        if s.long_work[g, k].any():
            lines.append(f"on the table: {C.INCIDENT_KINDS[kind]}, work left {s.long_work[g, k].tolist()}")
    for seat in range(n):
        slots = [f"{C.PROJECTS[int(c)].name} {s.slot_work[g, seat, k].tolist()} {int(s.slot_deadline[g, seat, k])}w"
                 for k, c in enumerate(s.slot_card[g, seat]) if c >= 0]
        done = [C.PROJECTS[c].name for c in np.flatnonzero(s.completed_owner[g] == seat)]
        lines.append(f"player_{seat}: {int(s.coins[g, seat])} coins, staff {s.employees[g, seat].tolist()}, "
                     f"failures {int(s.failures[g, seat])}, backup {int(s.backup[g, seat])}/2, "
                     f"in progress {slots}, finished {done}")
    for seat in range(n) if viewer is None else (viewer,):
        hand = [C.PROJECTS[c].name for c in np.flatnonzero(s.project_hand[g, seat])]
        lines.append(f"player_{seat}'s hand: projects {hand}, opportunities "
                     f"{np.flatnonzero(s.opportunity_hand[g, seat]).tolist()}")
    if s.done[g]:
        lines.append(f"over: ranks {s.ranks[g, :n].tolist()}")
    return "\n".join(lines)
