"""The rule-based ``banker`` bot: coins first, a few companies, no probabilities."""

from __future__ import annotations

import numpy as np

from startups_env.startups.rules import NUM_ACTIONS, Action

from .base import Agent, check_act_inputs
from .features import Features, features
from .greedy import best_legal, check_weight


class BankerAgent(Agent):
    """A coin-hungry, concentrated style, deliberately different from ``greedy``.

    It reasons only with public counts (no estimate of hidden hands or of the end):

    * **Take.** It grabs the richest takeable market card whenever that card carries at
      least ``min_coins`` coins and at least as many as a draw would cost; a card of a
      company it is not behind in is worth ``useful_bonus`` coins more, a card of one it
      is behind in ``useful_bonus`` less. Otherwise it draws if it can pay; if it
      cannot, it takes the best card it may.
    * **Put down.** It concentrates: among its hand cards it lays face up the company it
      holds most of, if it is not behind there (behind = some rival shows more cards,
      counting portfolios and known hand cards); cards of companies where it is behind go
      to the market first (one coin less to pay at the end, and more coins for the
      market it farms).
    """

    name = "banker"
    needs = frozenset({"rules"})  # a draw is free on a market row (Rules.market_row)

    def __init__(self, seed: int | None = None, min_coins: float = 2.0, useful_bonus: float = 1.0):
        super().__init__(seed)
        # Checked here: a string would fail inside numpy mid-game, and nan would quietly
        # make the bot never grab a card.
        self.min_coins = check_weight("min_coins", min_coins)
        self.useful_bonus = check_weight("useful_bonus", useful_bonus)

    def act(self, obs, mask, *, public=None, history=None, rules=None):
        obs, mask = check_act_inputs(obs, mask)
        return banker_actions(features(obs, rules), mask, self.min_coins, self.useful_bonus)


def banker_actions(f: Features, mask: np.ndarray, min_coins: float, useful_bonus: float) -> np.ndarray:
    """int64[B]: the banker's action in each game; mask bool[B, 19]."""
    b = f.batch_size
    mine = f.holdings  # [C, B]
    behind = mine < f.rivals_shown()
    scores = np.full((NUM_ACTIONS, b), -np.inf, np.float32)

    # Take phase: card coins adjusted for usefulness, against the draw's price.
    worth = f.take_coins + np.where(behind, -useful_bonus, useful_bonus)
    grab = (f.take_coins >= min_coins) & (f.take_coins >= f.draw_cost()[None])
    scores[Action.TAKE:Action.KEEP] = np.where(grab, 100.0 + worth, worth - 100.0)
    scores[Action.DRAW] = 0.0  # between a worthwhile grab (+100) and a forced one (-100)

    # Put-down phase: keep the company held most of unless behind; dump where behind.
    has = f.put_phase[None] & (f.hand > 0)
    scores[Action.KEEP:Action.MARKET] = np.where(has, np.where(behind, -10.0, mine), -np.inf)
    scores[Action.MARKET:] = np.where(has & ~f.barred, np.where(behind, 20.0 - mine, -20.0), -np.inf)
    return best_legal(scores, mask)
