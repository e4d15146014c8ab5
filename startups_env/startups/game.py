"""*Startups* as the shared tools see it: :data:`GAME` (a :class:`startups_env.game.Game`)."""

from __future__ import annotations

import numpy as np

from startups_env.game import Game
from startups_env.startups.history import History
from startups_env.startups.observe import HIDDEN_DIM, OBS_DIM, PIECES, hidden_observation, observation_bounds, observe
from startups_env.startups.rules import DECK_SIZE, MAX_PLAYERS, MIN_PLAYERS, NUM_ACTIONS, RULESETS, Rules, action_to_string, pile_start
from startups_env.startups.simulator import Simulator
from startups_env.startups.render import table_text
from startups_env.startups.state import deal_hidden, public_state, shuffled_decks


def make_rules(num_players: int, ruleset: str | None = None, **settings) -> Rules:
    """The :class:`Rules` of a table of ``num_players`` under ``ruleset`` (a preset name
    such as ``"summary"`` or a list of options, :meth:`Rules.preset`; None: the
    rulebook's) with ``settings`` (other fields of Rules)."""
    return Rules.preset(ruleset or "rulebook", num_players=num_players, **settings)


def make_simulator(rules: Rules, batch_size: int, seed=None, decks=None, num_players=None) -> Simulator:
    """A :class:`Simulator` of ``batch_size`` games at ``rules`` (``num_players``: int[B]
    table sizes, default the rules')."""
    return Simulator(rules, batch_size, seed=seed, decks=decks, num_players=num_players)


def deal_decks(rng: np.random.Generator, count: int, rules: Rules) -> np.ndarray:
    """int8[count, 45] decks (int8[count, rounds, 45] in the round game): one per deal and
    round, so that every seating of a deal sees the same cards in every round."""
    decks = shuffled_decks(rng, count * rules.rounds).reshape(count, rules.rounds, -1)
    return decks[:, 0] if rules.rounds == 1 else decks


def played_share(state, rules: Rules) -> np.ndarray:
    """float[B]: how far each game is played, 0 to 1 (1 once over): its rounds done plus
    the share of this round's pile drawn. Progress bars count these, so that they move
    while a batch whose games all end together is played (a pile empties only by draws,
    so this runs a little ahead of the turns played)."""
    start = pile_start(state.num_players.astype(np.float64))
    drawn = np.clip((state.pile_pos - start) / (DECK_SIZE - start), 0.0, 1.0)
    return np.where(state.done, 1.0, (state.round + drawn) / rules.rounds)


def outcome(state) -> dict:
    """The results of finished games, by game and seat: ranks (0 = winner; the round-game
    ranking in the round game), scores, whether a round reached the turn cap, and the
    turns of the last round."""
    return {"ranks": state.ranks.T, "scores": state.scores.T, "truncated": state.capped.copy(),
            "turns": state.turn.copy()}


def redeal(state, seat, rng: np.random.Generator):
    """A copy of ``state`` with what ``seat`` (int[B]) cannot see dealt again at random
    (:func:`startups_env.startups.state.deal_hidden` of its public state)."""
    seat = np.asarray(seat, np.intp)
    return deal_hidden(public_state(state, seat), seat, rng.random((state.batch_size, DECK_SIZE)))


def render_text(state, game: int = 0, viewer: int | None = None) -> str:
    """One game of ``state`` as text (:func:`startups_env.startups.render.table_text`)."""
    return table_text(state, game=game, viewer=viewer)


GAME = Game(
    name="startups",
    title="Startups",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    num_actions=NUM_ACTIONS,
    obs_dim=OBS_DIM,
    privileged_dim=HIDDEN_DIM,
    simulator_type=Simulator,
    make_rules=make_rules,
    make_simulator=make_simulator,
    shuffled_decks=deal_decks,
    observe=observe,
    privileged=hidden_observation,
    observation_bounds=observation_bounds,
    public_state=public_state,
    history=History,
    progress=played_share,
    outcome=outcome,
    action_to_string=action_to_string,
    obs_layout=",".join(f"{p.name}:{p.size}" for p in PIECES),
    rulesets=tuple(RULESETS),
    ladder=(("random", "greedy", "banker", "hoarder", "spoiler", "noisy", "search"),
            ("random", "greedy", "banker", "hoarder", "spoiler", "noisy")),
    opponents=("random", "greedy"),
    deal_hidden=redeal,
    render_text=render_text,
    env="startups_env.envs.aec:env",
    openspiel="startups",
)
