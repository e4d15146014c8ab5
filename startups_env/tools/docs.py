"""The environment card's tables, generated from the code (``python -m startups_env.tools.docs``).

docs/api.md embeds this output verbatim and a test checks that it still matches, so the
documented action ids and observation layout cannot drift from the code.
"""

from __future__ import annotations

from startups_env.startups.observe import OBS_DIM, layout_table
from startups_env.startups.rules import (
    COMPANY_TITLES,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_ACTIONS,
    REWARD_SCHEMES,
    Action,
    Rules,
    action_to_string,
)


def action_table() -> str:
    """The 19 canonical actions as a Markdown table."""
    lines = ["| id | name | meaning | phase |", "|---|---|---|---|"]
    for action in range(NUM_ACTIONS):
        name = action_to_string(action)
        if action == Action.DRAW:
            meaning, phase = "draw from the pile, laying 1 coin on each market card of companies whose chip you lack", "take"
        elif action < Action.KEEP:
            meaning, phase = f"take the richest {COMPANY_TITLES[action - Action.TAKE]} card from the market, with its coins", "take"
        elif action < Action.MARKET:
            meaning, phase = f"put one {COMPANY_TITLES[action - Action.KEEP]} card from hand into your portfolio", "put-down"
        else:
            meaning, phase = f"put one {COMPANY_TITLES[action - Action.MARKET]} card from hand into the market", "put-down"
        lines.append(f"| {action} | `{name}` | {meaning} | {phase} |")
    return "\n".join(lines)


def reward_schemes() -> str:
    """Every reward scheme of :data:`~startups_env.startups.rules.REWARD_SCHEMES`, the default marked:
    "`win` (default), `rank`, `score` or `margin`"."""
    names = [f"`{name}`" + (" (default)" if name == Rules().reward else "") for name in REWARD_SCHEMES]
    return ", ".join(names[:-1]) + " or " + names[-1]


def summary_table() -> str:
    """Agents, spaces and import line, PettingZoo-card style."""
    rows = [
        ("Import", "`from startups_env import env`"),
        ("Agents", f"`player_0` ... `player_{{N-1}}`, N = {MIN_PLAYERS}-{MAX_PLAYERS} (2 unofficial)"),
        ("Parallel API", "No (turn-based AEC)"),
        ("Action shape", f"Discrete({NUM_ACTIONS})"),
        ("Observation shape", f'`{{"observation": Box(float32, ({OBS_DIM},)), "action_mask": Box(int8, ({NUM_ACTIONS},))}}`'),
        ("Rewards", "terminal only; " + reward_schemes()),
    ]
    lines = ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines)


def environment_card() -> str:
    """The three generated tables of the environment card, as embedded in docs/api.md."""
    return "\n\n".join([
        summary_table(),
        "**Actions** (the canonical ids of [rules.md](rules.md)):",
        action_table(),
        f"**Observation** ({OBS_DIM} float32 values, seats relative to the observer, padded to 7):",
        layout_table(),
    ])


if __name__ == "__main__":
    print(environment_card())
