"""*Стартап* as the shared tools see it: :data:`GAME` (a :class:`startups_env.game.Game`)."""

from __future__ import annotations

import numpy as np

from startups_env.game import Game
from startups_env.startap.observe import OBS_DIM, PIECES, input_scale, observation_bounds, observe
from startups_env.startap.render import table_text
from startups_env.startap.rules import MAX_PLAYERS, MIN_PLAYERS, NUM_ACTIONS, TURN_CAP, WIN_COINS, Rules, action_to_string
from startups_env.startap.simulator import Simulator, shuffled_decks

#: The one ruleset of Стартап, by the name tools take (``--rules``): its rules as
#: docs/startap.md gives them.
RULESETS = ("rulebook",)


def make_rules(num_players: int, ruleset: str | None = None, **settings) -> Rules:
    """The :class:`Rules` of a table of ``num_players`` (settings: ``reward``, ``turn_cap``)."""
    if ruleset not in (None, *RULESETS):
        raise ValueError(f"Стартап has one ruleset, {RULESETS[0]!r}; got {ruleset!r}")
    unknown = sorted(set(settings) - {"reward", "turn_cap"})
    if unknown:
        raise ValueError(f"Стартап has no setting {', '.join(unknown)} (its settings: reward, turn_cap)")
    return Rules(num_players=num_players, **settings)


def make_simulator(rules: Rules, batch_size: int, seed=None, decks=None, num_players=None) -> Simulator:
    """A :class:`Simulator` of ``batch_size`` games at ``rules``, dealt from ``decks`` if given
    (``num_players``: int[B] table sizes, default the rules')."""
    sim = Simulator(batch_size, num_players=num_players, seed=seed, rules=rules)
    if decks is not None:
        sim.reset(decks=decks)
    return sim


def deal_decks(rng: np.random.Generator, count: int, rules: Rules) -> dict[str, np.ndarray]:
    """The three decks of ``count`` deals (:func:`startups_env.startap.simulator.shuffled_decks`)."""
    return shuffled_decks(rng, count)


def progress(state, rules: Rules) -> np.ndarray:
    """float[B]: how far each game is played, 0 to 1: the best coins against the win line
    or the turns against the cap, whichever is further (1 once over)."""
    coins = state.coins.max(axis=1) / WIN_COINS
    turns = state.turn / TURN_CAP
    return np.where(state.done, 1.0, np.clip(np.maximum(coins, turns), 0.0, 0.99))


def outcome(state) -> dict:
    """The results of finished games, by game and seat: ranks (0 = winner, -1 for empty
    seats), coins as the score, whether the turn cap ended them, and the turns played."""
    return {"ranks": state.ranks.copy(), "scores": np.where(state.ranks >= 0, state.coins, 0),
            "truncated": state.truncated.copy(), "turns": state.turn + 1}


#: The hidden cards of one kind: (the hands' field, the deck's field, the deck's next card).
HIDDEN_CARDS = (("project_hand", "project_deck", "project_next"),
                ("opportunity_hand", "opportunity_deck", "opportunity_next"))


def deal_hidden(state, seat, rng: np.random.Generator):
    """A copy of ``state`` with what ``seat`` (int[B]) cannot see dealt again at random,
    consistently with what it can: the other seats' project and opportunity hands (each
    keeps its size) and the undrawn rest of each deck are dealt anew from the cards among
    them, and the undrawn incidents are shuffled. The pool's sealed commitments stay: what
    may be committed depends on coins and the incident, and a seat learns them within the
    same round."""
    seat = np.asarray(seat, np.intp)
    if seat.shape != (state.batch_size,):
        raise ValueError(f"seat must have shape [{state.batch_size}], got {list(seat.shape)}")
    world = state.copy()
    for g in range(world.batch_size):
        others = [p for p in range(int(world.num_players[g])) if p != seat[g]]
        for hand_field, deck_field, next_field in HIDDEN_CARDS:
            hands, deck, start = getattr(world, hand_field)[g], getattr(world, deck_field)[g], int(getattr(world, next_field)[g])
            held = [np.flatnonzero(hands[p]) for p in others]
            pool = rng.permutation(np.concatenate([*held, deck[start:]]).astype(np.intp))
            for p, cards in zip(others, held):
                hands[p] = False
                hands[p, pool[:cards.size]] = True
                pool = pool[cards.size:]
            deck[start:] = pool
        start = int(world.incident_next[g])
        world.incident_deck[g, start:] = rng.permutation(world.incident_deck[g, start:])
    return world


def public_state(state, seat):
    """What ``seat`` (int[B]) may know of ``state``, as a State: every card it cannot see
    (the other hands, the undrawn decks, the undrawn incidents) put in one canonical order,
    the cards of each kind sorted, the other hands filled in seat order, the rest in the
    deck; the hand sizes stay. It is a function of what the seat sees alone; a search deals
    the hidden cards again from it (:func:`deal_hidden`)."""
    seat = np.asarray(seat, np.intp)
    world = state.copy()
    for g in range(world.batch_size):
        others = [p for p in range(int(world.num_players[g])) if p != seat[g]]
        for hand_field, deck_field, next_field in HIDDEN_CARDS:
            hands, deck, start = getattr(world, hand_field)[g], getattr(world, deck_field)[g], int(getattr(world, next_field)[g])
            sizes = [int(hands[p].sum()) for p in others]
            pool = np.sort(np.concatenate([*(np.flatnonzero(hands[p]) for p in others), deck[start:]]))
            for p, size in zip(others, sizes):
                hands[p] = False
                hands[p, pool[:size]] = True
                pool = pool[size:]
            deck[start:] = pool
        start = int(world.incident_next[g])
        world.incident_deck[g, start:] = np.sort(world.incident_deck[g, start:])
    return world


def render_text(state, game: int = 0, viewer: int | None = None) -> str:
    """One game of ``state`` as text (:func:`startups_env.startap.render.table_text`)."""
    return table_text(state, game, viewer)


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
    public_state=public_state,
    history=None,
    progress=progress,
    outcome=outcome,
    action_to_string=action_to_string,
    obs_layout=",".join(f"{name}:{size}" for name, size in PIECES),
    input_scale=input_scale,
    rulesets=RULESETS,
    bots={"random": "startups_env.agents.startap_bots:StartapRandomAgent",
          "builder": "startups_env.agents.startap_bots:BuilderAgent",
          "outsourcer": "startups_env.agents.startap_bots:OutsourcerAgent",
          "freerider": "startups_env.agents.startap_bots:FreeriderAgent",
          "search": "startups_env.agents.startap_search:StartapSearchAgent"},
    ladder=(("random", "builder", "outsourcer", "freerider", "search"),
            ("random", "builder", "outsourcer", "freerider")),
    opponents=("random", "builder"),
    deal_hidden=deal_hidden,
    render_text=render_text,
    env="startups_env.envs.startap_aec:env",
    bench="startups_env.agents.startap_bench:main",
    openspiel="startups_env_startap",
)
