"""The games the table, the arena, the ladder and the trainer can seat bots at, by name.

Each game package describes itself with one :class:`startups_env.game.Game`; this is the
one place that lists them (:func:`register` adds one from outside the package).
"""

from __future__ import annotations

from startups_env.game import Game
from startups_env.startap.game import GAME as STARTAP
from startups_env.startups.game import GAME as STARTUPS

GAMES: dict[str, Game] = {game.name: game for game in (STARTUPS, STARTAP)}
DEFAULT_GAME = STARTUPS.name


def register(game: Game) -> Game:
    """Add ``game`` to :data:`GAMES`, so that every tool that takes ``game=`` (``--game``)
    plays it; returns it. ValueError for anything but a :class:`Game`, or a name another
    game has."""
    if not isinstance(game, Game):
        raise ValueError(f"register takes a startups_env.game.Game, got {type(game).__name__}")
    if GAMES.get(game.name, game) is not game:
        raise ValueError(f"a game called {game.name!r} is registered already")
    GAMES[game.name] = game
    return game


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
