"""What a game gives the tools that seat bots at it: the :class:`Game` record.

The table driver, the arena, the ladder, the vector env and the trainer are written once
for every game. Each game package describes itself with one :class:`Game` (for example
``startups_env.startups.game.GAME``); ``startups_env.table.games`` finds it by name
(``--game startups``) or from a simulator. Nothing in those tools names a constant of
one game.

A game's simulator keeps B games in lockstep and offers, like
:class:`startups_env.startups.simulator.Simulator`: ``batch_size``; ``state`` with
``num_players``, ``current`` and ``done`` (int/bool arrays [B]) and ``take(games)``;
``legal_mask()``; ``step(actions, active=None)`` returning a result with ``rewards``
float32[B, max seats], ``terminated``, ``truncated``, ``scores`` and ``ranks``;
``reset(seed=None, *, num_players=None, decks=None)``; ``reset_games(games, *,
num_players=None)``; ``done``; ``rng``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Game:
    """One game as the shared tools see it.

    Attributes:
        name: the name tools take (``--game NAME``).
        title: how people write it.
        min_players, max_players: the table sizes it plays.
        num_actions: the size of its one discrete action space.
        obs_dim: the length of one observation vector.
        privileged_dim: the length of the hidden-information vector an asymmetric critic
            may see in training (0 if the game offers none).
        simulator_type: the class of its batch simulator.
        make_rules(num_players, ruleset=None, **settings): its settings object for one
            table size, under a named ruleset (None: the game's standard rules), with
            other settings such as ``turn_cap`` by name.
        make_simulator(rules, batch_size, seed, decks, num_players=None): a simulator of
            ``batch_size`` games at ``rules``, dealt from ``decks`` (None: shuffled from
            ``seed``), at the table sizes ``num_players`` (int[B]; None: the rules').
        shuffled_decks(rng, count, rules): the cards of ``count`` deals, indexable by deal
            along the first axis (an array, or a dict of such arrays).
        observe(state, seats=None): float32[B, obs_dim], each game from ``seats``
            (default: the seat to act).
        privileged(state, seats): float32[B, privileged_dim], or None.
        observation_bounds(rules, players): (low, high) float32[obs_dim] of the
            observation over the table sizes ``players``.
        public_state(state, seats): the games as ``seats`` may know them, for bots that
            declare ``needs = {"public"}``; None if the game offers none.
        history(batch_size): a record of the games' decisions for bots that declare
            ``needs = {"history"}``; None if the game keeps none.
        progress(state, rules): float[B], how far each game is played, 0 to 1.
        outcome(state): per-game results of finished games, ``ranks``, ``scores`` (int[B,
            max seats], by seat), ``truncated`` bool[B] and ``turns`` int[B].
        action_to_string(action): a readable name of an action id.
        obs_layout: the observation's pieces as ``name:size,...``; a network checkpoint
            records it, so that one trained on another layout is refused.
        input_scale(): float32[obs_dim], what a network multiplies the observation by
            (None: the network's own choice).
        rulesets: the named rulesets ``make_rules`` takes (the first: the standard one).
        bots: its built-in bots by name, each a factory ``f(seed=None, **kwargs)`` of a
            policy, or the ``"module:callable"`` of one (imported when first asked for, so
            that a game's bots may live in a layer above it); ``make_agent(name,
            game=...)`` builds them. *Startups*' bots are the registry's own.
        ladder: (heroes, styles), the bot names of its default ladder.
        opponents: the bots a trainer meets and is evaluated against by default.
        deal_hidden(state, seat, rng): a copy of ``state`` with what ``seat`` (int[B])
            cannot see dealt again at random, consistently with what it can (None: the game
            hides nothing from a seat); the observation of ``seat`` must not change.
        render_text(state, game, viewer): the table of one game as text, as ``viewer``
            (a seat, or None: everything) sees it.
        env: the ``"module:callable"`` of its PettingZoo env factory ``f(num_players=,
            render_mode=)`` ("": the generic env over this record,
            ``startups_env.envs.game_aec``).
        openspiel: the name ``pyspiel.load_game`` knows it by ("": no OpenSpiel game):
            *Startups*' ``"startups"`` (``startups_env.envs.openspiel``), and
            ``"startups_env_<name>"`` for a game served from its record
            (``startups_env.envs.openspiel_games``).
        bench: the ``"module:callable"`` of its figures' command (``main(argv)``) that
            ``python -m startups_env.agents.bench --game NAME`` runs ("": none; *Startups*'
            are the bench's own).
    """

    name: str
    title: str
    min_players: int
    max_players: int
    num_actions: int
    obs_dim: int
    privileged_dim: int
    simulator_type: type
    make_rules: Callable[..., Any]
    make_simulator: Callable[..., Any]
    shuffled_decks: Callable[..., Any]
    observe: Callable[..., np.ndarray]
    privileged: Callable[..., np.ndarray] | None
    observation_bounds: Callable[..., tuple[np.ndarray, np.ndarray]]
    public_state: Callable[..., Any] | None
    history: Callable[[int], Any] | None
    progress: Callable[..., np.ndarray]
    outcome: Callable[..., dict]
    action_to_string: Callable[[int], str]
    obs_layout: str = ""
    input_scale: Callable[[], np.ndarray] | None = None
    rulesets: tuple[str, ...] = ("rulebook",)
    bots: Mapping[str, Any] = field(default_factory=dict)
    ladder: tuple[tuple[str, ...], tuple[str, ...]] = (("random",), ("random",))
    opponents: tuple[str, ...] = ("random",)
    deal_hidden: Callable[..., Any] | None = None
    render_text: Callable[..., str] | None = None
    env: str = ""
    openspiel: str = ""
    bench: str = ""

    @property
    def usual_players(self) -> int:
        """Its usual table size: four, or the nearest size it plays."""
        return min(max(4, self.min_players), self.max_players)

    def default_rules(self, **options):
        """The game's settings at its usual table (:attr:`usual_players`)."""
        return self.make_rules(self.usual_players, **options)

    def check_rules(self, rules):
        """``rules`` if it is this game's settings object, else a ValueError naming both."""
        kind = type(self.default_rules())
        if not isinstance(rules, kind):
            raise ValueError(f"rules must be a {kind.__module__}.{kind.__name__} ({self.title}), "
                             f"got {type(rules).__name__}: {rules!r}")
        return rules


def deal_rows(decks, index):
    """The deals ``index`` (an int array or a slice) of ``decks`` from
    :attr:`Game.shuffled_decks`: an array's rows, or a dict's arrays' rows."""
    if isinstance(decks, dict):
        return {name: rows[index] for name, rows in decks.items()}
    return decks[index]
