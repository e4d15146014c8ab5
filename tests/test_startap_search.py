"""Стартап's search bot (agents/startap_search.py on agents/search/determinized.py) and the
public state it is given (startap/game.py public_state)."""

from __future__ import annotations

import numpy as np
import pytest

from startups_env.agents.arena import run_arena
from startups_env.startap import numba_backend as K
from startups_env.startap import rules as R
from startups_env.startap.game import GAME, deal_hidden, public_state
from startups_env.startap.moves import legal_mask
from startups_env.startap.observe import observe
from startups_env.startap.simulator import Simulator
from startups_env.startap.state import LAYOUT

pytest.importorskip("numba")
from startups_env.agents.startap_search import StartapSearchAgent, play_out_games, rollout_choice  # noqa: E402


def positions(count=24, steps=90, seed=0):
    """A State of random positions of mixed table sizes, none over."""
    sim = Simulator(count, num_players=np.arange(count) % 5 + 2, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        running = ~sim.done
        sim.step(np.where(running, sim.random_actions(rng=rng), 0), active=running)
    return sim.state.take(np.flatnonzero(~sim.done))


def test_the_public_state_depends_only_on_what_the_seat_sees():
    state = positions()
    seat = state.current.astype(np.intp)
    public = public_state(state, seat)
    again = public_state(deal_hidden(state, seat, np.random.default_rng(5)), seat)
    for name in LAYOUT:
        assert np.array_equal(getattr(public, name), getattr(again, name)), name
    assert np.array_equal(observe(public, seat), observe(state, seat))


def test_the_rollout_policy_plays_legal_actions_to_the_end():
    state = positions(seed=1)
    legal = legal_mask(state)
    mask = np.empty((1, R.NUM_ACTIONS), bool)
    for g in range(state.batch_size):
        assert legal[g, rollout_choice(mask, K.arrays(state.take([g])))]
    world = state.copy()
    play_out_games(np.empty((world.batch_size, R.NUM_ACTIONS), bool), K.arrays(world))
    assert world.done.all() and (world.ranks[world.num_players[:, None] > np.arange(6)] >= 0).all()


def test_the_search_plays_at_a_table_and_decides_among_the_legal_actions():
    search = StartapSearchAgent(seed=0, worlds=2, max_candidates=3)
    assert "search" in GAME.bots and "search" in GAME.ladder[0]
    result = run_arena([search, "builder", "random"], 3, 3, seed=2, game="startap", rate=False)
    assert result.games == 3 and result.ranks.shape[0] == 3
    state = positions(count=8, seed=2)
    mask = legal_mask(state)
    seat = state.current.astype(np.intp)
    actions = search.act(observe(state, seat), mask, public=public_state(state, seat))
    assert mask[np.arange(state.batch_size), actions].all()
    with pytest.raises(ValueError, match="public state"):
        search.act(observe(state, seat), mask)


def test_the_search_reports_the_value_of_each_candidate_it_searched():
    """``last_values``: a mean rank reward (-1 to +1) at each searched candidate, NaN at every
    other action and at a forced decision; the action played is the best valued one."""
    search = StartapSearchAgent(seed=0, worlds=2, max_candidates=3)
    state = positions(count=8, seed=4)
    mask = legal_mask(state)
    seat = state.current.astype(np.intp)
    actions = search.act(observe(state, seat), mask, public=public_state(state, seat))
    values = search.last_values
    assert values.shape == mask.shape
    searched = ~np.isnan(values)
    assert not (searched & ~mask).any() and (np.abs(values[searched]) <= 1).all()
    choice = mask.sum(axis=1) > 1
    assert (searched.sum(axis=1)[choice] == np.minimum(mask.sum(axis=1)[choice], 3)).all()
    assert not searched[~choice].any()
    rows = np.flatnonzero(choice)
    assert rows.size >= 4, "most positions have a choice"
    assert (values[rows, actions[rows]] == np.nanmax(values[rows], axis=1)).all()
