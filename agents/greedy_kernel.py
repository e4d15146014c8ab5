"""The ``greedy`` bot compiled with numba: its scores and actions game by game, in scalar code.

:mod:`startups_env.agents.greedy` is the reference: it scores every action of a whole batch
with a few numpy operations over :class:`~startups_env.agents.features.Features`. Here the
same evaluation is written for one game at a time, reading the State's arrays directly,
for compiled callers: a rollout kernel that plays whole games with the greedy policy
(:func:`greedy_scores_game` is its building block), the batch wrappers
:func:`greedy_scores_state` and :func:`greedy_actions_state`, and the search bot's hand
reading (:func:`decision_log_probs`).

**Equal, not close.** The tests prove the scores equal to the numpy greedy's bit for bit
(and so the actions equal) on many thousand states of random and greedy games at every
table size. That holds because every operation here is the one numpy performs, in its
precision and order: float32 arithmetic where numpy's is float32 (a Python float weight
times a float32 array is float32 under NEP 50, so the weight is cast first), float64
where numpy promotes (a weight times a bool array is float64), the exps through float64
(numpy's float32 ``exp`` is a SIMD routine that differs from libm's; both sides take the
float64 route, see ``greedy._exp``), and sums over seats and companies left to right, as
numpy reduces the leading axis of these arrays.

**What the player may see.** :func:`greedy_scores_game` reads, for the player to act, only
what its observation holds: its own hand, every portfolio, the hand cards known to be in
other hands, the chips, the market (counts and the coins a take collects), the pile's
length, the barred company, and the cards it cannot see (deduced from those; never the
other hands or the deck).

numba is an optional dependency: importing this module without it raises ImportError,
and the numpy greedy works without it. Kernels compile on first use and are cached on
disk (``cache=True``).
"""

from __future__ import annotations

from dataclasses import astuple
from functools import lru_cache

import numba
import numpy as np

from startups_env.startups import numba_backend as kernels
from startups_env.startups import numba_runtime
from startups_env.startups import queries
from startups_env.startups.numba_backend import arrays, card_coins, takes_chip
from startups_env.startups.rules import (
    COMPANY_SIZES,
    HAND_SIZE,
    MARKET_ROW,
    MAX_PLAYERS,
    NUM_ACTIONS,
    NUM_COMPANIES,
    PUT_PHASE,
    Action,
)
from startups_env.startups.simulator import Simulator
from startups_env.startups.state import State

from . import greedy
from .greedy import GreedyParams

kernels.forget_stale_cache(__file__, kernels.__file__, queries.__file__, greedy.__file__)
numba_runtime.describe_kernels(__name__, "the greedy bot's compiled scorer", 20)

P, C = MAX_PLAYERS, NUM_COMPANIES
if (P, C) != (7, 6):  # (greedy_scores_game lists every seat and every company in tuples)
    raise ImportError(f"greedy_kernel is written for 7 seats and 6 companies, not {P} and {C}")
DRAW, TAKE, KEEP, MARKET = int(Action.DRAW), int(Action.TAKE), int(Action.KEEP), int(Action.MARKET)
_SIZES = np.array(COMPANY_SIZES, np.int64)
_F32 = np.float32
_EXP_LOW, _EXP_HIGH = greedy._EXP_LOW, greedy._EXP_HIGH

def kernel_params(params: GreedyParams) -> tuple:
    """GreedyParams as the kernels take them: the tuple of its fields, in declaration order,
    as Python floats (float64: the kernels cast to float32 where numpy does)."""
    if not isinstance(params, GreedyParams):
        raise ValueError(f"params must be a GreedyParams, got {type(params).__name__}: {params!r}")
    return _params_tuple(params)


@lru_cache(maxsize=64)
def _params_tuple(params: GreedyParams) -> tuple:
    # (cached: astuple deep-copies, and the search asks for the same params at every rollout call)
    return tuple(float(x) for x in astuple(params))


def _jit(function):
    """A scalar piece (numbers in, numbers out): LLVM inlines it where it pays."""
    return numba.njit(cache=True, nogil=True)(function)


def _inline(function):
    """A per-game piece that reads arrays, inlined into each kernel that calls it: a compiled
    call would pass every array as a dozen words and count a reference to it."""
    return numba.njit(cache=True, nogil=True, inline="always")(function)


def _batch(function):
    return numba.njit(cache=True, nogil=True, _nrt=False)(function)


# The element-wise pieces of queries, compiled as they are (card_coins and takes_chip by
# the rules kernels): one home for each rule.
pile_left = _jit(queries.pile_left)
unseen_count = _jit(queries.unseen_count)

# Per-company and per-seat counts of one decision, packed into an int64 of fields (a tuple
# read at a runtime index compiles to a jump table, a mispredicted branch per read; shifts
# and masks do not branch). Unseen counts are biased to be non-negative in their field.
_UNSEEN_BITS, _UNSEEN_BIAS = 10, 512
_HIDDEN_BITS, _HIDDEN_MASK = 4, 15  # a hidden hand holds at most HAND_SIZE cards
_PUBLIC_BITS, _PUBLIC_MASK = 8, 255  # a company's public cards: at most its size


# ----------------------------------------------------------------------------- one company
@_jit
def _seat_after(seat, r, n):
    """The seat r turns after ``seat`` at a table of n (0 <= r < n; queries.absolute_seats)."""
    p = seat + r
    return p - n if p >= n else p


@_inline
def _public_counts(s, g, n):
    """(public, hidden_hands) of game g at a table of n, in one pass over the seats:
    ``public`` packs, by company, every seat's portfolio plus its publicly known hand cards
    (what queries.unseen subtracts for everyone); ``hidden_hands`` packs, by seat, the hand
    cards that nobody but the seat knows: HAND_SIZE less its known hand cards, at least 0
    (Features.opponent_estimate). The seats past n hold nothing."""
    public, hidden_hands = 0, 0
    for p in range(n):
        known = 0
        for c in range(C):
            k = s.known[p, c, g]
            known += k
            public += (int(k) + int(s.portfolio[p, c, g])) << (_PUBLIC_BITS * c)
        hidden_hands |= int(max(HAND_SIZE - known, 0)) << (_HIDDEN_BITS * p)
    return public, hidden_hands


@_jit
def _unseen_of(unseen, c):
    """Company c's count in the packed unseen counts of :func:`_unseen_counts`."""
    return ((unseen >> (_UNSEEN_BITS * c)) & (2 * _UNSEEN_BIAS - 1)) - _UNSEEN_BIAS


@_inline
def _rivals(s, g, seat, n, c, odds, hidden_hands):
    """(best, total, shown) of company c in game g, seen from ``seat``: the most cards any
    rival is expected to hold (float32), the sum over rivals (float32: what a sole leader
    collects), and the most cards any rival shows (portfolio and known hand cards; int).
    A rival is expected to hold what it shows plus its hidden hand cards spread like the
    unseen mix (``odds``: the chance that an unseen card is of company c; ``hidden_hands``:
    their counts by seat, packed by :func:`_public_counts`)."""
    best, total, shown = _F32(0.0), _F32(0.0), 0
    for r in range(1, n):
        p = _seat_after(seat, r, n)
        portfolio, known = s.portfolio[p, c, g], s.known[p, c, g]
        expected = (_F32(portfolio) + _F32(known)) + _F32((hidden_hands >> (_HIDDEN_BITS * p)) & _HIDDEN_MASK) * odds
        if expected > best:
            best = expected
        total += expected
        shown = max(shown, portfolio + known)
    return best, total, shown


@_jit
def _exp_margin(m, best, scale):
    """float64: the exp of my margin (m - best) / scale, divided in float32 as numpy does.
    A card more or less multiplies it by exp(1 / scale) (greedy._company_values)."""
    return np.exp(np.float64((m - best) / scale))


@_jit
def _value(e, m, total, a):
    """(value, p_lead), float32: the worth of a company at my holdings ``m`` against rivals
    expecting ``total`` cards together, and my chance to end as its sole leader, from
    ``e``, the exp of my margin over the best rival (float64, clipped here to the range
    numpy clips it to; greedy._company_values)."""
    e = _F32(min(max(e, _EXP_LOW), _EXP_HIGH))
    p_lead = e / (e + a)
    p_lose = _F32(1.0) / (_F32(1.0) + a * e)
    return p_lead * (_F32(3.0) * total) - p_lose * (m if m >= _F32(0.0) else _F32(0.0)), p_lead


@_jit
def _keep_value(lead, reveals, wins_chip, params):
    """float64: the value of laying a card of the company face up (greedy._keep_and_market):
    prefer sure leads, avoid chips, hide deciding cards. (numpy: a weight times a float32
    array is float32, times a bool array float64.)"""
    spread, spread_per_card, draw_bonus, commit_weight, hide_penalty, chip_value, feed_penalty = params
    return (np.float64(_F32(commit_weight) * lead) - hide_penalty * (1.0 if reveals and lead > 0.5 else 0.0)
            + chip_value * (1.0 if wins_chip else 0.0))


@_jit
def _market_value(lead, v_now, v_less, params):
    """float32: the value of putting a card of the company into the market: one card fewer at
    the end, and feeding a narrow race costs a little (greedy._keep_and_market)."""
    feed_penalty = params[6]
    narrow = _F32(2.0) - _F32(2.0) * lead
    narrow = _F32(0.0) if narrow < _F32(0.0) else narrow  # (np.clip to [0, 1])
    narrow = _F32(1.0) if narrow > _F32(1.0) else narrow
    narrow = narrow * (_F32(1.0) if lead > 0.5 else _F32(0.0))
    return (v_less - v_now) - _F32(feed_penalty) * narrow


# ----------------------------------------------------------------------------- one game
@_inline
def greedy_scores_game(s, g, params, out):
    """Score every action of game g for its player to act, as the greedy bot does.

    Arguments: ``s``, the arrays of a State (``startups_env.startups.numba_backend.arrays(state)``, or any
    named tuple with State's field names and dtypes); ``g``, the game (column) to score; ``params``,
    :func:`kernel_params` of a GreedyParams (a tuple of 7 float64); ``out``, float32[19],
    overwritten with the scores: exactly ``greedy_scores(state_features(state),
    params)[:, g]``, -inf for the actions of the other phase and for put-downs of cards not
    in hand (not masked by legality otherwise). Reads only what the player to act may see,
    and nothing of the seats past the table (which hold nothing in a State); allocates
    nothing; returns nothing. Callable from other numba functions."""
    _scores(s, g, s.hand, s.current[g], g, params, out)


@_inline
def _scores(s, g, hands, hand_row, hand_column, params, out):
    """greedy_scores_game, with the hand of the player to act read from ``hands[hand_row, :,
    hand_column]`` (int[R, C, K]) instead of its row of ``s.hand``."""
    outlook = _outlook(s, g, hands, hand_row, hand_column, params)
    # A put-down values the hand as it is; a take values each card it may gain, and so needs
    # every company's values before it can score any take.
    if s.phase[g] == PUT_PHASE:
        _put_down_scores(s, g, hands, hand_row, hand_column, params, outlook, out)
    else:
        _take_scores(s, g, hands, hand_row, hand_column, params, outlook, out)


@_inline
def _outlook(s, g, hands, hand_row, hand_column, params):
    """What every company's values share, for the player to act in game g, holding
    ``hands[hand_row, :, hand_column]``: (seat, n, scale, a, step, unseen, per_unseen,
    hidden_hands): its seat and the table's size; the margin's scale, tie line and one
    card's step (:func:`_margin_scale`); the cards it cannot see (:func:`_unseen_counts`);
    the other hands' hidden cards (:func:`_public_counts`)."""
    seat, n = int(s.current[g]), int(s.num_players[g])  # (Python ints where the source runs uncompiled)
    scale, a, step = _margin_scale(s.pile_pos[g], n, params)
    # (Per-company and per-seat counts packed into integers: kept in registers, where arrays
    # would be allocated on every call.)
    public, hidden_hands = _public_counts(s, g, n)
    unseen, per_unseen = _unseen_counts(s, g, seat, public, hands, hand_row, hand_column)
    return seat, n, scale, a, step, unseen, per_unseen, hidden_hands


@_jit
def _margin_scale(pile_pos, n, params):
    """(scale, a, step) of the logistic that turns a margin in cards into the chance of a
    lead, at a table of n with the pile at ``pile_pos``: its scale (float32), which shrinks
    as the pile runs out (pile cards still to reach each player); a = exp(0.5 / scale),
    half a card of margin: the tie line (float32); step = exp(1 / scale), the factor of
    one card more of margin (float64)."""
    spread, spread_per_card = params[0], params[1]
    future_cards = _F32(pile_left(pile_pos)) / max(_F32(n), _F32(1.0))
    scale = np.sqrt(_F32(spread * spread) + _F32(spread_per_card) * future_cards)
    a = _F32(np.exp(np.float64(_F32(0.5) / scale)))
    return scale, a, np.float64(a) * np.float64(a)


@_inline
def _unseen_counts(s, g, seat, public, hands, hand_row, hand_column):
    """(unseen, per_unseen): the cards ``seat`` cannot see in game g by company
    (queries.unseen, with its hand read from ``hands``; ``public`` as packed by
    :func:`_public_counts`), packed as :func:`_unseen_of` reads them, and their total as a
    float32 of at least 1, the odds' denominator."""
    unseen, unseen_total = 0, 0
    for c in range(C):
        count = unseen_count(_SIZES[c], (public >> (_PUBLIC_BITS * c)) & _PUBLIC_MASK, hands[hand_row, c, hand_column],
                             s.known[seat, c, g], s.market_count[c, g])
        unseen_total += count
        unseen |= (int(count) + _UNSEEN_BIAS) << (_UNSEEN_BITS * c)
    return unseen, max(_F32(unseen_total), _F32(1.0))


@_inline
def _company_now(s, g, c, in_hand, outlook, params):
    """Company c in game g for the player to act, holding ``in_hand`` of its cards (seen as
    :func:`_outlook` says): (e, holdings, total, v_now, keep, market, reveals, wins_chip):
    the exp of its margin over the best rival (:func:`_exp_margin`), its cards in hand and
    portfolio (float32), the rivals' expected cards together (float32), the company's
    value now (:func:`_value`); the values of laying one of its cards face up (``keep``,
    float64) and into the market (``market``, float32), -inf with none in hand, and the
    market also where c is barred; whether a face-up card would make a hidden lead public
    (``reveals``) and win the anti-monopoly chip (``wins_chip``)."""
    seat, n, scale, a, step, unseen, per_unseen, hidden_hands = outlook
    held = in_hand > 0
    odds = _F32(_unseen_of(unseen, c)) / per_unseen
    best, total, rivals_shown = _rivals(s, g, seat, n, c, odds, hidden_hands)
    holdings = _F32(in_hand) + _F32(s.portfolio[seat, c, g])
    mine_shown = s.portfolio[seat, c, g] + s.known[seat, c, g]
    reveals = mine_shown <= rivals_shown and mine_shown + 1 > rivals_shown
    chip = s.chip[c, g]
    # (The holder's absolute seat, -1 none, as kernels.put_down passes it: a relative seat
    # costs an integer division.)
    wins_chip = (takes_chip(chip, s.portfolio[seat, c, g] + 1, s.portfolio[chip if chip >= 0 else seat, c, g])
                 and chip != seat)  # (holding it already: no win)
    e = _exp_margin(holdings, best, scale)
    v_now, lead = _value(e, holdings, total, a)
    keep = _keep_value(lead, reveals, wins_chip, params) if held else -np.inf
    market = _F32(-np.inf)
    if held and c != s.barred[g]:  # (computed only where the value is used)
        v_less, _ = _value(e / step, holdings - _F32(1.0), total, a)
        market = _market_value(lead, v_now, v_less, params)
    return e, holdings, total, v_now, keep, market, reveals, wins_chip


@_inline
def _put_down_scores(s, g, hands, hand_row, hand_column, params, outlook, out):
    """Write the scores of a put-down into ``out``: laying each hand card face up (KEEP)
    or into the market (MARKET) with the hand as it is; -inf for the companies with no
    card in hand, the market of the barred company, and every take and the draw."""
    for c in range(C):
        in_hand = hands[hand_row, c, hand_column]
        if in_hand > 0:
            _, _, _, _, keep, market, _, _ = _company_now(s, g, c, in_hand, outlook, params)
            out[KEEP + c] = _F32(keep)
            out[MARKET + c] = market
        else:
            out[KEEP + c] = -np.inf
            out[MARKET + c] = -np.inf
    for action in range(KEEP):
        out[action] = -np.inf


@_inline
def _take_scores(s, g, hands, hand_row, hand_column, params, outlook, out):
    """Write the scores of a take into ``out``: each take (TAKE) and the draw (DRAW), each
    valued with the best put-down that follows it (:func:`_take_and_draw_values`); -inf
    for the put-downs."""
    seat, n, scale, a, step, unseen, per_unseen, hidden_hands = outlook
    # The two best put-downs of the hand as it is, face up and into the market: a take of
    # the best's own company is followed by the second best of the others.
    keeps = (-np.inf, 0, -np.inf)  # (first, its company, second)
    markets = (_F32(-np.inf), 0, _F32(-np.inf))
    flags = 0  # reveals and wins_chip of each company
    for c in range(C):
        e, holdings, total, v_now, keep, market, reveals, wins_chip = _company_now(
            s, g, c, hands[hand_row, c, hand_column], outlook, params)
        keeps = _best_two(keeps, keep, c)
        markets = _best_two(markets, market, c)
        # Gained by a take, the card counts one higher. (out holds these terms until
        # _take_and_draw_values reads them: arrays here would be allocated on every call.)
        v_more, lead_more = _value(e * step, holdings + _F32(1.0), total, a)
        out[TAKE + c] = v_more - v_now  # the value of one more card of company c
        out[KEEP + c] = lead_more
        out[MARKET + c] = _market_value(lead_more, v_more, v_now, params)  # the gained card into the market
        flags |= (1 if reveals else 0) << (2 * c) | (1 if wins_chip else 0) << (2 * c + 1)
    _take_and_draw_values(s, g, outlook, params, keeps, markets, flags, out)


@_jit
def _best_two(best, value, c):
    """``best``, (first, its company, second) of the values before company c's, updated
    with ``value``; the first of equal values stays first (np.argmax)."""
    first, top, second = best
    if value > first:
        return value, c, first
    if value > second:
        return first, top, value
    return best


@_inline
def _take_and_draw_values(s, g, outlook, params, keeps, markets, flags, out):
    """Turn the terms :func:`_take_scores` left in ``out`` (per company: the value of one
    more card, its chance of the lead and the value of putting it into the market) and
    ``flags`` into the scores of the takes and the draw; -inf for the put-downs. A take of
    c collects the coins on its oldest market card (less its price on a market row); a draw
    is an average over the unseen mix, less the coins it lays on the market
    (kernels.draw_cost: none on a market row). Each is followed by the
    best put-down (:func:`_best_put_downs`). Nothing is barred before the take."""
    seat, n, scale, a, step, unseen, per_unseen, hidden_hands = outlook
    draw_value = 0.0
    for c in range(C):
        gain, lead_more, market_gained = out[TAKE + c], out[KEEP + c], out[MARKET + c]
        keep_gained = _keep_value(lead_more, (flags >> (2 * c)) & 1 == 1, (flags >> (2 * c + 1)) & 1 == 1, params)
        best_put_taken, best_put_drawn = _best_put_downs(c, keep_gained, market_gained, keeps, markets)
        count = s.market_count[c, g]
        coins = card_coins(s.market_paid[c, g], s.market_stamp[c, s.market_head[c, g], g]) if count > 0 else 0
        if s.options[g] & MARKET_ROW:  # less the take's price (queries.market_take_coins)
            coins -= kernels.row_price(g, c, s)
        out[TAKE + c] = _F32(np.float64(gain + _F32(coins)) + best_put_taken)
        term = np.float64(_F32(_unseen_of(unseen, c)) / per_unseen) * (np.float64(gain) + best_put_drawn)
        draw_value = term if c == 0 else draw_value + term
        out[KEEP + c] = -np.inf
        out[MARKET + c] = -np.inf
    draw_cost = kernels.draw_cost(g, seat, s)
    out[DRAW] = _F32(draw_value - np.float64(_F32(draw_cost)) + params[2])  # (params[2]: draw_bonus)


@_jit
def _best_put_downs(c, keep_gained, market_gained, keeps, markets):
    """(after a take, after a draw), float64: the value of the best put-down once a card of
    company c is gained: of another company's hand card, valued as now (``keeps`` and
    ``markets`` as :func:`_take_scores` ranks them), or of the gained card itself, valued
    one card higher: face up (``keep_gained``) or, after a draw only, into the market
    (``market_gained``: taking c from the market bars c)."""
    first_keep, top_keep, second_keep = keeps
    first_market, top_market, second_market = markets
    keep_other = second_keep if c == top_keep else first_keep
    market_other = second_market if c == top_market else first_market
    best_keep = keep_other if keep_other >= keep_gained else keep_gained  # (np.maximum)
    best_put_taken = best_keep if best_keep >= market_other else np.float64(market_other)
    best_put_drawn = best_put_taken if best_put_taken >= market_gained else np.float64(market_gained)
    return best_put_taken, best_put_drawn


@_inline
def best_legal_game(scores, legal):
    """The legal action with the highest score (the first of equals), from scores
    float32[19] and legal bool[19]; where every legal score is -inf, the first legal action
    (0 if none): greedy.best_legal for one game."""
    choice, top = 0, -np.inf
    for action in range(NUM_ACTIONS):
        value = scores[action] if legal[action] else -np.inf
        if value > top or (np.isnan(value) and not np.isnan(top)):  # (np.argmax: nan first)
            choice, top = action, value
    if not np.isfinite(top) or not legal[choice]:
        for action in range(NUM_ACTIONS):
            if legal[action]:
                return action
        return 0
    return choice


# ----------------------------------------------------------------------------- batches
# The loops over games are serial: the project runs in parallel by processes (arena and
# labelling shards, Ray workers, one per core); numba threads inside each would fight them
# for the cores. They count no references (_nrt=False): nothing in them allocates, and a
# compiled call increfs every array it is passed, which would cost more than the scoring.
@_batch
def _scores_all(s, params, out):
    for g in range(out.shape[1]):
        greedy_scores_game(s, g, params, out[:, g])


@_batch
def _actions_all(s, params, legal, scores, actions):
    for g in range(actions.shape[0]):
        greedy_scores_game(s, g, params, scores)
        actions[g] = best_legal_game(scores, legal[g])


def greedy_scores_state(state: State, params: GreedyParams = GreedyParams()) -> np.ndarray:
    """float32[19, B]: the greedy bot's scores of every action in every game of ``state``,
    for its player to act; equal to ``greedy_scores(state_features(state), params)``."""
    scores = np.empty((NUM_ACTIONS, state.batch_size), np.float32)
    _scores_all(arrays(state), kernel_params(params), scores)
    return scores


def greedy_actions_state(state: State, mask: np.ndarray | None = None,
                         params: GreedyParams = GreedyParams()) -> np.ndarray:
    """int64[B]: the greedy bot's action in each game of ``state``; equal to
    ``greedy_actions(state_features(state), mask, params)``. mask: bool[B, 19], default the
    legal mask."""
    b = state.batch_size
    if mask is None:
        mask = Simulator.from_state(state).legal_mask()
    mask = np.asarray(mask, bool)
    if mask.shape != (b, NUM_ACTIONS):
        raise ValueError(f"mask must be bool[{b}, {NUM_ACTIONS}], got shape {list(mask.shape)}")
    actions = np.empty(b, np.int64)
    _actions_all(arrays(state), kernel_params(params), np.ascontiguousarray(mask), np.empty(NUM_ACTIONS, np.float32),
                 actions)
    return actions



# ----------------------------------------------------------------------------- hand reading
@_inline
def decision_log_prob_game(s, g, hands, column, action, params, temperature, scores, legal):
    """float64: the log-probability that the player to act in game g, holding ``hands[0, :,
    column]`` (int[1, C, K]), plays ``action`` at its decision there (a take or a put-down)
    under the search bot's model of the other players: the greedy bot with softmax noise,
    ``P(action) ~ exp(greedy score / temperature)`` over its legal actions; -inf where that
    hand lacks a card its player was known to hold, or the action is not legal.
    ``scores`` float32[19], ``legal`` bool[19, 1]: scratch. Allocates nothing.
    (search._decision_log_prob for one game.)"""
    seat = s.current[g]
    for c in range(C):
        if hands[0, c, column] < s.known[seat, c, g]:
            return -np.inf
    _scores(s, g, hands, 0, column, params, scores)
    kernels.legal_holding(legal, 0, g, s, hands, 0, column)  # (the hand held here, not the game's)
    top = -np.inf
    for a in range(NUM_ACTIONS):
        if legal[a, 0]:
            top = max(top, np.float64(scores[a]) / temperature)
    if not (top > -np.inf and 0 <= action < NUM_ACTIONS and legal[action, 0]):
        return -np.inf
    total = 0.0  # the softmax's denominator, relative to its largest term
    for a in range(NUM_ACTIONS):
        if legal[a, 0]:
            total += np.exp(np.float64(scores[a]) / temperature - top)
    chosen = np.float64(scores[action]) / temperature - (top + np.log(total))
    return chosen if np.isfinite(chosen) else -np.inf


@_batch
def _decision_log_probs(s, games, hands, action, params, temperature, scores, legal, out):
    for i in range(out.shape[0]):
        out[i] = decision_log_prob_game(s, games[i], hands, i, action[i], params, temperature, scores, legal)


def decision_log_probs(states: State, games: np.ndarray, hand: np.ndarray, action: np.ndarray, params: GreedyParams,
                       temperature: float) -> np.ndarray:
    """float64[r]: for r decisions, the log-probability that the player to act in game
    ``games[i]`` of ``states`` (a running game; all r at a take, or all at a put-down),
    holding ``hand[:, i]`` (int[C, r], in place of its hand there), plays ``action[i]``
    under the softmax-greedy model at ``temperature``; -inf where that hand lacks a card its
    player was known to hold, or the action is not legal (:func:`decision_log_prob_game`).
    ``states`` is read, not changed (games may repeat: one decision weighed with several
    hands)."""
    games, action = np.asarray(games), np.asarray(action)
    r = games.shape[0] if games.ndim == 1 else -1
    if r < 0 or games.dtype.kind not in "iu" or (r and (games.min() < 0 or games.max() >= states.batch_size)):
        raise ValueError(f"games must be int[r], games of the {states.batch_size} of states, got "
                         f"{games.dtype}{list(games.shape)}")
    hand = np.asarray(hand)
    if hand.shape != (C, r) or hand.dtype.kind not in "iu":
        raise ValueError(f"hand must be int[{C}, {r}], got {hand.dtype}{list(hand.shape)}")
    if action.shape != (r,) or action.dtype.kind not in "iu":
        raise ValueError(f"action must be int[{r}], got {action.dtype}{list(action.shape)}")
    phase = states.phase[games]
    if states.done[games].any() or (r and (phase != phase[0]).any()):
        raise ValueError("every game must be running, all at a take decision or all at a put-down")
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature!r}")
    out = np.empty(r, np.float64)
    _decision_log_probs(arrays(states), games.astype(np.intp), hand.astype(np.int64)[None], action.astype(np.int64),
                        kernel_params(params), float(temperature), np.empty(NUM_ACTIONS, np.float32),
                        np.empty((NUM_ACTIONS, 1), np.bool_), out)
    return out
