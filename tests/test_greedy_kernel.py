"""The compiled greedy (startups_env.agents.greedy_kernel) against the numpy greedy, its
reference: scores equal bit for bit (so the actions too) on states of random and greedy
games at every table size, and the compiled hand-hypothesis weighting equal to the numpy one."""

from dataclasses import fields, replace

import numpy as np
import pytest
from helpers import run_uncompiled

pytest.importorskip("numba")

from startups_env.agents import act_for_seats, greedy_kernel, make_agent  # noqa: E402
from startups_env.agents.features import state_features  # noqa: E402
from startups_env.agents.greedy import MIN_SPREAD, GreedyParams, best_legal, greedy_actions, greedy_scores  # noqa: E402
from startups_env.agents.search import determinize, put_down_log_likelihood, search_backend  # noqa: E402
from startups_env.agents.search.inference import decision_log_prob  # noqa: E402

from startups_env.startups.history import History  # noqa: E402
from startups_env.startups.rules import DECK_SIZE, MAX_PLAYERS, MIN_PLAYERS, Rules  # noqa: E402
from startups_env.startups.simulator import Simulator  # noqa: E402
from startups_env.startups.state import State, public_state  # noqa: E402

# Weights far from the defaults: negative penalties (a weight times 0 is -0.0 there), a
# narrow spread (logistics near 0 and 1, exps clipped), a bonus that makes draws lose.
ODD_PARAMS = GreedyParams(spread=0.05, spread_per_card=0.0, draw_bonus=-2.0, commit_weight=-0.3,
                          hide_penalty=-0.5, chip_value=0.7, feed_penalty=-1.0)
# The narrowest spread accepted: a card's margin is 100 units of the logistic's scale, so the
# exp of a margin overflows and underflows (the exps of a card more and a card less are
# derived from it, not computed afresh).
NARROWEST = GreedyParams(spread=MIN_SPREAD, spread_per_card=0.0)


def _concat(states: list[State]) -> State:
    return State(**{f.name: np.concatenate([getattr(s, f.name) for s in states], axis=-1) for f in fields(State)})


def _positions(players: int, games: int, seed: int, policy: str, params: GreedyParams = GreedyParams(),
               ruleset: str = "rulebook") -> State:
    """Every position of ``games`` games at a table of ``players``, played to the end by random
    or greedy players, and the finished games' last states."""
    sim = Simulator(Rules.preset(ruleset, num_players=players), batch_size=games, seed=seed)
    seen = []
    while not sim.done.all():
        seen.append(sim.state.take(np.flatnonzero(~sim.done)))
        mask = sim.legal_mask()
        sim.step(sim.random_actions(mask) if policy == "random" else
                 greedy_actions(state_features(sim.state), mask, params))
    seen.append(sim.state.copy())
    return _concat(seen)


@pytest.fixture(scope="module")
def positions() -> State:
    return _concat([_positions(n, 6, 10 * n + k, policy)
                    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1) for k, policy in enumerate(("random", "greedy"))])


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype == np.float32 and a.shape == b.shape and np.array_equal(a.view(np.int32), b.view(np.int32))


def test_the_positions_cover_every_kind_of_state(positions):
    s = positions
    running = ~s.done
    assert running.sum() > 6000 and s.done.sum() == 72
    assert set(np.unique(s.num_players)) == set(range(MIN_PLAYERS, MAX_PLAYERS + 1))
    assert (running & (s.phase == 1)).sum() > 3000 and (running & (s.phase == 0)).sum() > 3000
    assert (running & (s.pile_pos == DECK_SIZE)).sum() >= 60  # the last put-down of a game
    assert ((s.barred >= 0) & (s.phase == 1)).sum() > 1000  # just taken from the market
    assert ((s.chip >= 0).sum(axis=0) >= 3).sum() > 3000  # chips held
    assert (s.market_count.sum(axis=0) >= 4).sum() > 200 and (s.market_take_coins() >= 3).any(axis=0).sum() > 500


def test_scores_equal_on_a_market_row():
    """The summary's ruleset: a take's price and the free draw, in both greedies."""
    summary = _concat([_positions(n, 4, 7 * n + k, policy, ruleset="summary")
                       for n in range(MIN_PLAYERS, MAX_PLAYERS + 1) for k, policy in enumerate(("random", "greedy"))])
    assert (summary.options == 7).all() and (summary.market_take_coins() < 0).any(axis=0).sum() > 300
    f = state_features(summary)
    assert (f.draw_cost() == 0).all() and (summary.market_count.sum(axis=0) > 0).sum() > 1000  # free draws
    assert _same_bits(greedy_kernel.greedy_scores_state(summary), greedy_scores(f))


@pytest.mark.parametrize("params", [GreedyParams(), ODD_PARAMS, NARROWEST], ids=["default", "odd", "narrowest"])
def test_scores_equal_the_numpy_greedys_bit_for_bit(positions, params):
    want = greedy_scores(state_features(positions), params)
    got = greedy_kernel.greedy_scores_state(positions, params)
    assert _same_bits(got, want)
    assert np.isfinite(got).any(axis=0).all() and (got == -np.inf).any() and not np.isnan(got).any()


def test_scores_equal_on_hands_no_game_deals(positions):
    """Hypothesised hands need not fit a real deal (more cards than a hand holds, fewer than
    are known, counts that leave negative unseen cards): the scores are still numpy's."""
    rng = np.random.default_rng(3)
    odd = positions.copy()
    odd.hand[:] = rng.integers(0, 4, odd.hand.shape)
    assert (odd.unseen(odd.current.astype(np.intp)) < 0).any()
    assert _same_bits(greedy_kernel.greedy_scores_state(odd), greedy_scores(state_features(odd)))


@pytest.mark.parametrize("params", [GreedyParams(), ODD_PARAMS], ids=["default", "odd"])
def test_actions_equal_the_numpy_greedys(positions, params):
    mask = Simulator.from_state(positions.copy()).legal_mask()
    want = greedy_actions(state_features(positions), mask, params)
    assert np.array_equal(greedy_kernel.greedy_actions_state(positions, mask, params), want)
    assert np.array_equal(greedy_kernel.greedy_actions_state(positions, None, params), want)  # (the legal mask)
    # Any mask: ties, and masks whose every allowed score is -inf (the first allowed action).
    rng = np.random.default_rng(0)
    odd = rng.random(mask.shape) < 0.2
    assert np.array_equal(greedy_kernel.greedy_actions_state(positions, odd, params),
                          greedy_actions(state_features(positions), odd, params))


def test_games_played_by_the_two_greedies_are_the_same():
    for players in (3, 6):
        sim = Simulator(Rules(num_players=players), batch_size=16, seed=players)
        other = Simulator(Rules(num_players=players), batch_size=16, seed=players)
        while not sim.done.all():
            mask = sim.legal_mask()
            sim.step(greedy_actions(state_features(sim.state), mask))
            other.step(greedy_kernel.greedy_actions_state(other.state, other.legal_mask()))
            assert all(np.array_equal(getattr(sim.state, f.name), getattr(other.state, f.name))
                       for f in fields(State))


def test_one_game_at_a_time(positions):
    """At B = 1 numpy takes other paths (small-batch reductions); the scores are still equal."""
    rng = np.random.default_rng(1)
    for g in rng.choice(positions.batch_size, 60, replace=False):
        one = positions.take([g])
        assert _same_bits(greedy_kernel.greedy_scores_state(one), greedy_scores(state_features(one))), g


def test_best_legal_game_is_best_legal():
    rng = np.random.default_rng(2)
    scores = rng.integers(-2, 3, (19, 500)).astype(np.float32)  # many ties
    scores[rng.random(scores.shape) < 0.3] = -np.inf
    mask = rng.random((500, 19)) < 0.3
    mask[:5] = False  # no legal action: 0
    want = best_legal(scores, mask)
    got = [greedy_kernel.best_legal_game(np.ascontiguousarray(scores[:, g]), mask[g]) for g in range(500)]
    assert np.array_equal(got, want)


def test_bad_input_is_refused():
    state = Simulator(batch_size=3, seed=0).state
    with pytest.raises(ValueError, match="mask must be bool"):
        greedy_kernel.greedy_actions_state(state, np.ones((3, 18), bool))
    with pytest.raises(ValueError, match="params must be a GreedyParams"):
        greedy_kernel.greedy_scores_state(state, {"spread": 0.3})
    params = greedy_kernel.kernel_params(replace(GreedyParams(), spread=0.5))
    assert params[0] == 0.5 and len(params) == 7 and all(type(x) is float for x in params)


_PYTHON_CHECK = """
import numpy as np
from startups_env.agents import greedy_kernel
from startups_env.agents.search import search_backend
from startups_env.agents.search.inference import decision_log_prob
from startups_env.agents.features import state_features
from startups_env.agents.greedy import GreedyParams, greedy_actions, greedy_scores
from startups_env.startups.simulator import Simulator
from startups_env.startups.rules import Rules
assert not hasattr(greedy_kernel.greedy_scores_game, "py_func")  # plain Python
weighed = 0
for players in (2, 5, 7):
    sim = Simulator(Rules(num_players=players), batch_size=3, seed=players)
    for step in range(60):
        if sim.done.all():
            break
        mask = sim.legal_mask()
        want = greedy_scores(state_features(sim.state))
        got = greedy_kernel.greedy_scores_state(sim.state)
        assert np.array_equal(got.view(np.int32), want.view(np.int32)), (players, step)
        actions = greedy_kernel.greedy_actions_state(sim.state, mask)
        assert np.array_equal(actions, greedy_actions(state_features(sim.state), mask))
        sim.step(actions)
        if not sim.done.any():  # the hand-reading weights too, at put-downs and at takes
            seat = int(sim.state.current[0])
            at = np.flatnonzero(sim.state.current == seat)
            before = sim.state.take(at)
            hand = before.hand[seat].copy()
            action = np.full(at.size, 7 + int(np.argmax(hand[:, 0])) if before.phase[0] else 0)
            if (before.phase != before.phase[0]).any():
                continue
            got = search_backend("numba").decision_log_probs(before, np.arange(at.size), seat, hand, action,
                                                             GreedyParams(), 0.5, Rules())
            want = decision_log_prob(before, seat, hand, action, GreedyParams(), 0.5, Rules())
            assert np.allclose(got, want, rtol=0, atol=1e-9) and np.isfinite(got[0]), (got, want)
            weighed += 1
assert weighed >= 20, weighed
print("same")
"""


def test_the_python_source_scores_alike_without_the_compiler():
    """With NUMBA_DISABLE_JIT=1 the kernels run as the Python they are written in (so coverage
    sees them), with numpy scalars: the same scores, actions and hand-reading weights."""
    done = run_uncompiled(_PYTHON_CHECK)
    assert done.returncode == 0 and done.stdout.strip() == "same", done.stderr[-3000:]


# ----------------------------------------------------------------------------- hand reading
def _logged_greedy_games(players: int, games: int, seed: int, turns: int) -> tuple[Simulator, History]:
    sim = Simulator(Rules(num_players=players), games, seed=seed)
    greedy = make_agent("greedy")
    log = History(games)
    for _ in range(turns):
        sim.step(act_for_seats(sim, [greedy] * players, history=log))
    return sim, log


@pytest.mark.parametrize("players, seed, turns, temperature",
                         [(4, 5, 40, 0.25), (4, 11, 34, 0.5), (3, 2, 30, 0.5), (6, 4, 50, 1.0), (2, 3, 20, 0.5)])
@pytest.mark.parametrize("takes", [False, True])
def test_hand_reading_weights_equal_the_numpy_ones(players, seed, turns, temperature, takes):
    """put_down_log_likelihood compiled and in numpy (the scenarios of the search bot's tests:
    the true hands, sampled ones, and hands that lack cards known to be held): the same
    log-likelihoods up to rounding, as the compiled softmax sums its terms in another order
    than numpy's logaddexp (both in float64)."""
    sim, log = _logged_greedy_games(players, 24, seed, turns)
    live = np.flatnonzero(~sim.state.done)
    truth = sim.state.take(live)
    seat = truth.current.astype(np.intp)
    public, view = public_state(truth, seat), log.take(live)
    others = view.valid(public) & (np.arange(MAX_PLAYERS)[:, None] != seat[None, :])
    sampled = determinize(public, seat, 20, np.random.default_rng(seed), search_backend("numba"))
    broken = truth.copy()  # each other hand swaps a card known to be there for another company's: impossible
    for p, g in np.argwhere((truth.known.sum(axis=1) > 0) & others):
        c = int(np.flatnonzero(truth.known[p, :, g])[0])
        broken.hand[p, c, g] -= 1
        broken.hand[p, (c + 1) % 6, g] += 1
    worlds = _concat([truth, sampled, broken])
    n = live.size
    game = np.concatenate([np.arange(n), np.repeat(np.arange(n), 20), np.arange(n)])
    rules, params = Rules(num_players=players), GreedyParams()
    compiled, reference = ([put_down_log_likelihood(worlds, view, game, others, params, temperature, rules,
                                                    search_backend(backend), takes=takes)
                            for backend in ("numba", "numpy")])
    finite = np.isfinite(reference)
    assert np.array_equal(np.isfinite(compiled), finite) and (compiled[~finite] == -np.inf).all()
    assert np.allclose(compiled[finite], reference[finite], rtol=0, atol=1e-9)
    assert finite[:n].all() and (~finite).sum() >= 2 and (reference[finite] < 0).sum() > 10 * n


@pytest.mark.parametrize("decision", ["put-down", "take"])
def test_decision_log_probs_equal_numpys_for_any_action(decision):
    """Every action of the decision (the 12 put-downs, or the draw and the six market takes),
    legal or not, in logged states before it, with hands that hold the known cards or not."""
    put = decision == "put-down"
    sim, log = _logged_greedy_games(5 if put else 4, 12, 7 if put else 9, 40)
    logged, ids = (log.state, np.arange(7, 19)) if put else (log.take_state, np.arange(7))
    rows = np.flatnonzero((log.action if put else log.take_action).reshape(-1) >= 0)
    before = logged.take(np.repeat(rows, ids.size))
    assert (before.phase == put).all()
    seat = before.current.astype(np.intp)
    rng = np.random.default_rng(0)
    hand = rng.integers(0, 3 if put else 2, (6, before.batch_size)).astype(np.int8)
    action = np.tile(ids, rows.size)

    rules = Rules(num_players=5 if put else 4)
    got, want = np.empty(before.batch_size), np.empty(before.batch_size)
    for s in np.unique(seat):
        at = np.flatnonzero(seat == s)
        got[at] = search_backend("numba").decision_log_probs(before, at, s, hand[:, at], action[at], GreedyParams(),
                                                             0.5, rules)
        want[at] = decision_log_prob(before.take(at), s, hand[:, at], action[at], GreedyParams(), 0.5, rules)
    finite = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), finite) and 0.1 < finite.mean() < 0.9
    assert np.allclose(got[finite], want[finite], rtol=0, atol=1e-9)


def test_decision_log_probs_refuses_bad_input():
    sim = Simulator(batch_size=2, seed=0)
    hand, games = sim.state.hand[0], np.array([0, 1])
    # At take decisions a put-down is not legal; a draw is.
    at_take = greedy_kernel.decision_log_probs(sim.state, games, hand, np.array([7, 0]), GreedyParams(), 0.5)
    assert at_take[0] == -np.inf and np.isfinite(at_take[1])
    mixed = Simulator(batch_size=2, seed=0)
    mixed.step(np.zeros(2, np.int64), active=np.array([True, False]))  # game 0 at a put-down, game 1 at a take
    with pytest.raises(ValueError, match="all at a take decision or all at a put-down"):
        greedy_kernel.decision_log_probs(mixed.state, games, hand, np.array([7, 0]), GreedyParams(), 0.5)
    sim.step(np.zeros(2, np.int64))  # draws: now put-downs
    hand = sim.state.hand[0]
    before = sim.state.copy()
    for bad, match in ((dict(action=np.array([7.0, 8.0])), "action must be int"),
                       (dict(games=np.array([0, 2])), "games must be"), (dict(hand=hand[:5]), "hand must be"),
                       (dict(temperature=0.0), "temperature must be positive")):
        args = dict(states=sim.state, games=games, hand=hand, action=np.array([7, 8]), params=GreedyParams(),
                    temperature=0.5) | bad
        with pytest.raises(ValueError, match=match):
            greedy_kernel.decision_log_probs(**args)
    assert np.isfinite(greedy_kernel.decision_log_probs(sim.state, games, hand + 1, np.array([7, 8]), GreedyParams(),
                                                        0.5)).all()
    assert all(np.array_equal(getattr(before, f.name), getattr(sim.state, f.name)) for f in fields(State))
