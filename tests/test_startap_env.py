"""Стартап's PettingZoo env (api_test, seed_test, errors), its observation (no hidden hand,
deck or sealed commitment leaks) and the simulator's errors on bad input."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from startups_env.envs.startap_aec import env
from startups_env.startap import rules as R
from startups_env.startap.observe import OBS_DIM, observe
from startups_env.startap.simulator import Simulator
from startups_env.startap.state import LAYOUT, P, State

from helpers import INSTALLED_BACKENDS


@pytest.mark.filterwarnings("ignore:Observation")
@pytest.mark.parametrize("num_players", [2, 4, 6])
def test_api_test(num_players):
    api_test(env(num_players=num_players), num_cycles=1000)


def test_seed_test():
    seed_test(lambda: env(num_players=3), num_cycles=300)


def test_a_whole_game_ends_with_zero_sum_rewards_and_infos():
    e = env(num_players=3)
    e.reset(seed=3)
    totals = dict.fromkeys(e.possible_agents, 0.0)
    infos = {}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        infos[agent] = info
        assert obs["observation"].shape == (OBS_DIM,) and obs["observation"].min() >= 0
        e.step(None if term or trunc else e.action_space(agent).sample(obs["action_mask"]))
    assert sum(totals.values()) == pytest.approx(0) and max(totals.values()) == 1.0
    assert sorted(info["rank"] for info in infos.values()) == [0, 1, 2]


def test_a_player_out_after_three_failures_terminates_at_once_and_leaves_the_agents():
    """PettingZoo's elimination: the agent's termination and reward come on the step that
    puts it out, it leaves ``agents`` once stepped with None, the others play on."""
    for seed in range(40):
        e = env(num_players=4)
        e.reset(seed=seed)
        totals, left = dict.fromkeys(e.possible_agents, 0.0), []
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            totals[agent] += reward
            if term and info.get("eliminated") and not e.unwrapped.sim.done[0]:
                assert reward == pytest.approx(-1 / 3) and not obs["action_mask"].any()
                left.append(agent)
                e.step(None)
                assert agent not in e.agents and len(e.agents) == 4 - len(left)
                continue
            e.step(None if term or trunc else e.action_space(agent).sample(obs["action_mask"]))
        if left:
            assert sum(totals.values()) == pytest.approx(0)
            assert all(e.unwrapped.sim.state.ranks[0, int(a[-1])] >= 4 - len(left) for a in left)
            return
    pytest.fail("no random game put a player out before its end")


def test_the_env_refuses_bad_actions_and_leaves_the_game_unchanged():
    e = env(num_players=2)
    e.reset(seed=0)
    before = e.unwrapped.sim.state.copy()
    for bad, match in ((R.TAKE, "illegal action"), (-1, "integer id"), (R.NUM_ACTIONS, "integer id"),
                       ("x", "integer id"), (True, "integer id")):
        with pytest.raises(ValueError, match=match):
            e.step(bad)
    after = e.unwrapped.sim.state
    assert all(np.array_equal(getattr(before, n), getattr(after, n)) for n in LAYOUT)
    with pytest.raises(ValueError, match="num_players"):
        env(num_players=7)


def random_states(num_players: int, count: int = 64, seed: int = 0) -> State:
    """Positions from random play: every phase occurs."""
    sim = Simulator(count, num_players=num_players, seed=seed)
    states = []
    for _ in range(60):
        sim.step(sim.random_actions())
        states.append(sim.state.take(np.flatnonzero(~sim.done)))
    whole = State.empty(sum(s.batch_size for s in states))
    whole.put(np.arange(whole.batch_size), _concat(states))
    return whole


def _concat(states):
    return State(**{name: np.concatenate([getattr(s, name) for s in states]) for name in LAYOUT})


def reshuffle_hidden(s: State, observer: np.ndarray, rng) -> State:
    """The same positions with what ``observer`` cannot see dealt again at random: the
    other players' hands (sizes kept) and the undrawn cards, and the pool's commitments."""
    t = s.copy()
    for g in range(t.batch_size):
        n, o = int(t.num_players[g]), int(observer[g])
        others = [seat for seat in range(n) if seat != o]
        for hand, deck, following in ((t.project_hand, t.project_deck, t.project_next),
                                      (t.opportunity_hand, t.opportunity_deck, t.opportunity_next)):
            unseen = np.concatenate([np.flatnonzero(hand[g, others].any(axis=0)), deck[g, following[g]:]])
            rng.shuffle(unseen)
            sizes = hand[g, others].sum(axis=1)
            hand[g, others] = False
            for seat, cards in zip(others, np.split(unseen[:sizes.sum()], np.cumsum(sizes)[:-1])):
                hand[g, seat, cards] = True
            deck[g, following[g]:] = unseen[sizes.sum():]
        t.incident_deck[g, t.incident_next[g]:] = rng.permutation(t.incident_deck[g, t.incident_next[g]:])
        t.commits[g, others] = rng.integers(0, R.MAX_COMMIT + 1, len(others))
    return t


@pytest.mark.parametrize("num_players", [2, 5])
def test_no_hidden_hand_deck_or_sealed_commitment_reaches_an_observation(num_players):
    s = random_states(num_players)
    rng = np.random.default_rng(1)
    assert (s.phase == R.COMMIT).any() and (s.commits.sum(axis=1) > 0).any()
    for rel in range(num_players):
        observer = ((s.current + rel) % s.num_players).astype(np.intp)
        other = reshuffle_hidden(s, observer, rng)
        changed = [name for name in LAYOUT if not np.array_equal(getattr(s, name), getattr(other, name))]
        assert {"project_hand", "opportunity_hand", "project_deck"} <= set(changed)
        np.testing.assert_array_equal(observe(s, observer), observe(other, observer))


def test_the_own_hand_is_observed():
    s = random_states(3)
    t = s.copy()
    t.project_hand[:, :, :] = False
    holding = s.project_hand[np.arange(s.batch_size), s.current].any(axis=1)
    assert holding.mean() > 0.5
    assert (observe(s) != observe(t)).any(axis=1)[holding].all()


@pytest.mark.parametrize("field", ["taken_by", "project_discard", "opportunity_open"])
def test_the_public_history_is_observed_by_every_seat(field):
    """The converse of the leak test for the history a player at the table remembers: who
    took each revealed project, the discarded projects, the opportunities played face up."""
    s = random_states(4)
    rows = np.flatnonzero((getattr(s, field) != LAYOUT[field][2]).any(axis=1))
    assert rows.size > s.batch_size // 4
    t = s.copy()
    getattr(t, field)[:] = LAYOUT[field][2]
    for rel in range(4):
        observer = ((s.current + rel) % s.num_players).astype(np.intp)
        assert (observe(s, observer) != observe(t, observer)).any(axis=1)[rows].all()


def test_observations_stay_in_the_env_space():
    s = random_states(6)
    obs = observe(s)
    space = env(num_players=6).observation_space("player_0")["observation"]
    assert obs.shape[1] == OBS_DIM and obs.min() >= space.low.min() and obs.max() <= space.high.max()


# ---------------------------------------------------------------- the simulator's errors
@pytest.mark.parametrize("kwargs, match", [({"batch_size": 0}, "batch_size"), ({"num_players": 7}, "num_players"),
                                           ({"num_players": [2, 3, 4]}, "num_players"), ({"seed": "x"}, "seed")])
def test_the_simulator_refuses_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Simulator(**{"batch_size": 2, **kwargs})


@pytest.mark.parametrize("actions, active, match", [
    (np.zeros(3, np.int64), None, "shape"), (np.zeros(2, float), None, "integers"),
    (np.array([R.NUM_ACTIONS, 0]), None, "out of range"), (np.array([R.TAKE, R.TAKE]), None, "illegal"),
    (np.array([R.DONE, R.DONE]), np.ones(3, bool), "active")])
@pytest.mark.parametrize("backend", INSTALLED_BACKENDS)
def test_a_bad_step_raises_and_changes_no_game(actions, active, match, backend):
    sim = Simulator(2, num_players=3, seed=0, backend=backend)
    before, mask = sim.state.copy(), sim.legal_mask()
    with pytest.raises(ValueError, match=match):
        sim.step(actions, active=active)
    assert all(np.array_equal(getattr(before, n), getattr(sim.state, n)) for n in LAYOUT)
    assert np.array_equal(sim.legal_mask(), mask)


def test_reset_checks_decks_and_games():
    sim = Simulator(2, num_players=3, seed=0)
    with pytest.raises(ValueError, match="decks"):
        sim.reset(decks={"project_deck": np.zeros((2, 29), int)})
    with pytest.raises(ValueError, match="distinct"):
        sim.reset_games([0, 0])


def test_the_same_seed_deals_and_plays_the_same_games_and_reset_games_touches_only_those():
    a, b = Simulator(8, num_players=4, seed=5), Simulator(8, num_players=4, seed=5)
    for _ in range(40):
        a.step(a.random_actions())
        b.step(b.random_actions())
    assert all(np.array_equal(getattr(a.state, n), getattr(b.state, n)) for n in LAYOUT)
    kept = a.state.take([1, 2])
    a.reset_games(np.array([0, 3]), num_players=np.array([2, 6]))
    assert a.state.num_players[[0, 3]].tolist() == [2, 6] and a.state.turn[[0, 3]].tolist() == [0, 0]
    assert all(np.array_equal(getattr(kept, n), getattr(a.state.take([1, 2]), n)) for n in LAYOUT)


def test_the_driver_surface():
    sim = Simulator(4, num_players=np.array([2, 3, 5, 6]), seed=2)
    s = sim.state
    assert s.num_players.tolist() == [2, 3, 5, 6] and s.current.shape == (4,) and not sim.done.any()
    while not sim.done.all():
        result = sim.step(sim.random_actions(), active=np.array([True, True, False, True]))
        if sim.done[[0, 1, 3]].all():
            break
    assert result.rewards.shape == (4, P) and sim.state.turn[2] == 0
    assert sim.rewards(np.array([0])).shape == (P, 1)
