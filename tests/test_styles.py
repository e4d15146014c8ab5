"""The style bots (hoarder, spoiler, noisy): legal play at every table size, seeds, the
style each docstring claims on positions where it shows, and their settings' checks."""

from __future__ import annotations

import numpy as np
import pytest
from startups_env.agents import act_for_seats, make_agent
from startups_env.agents.features import features
from startups_env.agents.greedy import greedy_actions
from startups_env.agents.registry import build_agent
from test_agents import _mask, _obs

from startups_env import Rules, Simulator
from startups_env.startups.observe import observe
from startups_env.startups.rules import NUM_ACTIONS, Action

STYLES = ("hoarder", "spoiler", "noisy")
SPECS = ("hoarder", "spoiler", "noisy", "hoarder[lead_value=3]", "spoiler[reach=0]", "noisy[epsilon=1]")


def _positions(players: int, games: int, seed: int, seats=None):
    """Yield (obs, mask, sim) at every decision of ``games`` games played to the end by
    ``seats`` (default: each style and a random bot in turn), unfinished games only."""
    sim = Simulator(Rules(num_players=players), games, seed=seed)
    pool = [make_agent(name, seed=seed + i) for i, name in enumerate(STYLES + ("random",))]
    seats = seats or [pool[s % len(pool)] for s in range(players)]
    for _ in range(3000):
        if sim.done.all():
            return
        running = ~sim.done
        yield observe(sim.state)[running], sim.legal_mask()[running], sim
        sim.step(act_for_seats(sim, seats))
    raise AssertionError("the games did not end")


@pytest.mark.parametrize("players", range(2, 8))
def test_style_bots_play_only_legal_moves_at_every_table_size(players):
    """Every bot is asked at every position of the games (whoever's turn it is): each answer
    is legal, one int64 per game; the table (which checks its own seats' moves) ends every
    game before the turn cap."""
    bots = [build_agent(spec, seed=players) for spec in SPECS]
    sim = None
    for obs, mask, sim in _positions(players, 32, seed=players):
        for bot in bots:
            actions = bot.act(obs, mask)
            assert actions.dtype == np.int64 and actions.shape == (len(obs),)
            assert mask[np.arange(len(obs)), actions].all(), bot.name
    assert sim is not None and not sim.state.truncated.any()


@pytest.mark.parametrize("name", STYLES)
@pytest.mark.parametrize("players", [3, 6])
def test_a_table_of_one_style_ends_its_games(name, players):
    """Self-play tables are where a style that stalls (passes cards through the market for
    ever) would show: they must end on their own, before the turn cap."""
    sim = Simulator(Rules(num_players=players), 64, seed=players)
    bot = make_agent(name, seed=1)
    while not sim.done.all():
        sim.step(act_for_seats(sim, [bot] * players))
    assert not sim.state.truncated.any()


@pytest.mark.parametrize("spec", SPECS)
def test_style_bots_are_reproducible_under_a_seed(spec):
    states = [(obs, mask) for obs, mask, _ in _positions(4, 16, seed=3)][::7]
    one, two = build_agent(spec, seed=11), build_agent(spec, seed=11)
    first = [one.act(obs, mask) for obs, mask in states]
    assert all(np.array_equal(a, two.act(obs, mask)) for a, (obs, mask) in zip(first, states))
    one.seed(11)
    assert all(np.array_equal(a, one.act(obs, mask)) for a, (obs, mask) in zip(first, states))


# ----------------------------------------------------------------------------- hoarder

@pytest.mark.parametrize("players", [3, 5, 7])
def test_the_hoarder_never_feeds_the_market(players):
    puts = 0
    hoarder = make_agent("hoarder", seed=0)
    for obs, mask, _ in _positions(players, 32, seed=players):
        actions = hoarder.act(obs, mask)
        put = mask[:, Action.KEEP:Action.MARKET].any(axis=1)
        puts += int(put.sum())
        assert (actions[put] >= Action.KEEP).all() and (actions[put] < Action.MARKET).all()
    assert puts > 500


def test_the_hoarder_lays_its_weakest_company_face_up_and_keeps_a_lost_card():
    # A rival shows 5 octo to my 1: every other bot here would market the octo. I lead
    # elephant (3, nobody else); the hoarder lays the octo face up and keeps the elephants.
    obs = _obs(put=True, hand=[(3, 1), (5, 3)], portfolios={(1, 3): 5})
    assert make_agent("hoarder").act(obs, _mask(obs))[0] == Action.KEEP + 3
    assert make_agent("greedy").act(obs, _mask(obs))[0] == Action.MARKET + 3


def test_the_hoarder_takes_a_card_that_gives_it_a_lead_over_a_richer_lost_one():
    # Market: a coinless hippo (I hold 2, a rival shows 2: one more leads) and an octo with
    # 2 coins of a company a rival dominates (5 to my 0). Drawing costs 2 coins.
    obs = _obs(hand=[(4, 2), (0, 1)], portfolios={(1, 4): 2, (1, 3): 5}, market={4: 1, 3: 1},
               take_coins={4: 0, 3: 2})
    assert make_agent("hoarder").act(obs, _mask(obs))[0] == Action.TAKE + 4


# ----------------------------------------------------------------------------- spoiler

def test_the_spoiler_contests_a_clear_leader():
    # A rival shows 3 octo to my 2 (a clear lead, within reach); an octo is in the market
    # without coins, beside a coinless elephant (a company nobody holds). Drawing costs 2.
    # The spoiler takes the octo to catch the leader up; the greedy bot, which values a tie
    # at the coins it saves, does not.
    obs = _obs(hand=[(3, 2), (0, 1)], portfolios={(1, 3): 3}, market={3: 1, 5: 1},
               unseen=(3, 4, 5, 2, 6, 8))
    assert make_agent("spoiler").act(obs, _mask(obs))[0] == Action.TAKE + 3
    assert make_agent("greedy").act(obs, _mask(obs))[0] != Action.TAKE + 3
    # Out of reach (the rival shows 5), the octo is no longer worth taking.
    far = _obs(hand=[(3, 2), (0, 1)], portfolios={(1, 3): 5}, market={3: 1, 5: 1}, unseen=(3, 4, 5, 0, 6, 8))
    assert make_agent("spoiler").act(far, _mask(far))[0] != Action.TAKE + 3
    assert make_agent("spoiler", reach=3).act(far, _mask(far))[0] == Action.TAKE + 3


def test_the_spoiler_lays_a_contested_card_face_up_and_dumps_a_lost_one():
    # Contested: flamingo (rival 3, me 2). Led: elephant (me 2, nobody else). Lost: octo
    # (rival 5, me 1). It markets the octo first; without it, it lays the flamingo face up.
    hand = [(2, 1), (5, 1), (3, 1)]
    portfolios = {(1, 2): 3, (0, 2): 1, (0, 5): 1, (1, 3): 5}
    obs = _obs(put=True, hand=hand, portfolios=portfolios)
    spoiler = make_agent("spoiler")
    assert spoiler.act(obs, _mask(obs))[0] == Action.MARKET + 3
    obs = _obs(put=True, hand=hand[:2] + [(5, 2)], portfolios={k: v for k, v in portfolios.items() if k[1] != 3})
    assert spoiler.act(obs, _mask(obs))[0] == Action.KEEP + 2


def test_the_spoiler_shows_its_widest_lead_where_the_hoarder_shows_its_weakest():
    # Nothing contested: I lead elephant by 3 (nobody else shows one) and hippo by 1.
    obs = _obs(put=True, hand=[(4, 2), (5, 2)], portfolios={(1, 4): 1, (0, 5): 1})
    assert make_agent("spoiler").act(obs, _mask(obs))[0] == Action.KEEP + 5
    assert make_agent("hoarder").act(obs, _mask(obs))[0] == Action.KEEP + 4


# ----------------------------------------------------------------------------- noisy

def test_noisy_at_epsilon_0_is_greedy():
    noisy = make_agent("noisy", seed=5, epsilon=0.0)
    for obs, mask, _ in _positions(5, 24, seed=2):
        assert np.array_equal(noisy.act(obs, mask), greedy_actions(features(obs), mask))


def test_noisy_at_epsilon_1_is_uniform_over_the_legal_moves():
    obs = _obs(hand=[(4, 2), (0, 1)], portfolios={(1, 4): 2}, market={4: 1, 3: 1, 1: 1}, take_coins={4: 3})
    mask = _mask(obs)  # draw and three takes
    legal = np.flatnonzero(mask[0])
    picks = make_agent("noisy", seed=0, epsilon=1.0).act(np.repeat(obs, 20000, 0), np.repeat(mask, 20000, 0))
    counts = np.bincount(picks, minlength=NUM_ACTIONS)
    assert set(np.flatnonzero(counts)) == set(legal)
    assert np.allclose(counts[legal] / 20000, 1 / len(legal), atol=0.015)


def test_noisy_departs_from_greedy_at_the_rate_epsilon_implies():
    """A random move equals greedy's with chance 1/(legal moves): the expected share of
    moves that differ from greedy's is epsilon * (1 - 1/legal)."""
    obs_all, mask_all = zip(*[(obs, mask) for obs, mask, _ in _positions(4, 64, seed=8)])
    obs, mask = np.concatenate(obs_all), np.concatenate(mask_all)
    differ = make_agent("noisy", seed=1, epsilon=0.3).act(obs, mask) != greedy_actions(features(obs), mask)
    expected = 0.3 * (1 - 1 / mask.sum(axis=1)).mean()
    assert abs(differ.mean() - expected) < 4 * np.sqrt(expected / len(obs))


# ----------------------------------------------------------------------------- settings

@pytest.mark.parametrize("spec, message", [
    ("noisy[epsilon=1.5]", "epsilon must be a probability"), ("noisy[epsilon=-0.1]", "epsilon must be a probability"),
    ("noisy[epsilon=nan]", "epsilon"), ("noisy[epsilon=abc]", "epsilon"),
    ("spoiler[reach=-1]", "reach must be >= 0"), ("spoiler[reach=inf]", "reach"),
    ("hoarder[lead_value=abc]", "lead_value"), ("hoarder[no_such=1]", "no_such"),
])
def test_style_settings_are_checked(spec, message):
    with pytest.raises(ValueError, match=message):
        build_agent(spec)


def test_style_specs_carry_their_settings():
    assert build_agent("noisy[epsilon=0.1]").epsilon == 0.1
    assert build_agent("spoiler[reach=2]").reach == 2.0
    assert build_agent("hoarder[lead_value=3]").lead_value == 3.0
    assert [make_agent(name).name for name in STYLES] == list(STYLES)


@pytest.mark.parametrize("name", STYLES)
def test_style_bots_refuse_bad_seeds(name):
    for bad in (-1, 0.5, True):
        with pytest.raises(ValueError, match="seed must be"):
            make_agent(name, seed=bad)
