"""The rule-based ``greedy`` bot: one-turn lookahead on an estimate of the final payout."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields, replace

import numpy as np

from startups_env.startups import queries
from startups_env.startups.rules import NUM_ACTIONS, NUM_COMPANIES, Action

from .base import Agent, check_act_inputs
from .features import Features, features

C = NUM_COMPANIES


def check_weight(label: str, value) -> float:
    """``value`` as a float if it is a finite real number, else a ValueError naming
    ``label``. Bot weights come from agent specs typed by users (``greedy[chip_value=abc]``
    arrives as a string); unchecked, a bad one would fail inside numpy in the middle of
    an arena, or (nan) quietly play nonsense. Bools are refused: ``True`` is no weight."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{label} must be a finite number, got {value!r}")
    return float(value)


MIN_SPREAD = 0.01
"""The smallest spread (in cards) GreedyParams accept."""


@dataclass(frozen=True)
class GreedyParams:
    """Weights of the greedy bot's evaluation. The defaults were tuned with the arena
    (against 3 random bots and head to head against earlier defaults; the bot's measured
    strength is in docs/experiments.md)."""

    spread: float = 0.3
    """Uncertainty (in cards) of a majority comparison when the pile is empty (>= MIN_SPREAD)."""
    spread_per_card: float = 0.04
    """Extra variance per pile card still to reach each player."""
    draw_bonus: float = 0.3
    """Value of drawing beyond its expected card: it moves the game on (no stalling)."""
    commit_weight: float = 0.2
    """Preference for laying face up the cards of companies I lead most surely."""
    hide_penalty: float = 0.5
    """Cost of revealing a card that turns a hidden lead into a public one."""
    chip_value: float = -0.6
    """Value of winning an anti-monopoly chip. Negative: the holder may no longer take that
    company from the market (free draws over its market cards are worth less)."""
    feed_penalty: float = 0.5
    """Cost of putting into the market a card of a company I lead narrowly (a rival may
    take it and catch up)."""

    def __post_init__(self) -> None:
        # Checked here, not in the bot, so that ``replace(params, ...)`` is checked too.
        for f in fields(self):
            object.__setattr__(self, f.name, check_weight(f.name, getattr(self, f.name)))
        # The logistic's scale is sqrt(spread**2 + spread_per_card * pile cards to come): a
        # negative variance takes the root of a negative, and a scale below MIN_SPREAD
        # overflows the exp of a card's margin (_company_values), a step function anyway.
        if not self.spread >= MIN_SPREAD or self.spread_per_card < 0:
            raise ValueError(f"spread must be >= {MIN_SPREAD} and spread_per_card >= 0, got spread={self.spread!r}, "
                             f"spread_per_card={self.spread_per_card!r}")


class GreedyAgent(Agent):
    """A sensible human's heuristic, vectorised over the batch (no loop per game).

    **Model of the end.** For every company the bot compares its own cards (hand +
    portfolio, exact) with each rival's expected cards: the rival's portfolio, the hand
    cards known to be in its hand (taken from the market), and its unknown hand cards
    spread like the pool of cards the bot cannot see. The chance to *end* as sole leader
    (or behind someone) is a logistic of the margin, with a spread that shrinks as the
    pile runs out. A company is then worth

        P(sole lead) x 3 x (rivals' cards)  -  P(someone else leads) x (my cards),

    which encodes the rules of the payout: the most, *but not all* (leading a company
    nobody else holds pays nothing), a tie pays nothing (only strict leads count), and
    every card of a lost company costs a coin.

    **A turn is chosen as a whole.** For each take option (each takeable market card, and
    the draw as an average over the unseen mix) the bot adds the change in value of the
    card gained, the coins collected (or laid, for a draw), and the value of its best
    put-down afterwards; it takes the best and, in the put-down phase, plays the best
    put-down. Consequences:

    * coin-rich market cards are taken (their coins count 1 point each), and useful cards
      even when poor;
    * it draws when the draw is cheap (few unprotected market cards), plus a small bonus
      because drawing moves the game on (so greedy tables never stall);
    * a card of a company it cannot win has negative marginal value: it is sent to the
      market (one coin less to pay), and not taken unless it carries coins enough;
    * a card that only brings it level with a rival is worth just the coins it saves (a
      tie pays nobody), far less than one that gives a sole lead, so it seeks sole
      majorities and does not build towards ties;
    * putting a card into the market where it narrowly leads costs a little (a rival
      may take it to catch up);
    * otherwise it lays a card face up, preferring companies it leads most surely, and
      avoids winning anti-monopoly chips (the holder may not take that company from the
      market); it keeps *majority-deciding* cards hidden: revealing a card that turns a
      hidden lead into a public one is penalised, so rivals do not see the race they are
      losing until the end.

    **What it assumes about its opponents:** that each rival's unknown hand cards are
    spread like the cards it cannot see, and nothing about how rivals will play (it looks
    one turn ahead). Rivals who hoard what they take hold more of their shown companies
    than that estimate; the ladder's hoarder and spoiler columns show what it costs.
    """

    name = "greedy"
    needs = frozenset({"rules"})  # a draw is free on a market row (Rules.market_row)

    def __init__(self, seed: int | None = None, params: GreedyParams | None = None, **overrides):
        super().__init__(seed)
        if params is None:
            params = GreedyParams()
        elif not isinstance(params, GreedyParams):
            raise ValueError(f"params must be a GreedyParams, got {type(params).__name__}: {params!r}")
        # An unknown override is a TypeError from replace(); bad values are checked by GreedyParams.
        self.params = replace(params, **overrides) if overrides else params

    def act(self, obs, mask, *, public=None, history=None, rules=None):
        obs, mask = check_act_inputs(obs, mask)
        return greedy_actions(features(obs, rules), mask, self.params)


# ----------------------------------------------------------------------------- evaluation
# All arrays keep the game axis last (see startups_env.agents.features).

_OFFSETS = np.array([-1.0, 0.0, 1.0], np.float32)[:, None, None]  # holdings -1, +0, +1
# The logistic's exp is clipped to this range of margins (in units of its scale).
_EXP_LOW, _EXP_HIGH = math.exp(-30.0), math.exp(30.0)


def _exp(x: np.ndarray) -> np.ndarray:
    """float32 ``exp(x)`` of float32 ``x``, computed in float64 and rounded. numpy's own
    float32 exp is a SIMD routine that differs from the C library's in the last bit on many
    inputs; through float64 the result is the one compiled code gets (numba's float64 exp,
    rounded), so that the compiled greedy (startups_env.agents.greedy_kernel) scores every
    action exactly as this one does."""
    return np.exp(x.astype(np.float64)).astype(np.float32)


def _company_values(f: Features, params: GreedyParams) -> tuple[np.ndarray, np.ndarray]:
    """Value of each company at my holdings -1, +0, +1 cards, and the chance I lead.

    Returns (values [3, C, B], p_lead [3, C, B])."""
    rivals = f.opponent_estimate()  # [P, C, B]
    best = rivals.max(axis=0)  # [C, B]
    total = rivals.sum(axis=0)  # [C, B] what a sole leader collects
    future_cards = f.pile / np.maximum(f.num_players, 1.0)  # pile cards still to reach each player
    scale = np.sqrt(np.float32(params.spread ** 2) + np.float32(params.spread_per_card) * future_cards)  # [B]
    # Half a card of margin is the tie line: a lead needs +1, a loss -1. Logistic chances
    # from one exp: p_lead = 1 / (1 + a / e), p_lose = 1 / (1 + a * e), e = exp(margin).
    a = _exp(0.5 / scale)
    # One exp per company: a card more or less multiplies e by exp(1 / scale) = a * a.
    # (float64: while the spread is >= MIN_SPREAD, e_now overflows or underflows only where a
    # card more or less would still be clipped.)
    e_now = np.exp(((f.holdings - best) / scale).astype(np.float64))  # [C, B]
    step = a.astype(np.float64) * a.astype(np.float64)
    e = np.clip(np.stack([e_now / step, e_now, e_now * step]), _EXP_LOW, _EXP_HIGH).astype(np.float32)
    m = f.holdings[None] + _OFFSETS  # [3, C, B]
    p_lead = e / (e + a)
    p_lose = 1.0 / (1.0 + a * e)
    value = p_lead * (3.0 * total)[None] - p_lose * np.maximum(m, 0.0)
    return value, p_lead


def _keep_and_market(f: Features, values: np.ndarray, p_lead: np.ndarray, params: GreedyParams,
                     more: bool) -> tuple[np.ndarray, np.ndarray]:
    """[C, B] values of laying a card of each company face up (keep) and of putting it into
    the market, with my holdings as they are (more=False) or one card higher (more=True,
    the company whose card was just gained). Not masked."""
    lead = p_lead[2] if more else p_lead[1]
    v_now, v_less = (values[2], values[1]) if more else (values[1], values[0])
    # Keep (lay face up): holdings unchanged; prefer sure leads and chips; hide deciding cards.
    rivals_public = f.rivals_shown()  # [C, B]
    mine_public = f.portfolios[0] + f.known[0]
    reveals_lead = (mine_public <= rivals_public) & (mine_public + 1 > rivals_public)
    holder = f.chip_holder
    holder_cards = np.take_along_axis(f.portfolios, np.maximum(holder, 0)[None], axis=0)[0]  # [C, B]
    wins_chip = queries.takes_chip(holder, f.portfolios[0] + 1, holder_cards) & ~f.chip_mine  # (mine already: no win)
    keep = (params.commit_weight * lead - params.hide_penalty * (reveals_lead & (lead > 0.5))
            + params.chip_value * wins_chip)
    # Market: one card fewer at the end; feeding a narrow race costs a little.
    narrow = np.clip(2.0 - 2.0 * lead, 0.0, 1.0) * (lead > 0.5)
    market = (v_less - v_now) - params.feed_penalty * narrow
    return keep, market


def _max_excluding_self(x: np.ndarray) -> np.ndarray:
    """[C, B] -> [C, B]: entry g is the max of x over companies other than g."""
    top = x.argmax(axis=0)
    first = np.take_along_axis(x, top[None], axis=0)[0]
    rest = x.copy()
    np.put_along_axis(rest, top[None], -np.inf, axis=0)
    second = rest.max(axis=0)
    return np.where(np.arange(C)[:, None] == top[None], second[None], first[None])


def greedy_scores(f: Features, params: GreedyParams = GreedyParams()) -> np.ndarray:
    """float32[19, B]: the greedy bot's score of every action (higher is better; -inf for
    actions of the other phase and put-downs of cards not in hand). Not masked."""
    b = f.batch_size
    values, p_lead = _company_values(f, params)
    scores = np.full((NUM_ACTIONS, b), -np.inf, np.float32)
    has = f.hand > 0
    keep, market = _keep_and_market(f, values, p_lead, params, more=False)
    keep = np.where(has, keep, -np.inf)
    market = np.where(has & ~f.barred, market, -np.inf)

    put = f.put_phase
    if put.any():
        scores[Action.KEEP:Action.MARKET] = np.where(put, keep, -np.inf)
        scores[Action.MARKET:] = np.where(put, market, -np.inf)

    take = ~put
    if take.any():
        # Each take option gains a card of company g, then the best put-down follows: of
        # another hand card (values as now) or of the gained card itself (one card higher).
        # Nothing is barred before the take, and taking g from the market bars g.
        keep_g, market_g = _keep_and_market(f, values, p_lead, params, more=True)
        best_keep = np.maximum(_max_excluding_self(keep), keep_g)  # [G, B]
        best_market_other = _max_excluding_self(market)
        best_put_taken = np.maximum(best_keep, best_market_other)
        best_put = np.maximum(best_put_taken, market_g)  # after a draw the drawn card may go to market
        gain_value = values[2] - values[1]  # [C, B] value of one more card of company g
        take_value = gain_value + f.take_coins + best_put_taken
        draw_value = (f.draw_odds() * (gain_value + best_put)).sum(axis=0) - f.draw_cost() + params.draw_bonus
        scores[Action.DRAW] = np.where(take, draw_value, -np.inf)
        scores[Action.TAKE:Action.KEEP] = np.where(take, take_value, -np.inf)
    return scores


def greedy_actions(f: Features, mask: np.ndarray, params: GreedyParams = GreedyParams()) -> np.ndarray:
    """int64[B]: the greedy bot's action in each game (see :class:`GreedyAgent`);
    mask bool[B, 19]."""
    return best_legal(greedy_scores(f, params), mask)


def best_legal(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """int64[B]: the legal action with the highest score in each game (the first of equals),
    from scores float[19, B] and mask bool[B, 19]; a game whose every legal score is -inf
    (no rule-based bot scores a legal action so) falls back to its first legal action."""
    scores = np.where(mask.T, scores, -np.inf)
    choice = scores.argmax(axis=0)
    stuck = ~np.isfinite(scores[choice, np.arange(scores.shape[1])])
    if stuck.any():
        choice[stuck] = mask[stuck].argmax(axis=1)
    return choice.astype(np.int64)
