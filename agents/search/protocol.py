"""What the search asks of a backend (:class:`SearchBackend`): the steps that differ
between numpy and the compiled kernels. :mod:`.backends` implements it twice; the search's
other modules name only this protocol, so none of them imports the implementations."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from startups_env.startups.rules import Rules
from startups_env.startups.state import State

from ..greedy import GreedyParams


class SearchBackend(Protocol):
    """The search's operations on one backend (see :mod:`.backends` for each contract)."""

    name: str

    def take(self, state: State, rows: np.ndarray) -> State: ...

    def deal_hidden_cards(self, keys: np.ndarray, pool: np.ndarray, need: np.ndarray, world: State) -> None: ...

    def draw_counts(self, keys: np.ndarray, pool: np.ndarray, need: np.ndarray) -> np.ndarray: ...

    def hands_from_draws(self, cumulative: np.ndarray, draws: np.ndarray, seats: np.ndarray, need: np.ndarray,
                         log_deal: np.ndarray, pool: np.ndarray, count: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray]: ...

    def decision_log_probs(self, states: State, rows: np.ndarray, seat: int, hand: np.ndarray, action: np.ndarray,
                           params: GreedyParams, temperature: float, rules: Rules) -> np.ndarray: ...

    def fused_rollouts(self): ...
