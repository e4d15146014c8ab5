"""The games the table, the arena, the ladder and the trainer can seat bots at, by name.

Each game package describes itself with one :class:`startups_env.game.Game`; this is the
one place that lists them.
"""

from __future__ import annotations

from startups_env.game import Game
from startups_env.startups.game import GAME as STARTUPS

GAMES: dict[str, Game] = {game.name: game for game in (STARTUPS,)}
DEFAULT_GAME = STARTUPS.name


def game_by_name(name) -> Game:
    """The :class:`Game` called ``name`` (a Game is returned as is); ValueError naming the
    games there are otherwise."""
    if isinstance(name, Game):
        return name
    if not isinstance(name, str) or name.strip().lower() not in GAMES:
        raise ValueError(f"unknown game {name!r}; the games are {', '.join(sorted(GAMES))}")
    return GAMES[name.strip().lower()]


def game_of(sim) -> Game:
    """The :class:`Game` whose simulator ``sim`` is; ValueError for anything else."""
    for game in GAMES.values():
        if isinstance(sim, game.simulator_type):
            return game
    kinds = ", ".join(f"{g.simulator_type.__module__}.{g.simulator_type.__name__}" for g in GAMES.values())
    raise ValueError(f"sim must be the simulator of a game ({kinds}), got {type(sim).__name__}")
