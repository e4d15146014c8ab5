"""The search's steps that differ between its backends, one object per backend with the
same methods.

A search resolves its backend once, when it is built (:func:`search_backend`), and hands
the object to every function that needs one. :class:`NumpyBackend` is the reference; the
compiled :class:`NumbaBackend` gives the same results from the same random numbers (the
callers draw them from their generator before they ask the backend): the same worlds and
hands (tests/test_worlds_kernel.py), the same decision log-probabilities to rounding
(tests/test_greedy_kernel.py) and the same rollout values where no random move is drawn
(tests/test_rollout_kernel.py; random moves come from different generators).
"""

from __future__ import annotations

import numpy as np

from startups_env.startups.backend import pick_backend
from startups_env.startups.rules import Rules
from startups_env.startups.state import State, deal_hidden_cards

from ..greedy import GreedyParams
from . import inference, worlds
from .protocol import SearchBackend


class NumpyBackend:
    """The reference: numpy array operations, and rollouts stepped by a numpy Simulator
    (with a ``name`` for the simulators the search builds)."""

    name = "numpy"

    def take(self, state: State, rows: np.ndarray) -> State:
        """``state.take(rows)``: the games ``rows`` (int[r], may repeat) as a new State."""
        return state.take(rows)

    def deal_hidden_cards(self, keys: np.ndarray, pool: np.ndarray, need: np.ndarray, world: State) -> None:
        """:func:`startups_env.startups.state.deal_hidden_cards`: each world's pool dealt in the order of
        ``keys`` (changed) into its hands' ``need`` hidden cards, its pile and its removed
        cards (``world.hand`` and ``world.deck`` written)."""
        deal_hidden_cards(keys, pool, need, world)

    def draw_counts(self, keys: np.ndarray, pool: np.ndarray, need: np.ndarray) -> np.ndarray:
        """int64[C, r]: :func:`.worlds.count_first_cards`, the first ``need[i]`` cards of
        each pool in the order of ``keys`` (changed), as counts per company."""
        return worlds.count_first_cards(keys, pool, need)

    def hands_from_draws(self, cumulative: np.ndarray, draws: np.ndarray, seats: np.ndarray, need: np.ndarray,
                         log_deal: np.ndarray, pool: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:func:`.worlds.hands_from_draws`: the hidden hands and log-weights that
        :func:`.worlds.sample_hands` draws."""
        return worlds.hands_from_draws(cumulative, draws, seats, need, log_deal, pool, count)

    def decision_log_probs(self, states: State, rows: np.ndarray, seat: int, hand: np.ndarray, action: np.ndarray,
                           params: GreedyParams, temperature: float, rules: Rules) -> np.ndarray:
        """float64[r]: :func:`.inference.decision_log_prob` of ``seat`` holding ``hand``
        (int[C, r]) and playing ``action`` (int[r]) in rows ``rows`` of ``states`` (not
        changed; all at a put-down or all at a take)."""
        return inference.decision_log_prob(states.take(rows), seat, hand, action, params, temperature, rules)

    def fused_rollouts(self):
        """The module of compiled rollouts (:mod:`.rollout_kernel`), or None: here the
        Simulator steps them."""
        return None


class NumbaBackend:
    """The compiled kernels: :mod:`.worlds_kernel` deals the worlds and draws the hands,
    :func:`startups_env.startups.numba_backend.take_games` gathers the rollouts' copies; :func:`startups_env.agents.greedy_kernel.decision_log_probs`
    weighs the hand hypotheses; :mod:`.rollout_kernel` plays whole batches of greedy
    rollouts in one call; the search's simulators run on the compiled kernels. Each method
    does what :class:`NumpyBackend`'s of the same name does. (The kernel modules are
    imported on first use: they need numba.)"""

    name = "numba"

    def take(self, state: State, rows: np.ndarray) -> State:
        from startups_env.startups.numba_backend import take_games

        return take_games(state, rows)

    def deal_hidden_cards(self, keys: np.ndarray, pool: np.ndarray, need: np.ndarray, world: State) -> None:
        from . import worlds_kernel

        worlds_kernel.deal_hidden_cards(keys, pool, need.astype(np.int64), world.pile_pos.astype(np.int64),
                                        world.hand, world.deck)

    def draw_counts(self, keys: np.ndarray, pool: np.ndarray, need: np.ndarray) -> np.ndarray:
        from . import worlds_kernel

        return worlds_kernel.draw_counts(keys, np.ascontiguousarray(pool, np.int64), need.astype(np.int64))

    def hands_from_draws(self, cumulative: np.ndarray, draws: np.ndarray, seats: np.ndarray, need: np.ndarray,
                         log_deal: np.ndarray, pool: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        from . import worlds_kernel

        return worlds_kernel.hands_from_draws(cumulative, draws, seats, need, log_deal, pool, count,
                                              worlds.COMPOSITIONS, worlds.COMPOSITION_VALID, worlds.LOG_FACTORIAL)

    def decision_log_probs(self, states: State, rows: np.ndarray, seat: int, hand: np.ndarray, action: np.ndarray,
                           params: GreedyParams, temperature: float, rules: Rules) -> np.ndarray:
        from ..greedy_kernel import decision_log_probs  # (reads the rows in place)

        return decision_log_probs(states, rows, hand, action, params, temperature)

    def fused_rollouts(self):
        from . import rollout_kernel

        return rollout_kernel


SEARCH_BACKENDS = {"numpy": NumpyBackend, "numba": NumbaBackend}


def search_backend(name: str | None = None) -> SearchBackend:
    """The search's operations on the backend ``name``: ``"numpy"``, ``"numba"``, or None
    for the fastest installed (a ValueError names the choices, or says how to install
    numba)."""
    return pick_backend(SEARCH_BACKENDS, name)()
