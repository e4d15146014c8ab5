"""The compiled builder (agents/startap_builder_kernel.py) decides as the ``builder`` bot
(agents/startap_bots.py) does, and the search's rollouts play whole games as builders do.
``STARTAP_BUILDER_GAMES`` sets the games per table size (default 20)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from startups_env.agents.startap_bots import BuilderAgent
from startups_env.startap.observe import observe
from startups_env.startap.rules import NUM_ACTIONS
from startups_env.startap.simulator import Simulator

pytest.importorskip("numba")
from startups_env.agents.startap_builder_kernel import builder_actions  # noqa: E402
from startups_env.agents.startap_search import play_out_games  # noqa: E402
from startups_env.startap import numba_backend as K  # noqa: E402

GAMES = int(os.environ.get("STARTAP_BUILDER_GAMES", "20"))


def compiled(state, mask) -> np.ndarray:
    out = np.empty(state.batch_size, np.int64)
    builder_actions(mask, K.arrays(state), out)
    return out


@pytest.mark.parametrize("builders", [0.0, 0.5, 1.0])
def test_the_compiled_builder_picks_the_bots_action_in_every_position(builders):
    """Positions of games where each decision is the builder's with chance ``builders``, else
    uniformly random, at table sizes 2-6: the same action as the bot at every one."""
    count = GAMES * 5
    sim = Simulator(count, num_players=np.arange(count) % 5 + 2, seed=int(builders * 10) + 1)
    rng, bot = np.random.default_rng(3), BuilderAgent(seed=0)
    positions, phases = 0, set()
    while not sim.done.all():
        running = np.flatnonzero(~sim.done)
        mask = sim.legal_mask()
        state = sim.state.take(running)
        reference = bot.act(observe(state), mask[running])
        assert np.array_equal(compiled(state, mask[running]), reference), positions
        positions += running.size
        phases |= set(state.phase.tolist())
        actions = np.zeros(count, np.int64)
        actions[running] = np.where(rng.random(running.size) < builders, reference,
                                    sim.random_actions(mask[running], rng=rng))
        sim.step(actions, active=~sim.done)
    assert positions > 100 * count and len(phases) == (5 if builders == 1 else 8)  # (builders never offer work
    # or play a situation: no price, answer or target)


def test_the_rollouts_play_the_games_that_builders_play():
    """From positions of random play, the search's compiled rollout ends each game exactly
    where four builder bots at the table end it."""
    count = 30
    sim = Simulator(count, num_players=np.arange(count) % 5 + 2, seed=7)
    rng = np.random.default_rng(1)
    for _ in range(40):
        sim.step(sim.random_actions(rng=rng), active=~sim.done)
    start = sim.state.take(np.flatnonzero(~sim.done))
    rolled = start.copy()
    play_out_games(np.empty((rolled.batch_size, NUM_ACTIONS), bool), K.arrays(rolled))
    table = Simulator(start.batch_size, seed=0)
    table.state = start.copy()
    bot = BuilderAgent(seed=0)
    while not table.done.all():
        running = np.flatnonzero(~table.done)
        actions = np.zeros(start.batch_size, np.int64)
        actions[running] = bot.act(observe(table.state.take(running)), table.legal_mask()[running])
        table.step(actions, active=~table.done)
    for name in ("ranks", "place", "coins", "turn", "failures", "completed_owner", "terminated", "truncated"):
        assert np.array_equal(getattr(rolled, name), getattr(table.state, name)), name
