"""The batch simulator of Стартап equals the readable reference (tests/startap_reference.py)
state for state, on random games at every table size: each step, every field of the state,
the legal mask and the results."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest

from startups_env.startap import rules as R
from startups_env.startap.simulator import Simulator
from startups_env.startap.state import LAYOUT, State

from startap_reference import Game

# More games: STARTAP_PARITY_GAMES=N; STARTAP_PARITY_FROM=K starts at the K-th game (games
# come in seeded chunks of 200, so runs from 0 to N and from N to M play different games).
GAMES = int(os.environ.get("STARTAP_PARITY_GAMES", "200"))
FIRST = int(os.environ.get("STARTAP_PARITY_FROM", "0"))


SCALARS = ("num_players", "turn", "active", "current", "phase", "main_seat", "revealed", "asked", "incident",
           "committed", "pending", "sold", "played_project", "played_opportunity", "offers", "situation",
           "terminated", "truncated", "project_next", "opportunity_next", "incident_next")
SIZES = {name: int(np.prod(shape, dtype=np.int64)) for name, (_dtype, shape, _fill) in LAYOUT.items()}
OFFSETS = dict(zip(LAYOUT, np.cumsum([0, *SIZES.values()])[:-1].tolist()))
WIDTH = sum(SIZES.values())


def state_vectors(s: State) -> np.ndarray:
    """int16[B, WIDTH]: every field of each game, flattened in LAYOUT's order."""
    return np.concatenate([getattr(s, name).reshape(s.batch_size, -1).astype(np.int16) for name in LAYOUT], axis=1)


def vectors_state(vectors: np.ndarray) -> State:
    """The State whose state_vectors are ``vectors``."""
    s = State.empty(len(vectors))
    for name, (dtype, shape, _fill) in LAYOUT.items():
        block = vectors[:, OFFSETS[name]:OFFSETS[name] + SIZES[name]]
        setattr(s, name, block.reshape(len(vectors), *shape).astype(dtype))
    return s


def _padded(values: list, fill, width: int = 1, places: int = R.MAX_PLAYERS) -> list:
    """Values of the seated players (each a list of ``width``, or a scalar) padded to
    ``places`` (seats, or seats x slots)."""
    flat = [v for value in values for v in (value if width > 1 else [value])]
    return flat + [fill] * (width * places - len(flat))


def reference_vector(game: Game):
    """The reference game as one row of state_vectors (an iterator of ints)."""
    fields = reference_fields(game)
    return itertools.chain.from_iterable(fields[name] for name in LAYOUT)


def reference_fields(game: Game) -> dict[str, list[int]]:
    """The fields of the reference game as the simulator lays them out, flattened."""
    n, players = game.n, game.players
    values = {name: [int(getattr(game, name, n))] for name in SCALARS}
    offer = game.offer or [-1, -1, -1, 0]
    values.update(offer_owner=[offer[0]], offer_slot=[offer[1]], offer_specialty=[offer[2]], offer_price=[offer[3]])
    for name in ("project_deck", "opportunity_deck", "incident_deck", "features"):
        values[name] = list(getattr(game, name))
    values["long_work"] = [w for row in game.long_work for w in row]
    values["completed_owner"] = [game.completed_owner.get(c, -1) for c in range(len(game.features))]
    values["commits"] = _padded(game.commits, 0)
    values["ranks"] = _padded(game.ranks, -1)
    values["place"] = _padded(game.place, -1)
    values["taken_by"] = list(game.taken_by)
    values["project_discard"] = [int(x) for x in game.project_discard]
    values["opportunity_open"] = [int(x) for x in game.opportunity_open]
    for name in ("coins", "hired", "failures", "backup", "self_free"):
        values[name] = _padded([int(getattr(p, name)) for p in players], 0)
    for name in ("employees", "free"):
        values[name] = _padded([getattr(p, name) for p in players], 0, 4)
    for name, attr, size in (("project_hand", "projects", 29), ("opportunity_hand", "opportunities", 50)):
        row = [0] * (R.MAX_PLAYERS * size)
        for i, p in enumerate(players):
            for c in getattr(p, attr):
                row[i * size + c] = 1
        values[name] = row
    slots = [slot or [-1, [0] * 4, 0] for p in players for slot in p.slots]
    places = R.MAX_PLAYERS * R.SLOTS
    values["slot_card"] = _padded([s[0] for s in slots], -1, places=places)
    values["slot_work"] = _padded([s[1] for s in slots], 0, 4, places)
    values["slot_deadline"] = _padded([s[2] for s in slots], 0, places=places)
    features = [p.feature or [-1, [0] * 4] for p in players]
    values["feature_card"] = _padded([f[0] for f in features], -1)
    values["feature_work"] = _padded([f[1] for f in features], 0, 4)
    return values


def write_reference(out: State, g: int, game: Game) -> None:
    """Lay the reference game out as game ``g`` of ``out`` (the simulator's fields)."""
    out.put([g], vectors_state(reference_vectors([game])))


def reference_vectors(games) -> np.ndarray:
    """int16[len(games), WIDTH]: the reference games as state_vectors."""
    rows = itertools.chain.from_iterable(reference_vector(game) for game in games)
    return np.fromiter(rows, np.int16, count=len(games) * WIDTH).reshape(len(games), WIDTH)


def assert_same(sim: Simulator, games, rows: np.ndarray, expected: np.ndarray, step: int) -> None:
    """The simulator's games ``rows`` hold ``expected`` (reference vectors) and the same legal actions."""
    got = state_vectors(sim.state)[rows]
    if not np.array_equal(got, expected):
        i, column = np.argwhere(got != expected)[0]
        name = next(f for f in reversed(LAYOUT) if OFFSETS[f] <= column)
        raise AssertionError(f"game {rows[i]}, step {step}: {name} differs:\nsimulator {got[i, OFFSETS[name]:][:SIZES[name]]}"
                             f"\nreference {expected[i, OFFSETS[name]:][:SIZES[name]]}")
    mask = sim.legal_mask()
    for g in rows:
        legal = np.flatnonzero(mask[g]).tolist()
        assert legal == games[g].legal(), f"game {g}, step {step}: legal actions differ: {legal} {games[g].legal()}"


def play_both(num_players: int, count: int, seed: int) -> int:
    """Play ``count`` random games on both; returns the decisions played."""
    sim = Simulator(count, num_players=num_players, seed=seed)
    s = sim.state
    games = [Game(num_players, s.project_deck[g], s.opportunity_deck[g], s.incident_deck[g]) for g in range(count)]
    rng = np.random.default_rng(seed + 1)
    running = changed = np.arange(count)
    decisions = 0
    while changed.size:
        # (the games stepped last, those that just ended included)
        expected = reference_vectors([games[g] for g in changed])
        assert_same(sim, games, changed, expected, decisions)
        if not running.size:
            break
        actions = sim.random_actions(rng=rng)
        result = sim.step(actions)
        for g in running:
            games[g].apply(int(actions[g]))  # (legal: the legal actions agreed)
            if games[g].done:
                assert result.ranks[g, :num_players].tolist() == games[g].ranks
                assert result.rewards[g].sum() == pytest.approx(0, abs=1e-6)
        decisions += running.size
        changed, running = running, running[~sim.done[running]]
    return decisions


@pytest.mark.parametrize("num_players", range(R.MIN_PLAYERS, R.MAX_PLAYERS + 1))
def test_the_simulator_plays_the_reference_game_state_for_state(num_players):
    for start in range(FIRST, FIRST + GAMES, 200):
        play_both(num_players, min(200, FIRST + GAMES - start), seed=1000 * num_players + start)
