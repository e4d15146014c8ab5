"""Checks of the pure-Python reference (tests/reference.py).

1. All 300 golden games (scored by an independent reading of docs/rules.md) replay
   legally and give exactly the recorded scores, threes, ranking and turns.
2. Invariants of the reference on random games (cards and coins conserved,
   never stuck without a legal action).
3. The round game runs four rounds; the turn cap truncates.
"""

import json
import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import COMPANY_SIZES, NUM_COMPANIES, ReferenceGame  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "reference_games.jsonl")


def _load_golden():
    with open(GOLDEN) as f:
        return [json.loads(line) for line in f if line.strip()]


GAMES = _load_golden()


@pytest.mark.parametrize("index", range(len(GAMES)))
def test_golden_game(index):
    g = GAMES[index]
    game = ReferenceGame(g["players"], [g["deck"]])
    for k, action in enumerate(g["actions"]):
        assert not game.done, "game ended early at action %d" % k
        assert action in game.legal_actions(), "action %d (#%d) illegal" % (action, k)
        game.step(action)
    assert game.done
    assert not game.truncated
    assert game.legal_actions() == []
    assert game.scores == g["scores"]
    assert game.threes == g["threes"]
    assert game.ranking == g["ranking"]
    assert game.snapshot()["turn"] == g["turns"]


def test_golden_file_has_300_games():
    assert len(GAMES) == 300


# ----- invariants on random games -------------------------------------------------

def _random_deck(rng):
    deck = [c for c in range(NUM_COMPANIES) for _ in range(COMPANY_SIZES[c])]
    rng.shuffle(deck)
    return deck


def _check_invariants(game, n):
    s = game.snapshot()
    # 45 cards: hands + portfolios + market + pile + 5 removed.
    per_company = [0] * NUM_COMPANIES
    for seat in range(n):
        for c in range(NUM_COMPANIES):
            per_company[c] += s["hands"][seat][c] + s["portfolios"][seat][c]
    for c in range(NUM_COMPANIES):
        per_company[c] += len(s["market"][c])
    assert sum(per_company) + s["pile"] + 5 == 45
    for c in range(NUM_COMPANIES):
        assert per_company[c] <= COMPANY_SIZES[c]
    # Coins conserved before scoring.
    market_coins = sum(sum(m) for m in s["market"])
    assert sum(s["coins"]) + market_coins == 10 * n
    assert all(x >= 0 for x in s["coins"])
    # Hand size: 3 before taking, 4 before putting down.
    assert sum(s["hands"][s["current"]]) == 3 + s["phase"]
    # Chips only for companies someone has in a portfolio, held by a top holder.
    for c in range(NUM_COMPANIES):
        holder = s["chips"][c]
        top = max(s["portfolios"][p][c] for p in range(n))
        if holder == -1:
            assert top == 0
        else:
            assert s["portfolios"][holder][c] == top


def _play_random(game, rng, n, check=True):
    steps = 0
    while not game.done:
        legal = game.legal_actions()
        assert legal, "no legal action while not done"
        if check:
            _check_invariants(game, n)
        game.step(rng.choice(legal))
        steps += 1
    assert game.legal_actions() == []
    return steps


@pytest.mark.parametrize("seed", range(40))
def test_random_game_invariants(seed):
    rng = random.Random(seed)
    n = 2 + seed % 6
    game = ReferenceGame(n, [_random_deck(rng)], turn_cap=400)
    _play_random(game, rng, n)
    assert len(game.scores) == n and len(game.threes) == n
    assert sorted(game.ranking) == list(range(n))
    # Scoring moves coins between players only: 3-point coins received equal
    # 1-point coins paid.
    s = game.snapshot()
    paid = sum(s["coins"]) - sum(g - 3 * t for g, t in zip(game.scores, game.threes))
    assert paid == sum(game.threes)


def test_illegal_action_raises_and_keeps_state():
    rng = random.Random(7)
    game = ReferenceGame(4, [_random_deck(rng)])
    before = game.snapshot()
    with pytest.raises(ValueError):
        game.step(7)  # put-down id during the take phase
    assert game.snapshot() == before
    game.step(0)  # empty market: draw is free
    before = game.snapshot()
    with pytest.raises(ValueError):
        game.step(0)
    assert game.snapshot() == before


def test_round_game_four_rounds():
    rng = random.Random(123)
    for n in (2, 3, 5):
        decks = [_random_deck(rng) for _ in range(4)]
        game = ReferenceGame(n, decks, rounds=4, turn_cap=400)
        starters = []
        last_round = -1
        while not game.done:
            s = game.snapshot()
            if s["round"] != last_round:
                last_round = s["round"]
                starters.append(s["current"])
                assert s["coins"] == [10] * n and s["chips"] == [-1] * 6 and s["turn"] == 0
            game.step(rng.choice(game.legal_actions()))
        assert len(game.round_results) == 4
        assert starters[0] == 0
        for r in range(1, 4):  # last-placed player of the previous round starts
            assert starters[r] == game.round_results[r - 1]["ranking"][-1]
        assert sum(game.plus2) == 4 and sum(game.minus1) == 4
        assert sum(game.plus1) == (4 if n >= 3 else 0)
        assert game.round_points == [2 * a + b - c for a, b, c in
                                     zip(game.plus2, game.plus1, game.minus1)]
        assert sorted(game.final_ranking) == list(range(n))
        best = game.final_ranking[0]
        assert game.round_points[best] == max(game.round_points)


def test_turn_cap_truncates():
    rng = random.Random(5)
    game = ReferenceGame(3, [_random_deck(rng)], turn_cap=5)
    while not game.done:
        game.step(rng.choice(game.legal_actions()))
    assert game.truncated
    assert game.snapshot()["turn"] == 5
    assert game.snapshot()["pile"] > 0
    assert game.scores is not None and sorted(game.ranking) == [0, 1, 2]
