"""*Стартап* as the shared tools see it: :data:`GAME` (a :class:`startups_env.game.Game`).

Not yet listed in ``startups_env.table.games``: seating it at the shared table, arena and
trainer is the next step of its integration."""

from __future__ import annotations

import numpy as np

from startups_env.game import Game
from startups_env.startap.observe import OBS_DIM, observe
from startups_env.startap.rules import MAX_PLAYERS, MIN_PLAYERS, NUM_ACTIONS, TURN_CAP, WIN_COINS, Rules, action_to_string
from startups_env.startap.simulator import Simulator, shuffled_decks

OBS_HIGH = 255.0  # every piece is a count, a flag or a number of coins, weeks or turns


def make_rules(num_players: int, **options) -> Rules:
    """The :class:`~startups_env.startap.rules.Rules` of a table of ``num_players`` (the game
    has no options: any is refused)."""
    if options:
        raise ValueError(f"Стартап has no rule options, got {sorted(options)}")
    return Rules(num_players=num_players)


def make_simulator(rules: Rules, batch_size: int, seed=None, decks=None) -> Simulator:
    """A :class:`Simulator` of ``batch_size`` games at ``rules``, dealt from ``decks``
    (None: shuffled from ``seed``)."""
    sim = Simulator(batch_size, num_players=rules.num_players, seed=seed)
    if decks is not None:
        sim.reset(decks=decks)
    return sim


def deal_decks(rng: np.random.Generator, count: int, rules: Rules) -> dict[str, np.ndarray]:
    """``count`` deals: the three decks, each [count, deck size]."""
    return shuffled_decks(rng, count)


def observation_bounds(rules: Rules, players=None) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32[OBS_DIM]: every observation lies in [0, 255]."""
    return np.zeros(OBS_DIM, np.float32), np.full(OBS_DIM, OBS_HIGH, np.float32)


def played_share(state, rules: Rules) -> np.ndarray:
    """float[B]: how far each game is played, 0 to 1 (1 once over): the larger of the share
    of the turn cap played and the richest player's share of the 27 coins that win."""
    turns = state.turn / TURN_CAP
    richest = state.coins.max(axis=1) / WIN_COINS
    return np.where(state.done, 1.0, np.clip(np.maximum(turns, richest), 0.0, 1.0))


def outcome(state) -> dict:
    """The results of finished games, by game and seat: ranks (0 = winner, -1 for empty
    seats), scores (coins), whether the turn cap ended them, and the turns played."""
    return {"ranks": state.ranks.copy(), "scores": np.where(state.ranks >= 0, state.coins, 0),
            "truncated": state.truncated.copy(), "turns": state.turn + 1}


GAME = Game(
    name="startap",
    title="Стартап",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    num_actions=NUM_ACTIONS,
    obs_dim=OBS_DIM,
    privileged_dim=0,
    simulator_type=Simulator,
    make_rules=make_rules,
    make_simulator=make_simulator,
    shuffled_decks=deal_decks,
    observe=observe,
    privileged=None,
    observation_bounds=observation_bounds,
    public_state=None,
    history=None,
    progress=played_share,
    outcome=outcome,
    action_to_string=action_to_string,
)
