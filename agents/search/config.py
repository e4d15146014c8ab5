"""The search bot's settings: one frozen :class:`SearchConfig`, checked when it is built."""

from __future__ import annotations

import dataclasses

import numpy as np

from startups_env.checks import is_int
from startups_env.startups.backend import BACKENDS

from ..greedy import GreedyParams

VALUES = ("soft", "win", "rank")
OPPONENT_MODELS = ("greedy", "random", "adaptive")

# (field, smallest value) of the fields that count something.
_COUNTS = (("determinizations", 1), ("rollouts", 1), ("max_rollouts", 1), ("halving_rounds", 0),
           ("max_candidates", 0), ("horizon", 0), ("turn_puts", 0), ("halving_width", 1),
           ("inference_oversample", 1))
_NUMBERS = ("rollout_epsilon", "soft_scale", "greedy_prior", "other_type_epsilon", "greedy_anchor",
            "inference_temperature", "race_z", "max_world_factor")
_SWITCHES = ("infer_hands", "read_takes", "types_per_world")


@dataclasses.dataclass(frozen=True, kw_only=True)
class SearchConfig:
    """Everything that sets how the search bot searches; a bad field is a ValueError that
    names it. ``SearchAgent(determinizations=8)`` builds ``SearchConfig(determinizations=8)``,
    and so does the spec ``search[determinizations=8]``.

    Budget:
        determinizations: sampled worlds per candidate in the first round of a decision at
            the start of the game. Later decisions get more worlds at the same cost, as
            their rollouts are shorter: ``(pile at the deal + 4) / (pile + 4)`` times as
            many (both piles capped at ``horizon``), at most ``max_world_factor`` times.
        max_world_factor: that factor's cap (>= 1).
        halving_rounds: rounds of *sequential halving* after the first: the better half of
            the candidates (by mean value so far) is kept and evaluated on twice as many
            fresh worlds (0: a flat search).
        halving_width: a decision with more candidates than this starts with
            proportionally fewer worlds per candidate and halves more often (down to one
            survivor), so that every round costs about as much as a round over
            ``halving_width`` candidates.
        race_z: after each round, and halfway through the first, a candidate whose mean
            value trails the leader's by more than ``race_z`` standard errors of their
            paired difference over the worlds both met drops out (the leader stays; a
            decision whose leader is clear of every other candidate stops). 0: plain
            sequential halving; else >= 1.
        max_candidates: search only this many legal actions, the best by the greedy
            bot's own scores (0: all of them).
        turn_puts: whole-turn planning: at a take decision each market take is searched
            as whole turns, the take followed by each of its ``turn_puts`` best legal
            put-downs (by the greedy bot's scores); the best plan's take is played and the
            put-down decision that follows is searched afresh. Draws stay single actions
            (the drawn card is not known). 0: single actions only.
        greedy_anchor: in [0, 1), in units of the value: a plan that starts with the
            greedy bot's own move counts this much more, so another plan is played only
            where its mean value beats it by more (0: no anchor).
        max_rollouts: rollouts per batch (bounds the memory).

    Rollouts:
        horizon: rollouts stop after this many turns and the game is scored as it stands
            (the simulator's turn-cap scoring: hands added, as if the pile had run out);
            0: to the end. In the round game a rollout always stops at the end of its
            round and is valued by that round's result.
        value: how a rollout is valued for the mover. ``"soft"``: ``1 / (1 + exp(-(margin
            + 0.5) / soft_scale))`` of its final score margin over the best rival (a win
            has margin >= 0); ``"win"``: 1 for a win, else 0; ``"rank"``: ``1 - 2 rank /
            (N - 1)``.
        soft_scale: the soft value's scale, in points (> 0).
        rollouts: rollouts per world and candidate (more than 1 only helps with random
            moves).
        rollout_epsilon: in [0, 1], every seat's chance of a uniformly random legal move
            at each rollout step (0: every candidate of a game meets the same worlds and
            the same moves: common random numbers).
        greedy: the greedy bot's weights, for the rollouts' moves, the candidates'
            order and the put-down model of hand reading.

    Hand reading and the opponent model:
        infer_hands: read the other players' hands from their latest put-downs in the
            table's ``history`` (then ``act`` needs it); False: uniformly dealt hands.
        inference_temperature: the put-down model's noise, in units of the greedy bot's
            scores: ``P(action) ~ exp(score / inference_temperature)`` (> 0). Lower
            trusts the model more, and under the adaptive model counts a put-down greedy
            would not have made more strongly against the seat being greedy.
        read_takes: also weigh each hand hypothesis by the chance of the take of the
            player's latest turn (a draw, or which market card) with the hand it implies.
        inference_oversample: hand hypotheses drawn from the posteriors per world of the
            first round, once per decision; every round draws its worlds' hands from them
            by weight.
        opponent_model: ``"greedy"``: the other players play like the greedy bot, in the
            rollouts and in the put-down model. ``"random"``: uniformly random legal moves
            (the searching seat still plays greedy); no hands are read, as a random
            player's put-down says nothing about its hand. ``"adaptive"``: each other
            player is, a priori with chance ``greedy_prior``, a softmax-greedy player, else
            a uniformly random one; its older put-downs of the round, then its last two
            read with the hands, weigh the two; the hands are read under that mixture; and
            the rollouts play the seat as one type or the other (``types_per_world``,
            ``other_type_epsilon``).
        greedy_prior: the adaptive model's prior chance that a player is greedy, in (0, 1).
        types_per_world: True: each sampled world draws every other seat's type once,
            greedy with the chance that it is greedy, and the seat plays as that type in
            every rollout from the world. False: at each of its moves the seat plays as the
            second type with the chance that it is not greedy.
        other_type_epsilon: in (0, 1]: the adaptive model's second type moves uniformly at
            random with this chance, else as the greedy bot (1: a uniformly random player).
            Hand reading weighs the two types by greedy against uniformly random put-downs
            whatever its value.

    belief: None, or the path of a hand-belief network (:mod:`.belief`, trained by
        ``python -m startups_env.train.belief``): the other players' hands are then drawn
        from the network's base (card counting, or the hand reading's posterior: the
        ``base`` it was trained on) times its per-card evidence (the adaptive model still
        reads each seat's type from its put-downs, for the rollouts). Needs the hand reading's History
        (``reads_hands``). Loaded when the bot is built: a bad file is a ValueError then.

    backend: ``"numba"``, ``"numpy"`` or None (the fastest installed), for the search's own
    steps (:mod:`.backends`); both give the same decisions for the same seed where no
    random move is drawn in the rollouts (their random moves come from different
    generators)."""

    determinizations: int = 144
    max_world_factor: float = 4.0
    halving_rounds: int = 2
    halving_width: int = 8
    race_z: float = 2.5
    max_candidates: int = 0
    turn_puts: int = 3
    greedy_anchor: float = 0.0
    max_rollouts: int = 1 << 16
    horizon: int = 20
    value: str = "soft"
    soft_scale: float = 4.0
    rollouts: int = 1
    rollout_epsilon: float = 0.0
    greedy: GreedyParams = dataclasses.field(default_factory=GreedyParams)
    infer_hands: bool = True
    inference_temperature: float = 0.03
    read_takes: bool = False
    inference_oversample: int = 6
    opponent_model: str = "adaptive"
    greedy_prior: float = 0.5
    types_per_world: bool = True
    other_type_epsilon: float = 0.3
    belief: str | None = None
    backend: str | None = None

    def __post_init__(self):
        for name, low in _COUNTS:
            number = getattr(self, name)
            if not is_int(number) or number < low:
                raise ValueError(f"{name} must be an int >= {low}, got {number!r}")
            object.__setattr__(self, name, int(number))
        for name in _NUMBERS:
            number = getattr(self, name)
            if isinstance(number, (bool, np.bool_)) or not isinstance(number, (int, float, np.integer, np.floating)):
                raise ValueError(f"{name} must be a number, got {number!r}")
            object.__setattr__(self, name, float(number))
        for name in _SWITCHES:
            switch = getattr(self, name)
            if not isinstance(switch, (bool, np.bool_)):
                raise ValueError(f"{name} must be true or false, got {switch!r}")
            object.__setattr__(self, name, bool(switch))
        self._check_choices()
        if not isinstance(self.greedy, GreedyParams):
            raise ValueError(f"greedy must be a GreedyParams, got {self.greedy!r}")
        if self.belief is not None and (not isinstance(self.belief, str) or not self.belief):
            raise ValueError(f"belief must be None or the path of a hand-belief checkpoint, got {self.belief!r}")
        if self.belief is not None and not self.reads_hands:
            raise ValueError("belief draws the hands from the table's history: it needs infer_hands=True and an "
                             "opponent_model other than 'random'")
        if self.backend is not None and self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS} or None (the fastest installed), got {self.backend!r}")

    def _check_choices(self) -> None:
        """The choices among names, and the numbers' ranges (NaN is in none)."""
        if not 0.0 <= self.rollout_epsilon <= 1.0:
            raise ValueError(f"rollout_epsilon must be in [0, 1], got {self.rollout_epsilon!r}")
        if self.value not in VALUES:
            raise ValueError(f"value must be one of {VALUES}, got {self.value!r}")
        if self.opponent_model not in OPPONENT_MODELS:
            raise ValueError(f"opponent_model must be one of {OPPONENT_MODELS}, got {self.opponent_model!r}")
        if not self.soft_scale > 0:
            raise ValueError(f"soft_scale must be positive, got {self.soft_scale!r}")
        if not 0.0 < self.greedy_prior < 1.0:
            raise ValueError(f"greedy_prior must be in (0, 1), got {self.greedy_prior!r}")
        if not 0.0 < self.other_type_epsilon <= 1.0:
            raise ValueError(f"other_type_epsilon must be in (0, 1], got {self.other_type_epsilon!r}")
        if not 0.0 <= self.greedy_anchor < 1.0:
            raise ValueError(f"greedy_anchor must be in [0, 1), got {self.greedy_anchor!r}")
        if not self.inference_temperature > 0:
            raise ValueError(f"inference_temperature must be positive, got {self.inference_temperature!r}")
        if not (self.race_z == 0 or self.race_z >= 1):
            raise ValueError(f"race_z must be 0 (off) or >= 1, got {self.race_z!r}")
        if not self.max_world_factor >= 1:
            raise ValueError(f"max_world_factor must be >= 1, got {self.max_world_factor!r}")

    @property
    def reads_hands(self) -> bool:
        """Whether the search reads the other hands from the table's history:
        ``infer_hands``, except under the random opponent model (a random player's
        put-down says nothing about its hand)."""
        return self.infer_hands and self.opponent_model != "random"
