"""The rule-based ``hoarder`` bot: it never feeds the market and builds majorities."""

from __future__ import annotations

import numpy as np

from startups_env.startups.rules import NUM_ACTIONS, Action

from .base import Agent, check_act_inputs
from .features import Features, features
from .greedy import best_legal, check_weight


class HoarderAgent(Agent):
    """A style that keeps every card it gets and never puts one into the market.

    * **Put down.** It always lays a card face up, never into the market (a keep is legal
      whenever a card is in hand, so it never markets at all). It lays face up the company
      where it stands *weakest* (fewest cards of its own against the most a rival shows),
      so that its hand of three keeps the cards of its best races hidden to the end.
    * **Take.** A card is worth ``lead_value`` coins if, with it, the bot would hold more
      of its company than any rival shows (a lead built or kept), and costs one coin
      otherwise (it will never part with the card, and every card of a company it does
      not lead costs a coin at the end). It takes the market card whose worth plus its
      coins is highest, if that beats a draw: the draw's expected worth over the unseen
      mix of cards, less the coins it lays on the market. A draw it cannot pay for is not
      legal, and then it takes the best card it may.

    **What it assumes about its opponents.** It reads only public counts: a rival holds what
    it shows (its portfolio and the hand cards seen taken from the market); the rival's
    other hand cards count as none. Against players who keep their majorities hidden in
    hand (``greedy`` does) it misjudges races it thinks it leads. It does not model how
    rivals will play, and it gives them nothing to take: its own draws are cheap when
    others feed the market little.
    """

    name = "hoarder"
    needs = frozenset({"rules"})  # a draw is free on a market row (Rules.market_row)

    def __init__(self, seed: int | None = None, lead_value: float = 2.0):
        super().__init__(seed)
        self.lead_value = check_weight("lead_value", lead_value)

    def act(self, obs, mask, *, public=None, history=None, rules=None):
        obs, mask = check_act_inputs(obs, mask)
        return hoarder_actions(features(obs, rules), mask, self.lead_value)


def hoarder_actions(f: Features, mask: np.ndarray, lead_value: float) -> np.ndarray:
    """int64[B]: the hoarder's action in each game; mask bool[B, 19]."""
    b = f.batch_size
    mine = f.holdings  # [C, B]
    margin = mine - f.rivals_shown()  # [C, B] > 0: I lead by the public count
    scores = np.full((NUM_ACTIONS, b), -np.inf, np.float32)

    # Take phase: a card that gives or keeps a lead is worth lead_value, any other costs 1.
    worth = np.where(margin + 1 > 0, lead_value, -1.0)  # [C, B]
    scores[Action.TAKE:Action.KEEP] = worth + f.take_coins
    scores[Action.DRAW] = (f.draw_odds() * worth).sum(axis=0) - f.draw_cost()

    # Put-down phase: face up the weakest company (ties: the lowest id); the market never.
    has = f.put_phase[None] & (f.hand > 0)
    scores[Action.KEEP:Action.MARKET] = np.where(has, -margin, -np.inf)
    return best_legal(scores, mask)
