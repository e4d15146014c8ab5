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


def table_rgb(s, game: int = 0, viewer: int | None = None, *, size: int = 14) -> np.ndarray:
    """uint8[H, W, 3]: :func:`table_text` drawn as a picture, a line of text per line, each
    seat's line in its own colour (needs Pillow, the ``train`` extra)."""
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as exc:
        raise ImportError("the rgb_array picture needs Pillow: pip install 'startups-env[train]'") from exc
    try:
        font = ImageFont.load_default(size=size)  # Pillow >= 10.1 with FreeType
    except TypeError:  # older Pillow: a fixed bitmap font
        font = ImageFont.load_default()
    lines = table_text(s, game, viewer).split("\n")
    height = size + 6
    width = 12 + max(int(font.getbbox(line)[2]) for line in lines)
    img = Image.new("RGB", (width, 12 + height * len(lines)), (250, 248, 240))
    draw = ImageDraw.Draw(img)
    for k, line in enumerate(lines):
        seat = line.split(":")[0].split("'")[0]
        hue = SEAT_COLOURS[int(seat[7:]) % len(SEAT_COLOURS)] if seat.startswith("player_") and seat[7:].isdigit() \
            else (30, 30, 30)
        draw.text((6, 6 + k * height), line, fill=hue, font=font)
    return np.asarray(img, dtype=np.uint8)


#: The colour of each seat's lines in :func:`table_rgb`.
SEAT_COLOURS = ((178, 34, 34), (25, 90, 160), (34, 120, 60), (150, 90, 10), (110, 50, 140), (20, 120, 120))
