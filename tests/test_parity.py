"""Parity: the batch simulator against the plain-Python reference (tests/reference.py),
state for state, on many random games.

B games run in lockstep in one Simulator (mixed table sizes 2-7 through ``num_players=``)
beside B ``ReferenceGame``s. Actions are drawn from the reference's legal actions with a
seeded ``random.Random``. After every decision the legal action sets and the full state
(in the reference's ``snapshot()`` format) must be equal; when a round or a game ends, the
scores, 3-point coins, rankings, round chips, flags and rewards must be equal too.

The configurations cycle through standard games, games with a small turn cap (so that
truncation is compared), round games (explicit decks [B, 4, 45]) and capped round games;
the reward scheme advances once per full cycle of the configurations, so the first
``len(CONFIGS) * len(REWARDS)`` batches play every (configuration, scheme) pair (with the
two cycles in lockstep, round games would never have met "win" or "score").

STARTUPS_PARITY_GAMES sets the number of games (default 2000; a round game counts once).
"""

import math
import os
import random

import numpy as np
import pytest
from helpers import INSTALLED_BACKENDS, random_deck, ranking, snapshots
from reference import OPTIONS, ReferenceGame

from startups_env import Rules, Simulator

NUM_GAMES = int(os.environ.get("STARTUPS_PARITY_GAMES", "2000"))
BATCH = 64
# (rounds, turn cap or None for a cap drawn per batch) cycled over the batches.
CONFIGS = [(1, 400), (4, 400), (1, None), (4, None), (1, 400), (1, 400)]
REWARDS = ("win", "rank", "score", "margin")


def _expected_rewards(ref: ReferenceGame, scheme: str) -> list[float]:
    """Terminal rewards from the reference results, written from the Rules docstring."""
    n = ref.num_players
    order = ref.final_ranking
    rank = [order.index(p) for p in range(n)]
    if scheme == "win":
        return [1.0 if rank[p] == 0 else -1.0 / (n - 1) for p in range(n)]
    if scheme == "rank":
        return [1.0 - 2.0 * rank[p] / (n - 1) for p in range(n)]
    values = ref.round_points if ref.rounds > 1 else ref.scores
    if scheme == "margin":
        scale = 1.0 if ref.rounds > 1 else 8.0
        return [math.tanh((values[p] - max(values[:p] + values[p + 1:]) + 0.5) / scale) for p in range(n)]
    mean = sum(values) / n
    return [(x - mean) / (1.0 if ref.rounds > 1 else 10.0) for x in values]


def _check_round_results(sim: Simulator, ref: ReferenceGame, g: int) -> None:
    """The simulator's last scored round of game g equals the reference's."""
    s, n = sim.state, ref.num_players
    last = ref.round_results[-1]
    assert s.scores[:n, g].tolist() == last["scores"], f"game {g}: scores"
    assert s.threes[:n, g].tolist() == last["threes"], f"game {g}: threes"
    assert (s.scores[n:, g] == 0).all() and (s.threes[n:, g] == 0).all()
    if ref.rounds > 1:
        assert s.round_points[:n, g].tolist() == ref.round_points, f"game {g}: round points"
        assert s.plus2[:n, g].tolist() == ref.plus2, f"game {g}: +2 chips"
        assert s.plus1[:n, g].tolist() == ref.plus1, f"game {g}: +1 chips"
    if not ref.done:  # between rounds the ranks are the round's ranking
        assert ranking(s.ranks[:, g]) == last["ranking"], f"game {g}: round ranking"


def run_parity_batch(sim: Simulator, rounds: int, turn_cap: int, rng: random.Random) -> int:
    """Play one batch of random games in ``sim`` and beside it in the reference; returns the
    number of decisions compared."""
    b = sim.batch_size
    players = [rng.randint(2, 7) for _ in range(b)]
    decks = [[random_deck(rng) for _ in range(rounds)] for _ in range(b)]
    options = [name for name in OPTIONS if getattr(sim.rules, name)]
    refs = [ReferenceGame(n, d, rounds=rounds, turn_cap=turn_cap, options=options) for n, d in zip(players, decks)]
    sim_decks = np.array(decks) if rounds > 1 else np.array([d[0] for d in decks])
    sim.reset(decks=sim_decks, num_players=np.array(players))
    scheme = sim.rules.reward
    decisions = 0
    rounds_seen = [0] * b
    while True:
        snaps = snapshots(sim.state, rounds)
        mask = sim.legal_mask()
        actions = np.zeros(b, np.int64)
        for g, ref in enumerate(refs):
            assert snaps[g] == ref.snapshot(), f"game {g} (players {players[g]}, decision {decisions}): state differs"
            legal = ref.legal_actions()
            assert np.flatnonzero(mask[g]).tolist() == legal, f"game {g}: legal actions differ"
            if legal:
                actions[g] = rng.choice(legal)
        np.testing.assert_array_equal(sim.done, [ref.done for ref in refs])
        # The per-company coin totals kept beside the ring buffers agree with the cards.
        np.testing.assert_array_equal(sim.state.market_coins.T, [[sum(m) for m in x["market"]] for x in snaps])
        if all(ref.done for ref in refs):
            break
        result = sim.step(actions)
        decisions += 1
        for g, ref in enumerate(refs):
            if ref.done:
                continue  # finished before this step: the simulator ignored action 0
            ref.step(int(actions[g]))
            n = ref.num_players
            if len(ref.round_results) > rounds_seen[g]:
                rounds_seen[g] = len(ref.round_results)
                _check_round_results(sim, ref, g)
            ending = ref.done
            assert result.terminated[g] == (ending and not ref.truncated), f"game {g}: terminated flag"
            assert result.truncated[g] == (ending and ref.truncated), f"game {g}: truncated flag"
            if ending:
                assert result.scores[g, :n].tolist() == ref.scores, f"game {g}: reported scores"
                assert ranking(result.ranks[g]) == ref.final_ranking, f"game {g}: reported ranking"
                assert ranking(sim.state.ranks[:, g]) == ref.final_ranking
                np.testing.assert_allclose(result.rewards[g, :n], _expected_rewards(ref, scheme), atol=1e-6)
                assert (result.rewards[g, n:] == 0).all()
            else:
                assert (result.rewards[g] == 0).all() and (result.scores[g] == 0).all()
                assert (result.ranks[g] == -1).all()
    for g, ref in enumerate(refs):
        assert rounds_seen[g] == rounds
        assert sim.state.terminated[g] == (not ref.truncated) and sim.state.truncated[g] == ref.truncated
    return decisions


@pytest.mark.parametrize("backend", INSTALLED_BACKENDS)
def test_parity_random_games(backend):
    rng = random.Random(20240601)
    sims = {}
    played = batches = decisions = 0
    outcomes = {"terminated": 0, "truncated": 0}
    pairs = set()
    while played < NUM_GAMES:
        config = batches % len(CONFIGS)
        rounds, cap = CONFIGS[config]
        if cap is None:
            cap = rng.randint(3, 60)  # random play needs ~70 turns: many games truncate
        # The scheme moves on after each cycle of the configurations: every pair occurs.
        scheme = REWARDS[(batches // len(CONFIGS)) % len(REWARDS)]
        pairs.add((config, scheme))
        rules = Rules(num_players=4, rounds=rounds, turn_cap=cap, reward=scheme)
        size = min(BATCH, NUM_GAMES - played)
        key = (rules, size)
        if key not in sims:  # reuse simulators across batches: reset must clear everything
            sims[key] = Simulator(rules, size, seed=batches, backend=backend)
        sim = sims[key]
        decisions += run_parity_batch(sim, rounds, cap, rng)
        outcomes["terminated"] += int(sim.state.terminated.sum())
        outcomes["truncated"] += int(sim.state.truncated.sum())
        played += size
        batches += 1
    assert played == NUM_GAMES
    print(f"parity: {played} games, {batches} batches, {decisions} lockstep decisions, {outcomes}")
    # Both kinds of ending were compared (unless only a handful of games were asked for).
    if NUM_GAMES >= 6 * BATCH:
        assert outcomes["terminated"] > 0 and outcomes["truncated"] > 0, outcomes
    # Every configuration met every reward scheme (the default number of games suffices).
    if NUM_GAMES >= len(CONFIGS) * len(REWARDS) * BATCH:
        assert len(pairs) == len(CONFIGS) * len(REWARDS), sorted(pairs)


@pytest.mark.parametrize("backend", INSTALLED_BACKENDS)
@pytest.mark.parametrize("players", [2, 7])
def test_parity_single_table_size(players, backend):
    """One table size for the whole batch (num_players from Rules, no array)."""
    rng = random.Random(players)
    sim = Simulator(Rules(num_players=players), 16, seed=0, backend=backend)
    b = sim.batch_size
    decks = [random_deck(rng) for _ in range(b)]
    refs = [ReferenceGame(players, [d]) for d in decks]
    sim.reset(decks=np.array(decks))
    while not all(ref.done for ref in refs):
        actions = np.zeros(b, np.int64)
        for g, ref in enumerate(refs):
            if not ref.done:
                actions[g] = rng.choice(ref.legal_actions())
                ref.step(int(actions[g]))
        sim.step(actions)
        assert snapshots(sim.state) == [ref.snapshot() for ref in refs]
    for g, ref in enumerate(refs):
        assert sim.state.scores[:players, g].tolist() == ref.scores
        assert sim.state.threes[:players, g].tolist() == ref.threes
        assert ranking(sim.state.ranks[:, g]) == ref.ranking


RULESETS = [*OPTIONS, "summary"]


@pytest.mark.parametrize("backend", INSTALLED_BACKENDS)
@pytest.mark.parametrize("ruleset", RULESETS)
def test_parity_other_rulesets(ruleset, backend):
    """Each option of play, and the summary's ruleset, state for state against the
    reference: standard games, capped games and round games, every reward scheme."""
    rng = random.Random(ruleset)
    games = max(NUM_GAMES // 4, 2 * BATCH)
    played = batches = 0
    while played < games:
        rounds, cap = CONFIGS[batches % len(CONFIGS)]
        cap = rng.randint(3, 60) if cap is None else cap
        rules = Rules.preset(ruleset, rounds=rounds, turn_cap=cap, reward=REWARDS[batches % len(REWARDS)])
        size = min(BATCH, games - played)
        run_parity_batch(Simulator(rules, size, seed=batches, backend=backend), rounds, cap, rng)
        played += size
        batches += 1
