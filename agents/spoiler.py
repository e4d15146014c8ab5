"""The rule-based ``spoiler`` bot: it contests whoever leads each company."""

from __future__ import annotations

import numpy as np

from startups_env.startups.rules import NUM_ACTIONS, Action

from .base import Agent, check_act_inputs
from .features import Features, features
from .greedy import best_legal, check_weight


class SpoilerAgent(Agent):
    """A style that plays against the leaders: it spends its turns catching up with whoever
    leads a company, because a tie pays nobody and an overtaken leader pays the bot.

    For each company it compares its own cards (hand + portfolio) with the most any rival
    shows. A company is *contested* when a rival shows at least as many as the bot and at
    most ``reach`` more (default 1); it is *lost* when a rival shows more than that; otherwise the bot
    leads it (or nobody holds it).

    * **Take.** A card of a contested company is worth 3 coins, less half a coin per card
      the leader is ahead, plus a tenth of what that leader would collect (the cards every
      rival shows); one of a company it leads is worth 1, one of a lost company costs 1.
      It takes the market card whose worth plus its coins is highest, if that beats a
      draw: the draw's expected worth over the unseen mix of cards, less the coins it
      lays on the market. A draw it cannot pay for is not legal, and then it takes the
      best card it may.
    * **Put down.** It sends lost companies' cards to the market (each would cost a coin at
      the end), the most hopeless first. Otherwise it lays a contested company's card face
      up (the closest race first), where the leader sees the race and the chip may change
      hands; failing that, the card of the company it leads by most. It feeds the market
      no card of a company it contests or leads.

    **What it assumes about its opponents.** It reads only public counts: a rival holds what
    it shows (its portfolio and the hand cards seen taken from the market), its other hand
    cards count as none, so a leader who hides cards in hand (``greedy`` does) is not seen
    as one, and a race that looks tied may not be. It assumes that the leader it sees is
    the one to stop, and does not model how rivals will play.
    """

    name = "spoiler"
    needs = frozenset({"rules"})  # a draw is free on a market row (Rules.market_row)

    def __init__(self, seed: int | None = None, reach: float = 1.0):
        super().__init__(seed)
        self.reach = check_weight("reach", reach)
        if self.reach < 0:
            raise ValueError(f"reach must be >= 0 cards, got {reach!r}")

    def act(self, obs, mask, *, public=None, history=None, rules=None):
        obs, mask = check_act_inputs(obs, mask)
        return spoiler_actions(features(obs, rules), mask, self.reach)


def spoiler_actions(f: Features, mask: np.ndarray, reach: float) -> np.ndarray:
    """int64[B]: the spoiler's action in each game; mask bool[B, 19]."""
    b = f.batch_size
    shown = f.rivals_shown()  # [C, B] the most cards a rival shows
    deficit = shown - f.holdings  # [C, B] how far the bot is behind the leader it sees
    contested = (shown > 0) & (deficit >= 0) & (deficit <= reach)
    lost = deficit > reach
    # What a leader would collect from the others, as far as the bot can see it.
    prize = ((f.portfolios[1:] + f.known[1:]) * f.others[1:, None, :]).sum(axis=0)  # [C, B]
    scores = np.full((NUM_ACTIONS, b), -np.inf, np.float32)

    # Take phase: a contested card is worth 3 - deficit / 2 + prize / 10 (the closest race
    # first, the richest leader among equals), a led company's card 1, a lost one -1.
    worth = np.where(contested, 3.0 - 0.5 * deficit + 0.1 * prize, np.where(lost, -1.0, 1.0))
    scores[Action.TAKE:Action.KEEP] = worth + f.take_coins
    scores[Action.DRAW] = (f.draw_odds() * worth).sum(axis=0) - f.draw_cost()

    # Put-down phase: dump lost companies (the most hopeless first), else lay a contested
    # card face up (closest leader first), else the card of the widest lead (a deficit is
    # at most 10 cards, so the three kinds of card keep their order).
    has = f.put_phase[None] & (f.hand > 0)
    keep = np.where(contested, 20.0 - deficit, np.where(lost, -20.0, -deficit))
    market = np.where(lost, 20.0 + deficit, -20.0)
    scores[Action.KEEP:Action.MARKET] = np.where(has, keep, -np.inf)
    scores[Action.MARKET:] = np.where(has & ~f.barred, market, -np.inf)
    return best_legal(scores, mask)
