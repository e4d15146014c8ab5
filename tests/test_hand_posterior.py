"""The search's enumerated hand reading: every composition of an other seat's hidden cards,
weighed exactly, and worlds drawn from the seats' posteriors with the weight that makes
them follow the joint one."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from startups_env.agents.search import (
    COMPOSITION_VALID,
    COMPOSITIONS,
    MAX_COMPOSITIONS,
    SearchAgent,
    determinize,
    hidden_hand_counts,
    inference,
    sample_hands,
    search_backend,
    seat_log_likelihoods,
)
from startups_env.agents.search.worlds import _resample
from test_agents import _greedy_games_with_log

from startups_env import Rules
from startups_env.startups.rules import COMPANY_SIZES, HAND_SIZE, MAX_PLAYERS
from startups_env.startups.state import public_state

C = len(COMPANY_SIZES)
SAMPLES = 200_000  # worlds drawn per case
FASTEST = search_backend()  # the search's steps on the fastest installed backend


def test_compositions_are_every_way_to_hold_k_cards_once():
    for k in range(HAND_SIZE + 1):
        valid = COMPOSITIONS[k][COMPOSITION_VALID[k]]
        assert (valid.sum(axis=1) == k).all() and (valid >= 0).all()
        assert len({tuple(row) for row in valid}) == len(valid)
        assert len(valid) == len(list(itertools.combinations_with_replacement(range(C), k)))
    assert MAX_COMPOSITIONS == 56


def _joint_prior(pool, hands):
    """The chance that hands (a list of count vectors) are dealt, in seat order, from pool
    (cards drawn uniformly without replacement), by brute-force product of chances."""
    left = pool.astype(float).copy()
    prob = 1.0
    for hand in hands:
        # multivariate hypergeometric, as the product of choose(left_c, h_c) / choose(total, k)
        from math import comb
        total = int(left.sum())
        num = np.prod([comb(int(left[c]), int(hand[c])) for c in range(C)])
        prob *= num / comb(total, int(hand.sum()))
        left -= hand
        if (left < 0).any():
            return 0.0
    return prob


@pytest.mark.parametrize("needs", [(2, 3), (3, 3, 1), (1, 0, 2)])
def test_sampled_hands_weighted_follow_the_joint_posterior(needs):
    """Draw each seat's hand from its own posterior (its separate deal times a likelihood),
    weight by the joint deal against the separate ones, resample: the worlds' hands follow
    P(h_1, ..., h_k) ~ joint deal * prod L_s(h_s), enumerated here by brute force, where
    the pool is small enough that the seats compete for cards."""
    rng = np.random.default_rng(0)
    pool = np.array([2, 1, 3, 0, 1, 2])
    seats = list(range(1, 1 + len(needs)))
    need = np.zeros((MAX_PLAYERS, 1), np.int64)
    need[seats, 0] = needs
    likelihood = rng.normal(0.0, 1.5, (MAX_PLAYERS, 1, MAX_COMPOSITIONS))
    log_deal = np.full((MAX_PLAYERS, 1, MAX_COMPOSITIONS), -np.inf)
    for s in seats:
        k = need[s, 0]
        for j in np.flatnonzero(COMPOSITION_VALID[k]):
            p = _joint_prior(pool, [COMPOSITIONS[k, j]])
            log_deal[s, 0, j] = np.log(p) if p > 0 else -np.inf
    posterior = log_deal + likelihood

    exact = {}
    choices = [np.flatnonzero(COMPOSITION_VALID[need[s, 0]]) for s in seats]
    for combo in itertools.product(*choices):
        hands = [COMPOSITIONS[need[s, 0], j] for s, j in zip(seats, combo)]
        p = _joint_prior(pool, hands)
        if p > 0:
            exact[tuple(combo)] = p * np.exp(sum(likelihood[s, 0, j] for s, j in zip(seats, combo)))
    total = sum(exact.values())

    count = SAMPLES
    hands, log_w = sample_hands(posterior, log_deal, need, pool[:, None], np.array([count]), rng, FASTEST)
    rows = _resample(log_w, np.zeros(count, np.intp), np.array([count]), rng)
    # Every seat's mean hand and every pair of seats' mean product of counts, against the
    # exact ones: the coupling of the seats (through the pool) shows in both.
    exact_hands = np.zeros((len(seats), C))
    exact_pairs = np.zeros((len(seats), len(seats), C, C))
    for combo, weight in exact.items():
        held = np.stack([COMPOSITIONS[need[s, 0], j] for s, j in zip(seats, combo)])
        exact_hands += weight / total * held
        exact_pairs += weight / total * held[:, None, :, None] * held[None, :, None, :]
    held = hands[seats][:, :, rows].astype(float)  # [k, C, count]
    assert (held.sum(axis=0) <= pool[:, None]).all()  # no world holds more cards than the pool
    assert np.abs(held.mean(axis=2) - exact_hands).max() < 0.03  # (Monte-Carlo error about 0.01; without the weight, 0.07 to 0.34)
    pairs = np.einsum("scr,tdr->stcd", held, held) / count
    assert np.abs(pairs - exact_pairs).max() < 0.03


def _weighted_uniform_deals(bot, public, seat, log, logged, count, rng):
    """The reading the enumeration replaces, as a reference: hands dealt uniformly from the
    unseen pool, each world weighted by the chance of the seats' latest put-downs under the
    bot's opponent model; the adaptive model's belief from the worlds' mean chances.
    Returns (worlds, game, log_weights, belief)."""
    game = np.repeat(np.arange(public.batch_size), count)
    config = bot.config
    worlds = determinize(public, seat, count, rng, search_backend("numpy"))
    greedy, uniform = seat_log_likelihoods(worlds, log, game, logged, config.greedy, config.inference_temperature,
                                           bot.rules, FASTEST)
    if config.opponent_model != "adaptive":
        return worlds.hand, game, greedy.sum(axis=0), None
    prior_odds = np.log(config.greedy_prior / (1 - config.greedy_prior)) + inference.older_put_down_evidence(
        log, public, seat, config.greedy, config.inference_temperature, bot.rules, None, FASTEST)
    prior, other = -np.logaddexp(0.0, -prior_odds), -np.logaddexp(0.0, prior_odds)
    weights = np.logaddexp(prior[:, game] + greedy, other[:, game] + uniform).sum(axis=0)
    starts = np.flatnonzero(np.r_[True, game[1:] != game[:-1]])
    per_model = [np.logaddexp.reduceat(x, starts, axis=1) for x in (greedy, uniform)]
    belief = np.where(logged, 1.0 / (1.0 + np.exp(-(prior_odds + per_model[0] - per_model[1]))), config.greedy_prior)
    return worlds.hand, game, weights, belief.T


@pytest.mark.parametrize("model", ["greedy", "adaptive"])
def test_enumerated_hand_reading_agrees_with_weighted_uniform_deals(model, monkeypatch):
    """The search's enumerated reading and weighted uniform deals estimate the same
    posterior: on greedy games mid-round, the mean hidden hand of each other seat, and the
    adaptive model's belief that it plays greedy, agree within Monte-Carlo error."""
    rules = Rules(num_players=4)
    sim, log, _ = _greedy_games_with_log(4, 6, seed=21, turns=30)
    state = sim.state
    live = np.flatnonzero(~state.done & (state.phase == 0))[:4]
    truth, view = state.take(live), log.take(live)
    seat = truth.current.astype(np.intp)
    public = public_state(truth, seat)
    logged = view.valid(public) & (np.arange(MAX_PLAYERS)[:, None] != seat[None, :])
    assert logged.any(axis=0).all()
    n = live.size
    count = np.full(n, 6000)
    # Both readings see the same evidence from the older put-downs (its own draws).
    evidence = inference.older_put_down_evidence
    monkeypatch.setattr(inference, "older_put_down_evidence",
                        lambda *args, **kw: evidence(*args[:6], np.random.default_rng(0), *args[7:], **kw))
    # (A soft model: at a sharp one few of the uniform deals carry weight, and their
    # Monte-Carlo error swamps the comparison.)
    bot = SearchAgent(seed=3, opponent_model=model, determinizations=6000, inference_oversample=1, rules=rules,
                      inference_temperature=0.5)
    pool = bot._hand_hypotheses(public, seat, count, view)
    readings = [(pool.hands + public.hand[:, :, pool.game], pool.game, pool.log_weights, pool.greedy_belief),
                _weighted_uniform_deals(bot, public, seat, view, logged, count, np.random.default_rng(4))]
    means = []
    for hands, game, log_weights, _ in readings:
        w = np.exp(log_weights - np.max(log_weights))
        hidden = hands.astype(float) - public.hand.astype(float)[:, :, game]  # [P, C, m]
        means.append(np.stack([(hidden[:, :, game == g] * w[game == g]).sum(axis=2) / w[game == g].sum()
                               for g in range(n)], axis=-1))  # [P, C, n]
    assert np.allclose(means[0].sum(axis=1), hidden_hand_counts(public, seat))
    assert np.abs(means[0] - means[1]).max() < 0.2  # (Monte-Carlo error up to about 0.1; a flat prior: 0.34+)
    if model == "adaptive":
        assert np.abs(readings[0][3] - readings[1][3]).max() < 0.1


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_determinize_deals_around_the_hands_it_is_given(backend):
    """determinize(hands=...) adds the given hidden cards to the other hands and deals only
    the rest of the unseen cards (into the pile and the removed cards); given hands that
    the pool cannot hold, or hands for the seat itself, are refused."""
    if backend == "numba":
        pytest.importorskip("numba")
    sim, log, _ = _greedy_games_with_log(4, 4, seed=2, turns=12)
    state = sim.state
    seat = state.current.astype(np.intp)
    public = public_state(state, seat)
    need = hidden_hand_counts(public, seat)
    hands = np.zeros((MAX_PLAYERS, C, 4), np.int64)
    hands[:, :, :] = (state.hand - state.known)  # the true hidden cards
    hands[seat, :, np.arange(4)] = 0
    hands[4:] = 0
    assert np.array_equal(hands.sum(axis=1), need)
    worlds = determinize(public, seat, 1, np.random.default_rng(0), search_backend(backend), hands=hands)
    assert np.array_equal(worlds.hand, state.hand)
    counts = [np.bincount(worlds.deck[worlds.deck[:, g] >= 0, g], minlength=C) for g in range(4)]
    truth = [np.bincount(state.deck[(np.arange(45) < 5) | (np.arange(45) >= state.pile_pos[g]), g], minlength=C)
             for g in range(4)]
    assert np.array_equal(counts, truth)  # the hidden deck holds exactly the cards no hand does
    too_many = hands.copy()
    too_many[:, :, 0] = 0
    for other in range(1, 4):  # 3 cards of the five-card company in each other hand
        too_many[(seat[0] + other) % 4, 0, 0] = 3
    with pytest.raises(ValueError, match="more cards of a company than the unseen pool"):
        determinize(public, seat, 1, np.random.default_rng(0), search_backend("numpy"), hands=too_many)
    too_many[(seat[0] + 1) % 4, :, 0] = 10
    with pytest.raises(ValueError, match="counts of 0..3"):
        determinize(public, seat, 1, np.random.default_rng(0), search_backend("numpy"), hands=too_many)
    own = hands.copy()
    own[seat[1], 0, 1] = 1
    with pytest.raises(ValueError, match="other seated seats"):
        determinize(public, seat, 1, np.random.default_rng(0), search_backend("numpy"), hands=own)
