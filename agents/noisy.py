"""The ``noisy`` bot: the greedy bot's move, or now and then a uniformly random legal one."""

from __future__ import annotations

from startups_env.startups import queries

from .base import Agent, check_act_inputs
from .features import features
from .greedy import GreedyParams, check_weight, greedy_actions


class NoisyAgent(Agent):
    """A sensible player who makes mistakes: in each game and at each decision, with
    probability ``epsilon`` it plays a uniformly random legal move, otherwise the greedy
    bot's move (:class:`~startups_env.agents.greedy.GreedyAgent`, default weights).
    ``epsilon=0`` is the greedy bot, ``epsilon=1`` the random one.

    The coin is tossed per game, from the bot's own generator: one draw for every game of
    the batch, then one uniform pick for each game whose coin came up random.

    **What it assumes about its opponents.** What the greedy bot assumes, on its sensible
    moves: rivals' unknown hand cards are spread like the cards it cannot see, and nobody
    is modelled beyond the end of the current turn. Its random moves assume nothing.
    """

    name = "noisy"
    needs = frozenset({"rules"})  # a draw is free on a market row (Rules.market_row)

    def __init__(self, seed: int | None = None, epsilon: float = 0.3):
        super().__init__(seed)
        self.epsilon = check_weight("epsilon", epsilon)
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must be a probability in [0, 1], got {epsilon!r}")
        self.params = GreedyParams()

    def act(self, obs, mask, *, public=None, history=None, rules=None):
        obs, mask = check_act_inputs(obs, mask)
        actions = greedy_actions(features(obs, rules), mask, self.params)
        noise = self.rng.random(len(actions)) < self.epsilon
        if noise.any():
            actions[noise] = queries.uniform_legal(mask[noise], self.rng)
        return actions
