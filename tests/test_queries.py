"""The derived public quantities of ``startups_env.startups.queries``, each against an independent,
readable computation, on many random positions at 2-7 players.

The positions come from games played in lockstep in the Simulator and in the plain-Python
reference (tests/reference.py, the oracle that imports nothing of the package): where the
reference keeps the quantity (the draw cost, the coins on the oldest market card, the
chip, the pile, the removed cards, the scores) it is the expectation; elsewhere (the cards
a seat cannot see, relative seats) the expectation is written out below in plain Python by
another route than the library's (counting where the hidden cards are, walking round the
table).
"""

import random

import numpy as np
import pytest
from helpers import random_deck
from reference import ReferenceGame
from startups_env.agents import play
from startups_env.agents.banker import BankerAgent
from startups_env.agents.features import features, state_features
from startups_env.agents.greedy import greedy_scores
from startups_env.agents.random_agent import RandomAgent
from startups_env.agents.search import SearchAgent, determinize, search_backend

from startups_env import Rules, Simulator
from startups_env.envs.vector import SeatBatch, privileged_observation
from startups_env.startups import queries
from startups_env.startups.observe import observe
from startups_env.startups.rules import COMPANY_SIZES, DECK_SIZE, HAND_SIZE, NUM_ACTIONS, NUM_COMPANIES, Action
from startups_env.startups.state import public_state

C = NUM_COMPANIES
BATCH = 40


def _lockstep_positions(seed: int, batch: int = BATCH):
    """Yield (sim, refs, action) before every decision of ``batch`` random games (table sizes
    2-7) played in the Simulator and beside them in the reference, from the same decks;
    ``action`` int[B] is the decision about to be played (-1 in finished games)."""
    rng = random.Random(seed)
    players = [2 + g % 6 for g in range(batch)]
    decks = [random_deck(rng) for _ in range(batch)]
    refs = [ReferenceGame(n, [d]) for n, d in zip(players, decks)]
    sim = Simulator(Rules(), batch, decks=np.array(decks), num_players=np.array(players))
    while not all(ref.done for ref in refs):
        action = np.array([rng.choice(ref.legal_actions()) if not ref.done else -1 for ref in refs])
        yield sim, refs, action
        for ref, a in zip(refs, action):
            if a >= 0:
                ref.step(int(a))
        sim.step(np.maximum(action, 0))


def _positions(seeds=(1, 2, 3)):
    for seed in seeds:
        yield from _lockstep_positions(seed)


def test_draw_cost_and_take_coins_match_the_reference():
    checked = 0
    for sim, refs, _ in _positions():
        s = sim.state
        take = queries.market_take_coins(s)
        for seat in range(7):
            cost = queries.draw_cost(s.market_count, queries.lacks_chip(s.chip, seat))
            for g, ref in enumerate(refs):
                if not ref.done and seat < ref.num_players:
                    assert cost[g] == ref.round.draw_cost(seat), (g, seat)
        for g, ref in enumerate(refs):
            if not ref.done:
                assert take[:, g].tolist() == [m[0] if m else 0 for m in ref.round.market], g
                checked += 1
    assert checked > 5000
    # Many games at once take the other summation (row adds): the same costs.
    sim = Simulator(Rules(), 300, seed=4, num_players=np.arange(300) % 6 + 2)
    for _ in range(60):
        s = sim.state
        lacks = queries.lacks_chip(s.chip, s.current)
        wide = queries.draw_cost(s.market_count, lacks)
        assert wide.shape == (300,)
        narrow = np.concatenate([queries.draw_cost(s.market_count[:, i:i + 10], lacks[:, i:i + 10])
                                 for i in range(0, 300, 10)])
        np.testing.assert_array_equal(wide, narrow)
        np.testing.assert_array_equal(queries.draw_cost(s.market_count.astype(np.float32), lacks), wide)
        sim.step(sim.random_actions())


def test_takes_chip_matches_the_reference():
    """Before every keep, ``takes_chip`` says whether the keeper holds the chip after it,
    as the reference's chip update decides."""
    keeps = 0
    for sim, refs, action in _positions():
        s = sim.state
        for g, (ref, a) in enumerate(zip(refs, action)):
            if not Action.KEEP <= a < Action.MARKET:
                continue
            r, seat, c = ref.round, ref.round.current, int(a) - Action.KEEP
            holder = r.chips[c]
            mine = r.portfolios[seat][c] + 1
            theirs = r.portfolios[holder][c] if holder >= 0 else 0
            expected_holder = ReferenceGame(ref.num_players, ref.decks)  # a scratch copy of the rules
            expected_holder.round.chips = list(r.chips)
            expected_holder.round.portfolios = [list(p) for p in r.portfolios]
            expected_holder.round.portfolios[seat][c] += 1
            expected_holder.round._update_chip(seat, c)
            assert bool(queries.takes_chip(holder, mine, theirs)) == (expected_holder.round.chips[c] == seat)
            # The numpy form on the state agrees with the scalar form.
            assert bool(queries.takes_chip(s.chip[c, g], np.int8(mine), s.portfolio[max(holder, 0), c, g])) == (
                expected_holder.round.chips[c] == seat)
            keeps += 1
    assert keeps > 1000


def test_unseen_counts_the_hidden_cards():
    """What a seat cannot see, counted where those cards are: the other seats' hand cards
    not publicly known to be there, the pile and the removed cards (the reference's)."""
    checked = 0
    for sim, refs, _ in _positions():
        s = sim.state
        for seat in range(7):
            got = queries.unseen(s, np.full(BATCH, seat))
            for g, ref in enumerate(refs):
                r = ref.round
                if ref.done or seat >= ref.num_players:
                    continue
                expected = [0] * C
                for other in range(ref.num_players):
                    if other != seat:
                        for c in range(C):
                            expected[c] += r.hands[other][c] - int(s.known[other, c, g])
                for card in r.pile + r.removed:
                    expected[card] += 1
                assert got[:, g].tolist() == expected, (g, seat)
                checked += 1
    assert checked > 20000


def test_deck_layout_matches_the_reference_deal():
    """REMOVED, HANDS, in_pile and pile_left read the canonical deck as the
    reference deals it: removed cards, then 3 cards a seat, then the pile."""
    for sim, refs, _ in _lockstep_positions(5):
        s = sim.state
        pile = queries.in_pile(s.pile_pos)
        assert pile.shape == (DECK_SIZE, BATCH) and pile.dtype == bool
        left = queries.pile_left(s.pile_pos.astype(np.int16))
        for g, ref in enumerate(refs):
            if ref.done:
                continue
            deck = s.deck[:, g].tolist()
            assert sorted(deck[queries.REMOVED]) == sorted(ref.round.removed)
            assert [deck[i] for i in range(DECK_SIZE) if pile[i, g]] == ref.round.pile
            assert [i for i in range(DECK_SIZE) if pile[i, g]] == list(range(DECK_SIZE - len(ref.round.pile), DECK_SIZE))
            assert left[g] == len(ref.round.pile)
        assert queries.pile_left(45) == 0
    # The dealt hands: seat i's three cards follow the removed ones, in seat order.
    rng = random.Random(0)
    for n in range(2, 8):
        deck = random_deck(rng)
        ref = ReferenceGame(n, [deck])
        hands = np.array(deck)[queries.HANDS].reshape(7, HAND_SIZE)
        for seat in range(n):
            assert np.bincount(hands[seat], minlength=C).tolist() == ref.round.hands[seat]


def test_seats_relative_to_an_observer():
    """Relative seat r is the r-th player met walking round the table from the observer."""
    for n in range(2, 8):
        for seat in range(n):
            walk = list(range(seat, n)) + list(range(seat))
            absolute, present = queries.absolute_seats(np.array([seat]), np.array([n]))
            assert absolute.shape == present.shape == (7, 1)
            assert absolute[:n, 0].tolist() == walk
            assert present[:, 0].tolist() == [True] * n + [False] * (7 - n)
            for r, a in enumerate(walk):
                assert queries.relative_seat(a, seat, n) == r
            np.testing.assert_array_equal(queries.relative_seat(np.array(walk), seat, n), np.arange(n))
    # A batch of mixed tables and observers, row by row.
    rng = np.random.default_rng(0)
    n = rng.integers(2, 8, 500)
    seat = (rng.random(500) * n).astype(np.int8)
    absolute, present = queries.absolute_seats(seat, n.astype(np.int8))
    for g in range(500):
        k, m = int(seat[g]), int(n[g])
        assert absolute[:m, g].tolist() == list(range(k, m)) + list(range(k))
        assert present[:, g].sum() == m


def test_score_margin_and_rank_value_match_the_reference_results():
    games = 0
    for seed in (1, 2, 3):
        for sim, refs, _ in _lockstep_positions(seed):
            pass  # (the generator plays the last decision when it is exhausted)
        s = sim.state
        seated = np.arange(7)[:, None] < s.num_players[None, :]
        for dtype in (np.float32, np.float64):
            margin = queries.score_margin(s.scores.astype(dtype), seated)
            assert margin.dtype == dtype
            value = queries.rank_value(s.ranks.astype(dtype), s.num_players.astype(dtype)[None, :])
            assert value.dtype == dtype
            for g, ref in enumerate(refs):
                n, scores = ref.num_players, ref.scores
                assert ref.done
                expected = [scores[p] - max(scores[:p] + scores[p + 1:]) for p in range(n)]
                assert margin[:n, g].tolist() == expected
                assert (margin[n:, g] == 0).all()
                rank = [ref.final_ranking.index(p) for p in range(n)]
                expected = [1.0 - 2.0 * r / (n - 1) for r in rank]
                if dtype == np.float64:
                    assert value[:n, g].tolist() == expected
                else:  # (computed in float32)
                    np.testing.assert_allclose(value[:n, g], expected, rtol=1e-6)
                games += 1
    assert games == 6 * BATCH


def _python_pick(legal: list[int], u: float) -> int:
    return legal[int(u * len(legal))]


@pytest.mark.parametrize("batch", [5, 32, 33, 400])
def test_legal_choice_picks_the_legal_action_the_uniform_number_points_at(batch):
    """Both summation strategies (a few games, many games) give the k-th legal action for
    k = floor(u * count), in u's precision."""
    rng = np.random.default_rng(batch)
    for _ in range(20):
        rows = rng.random((NUM_ACTIONS, batch)) < rng.random()
        rows[rng.integers(0, NUM_ACTIONS, batch), np.arange(batch)] = True  # at least one legal
        for dtype in (np.float32, np.float64):
            u = rng.random(batch, dtype=dtype)
            choice = queries.legal_choice(rows, u)
            assert choice.dtype == np.int8
            for g in range(batch):
                legal = np.flatnonzero(rows[:, g]).tolist()
                k = int((u[g] * dtype(len(legal))).astype(np.int8))  # the product in u's precision
                assert choice[g] == legal[k]
                assert choice[g] == _python_pick(legal, float(u[g])) or dtype == np.float32
    empty = np.zeros((NUM_ACTIONS, batch), bool)
    assert (queries.legal_choice(empty, rng.random(batch)) == NUM_ACTIONS - 1).all()


def test_uniform_legal_is_the_python_pick_from_one_float64_draw_a_row():
    for sim, refs, _ in _lockstep_positions(7):
        mask = sim.legal_mask()
        seed = int(sim.state.turn.sum())
        picked = queries.uniform_legal(mask, np.random.default_rng(seed))
        assert picked.dtype == np.int64
        u = np.random.default_rng(seed).random(BATCH)
        for g, ref in enumerate(refs):
            legal = ref.legal_actions()
            assert picked[g] == (_python_pick(legal, u[g]) if legal else 0)
    # Each legal action equally likely.
    mask = np.zeros((60000, NUM_ACTIONS), bool)
    mask[:, [0, 3, 4, 18]] = True
    counts = np.bincount(queries.uniform_legal(mask, np.random.default_rng(1)), minlength=NUM_ACTIONS)
    assert set(np.flatnonzero(counts)) == {0, 3, 4, 18}
    assert np.abs(counts[[0, 3, 4, 18]] / 60000 - 0.25).max() < 0.01


def test_element_wise_pieces_take_python_ints_and_keep_numpy_dtypes():
    """The one-game observation calls the pieces on Python ints; the batch paths on arrays,
    whose dtypes must come back unchanged (integer counts stay exact)."""
    assert queries.take_coins(7, 3, 2) == 4 and queries.take_coins(7, 3, 0) == 0
    assert queries.card_coins(np.int16(9), np.int16(4)) == 5
    assert queries.unseen_count(10, 4, 3, 1, 2) == 10 - 4 - 2 - 2
    assert queries.relative_seat(1, 3, 5) == 3
    assert queries.pile_left(np.int8(40)).dtype == np.int8
    counts = np.array(COMPANY_SIZES, np.int16)[:, None]
    assert queries.unseen_count(queries.SIZES_COLUMN, counts - counts, np.zeros((C, 1), np.int8),
                                np.zeros((C, 1), np.int8), np.zeros((C, 1), np.int8)).dtype == np.int16


# ----------------------------------------------------------------------------- one home
# Every module that needs a quantity gets it from queries: each call below is made with the
# piece replaced by a recording wrapper, and must have called it (a caller that computed the
# quantity again by hand would not). Each case sets its position up first and returns the
# one call under test, so that the setup's own steps do not count. The simulators are numpy
# ones: the compiled kernels are scalar code that cannot call these array functions (they
# compile the element-wise ones, and are proven equal to numpy in tests/test_kernels.py).

def _mid_game(batch: int = 24, seed: int = 0, steps: int = 25) -> Simulator:
    sim = Simulator(Rules(), batch, seed=seed, num_players=np.arange(batch) % 6 + 2, backend="numpy")
    for _ in range(steps):
        sim.step(sim.random_actions())
    return sim


def _finished(batch: int = 8) -> Simulator:
    sim = Simulator(Rules(), batch, seed=1, backend="numpy")
    while not sim.done.all():
        sim.step(sim.random_actions())
    return sim


def _observe_batch():
    state = _mid_game().state
    return lambda: observe(state)


def _observe_one():
    state = _mid_game(1).state
    return lambda: observe(state)


def _features():
    obs = observe(_mid_game().state)
    return lambda: features(obs).draw_cost()


def _state_features():
    state = _mid_game().state
    return lambda: state_features(state)


def _greedy():
    f = features(observe(_mid_game(steps=24).state))  # (take phases: the draw is scored)
    return lambda: greedy_scores(f)


def _banker():
    sim = _mid_game()
    obs, mask = observe(sim.state), sim.legal_mask()
    return lambda: BankerAgent().act(obs, mask)


def _legal_mask():
    return _mid_game(steps=0).legal_mask


def _draw_step():
    sim = _mid_game(4, steps=0)
    sim.legal_mask()  # (cached: the step below only applies the draws)
    return lambda: sim.step(np.zeros(4, np.int64))


def _take_step():
    sim = _mid_game(steps=40)
    mask = sim.legal_mask()
    takes = mask[:, Action.TAKE:Action.KEEP]
    assert takes.any()
    actions = np.where(takes.any(axis=1), takes.argmax(axis=1) + Action.TAKE, mask.argmax(axis=1))
    return lambda: sim.step(actions)


def _keep_step():
    sim = _mid_game(4, steps=0)
    sim.step(np.zeros(4, np.int64))
    mask = sim.legal_mask()
    return lambda: sim.step(mask[:, Action.KEEP:Action.MARKET].argmax(axis=1) + Action.KEEP)


def _rewards(scheme):
    def setup():
        sim = Simulator(Rules(reward=scheme), 8, seed=1, backend="numpy")  # (numba scores in its kernels)
        actions = []  # the games' moves, replayed in the call under test
        while not sim.done.all():
            actions.append(sim.random_actions())
            sim.step(actions[-1])
        sim.reset(seed=1)

        def run():
            for a in actions:
                sim.step(a)
        return run
    setup.__name__ = f"_rewards_{scheme}"
    return setup


def _random_actions():
    return _mid_game(4, steps=0).random_actions


def _random_agent():
    sim = _mid_game()
    obs, mask = observe(sim.state), sim.legal_mask()
    return lambda: RandomAgent(seed=0).act(obs, mask)


def _random_opponent():
    batch = SeatBatch(8, seed=0)  # (the default opponent is the uniform random one)
    return batch.reset


def _privileged():
    s = _mid_game().state
    return lambda: privileged_observation(s, s.current)


def _determinize():
    s = _mid_game().state
    public = public_state(s, s.current)
    return lambda: determinize(public, s.current, 2, np.random.default_rng(0), search_backend("numpy"))


def _search_worlds():
    state = _mid_game().state
    return lambda: SearchAgent()._worlds(state)


def _search_value(value):
    def setup():
        state = _finished().state
        return lambda: SearchAgent(value=value).rollouts.finished_value(state, np.zeros(8, np.intp))
    setup.__name__ = f"_search_value_{value}"
    return setup


def _search_random_opponents():
    sim = _mid_game(2, steps=2)
    s = sim.state
    obs, mask, public = observe(s), sim.legal_mask(), public_state(s, s.current)
    agent = SearchAgent(seed=0, determinizations=2, halving_rounds=0, opponent_model="random", turn_puts=0,
                        backend="numpy")
    return lambda: agent.act(obs, mask, public=public)


def _render():
    from startups_env.startups.render import table_text
    sim = _mid_game(steps=40)
    game = int(np.flatnonzero(sim.state.market_count.any(axis=0))[0])  # one with market cards
    return lambda: table_text(sim.state, game)


def _play_draw_cost():
    sim = _mid_game(1)
    return lambda: play._draw_cost(sim)


CALLERS = [
    ("draw_cost", _legal_mask), ("draw_cost", _draw_step), ("draw_cost", _features), ("draw_cost", _greedy),
    ("draw_cost", _banker), ("draw_cost", _play_draw_cost),
    ("lacks_chip", _legal_mask), ("lacks_chip", _features), ("lacks_chip", _play_draw_cost),
    ("card_coins", _take_step), ("card_coins", _observe_batch), ("take_coins", _observe_one),
    ("card_coins", _render), ("pile_left", _render),
    ("market_take_coins", _state_features),
    ("takes_chip", _keep_step), ("takes_chip", _greedy),
    ("unseen_count", _observe_batch), ("unseen_count", _observe_one), ("unseen", _state_features),
    ("unseen", _determinize),
    ("absolute_seats", _observe_batch), ("absolute_seats", _state_features), ("absolute_seats", _privileged),
    ("relative_seat", _observe_batch), ("relative_seat", _state_features), ("relative_seat", _rewards("win")),
    ("in_pile", _privileged), ("in_pile", _determinize),
    ("pile_left", _observe_batch), ("pile_left", _observe_one), ("pile_left", _state_features),
    ("pile_left", _determinize), ("pile_left", _search_worlds),
    ("score_margin", _rewards("margin")), ("score_margin", _search_value("soft")),
    ("rank_value", _rewards("rank")), ("rank_value", _search_value("rank")),
    ("legal_choice", _random_actions), ("uniform_legal", _random_agent), ("uniform_legal", _random_opponent),
    ("uniform_legal", _search_random_opponents),
]


@pytest.mark.parametrize("piece, case", CALLERS, ids=[f"{p}-{c.__name__.strip('_')}" for p, c in CALLERS])
def test_callers_get_the_quantity_from_queries(monkeypatch, piece, case):
    call = case()
    original = getattr(queries, piece)
    calls = []

    def recording(*args, **kwargs):
        calls.append(piece)
        return original(*args, **kwargs)

    monkeypatch.setattr(queries, piece, recording)
    call()
    assert calls, f"{case.__name__} did not call queries.{piece}"
