"""The batch simulator of Стартап equals the readable reference (tests/startap_reference.py)
state for state, on random games at every table size: each step, every field of the state,
the legal mask and the results."""

from __future__ import annotations

import os

import numpy as np
import pytest

from startups_env.startap import rules as R
from startups_env.startap.simulator import Simulator
from startups_env.startap.state import LAYOUT, State

from startap_reference import Game

# 10,000 games per table size with STARTAP_PARITY_GAMES=10000 (about a minute each on one core).
GAMES = int(os.environ.get("STARTAP_PARITY_GAMES", "200"))


SCALARS = ("num_players", "turn", "active", "current", "phase", "main_seat", "revealed", "asked", "incident",
           "committed", "pending", "sold", "played_project", "played_opportunity", "offers", "situation",
           "terminated", "truncated", "project_next", "opportunity_next", "incident_next")


def write_reference(out: State, g: int, game: Game) -> None:
    """Lay the reference game out as game ``g`` of ``out`` (the simulator's fields), which
    must hold the empty game there (``State.empty``, ``State.clear``)."""
    values = vars(game)
    for name in SCALARS:
        getattr(out, name)[g] = values.get(name, game.n)
    if game.offer is not None:
        out.offer_owner[g], out.offer_slot[g], out.offer_specialty[g], out.offer_price[g] = game.offer
    for name in ("project_deck", "opportunity_deck", "incident_deck", "long_work", "features"):
        getattr(out, name)[g] = values[name]
    for card, owner in game.completed_owner.items():
        out.completed_owner[g, card] = owner
    out.commits[g, :game.n] = game.commits
    out.ranks[g, :game.n] = game.ranks
    for i, p in enumerate(game.players):
        for name in ("coins", "hired", "failures", "backup", "employees", "free", "self_free"):
            getattr(out, name)[g, i] = getattr(p, name)
        out.project_hand[g, i, sorted(p.projects)] = True
        out.opportunity_hand[g, i, sorted(p.opportunities)] = True
        for k, slot in enumerate(p.slots):
            if slot is not None:
                out.slot_card[g, i, k], out.slot_work[g, i, k], out.slot_deadline[g, i, k] = slot
        if p.feature is not None:
            out.feature_card[g, i], out.feature_work[g, i] = p.feature


def assert_same(sim: Simulator, expected: State, expected_mask: np.ndarray, step: int) -> None:
    s = sim.state
    for name in LAYOUT:
        got, want = getattr(s, name), getattr(expected, name)
        if not np.array_equal(got, want):
            g = int(np.flatnonzero((got != want).reshape(len(got), -1).any(axis=1))[0])
            raise AssertionError(f"game {g}, step {step}: {name} differs:\nsimulator {got[g].tolist()}\n"
                                 f"reference {want[g].tolist()}")
    mask = sim.legal_mask()
    if not np.array_equal(mask, expected_mask):
        g = int(np.flatnonzero((mask != expected_mask).any(axis=1))[0])
        raise AssertionError(f"game {g}, step {step}: legal actions differ: simulator "
                             f"{np.flatnonzero(mask[g]).tolist()}, reference {np.flatnonzero(expected_mask[g]).tolist()}")


def play_both(num_players: int, count: int, seed: int) -> int:
    """Play ``count`` random games on both; returns the decisions played."""
    sim = Simulator(count, num_players=num_players, seed=seed)
    s = sim.state
    games = [Game(num_players, s.project_deck[g], s.opportunity_deck[g], s.incident_deck[g]) for g in range(count)]
    expected = State.empty(count)
    expected_mask = np.zeros((count, R.NUM_ACTIONS), bool)
    rng = np.random.default_rng(seed + 1)
    running = changed = np.arange(count)
    decisions = 0
    while running.size:
        expected.clear(changed)
        for g in changed:  # (the games stepped last, those that just ended included)
            write_reference(expected, g, games[g])
            expected_mask[g] = False
            expected_mask[g, games[g].legal()] = True
        assert_same(sim, expected, expected_mask, decisions)
        actions = sim.random_actions(rng=rng)
        result = sim.step(actions)
        for g in running:
            games[g].apply(int(actions[g]))  # (legal: the masks agreed)
            if games[g].done:
                assert result.ranks[g, :num_players].tolist() == games[g].ranks
                assert result.rewards[g].sum() == pytest.approx(0, abs=1e-6)
        decisions += running.size
        changed, running = running, running[~sim.done[running]]
    expected.clear(changed)
    for g in changed:
        write_reference(expected, g, games[g])
    assert_same(sim, expected, np.zeros_like(expected_mask), decisions)
    return decisions


@pytest.mark.parametrize("num_players", range(R.MIN_PLAYERS, R.MAX_PLAYERS + 1))
def test_the_simulator_plays_the_reference_game_state_for_state(num_players):
    for start in range(0, GAMES, 200):
        play_both(num_players, min(200, GAMES - start), seed=1000 * num_players + start)
