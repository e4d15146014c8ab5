"""The ``search`` bot (:class:`SearchAgent`), set by one :class:`SearchConfig`.

Modules: :mod:`.search` (the search loop and the agent), :mod:`.worlds` (drawing the
worlds: :func:`determinize`, :class:`WorldPool`, :func:`sample_hands`), :mod:`.inference`
(reading the other hands from the table's put-downs), :mod:`.rollout` (playing and valuing
the rollouts), :mod:`.backends` (the steps that differ between numpy and numba, chosen once
per search), and the compiled kernels :mod:`.worlds_kernel` and :mod:`.rollout_kernel`
(imported on first use: they need numba).
"""

from .backends import NumbaBackend, NumpyBackend, SearchBackend, search_backend
from .config import OPPONENT_MODELS, VALUES, SearchConfig
from .inference import older_put_down_evidence, put_down_log_likelihood, seat_log_likelihoods
from .rollout import NUM_PLANS, PLAN_FIRST, PLAN_SECOND, Rollouts
from .search import SearchAgent
from .worlds import (
                     COMPOSITION_VALID,
                     COMPOSITIONS,
                     MAX_COMPOSITIONS,
                     WorldPool,
                     determinize,
                     hidden_hand_counts,
                     sample_hands,
)

__all__ = ["COMPOSITIONS", "COMPOSITION_VALID", "MAX_COMPOSITIONS", "NUM_PLANS", "OPPONENT_MODELS", "PLAN_FIRST",
           "PLAN_SECOND", "VALUES", "NumbaBackend", "NumpyBackend", "Rollouts", "SearchAgent", "SearchBackend",
           "SearchConfig", "WorldPool", "determinize", "hidden_hand_counts", "older_put_down_evidence",
           "put_down_log_likelihood", "sample_hands", "search_backend", "seat_log_likelihoods"]
