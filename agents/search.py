"""The ``search`` bot: determinized Monte-Carlo search with batched rollouts on the Simulator.

For each decision with more than one legal action the bot

1. samples worlds consistent with what its player has seen: from the public state, each
   other player's hand keeps its publicly known cards and the rest of it is hidden; the
   pile and the removed cards are the cards the player cannot see (``State.unseen``)
   that no hand holds, shuffled (:func:`determinize`). From the table's put-downs (the
   :class:`~startups_env.startups.history.History` every driver keeps for it; everyone sees them),
   it *reads the other players' hands*: a player who has not moved since its last
   put-down held its present hand plus the card it put down, and before that, its hand
   then less the card its take gained (public for a market take; for a draw, any card
   of that hand not publicly known to be there) plus the card it put down the turn
   before. Every way the player's hidden cards can be made up (at most 56) is weighed by
   its chance in a uniform deal from the unseen cards times how likely a greedy player
   with softmax noise would have been to put down those cards (with ``read_takes``, also
   to make the take of its latest turn) (:func:`seat_log_likelihoods`): an exact
   posterior per player. Each world draws every hand from its player's posterior, and is
   weighted by how the joint deal of the hands differs from their separate deals
   (:func:`sample_hands`); the search draws its worlds' hands by these weights from
   ``inference_oversample`` times as many, and deals each drawn world a pile of its own;
2. plays each candidate in every world (common random numbers: all candidates of a
   decision face the same worlds), then rolls the game out to the end with the
   ``greedy`` bot playing every seat, each from its own observation of the sampled world
   (optionally with a chance ``rollout_epsilon`` of a random legal move). A candidate is
   a legal action, or at a take decision a *whole turn*: a market take followed by one
   of its ``turn_puts`` best put-downs (the card gained is known, so the turn can be
   planned; a draw stays a single action, its put-down left to the rollout);
3. scores a rollout by the mover's result: by default a logistic of the final score
   margin over the best rival (``value="soft"``; it orders actions by winning chances
   with less noise than the 0/1 win, ``value="win"``, which is also available);
4. allocates the budget by *sequential halving*: every candidate gets
   ``determinizations`` worlds (more late in the game, where rollouts are short; fewer
   where there are more than ``halving_width`` candidates), then the better half gets
   twice as many fresh worlds, and so on for ``halving_rounds`` rounds (more where
   there are many candidates); the first action of the best survivor is played. After
   each round (and halfway through the first) a candidate whose value trails the
   leader's clearly (by more than ``race_z`` standard errors of their paired difference:
   the worlds are shared) drops out as well, and a decision whose leader is clear of all
   the others stops there.
   Optionally the greedy bot's own move is favoured: a plan that starts with it counts
   ``greedy_anchor`` more (in units of the value), so the search leaves it only where the
   rollouts say clearly better, a hedge against opponents its model misreads.

In the round game a rollout stops at the end of the current round and is valued by
that round's result (rolling out all four rounds would cost four times as much for
little signal).

**What it assumes about its opponents.** By default (``opponent_model="adaptive"``) that
each plays either like the greedy bot (softmax-greedy) or not, and it weighs the two per
opponent from what the table saw: its older put-downs of the round, then its last two
read with the sampled hands, each against the chance a uniformly random player would have
made it. Hands are read under that mixture (a put-down says something about its
player's hand only as far as the player is greedy). In the rollouts every sampled world
draws each opponent's type once, greedy with the chance that it is greedy: a seat drawn
greedy plays the greedy bot's moves throughout, a seat drawn otherwise plays greedy with
a uniformly random move three times in ten (``other_type_epsilon``). The second type is
a noisy greedy player rather than a random one because the players greedy explains badly
are seldom random throughout: the ladder's spoiler and hoarder make sensible moves most of
the time. The put-down model is sharp by default (``inference_temperature``), so a
put-down that greedy would not have made with any likely hand counts strongly against
the seat being greedy: a style that departs from greedy now and then (the ladder's
hoarder, less so its spoiler) is taken for the noisy type more and more often as its
put-downs add up; the ladder (every bot against every style) shows what each assumption
costs. ``opponent_model="greedy"`` assumes greedy opponents throughout, ``"random"``
uniformly random ones.

Cost: ``python -m startups_env.agents.bench`` prints the seconds per decision at the default
budget (144 worlds, rollouts of up to 20 turns, whole turns with 3 put-downs per take,
hands read from the last two put-downs, the adaptive opponent model) on each backend.
Its strength against the other bots, and what each part of the search (hand reading,
budget, whole turns, opponent model, rollout policy, backend) was measured to be worth,
is logged in the repository's docs/experiments.md.

All rollouts of all games the bot is asked to move in (a whole arena batch) run in one
batch (one compiled call on the numba backend), so the per-decision cost shrinks with
the batch. All game logic comes from ``startups_env.startups.simulator`` and ``startups_env.startups.numba_backend``:
the bot only samples hidden cards and reads results.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import NamedTuple

import numpy as np

from startups_env.startups import queries
from startups_env.startups.simulator import Simulator
from startups_env.startups.state import State
from startups_env.startups.backend import resolve_backend
from startups_env.checks import is_int
from startups_env.startups.observe import observe
from startups_env.startups.rules import (DECK_SIZE, HAND_SIZE, MAX_PLAYERS, NUM_ACTIONS, NUM_COMPANIES, NUM_REMOVED, Action,
                                Rules, pile_start)

from startups_env.startups.history import History
from startups_env.table.policy import needs_of

from .base import Agent, check_act_inputs
from .features import features, state_features
from .greedy import GreedyParams, greedy_actions, greedy_scores

P, C = MAX_PLAYERS, NUM_COMPANIES

# Plans: what a candidate of the search plays before the rollout. Plans 0-18 are single
# actions; plan 19 + 12 c + k is the whole turn "take company c from the market, then
# put-down 7 + k" (see ``SearchAgent.turn_puts``).
PUTS = NUM_ACTIONS - Action.KEEP  # 12 put-down actions
MAX_PUT_DOWN_EVIDENCE = 5.0  # the most one older put-down can count against the greedy model (log-odds)
NUM_PLANS = NUM_ACTIONS + C * PUTS
PLAN_FIRST = np.concatenate([np.arange(NUM_ACTIONS), np.repeat(Action.TAKE + np.arange(C), PUTS)])
PLAN_SECOND = np.concatenate([np.full(NUM_ACTIONS, -1), np.tile(Action.KEEP + np.arange(PUTS), C)])


def determinize(public: State, seat: np.ndarray, count, rng: np.random.Generator,
                backend: str | None = None, hands: np.ndarray | None = None) -> State:
    """``count`` (an int, or int[n] per game) sampled worlds per game of ``public`` (a
    ``public_state`` of n games seen by ``seat`` int[n]), as one State; game i's worlds
    are consecutive rows, in game order.

    Other seats' hands are filled from their publicly known cards up to ``HAND_SIZE``
    with cards drawn uniformly without replacement from the unseen pool; the remaining
    pool cards are shuffled into the pile (deck positions ``pile_pos``..44) and the
    removed cards (positions 0..4). The seat's own cards and everything public stay.
    backend: ``"numba"`` deals with :mod:`startups_env.agents.sampling_kernel`, exactly
    the same cards from the same generator as numpy; None: the fastest installed.
    hands: int[7, C, m] (m the number of worlds; 0..HAND_SIZE each), hidden hand cards
    chosen by the caller (e.g. drawn from a posterior, :func:`sample_hands`): they are added
    to each world's hands first and leave the pool; only what they leave open is dealt at
    random.
    """
    n = public.batch_size
    seat = np.asarray(seat, np.intp)
    if seat.shape != (n,):
        raise ValueError(f"seat must have shape [{n}], got {list(seat.shape)}")
    rows = np.repeat(np.arange(n), count)
    world = _take(public, rows, backend)
    m = world.batch_size
    who = seat[rows]
    pool = world.unseen(who).astype(np.int64)  # [C, m]
    players = world.num_players.astype(np.intp)
    seats = np.arange(P)[:, None]
    others = (seats != who[None, :]) & (seats < players[None, :])  # [P, m]
    if hands is not None:
        ok = hands.shape == (P, C, m) and (hands >= 0).all() and (hands <= HAND_SIZE).all()
        if ok:
            hands = hands.astype(np.int8, copy=False)  # (sums in int8: numpy's casting reductions are slow)
            ok = not (hands.sum(axis=1, dtype=np.int8) * ~others).any()
        if not ok:
            raise ValueError(f"hands must be int[{P}, {C}, {m}] counts of 0..{HAND_SIZE} for the other seated seats")
        world.hand += hands
        pool -= hands.sum(axis=0, dtype=np.int8)
        if (pool < 0).any():
            raise ValueError("hands hold more cards of a company than the unseen pool")
    need = hidden_hand_counts(world, who)  # [P, m] unknown hand cards
    if (need < 0).any():
        raise ValueError("a public hand holds more known cards than a hand can")
    pile_left = queries.pile_left(world.pile_pos.astype(np.int64))
    total = pool.sum(axis=0)
    if not np.array_equal(total, need.sum(axis=0) + pile_left + NUM_REMOVED):
        raise ValueError("the unseen pool does not match the hidden hands, pile and removed cards")

    keys = rng.random((m, DECK_SIZE))  # the order of each world's pool cards
    if resolve_backend(backend) == "numba":
        from . import sampling_kernel  # (imported on first use: it needs numba)

        sampling_kernel.deal_hidden_cards(keys, pool, need.astype(np.int64), world.pile_pos.astype(np.int64),
                                          world.hand, world.deck)
        return world
    cards = _shuffled_pool(pool, keys)
    slot = np.arange(DECK_SIZE)

    # The first sum(need) cards go to the hands in seat order.
    hand_bounds = np.cumsum(need, axis=0)  # [P, m]
    owner = (slot[None, None, :] >= hand_bounds.T[:, :, None]).sum(axis=1)  # [m, 45] seat; P = not a hand card
    dealt = owner < P
    flat = (np.nonzero(dealt)[0] * P + owner[dealt]) * C + cards[dealt]
    extra = np.bincount(flat, minlength=m * P * C).reshape(m, P, C)
    world.hand += extra.transpose(1, 2, 0).astype(np.int8)

    # The rest: pile first (drawn from pile_pos on), then the removed cards; a card's
    # source is its place in the shuffled list: after the hand cards, the pile in deck
    # order, then the removed cards in deck order.
    hidden = need.sum(axis=0)  # [m]
    pos = slot[None, :]
    pile_pos = world.pile_pos.astype(np.int64)[:, None]
    removed = np.zeros((1, DECK_SIZE), bool)
    removed[:, queries.REMOVED] = True
    source = np.where(queries.in_pile(world.pile_pos).T, hidden[:, None] + pos - pile_pos,
                      np.where(removed, hidden[:, None] + pile_left[:, None] + pos - queries.REMOVED.start, -1))
    deck = np.where(source >= 0, np.take_along_axis(cards, np.maximum(source, 0), axis=1), -1)
    world.deck[:] = deck.T.astype(np.int8)
    return world


class SearchAgent(Agent):
    """Determinized Monte-Carlo search over greedy rollouts (see the module docstring).

    Args:
        determinizations: sampled worlds per candidate action in the first round, for a
            decision at the start of the game. Later decisions get more worlds at the same
            cost, as their rollouts are shorter (``(pile at the deal + 4) / (pile + 4)``
            times as many, at most ``max_world_factor`` times).
        halving_rounds: rounds of *sequential halving* after the first: the better half of
            the candidates (by mean value so far) is kept and evaluated on twice as many
            fresh worlds, so the budget goes to the close calls (0: flat search).
        max_candidates: search only this many legal actions, the best by the greedy bot's
            own scores (0: all legal actions).
        horizon: rollouts stop after this many turns and the game is scored as it stands
            (the simulator's turn-cap scoring: hands added, as if the pile had run out);
            0: play every rollout to the end. (The default of 20 was chosen by
            measurement: docs/experiments.md.)
        value: ``"soft"`` (default): a logistic of the mover's final score margin over the
            best rival, ``1 / (1 + exp(-(margin + 0.5) / soft_scale))`` (a win has margin
            >= 0), which ranks actions by winning chances with less noise than the 0/1
            win; ``"win"``: 1 for a win, 0 otherwise; ``"rank"``: 1 - 2 rank / (N - 1).
        rollouts: rollouts per world and action (only useful with ``rollout_epsilon`` > 0).
        rollout_epsilon: chance of a uniformly random legal move at each rollout step
            (0: deterministic rollouts, so every candidate of a game faces exactly the
            same worlds: common random numbers).
        rules: the game's rules (rounds, turn cap, reward); the table size is read from the
            state. Default ``Rules()``.
        max_rollouts: rollout games per Simulator batch (memory bound).
        greedy: parameters of the rollout policy.
        turn_puts: whole-turn planning. At a take decision each candidate market take is
            searched as whole turns instead: the take followed by each of the
            ``turn_puts`` best legal put-downs after it (by the greedy bot's scores), so a
            take is valued with a searched put-down rather than the rollout's greedy one
            (the put-down after a market take is known in advance: no card is drawn; the
            same-company rule bars some). The best plan's take is played; the put-down
            decision that follows is searched afresh. Draws stay single actions (the
            drawn card is not known). 0: search single actions only.
        greedy_anchor: a margin, in units of the rollout value (``value``), by which
            another plan's mean value must beat that of the greedy bot's own move (the plans
            that start with it) to be played instead: a hedge against an opponent model
            that misleads the rollouts (default 0: none; 0.03 is about half a point of
            final margin under ``value="soft"``). With the sharp default
            ``inference_temperature`` the search holds up against the ladder's styles
            without it, and it costs strength against greedy players
            (docs/experiments.md).
        race_z: after each round of sequential halving, and halfway through the first, a
            candidate also drops out where its mean value trails the leader's by more than
            ``race_z`` standard errors of their paired difference over the worlds both met
            (the leader stays; a game whose leader is clear of every other candidate stops
            early). Default 2.5; 0: plain sequential halving. It saves the rollouts that
            would only confirm a clear choice: about a third of them, for the same choices
            (docs/experiments.md).
        halving_width: a decision with more candidates than this starts sequential
            halving with proportionally fewer worlds per candidate and halves more often
            (down to one survivor), so that every round costs about as much as a round
            over ``halving_width`` candidates.
        infer_hands: read the other players' hands from their latest put-downs in the
            table's ``history`` (then :meth:`act` requires it: ``needs`` holds
            ``"history"``); False: uniform hands, and no history is needed.
        inference_temperature: the noise of the put-down model, in units of the greedy
            bot's scores: ``P(put-down) ~ exp(score / inference_temperature)``. Lower
            trusts the model more (fewer distinct hands survive), and under the adaptive
            model a put-down that greedy would not have made counts more against the seat
            being greedy. The default, 0.03, is sharp: the greedy bot itself is
            deterministic (chosen by measurement: docs/experiments.md).
        read_takes: hand reading also weighs each hypothesis by how likely the take of the
            player's latest turn (a draw, or which market card) was with the hand it implies
            (default False: put-downs only; measured no stronger, docs/experiments.md).
        inference_oversample: hand hypotheses drawn from the posteriors per world of the
            first round; they are drawn and weighted once per decision, and every round of
            the search draws its worlds' hands from them by weight.
        opponent_model: what the search assumes of the other players, in its rollouts and
            its hand reading. ``"greedy"``: they play like the greedy bot (their
            put-downs are read as a softmax-greedy player's). ``"random"``: uniformly random
            legal moves (the searching seat still plays greedy); a put-down then says
            nothing about its player's hand, so hands are not read (as with
            ``infer_hands=False``). ``"adaptive"`` (default): each other player is, a priori with
            chance ``greedy_prior``, a softmax-greedy player, else a uniformly random one;
            its put-downs in the history weigh the two (per seat and game, afresh at each
            decision: the chance of its put-downs under each model, over every hand it
            can hold), the hands are read under that mixture, and the rollouts play the
            seat as one type or the other (``types_per_world``, ``other_type_epsilon``). The
            seat's older put-downs of the round (``History.older_state``) shift its prior
            first (:func:`older_put_down_evidence`: they are read without the present
            hands). It tells random players from greedy ones well, and styles that play
            much like greedy (hoarder, spoiler) poorly (docs/experiments.md).
        greedy_prior: the adaptive model's prior chance that a player is greedy.
        types_per_world: how the adaptive model plays a seat in the rollouts. True
            (default): each sampled world draws the seat's type once, greedy with the
            chance that it is greedy, and the seat plays as that type throughout the
            world's rollouts, so that every candidate meets the same opponents, each
            played consistently. False: at each of its moves the seat plays as the second
            type with the chance that it is not greedy (a seat believed greedy with chance
            0.5 plays half its moves as the second type would).
        other_type_epsilon: how the adaptive model's second type plays in the rollouts: a
            uniformly random move with this chance at each of its moves, else the greedy
            bot's. Default 0.3: a noisy greedy player; 1 makes it a uniformly random one
            (the default before 2026-12-03, with ``types_per_world=False``). Hand reading
            weighs the two types by greedy against uniformly random put-downs either way
            (that tells the styles apart best; docs/experiments.md).
        rollout_policy: how the rollouts play the searching seat's own later moves: None
            (default) for greedy, like every other seat, or an
            :class:`~startups_env.agents.base.Agent` that acts from observations alone; it
            plays from the seat's observation of the sampled world. A stronger own policy
            values each candidate by what the seat would really go on to do. The policy
            draws from the search's generator (it is reseeded with it, here and by
            :meth:`seed`). By name: ``make_agent("search", rollout_policy="ppo")``, or
            ``search[rollout_policy=ppo]`` on a command line (the registry builds it).
        backend: ``"numba"``: each batch of rollouts is one compiled call
            (:mod:`startups_env.agents.rollout_kernel`: the rules, the greedy policy, the
            random moves and the end-of-round scoring fused), the worlds are dealt and the
            hand reading's greedy scored by compiled kernels
            (:mod:`~startups_env.agents.sampling_kernel`,
            :func:`~startups_env.agents.greedy_kernel.decision_log_probs`), and the simulator
            steps the search needs otherwise run on the compiled kernels; ``"numpy"``: the
            rollouts are stepped by a numpy Simulator with the numpy greedy. Both deal the
            same worlds from the same draws (tests/test_sampling_kernel.py) and give the same
            values for the same worlds without random moves (tests/test_rollout_kernel.py);
            random moves come from different generators. None (default): numba where it is installed. A
            ``rollout_policy`` is stepped by the Simulator on either backend.
    """

    name = "search"
    needs = frozenset({"public", "history"})  # (per instance: no "history" without hand reading)
    VALUES = ("soft", "win", "rank")
    OPPONENT_MODELS = ("greedy", "random", "adaptive")

    def __init__(self, seed: int | None = None, determinizations: int = 144, halving_rounds: int = 2,
                 max_candidates: int = 0, horizon: int = 20, value: str = "soft", soft_scale: float = 4.0,
                 max_world_factor: float = 4.0, rollouts: int = 1, rollout_epsilon: float = 0.0,
                 rules: Rules | None = None, max_rollouts: int = 1 << 16, greedy: GreedyParams | None = None,
                 turn_puts: int = 3, halving_width: int = 8, infer_hands: bool = True,
                 inference_temperature: float = 0.03, inference_oversample: int = 6,
                 opponent_model: str = "adaptive", rollout_policy: Agent | None = None, backend: str | None = None,
                 greedy_prior: float = 0.5, read_takes: bool = False, greedy_anchor: float = 0.0,
                 types_per_world: bool = True, other_type_epsilon: float = 0.3, race_z: float = 2.5):
        super().__init__(seed)
        for label, number, low in (("determinizations", determinizations, 1), ("rollouts", rollouts, 1),
                                   ("max_rollouts", max_rollouts, 1), ("halving_rounds", halving_rounds, 0),
                                   ("max_candidates", max_candidates, 0), ("horizon", horizon, 0),
                                   ("turn_puts", turn_puts, 0), ("halving_width", halving_width, 1),
                                   ("inference_oversample", inference_oversample, 1)):
            if not is_int(number) or number < low:
                raise ValueError(f"{label} must be an int >= {low}, got {number!r}")
        if not 0.0 <= rollout_epsilon <= 1.0:
            raise ValueError(f"rollout_epsilon must be in [0, 1], got {rollout_epsilon!r}")
        if value not in self.VALUES:
            raise ValueError(f"value must be one of {self.VALUES}, got {value!r}")
        if opponent_model not in self.OPPONENT_MODELS:
            raise ValueError(f"opponent_model must be one of {self.OPPONENT_MODELS}, got {opponent_model!r}")
        if not soft_scale > 0:
            raise ValueError(f"soft_scale must be positive, got {soft_scale!r}")
        if not 0.0 < greedy_prior < 1.0:
            raise ValueError(f"greedy_prior must be in (0, 1), got {greedy_prior!r}")
        if not 0.0 < other_type_epsilon <= 1.0:
            raise ValueError(f"other_type_epsilon must be in (0, 1], got {other_type_epsilon!r}")
        if not 0.0 <= greedy_anchor < 1.0:
            raise ValueError(f"greedy_anchor must be in [0, 1), got {greedy_anchor!r}")
        if not inference_temperature > 0:
            raise ValueError(f"inference_temperature must be positive, got {inference_temperature!r}")
        if not (race_z == 0 or race_z >= 1):
            raise ValueError(f"race_z must be 0 (off) or >= 1, got {race_z!r}")
        if not max_world_factor >= 1:
            raise ValueError(f"max_world_factor must be >= 1, got {max_world_factor!r}")
        self.determinizations = int(determinizations)
        self.halving_rounds = int(halving_rounds)
        self.max_candidates = int(max_candidates)
        self.horizon = int(horizon)
        self.value = value
        self.soft_scale = float(soft_scale)
        self.max_world_factor = float(max_world_factor)
        self.rollouts = int(rollouts)
        self.rollout_epsilon = float(rollout_epsilon)
        self.rules = rules if rules is not None else Rules()
        self.max_rollouts = int(max_rollouts)
        self.greedy = greedy if greedy is not None else GreedyParams()
        self.turn_puts = int(turn_puts)
        self.halving_width = int(halving_width)
        self.opponent_model = opponent_model
        # Hand reading models the other players as greedy (or, adaptive, as greedy or random):
        # under the random model a put-down says nothing about the hand.
        self.infer_hands = bool(infer_hands) and opponent_model != "random"
        self.greedy_prior = float(greedy_prior)
        self.needs = frozenset({"public", "history"} if self.infer_hands else {"public"})
        self.inference_temperature = float(inference_temperature)
        self.inference_oversample = int(inference_oversample)
        self.read_takes = bool(read_takes)
        self.greedy_anchor = float(greedy_anchor)
        self.types_per_world = bool(types_per_world)
        self.other_type_epsilon = float(other_type_epsilon)
        self.race_z = float(race_z)
        # None: the searching seat plays greedy in the rollouts, like every other seat.
        self.rollout_policy = _rollout_policy(rollout_policy, self.rng)
        self.backend = resolve_backend(backend)

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        if self.rollout_policy is not None:
            self.rollout_policy.seed(self.rng)

    def act(self, obs, mask, *, public=None, history: History | None = None):
        """public: ``startups_env.startups.state.public_state(state, seats)`` of the same games;
        history: their :class:`~startups_env.startups.history.History` (required unless the bot
        was built with ``infer_hands=False``; ignored then)."""
        obs, mask = check_act_inputs(obs, mask)
        if public is None or not isinstance(public, State) or public.batch_size != obs.shape[0]:
            raise ValueError("search needs public=startups_env.startups.state.public_state(state, seats) for the same games")
        if self.infer_hands:
            if history is None:
                raise ValueError("search reads the other hands from history= (the startups_env.startups.history.History "
                                 "of the same games, e.g. table.history.take(games)); pass it, or build the bot "
                                 "with infer_hands=False to search uniformly sampled hands")
            if not isinstance(history, History) or history.batch_size != obs.shape[0]:
                raise ValueError("history must be the startups_env.startups.history.History of the same games "
                                 "(history.take(games))")
        choice = mask.argmax(axis=1).astype(np.int64)  # the only legal action where there is one
        open_games = np.flatnonzero(mask.sum(axis=1) > 1)
        if open_games.size:
            public = public.take(open_games)
            log = history.take(open_games) if self.infer_hands else None
            plans = self._plans(public, self._candidates(obs[open_games], mask[open_games]))
            favored = None
            if self.greedy_anchor:
                greedy_choice = greedy_actions(features(obs[open_games]), mask[open_games], self.greedy)
                favored = PLAN_FIRST[None, :] == greedy_choice[:, None]
            choice[open_games] = PLAN_FIRST[self._search(public, plans, log, favored)]
        return choice

    def _candidates(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The legal actions worth searching: the ``max_candidates`` best by the greedy
        bot's own scores (all of them if ``max_candidates`` is 0)."""
        if not self.max_candidates or (mask.sum(axis=1) <= self.max_candidates).all():
            return mask
        scores = np.where(mask.T, greedy_scores(features(obs), self.greedy), -np.inf).T  # [B, 19]
        return mask & _top(scores, mask, self.max_candidates)

    def _plans(self, public: State, candidates: np.ndarray) -> np.ndarray:
        """bool[n, NUM_PLANS]: the plans to search. With ``turn_puts``, each candidate
        market take of a game in its take phase is replaced by whole turns: the take
        followed by each of the ``turn_puts`` best put-downs (by the greedy bot's scores)
        that are legal after it; draws and put-down decisions stay single actions."""
        n = public.batch_size
        plans = np.zeros((n, NUM_PLANS), bool)
        plans[:, :NUM_ACTIONS] = candidates
        if not self.turn_puts:
            return plans
        game, company = np.nonzero(candidates[:, Action.TAKE:Action.KEEP])
        if game.size == 0:
            return plans
        # Play each take on a copy of the public state (a market take draws nothing, so
        # the hidden cards do not matter); the simulator says which put-downs are legal.
        sim = Simulator.from_state(public.take(game), self.rules, backend=self.backend)
        sim.step(Action.TAKE + company)
        mask = sim.legal_mask()[:, Action.KEEP:]  # [k, 12]
        scores = greedy_scores(state_features(sim.state), self.greedy)[Action.KEEP:].T  # [k, 12]
        best = _top(np.where(mask, scores, -np.inf), mask, self.turn_puts)
        plans[game, Action.TAKE + company] = False
        rows, put = np.nonzero(best)
        plans[game[rows], NUM_ACTIONS + company[rows] * PUTS + put] = True
        return plans

    def _worlds(self, public: State) -> np.ndarray:
        """int[n] worlds per candidate in the first round: more late in the game, where
        rollouts are short (their cost grows with the cards left in the pile, about a
        turn per card, up to the horizon)."""
        dealt_pile = queries.pile_left(pile_start(public.num_players.astype(np.float64)))
        pile = queries.pile_left(public.pile_pos.astype(np.float64))
        if self.horizon:
            dealt_pile = np.minimum(dealt_pile, self.horizon)
            pile = np.minimum(pile, self.horizon)
        factor = np.clip((dealt_pile + 4.0) / (pile + 4.0), 1.0, self.max_world_factor)
        return np.round(self.determinizations * factor).astype(np.int64)

    def _search(self, public: State, candidates: np.ndarray, log: History | None,
                favored: np.ndarray | None = None) -> np.ndarray:
        """Best plan in each of n games by sequential halving over the candidate plans
        (bool[n, NUM_PLANS]). A game with more than ``halving_width`` candidates starts with
        proportionally fewer worlds per candidate and halves more often, so that every
        round costs about the same. After each round (and halfway through the first),
        candidates that trail the leader clearly (``race_z``: :func:`_clear_losers`) drop
        out too, and a game stops where one candidate is left. ``favored`` (bool[n,
        NUM_PLANS], optional): plans whose value counts ``greedy_anchor`` more."""
        seat = public.current.astype(np.intp)
        alive = candidates.copy()
        count = alive.sum(axis=1)
        # Summed values (bonus included); all surviving candidates of a game have met the same worlds.
        sums = np.zeros(alive.shape)
        bonus = None if favored is None else self.greedy_anchor * favored
        worlds = self._worlds(public)
        pool = None if log is None else self._hand_hypotheses(public, seat, worlds, log)
        wide = count > self.halving_width
        worlds[wide] = np.maximum(1, np.round(worlds[wide] * self.halving_width / count[wide])).astype(np.int64)
        last = np.maximum(self.halving_rounds, np.ceil(np.log2(np.maximum(count, 1))).astype(np.int64) - 1)
        rounds: list[Outcomes] = []
        for round_, played, round_ends in self._schedule(worlds):
            count = alive.sum(axis=1)
            live = (count > 1) & (round_ <= last)
            if not live.any():
                break
            open_games = np.flatnonzero(live & (played > 0))
            if open_games.size:
                outcomes = self._evaluate(public.take(open_games), seat[open_games], alive[open_games],
                                          played[open_games], None if pool is None else pool.take(open_games))
                outcomes = outcomes._replace(game=open_games[outcomes.game])
                if bonus is not None:
                    outcomes = outcomes._replace(value=outcomes.value + bonus[outcomes.game, outcomes.plan])
                rounds.append(outcomes)
                sums += np.bincount(outcomes.game * NUM_PLANS + outcomes.plan, weights=outcomes.value,
                                    minlength=sums.size).reshape(sums.shape)
            if round_ends:  # keep the better half (rounded up) of each game's candidates
                halve = np.flatnonzero(live & (round_ < last))
                rank = _descending_rank(np.where(alive[halve], sums[halve], -np.inf))
                alive[halve] &= rank < -(-count[halve] // 2)[:, None]
            if self.race_z and rounds:
                alive &= ~_clear_losers(rounds, alive, sums, self.race_z)
        return np.where(alive, sums, -np.inf).argmax(axis=1).astype(np.int64)

    def _schedule(self, worlds: np.ndarray):
        """The rounds of sequential halving: (round, worlds per candidate int[n], whether the
        round ends) for each batch of rollouts, round r playing ``worlds * 2**r``. With racing
        the first round is played in two halves, raced in between (most clear losers show
        in the first half)."""
        if self.race_z:
            first = (worlds + 1) // 2
            yield 0, first, False
            yield 0, worlds - first, True
        else:
            yield 0, worlds, True
        for round_ in itertools.count(1):
            yield round_, worlds << round_, True

    def _evaluate(self, public: State, seat: np.ndarray, candidates: np.ndarray, worlds: np.ndarray,
                  pool: WorldPool | None) -> Outcomes:
        """The rollout values of each candidate plan (bool[n, NUM_PLANS]) of game i on worlds[i]
        sampled worlds (the same worlds for every candidate of a game), played in batches of
        at most ``max_rollouts`` rollouts: one :class:`Outcomes` entry per world and
        candidate, worlds numbered across the n games."""
        n = public.batch_size
        per_game = worlds * self.rollouts * candidates.sum(axis=1)
        parts = []
        start = 0
        while start < n:
            stop = start + 1 + int(np.searchsorted(np.cumsum(per_game[start + 1:]),
                                                   self.max_rollouts - per_game[start], side="right"))
            games = np.arange(start, stop)
            part = self._evaluate_batch(public.take(games), seat[games], candidates[games], worlds[games],
                                        None if pool is None else pool.take(games))
            parts.append(part._replace(game=part.game + start, world=part.world + worlds[:start].sum()))
            start = stop
        return Outcomes(*(np.concatenate(field) for field in zip(*parts)))

    def _evaluate_batch(self, public: State, seat: np.ndarray, candidates: np.ndarray,
                        worlds: np.ndarray, pool: WorldPool | None) -> Outcomes:
        n = public.batch_size
        game_of_world = np.repeat(np.arange(n), worlds)  # game i's worlds are consecutive
        cand_game, cand_plan = np.nonzero(candidates)  # every (game, plan) candidate, game-major
        counts = candidates.sum(axis=1)
        first = np.concatenate([[0], np.cumsum(counts)[:-1]])
        # For each world, one row per candidate of its game, repeated `rollouts` times.
        reps = counts[game_of_world] * self.rollouts
        world_row = np.repeat(np.arange(game_of_world.size), reps)
        offset = np.arange(world_row.size) - np.repeat(np.cumsum(reps) - reps, reps)
        candidate = first[game_of_world[world_row]] + offset // self.rollouts  # index into cand_*
        mover = seat[game_of_world[world_row]]
        rollouts = (_take(determinize(public, seat, worlds, self.rng, self.backend), world_row, self.backend)
                    if pool is None else pool.sample(worlds, self.rng, self.backend, repeat=world_row))
        # Random-move chances per world: the rollouts from one world share its row.
        chance = self._random_chance(seat[game_of_world], self._world_greedy_chance(pool, game_of_world))
        # Every candidate of a world meets the same random numbers (common random numbers);
        # a world's repeated rollouts of one candidate each their own.
        stream = world_row * self.rollouts + offset % self.rollouts
        values = self._rollout(rollouts, cand_plan[candidate], mover, chance, chance_row=world_row, stream=stream)
        # A (world, candidate)'s rollouts are consecutive rows.
        each = slice(None, None, self.rollouts)
        return Outcomes(cand_game[candidate[each]], cand_plan[candidate[each]], world_row[each],
                        values.reshape(-1, self.rollouts).mean(axis=1))

    def _hand_hypotheses(self, public: State, seat: np.ndarray, worlds: np.ndarray,
                         log: History) -> WorldPool | None:
        """The hand hypotheses a decision's search draws its worlds from when the table's
        put-downs are known: ``inference_oversample`` times the first round's worlds, sampled
        once per decision from the other seats' posteriors. None where no other player has
        put a card down.

        Each other seat's hidden hand cards are read exactly: every composition they can
        have (at most 56) is weighed by its deal (the hypergeometric chance from the unseen
        pool) times the chance of the seat's latest put-downs under the opponent model (see
        :func:`seat_log_likelihoods`). Each world draws every seat's hand from its own
        posterior and is weighted by how the joint deal of those hands differs from the
        product of their separate deals (:func:`sample_hands`; 0 where they need more cards
        of a company than there are), so that the weighted worlds follow the joint posterior."""
        logged = log.valid(public) & (np.arange(P)[:, None] != seat[None, :])
        if not logged.any():
            return None
        # As many hypotheses as an early decision's first round draws: late decisions search
        # more worlds (short rollouts), not more distinct hands.
        count = np.minimum(worlds, self.determinizations) * self.inference_oversample
        need = hidden_hand_counts(public, seat)  # [P, n]
        pool = queries.unseen(public, seat).astype(np.int64)  # [C, n]
        log_deal, posterior, belief = self._hand_posteriors(public, seat, log, logged, need, pool)
        hands, log_weights = sample_hands(posterior, log_deal, need, pool, count, self.rng, self.backend)
        return WorldPool(public, seat, hands.astype(np.int8), np.repeat(np.arange(public.batch_size), count),
                         log_weights, belief)

    def _hand_posteriors(self, public: State, seat: np.ndarray, log: History, logged: np.ndarray,
                         need: np.ndarray, pool: np.ndarray):
        """(log_deal, posterior, belief) of the other seats' hidden hand cards in the n games
        of ``public``: ``log_deal`` and ``posterior`` float[7, n, 56], each composition's
        (``COMPOSITIONS[need]``) log-chance by its deal from ``pool`` alone and by deal and
        put-downs (unnormalized); ``belief`` float[n, 7], the adaptive model's chance that
        each seat plays greedy (None under the other models)."""
        n = public.batch_size
        probe_game = np.repeat(np.arange(n), MAX_COMPOSITIONS)
        probe = public.take(probe_game)
        slot = np.tile(np.arange(MAX_COMPOSITIONS), n)
        log_deal = np.full((P, probe_game.size), -np.inf)
        probe_pool = pool[:, probe_game].T  # [m, C]
        for s in range(int(public.num_players.max())):  # (0 hidden cards: the one empty composition)
            size = need[s, probe_game]
            composition = COMPOSITIONS[size, slot]  # [m, C]
            probe.hand[s] += composition.T.astype(np.int8)
            log_deal[s] = np.where(COMPOSITION_VALID[size, slot],
                                   _log_deal(probe_pool, composition, size), -np.inf)
        greedy, uniform = seat_log_likelihoods(probe, log, probe_game, logged, self.greedy,
                                               self.inference_temperature, self.rules, self.backend,
                                               takes=self.read_takes)
        belief = None
        if self.opponent_model == "adaptive":
            # A seat's older put-downs (before the two read with the hands) shift its prior.
            prior_odds = np.log(self.greedy_prior) - np.log1p(-self.greedy_prior)
            prior_odds = prior_odds + older_put_down_evidence(log, public, seat, self.greedy,
                                                              self.inference_temperature, self.rules, self.rng,
                                                              backend=self.backend)  # [P, n]
            prior, other = -np.logaddexp(0.0, -prior_odds), -np.logaddexp(0.0, prior_odds)  # log P(greedy), P(not)
            likelihood = np.logaddexp(prior[:, probe_game] + greedy, other[:, probe_game] + uniform)
            # Each seat's evidence: its put-downs' chance under each model over its deal.
            per_model = [np.logaddexp.reduce((log_deal + x).reshape(P, n, MAX_COMPOSITIONS), axis=2)
                         for x in (greedy, uniform)]  # [P, n]
            with np.errstate(invalid="ignore"):  # (-inf - -inf where no composition is possible: the prior)
                log_odds = prior_odds + per_model[0] - per_model[1]
            log_odds = np.where(np.isnan(log_odds), prior_odds, log_odds)
            belief = np.where(logged, 1.0 / (1.0 + np.exp(-np.clip(log_odds, -700, 700))), self.greedy_prior).T
        else:
            likelihood = greedy
        log_deal = log_deal.reshape(P, n, MAX_COMPOSITIONS)
        return log_deal, log_deal + likelihood.reshape(P, n, MAX_COMPOSITIONS), belief

    def _rollout(self, state: State, plans: np.ndarray, mover: np.ndarray, chance: np.ndarray | None = None,
                 chance_row: np.ndarray | None = None, stream: np.ndarray | None = None) -> np.ndarray:
        """Play the plans (int[m] plan ids), then roll out (to the end, or for ``horizon`` turns); value of
        each game for ``mover``. ``state`` is the rollouts' own copy. ``chance`` (float[k, 7]):
        per seat, the chance of a uniformly random move instead of the greedy one, game i's in
        row ``chance_row[i]`` (default: row i; default chances from the options:
        :meth:`_random_chance`). ``stream`` (int[m], optional): rollouts of the same stream
        draw the same random moves' numbers (on the compiled path; the Simulator-stepped one
        draws every rollout's afresh)."""
        if chance is None:
            chance = self._random_chance(mover, None)
        rules = self.rules
        if self.horizon:
            # The turn cap does the horizon: the simulator scores a capped round as it
            # stands. Turns are counted from the rollout's start (a sampled world's turn
            # count matters to nothing else: bots do not read it).
            state.turn[:] = 0
            rules = dataclasses.replace(rules, turn_cap=self.horizon)
        compiled = self.backend == "numba" and self.rollout_policy is None
        if compiled and (self.value == "soft" or rules.rounds == 1):  # (the round's rank and margin are the value)
            from .rollout_kernel import rollout_outcomes  # (imported on first use: it needs numba)

            rank, margin = rollout_outcomes(state, PLAN_FIRST[plans], PLAN_SECOND[plans], mover, rules, self.greedy,
                                            self.rng, random_chance=chance, chance_row=chance_row, stream=stream)
            return self._outcome_value(rank, margin, state.num_players.astype(np.float64))
        if chance_row is not None:  # (the paths below read one row per game)
            chance = chance[chance_row]
        if compiled:  # (a round game's last round ranks by the whole game: the simulator scores it)
            from .rollout_kernel import rollout

            finished = rollout(state, PLAN_FIRST[plans], PLAN_SECOND[plans], mover, rules, self.greedy, self.rng,
                               random_chance=chance)
            return self._value(finished, mover)
        sim = Simulator.from_state(state, rules, seed=self.rng, backend=self.backend)
        random_moves = np.count_nonzero(chance) > 0
        start_round = state.round.copy()
        sim.step(PLAN_FIRST[plans])
        second = PLAN_SECOND[plans]
        if (second >= 0).any():
            sim.step(np.maximum(second, 0), active=second >= 0)
        live = np.arange(state.batch_size)  # rows of the original batch still in `sim`
        finished_rows, finished_states = [], []
        while True:
            # A rollout ends with the game, or (round game) with the round it started in;
            # ended rows are frozen (active=False) until they are moved out.
            done = sim.done | (sim.state.round != start_round[live])
            if done.all() or done.mean() > 0.25:
                # Compact: move ended games out so later steps only pay for live ones.
                finished_rows.append(live[done])
                finished_states.append(sim.state.take(np.flatnonzero(done)))
                keep = np.flatnonzero(~done)
                if keep.size == 0:
                    break
                live = live[keep]
                sim = Simulator.from_state(sim.state.take(keep), rules, seed=self.rng, backend=self.backend)
                done = done[keep]
            mask = sim.legal_mask()
            actions = greedy_actions(state_features(sim.state), mask, self.greedy)
            if self.rollout_policy is not None:
                mine = np.flatnonzero((sim.state.current == mover[live]) & ~done & (mask.sum(axis=1) > 1))
                if mine.size:
                    actions[mine] = self.rollout_policy.act(observe(sim.state.take(mine)), mask[mine])
            if random_moves:
                explore = self.rng.random(actions.size) < chance[live, sim.state.current]
                explore &= mask.any(axis=1) & ~done
                if explore.any():
                    actions[explore] = queries.uniform_legal(mask[explore], self.rng)
            sim.step(actions, active=~done)
        values = np.empty(state.batch_size)
        for part_rows, part in zip(finished_rows, finished_states):
            values[part_rows] = self._value(part, mover[part_rows])
        return values

    def _world_greedy_chance(self, pool: WorldPool | None, game_of_world: np.ndarray) -> np.ndarray | None:
        """float[w, 7] or None (the prior): per sampled world (game_of_world int[w]), the
        chance that each seat plays greedy in the rollouts from it. With ``types_per_world``
        under the adaptive model, each world draws every seat's type once from the belief
        (1: greedy, 0: random), so that all the candidates rolled out from the world meet
        the same opponents, each played consistently as one type."""
        belief = None if pool is None or pool.greedy_belief is None else pool.greedy_belief[game_of_world]
        if not (self.types_per_world and self.opponent_model == "adaptive"):
            return belief
        if belief is None:
            belief = np.full((game_of_world.size, P), self.greedy_prior)
        return (self.rng.random(belief.shape) < belief).astype(np.float64)

    def _random_chance(self, mover: np.ndarray, belief: np.ndarray | None) -> np.ndarray:
        """float[m, 7]: per rollout and seat, the chance of a uniformly random move:
        ``rollout_epsilon`` for every seat, and for the other seats 1 under the random
        opponent model, or under the adaptive one the chance that the seat is not greedy
        (``belief`` float[m, 7], the chance that it is; None: the prior) times
        ``other_type_epsilon``."""
        m = mover.size
        chance = np.full((m, P), self.rollout_epsilon)
        others = np.arange(P)[None, :] != mover[:, None]
        if self.opponent_model == "random":
            chance[others] = 1.0
        elif self.opponent_model == "adaptive":
            greedy = np.full((m, P), self.greedy_prior) if belief is None else belief
            other_type_random = (1.0 - greedy) * self.other_type_epsilon
            chance = np.where(others, 1.0 - (1.0 - chance) * (1.0 - other_type_random), chance)
        return chance

    def _value(self, state: State, mover: np.ndarray) -> np.ndarray:
        """Value of finished games (or rounds) for ``mover``, from the ranks and scores of
        the last scored round (in a finished round game, ranks are the final ranking)."""
        g = np.arange(state.batch_size)
        n = state.num_players.astype(np.float64)
        seated = np.arange(P)[:, None] < n[None, :]
        margin = queries.score_margin(state.scores.astype(np.float64), seated)[mover, g]
        return self._outcome_value(state.ranks[mover, g].astype(np.float64), margin, n)

    def _outcome_value(self, rank: np.ndarray, margin: np.ndarray, num_players: np.ndarray) -> np.ndarray:
        """float64[m]: the value (``value``) of outcomes for their mover: its rank (0: best)
        and its score less the best other seated player's (float64[m] each) at tables of
        ``num_players`` (float64[m])."""
        if self.value == "win":
            return (rank == 0).astype(np.float64)
        if self.value == "rank":
            return queries.rank_value(rank, num_players)
        return 1.0 / (1.0 + np.exp(-(margin + 0.5) / self.soft_scale))


def _rollout_policy(policy, rng: np.random.Generator) -> Agent | None:
    """The agent for ``SearchAgent(rollout_policy=...)``, reseeded with the search's
    generator; None stays None (greedy rollouts for every seat)."""
    if policy is None:
        return None
    if isinstance(policy, str):  # names are the registry's business: this module does not import it
        raise ValueError(f"rollout_policy must be an Agent or None, got the name {policy!r}; build it by name with "
                         f"startups_env.agents.make_agent('search', rollout_policy={policy!r})")
    if not isinstance(policy, Agent):
        raise ValueError(f"rollout_policy must be an Agent or None (greedy), got {policy!r}")
    if needs_of(policy):
        raise ValueError(f"rollout_policy {policy.name!r} needs the public state or the history "
                         f"({sorted(needs_of(policy))}); rollouts give a policy its observation only (use e.g. 'ppo')")
    policy.seed(rng)
    return policy


@dataclasses.dataclass
class WorldPool:
    """Hand hypotheses of n games with log-weights: hypothesis j is game ``game[j]`` of
    ``public`` (a public state of n games, seen by ``seat`` int[n]) with the other seats'
    hidden hand cards ``hands[:, :, j]``; game i's hypotheses are the consecutive ones with
    ``game == i``. A hypothesis becomes a world when it is sampled: only then are its pile
    and removed cards dealt (afresh each time), so the pool holds hands, not States."""

    public: State
    seat: np.ndarray  # int[n]
    hands: np.ndarray  # int8[7, C, m]
    game: np.ndarray  # int[m], sorted
    log_weights: np.ndarray  # float[m]
    greedy_belief: np.ndarray | None = None  # float[n, 7] the chance that each seat plays greedy (adaptive model)

    def take(self, games: np.ndarray) -> "WorldPool":
        """The pool of the selected games (int[k], ascending), renumbered 0..k-1."""
        if games.size == self.public.batch_size and np.array_equal(games, np.arange(games.size)):
            return self
        selected = np.flatnonzero(np.isin(self.game, games))
        belief = None if self.greedy_belief is None else self.greedy_belief[games]
        return WorldPool(self.public.take(games), self.seat[games], self.hands[:, :, selected],
                         np.searchsorted(games, self.game[selected]), self.log_weights[selected], belief)

    def sample(self, counts: np.ndarray, rng: np.random.Generator, backend: str | None = None,
               repeat: np.ndarray | None = None) -> State:
        """counts[i] worlds of each game i: hypotheses drawn by weight (systematic
        resampling), each dealt a pile and removed cards of its own (:func:`determinize`): a
        hypothesis drawn twice meets two piles. ``repeat`` (int[r], optional): return r
        rows, row j a copy of drawn world ``repeat[j]`` (copies of a world share its pile)."""
        kept = _resample(self.log_weights, self.game, counts, rng)
        worlds = determinize(self.public, self.seat, counts, rng, backend, hands=self.hands[:, :, kept])
        return worlds if repeat is None else _take(worlds, repeat, backend)


def put_down_log_likelihood(worlds: State, log: History, game: np.ndarray, seats: np.ndarray,
                            params: GreedyParams, temperature: float, rules: Rules,
                            backend: str | None = None, takes: bool = False) -> np.ndarray:
    """float[m]: log-likelihood of each sampled world (row r a world of game ``game[r]``
    of ``log``) under a model of the other players: each put down cards (and, with
    ``takes``, takes them) like the greedy bot with softmax noise, ``P(action) ~ exp(greedy
    score / temperature)``; the sum over the seats of :func:`seat_log_likelihoods`' greedy
    part (which says how)."""
    return seat_log_likelihoods(worlds, log, game, seats, params, temperature, rules, backend,
                                takes)[0].sum(axis=0)


def seat_log_likelihoods(worlds: State, log: History, game: np.ndarray, seats: np.ndarray,
                         params: GreedyParams, temperature: float, rules: Rules,
                         backend: str | None = None, takes: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(greedy, uniform), each float[7, m]: per seat, the log-likelihood of each sampled
    world (row r a world of game ``game[r]`` of ``log``) under two models of that seat's
    put-downs: like the greedy bot with softmax noise, ``P(action) ~ exp(greedy score /
    temperature)``, or uniformly at random among its legal put-downs. 0 for the seats
    without ``seats[seat, game]``.

    For every seat with ``seats[seat, game]``, the world's hand of that seat plus the card
    it put down last is its hand at that put-down (it has not moved since), replayed in
    the logged public state. Where the log also holds the put-down before (same round),
    the hand then follows too: minus the card gained by the take in between (a market
    take is public; a drawn card is any card of that hand not publicly known to be there,
    in proportion to their count), plus the card put down then. Each put-down's
    probability is divided by the count of its company among the hand's unknown cards
    where none of it was known to be there (see :func:`_hidden_put_down_log_count`), so
    that the weighted worlds follow the model's posterior. With ``takes``, the take of the
    latest put-down's turn counts too: the hand it was chosen with is the hand at the
    put-down less the card gained (same variants), replayed in the logged public state
    before the take (``History.take_state``); the uniform model takes any legal take.
    Worlds in which the seat could not have held the cards it was known to hold get -inf.
    backend: the greedy's (see :func:`_decision_log_prob`; None: the fastest installed)."""
    backend = resolve_backend(backend)
    m, n = worlds.batch_size, log.batch_size
    greedy, uniform = np.zeros((P, m)), np.zeros((P, m))
    earlier_seats = seats & log.earlier_valid()
    takes_seats = seats & (log.take_action >= 0)
    for seat in range(P):
        rows = np.flatnonzero(seats[seat, game])
        if rows.size == 0:
            continue
        logged = seat * n + game[rows]
        action = log.action.reshape(-1)[logged]
        hand = worlds.hand[seat].take(rows, axis=-1)  # [C, r]
        hand[(action - Action.KEEP) % C, np.arange(rows.size)] += 1
        known = log.state.known[seat].take(logged, axis=-1)  # [C, r] at the latest put-down
        deal = _hidden_put_down_log_count(known, hand, action)  # (the same under both models)
        uniform[seat, rows] = _uniform_put_down_log_prob(log.state.barred.take(logged), known, hand) - deal
        greedy[seat, rows] = _logged_log_prob(log.state, logged, seat, hand, action, params, temperature,
                                                       rules, backend) - deal

        # The turn of the latest put-down: its take, and the put-down before it.
        turn = np.flatnonzero((takes_seats if takes else earlier_seats)[seat, game[rows]])
        if turn.size == 0:
            continue
        hand, known, logged = hand[:, turn], known[:, turn], logged[turn]
        taken = log.take_action.reshape(-1)[logged]
        # Which card the take gained: one variant per possible company. A drawn card is any
        # of the hand's cards not known to be there (those came from the market), each as
        # likely (they are exchangeable); a hand of 4 holds at least one, as at most 3 were
        # known before the draw.
        free = np.maximum(hand - known, 0)
        # (A market take's hand may be all known: the floor keeps np.where's unused branch
        # from dividing 0 by 0.)
        gained = np.where(taken[None, :] == Action.DRAW, free / np.maximum(free.sum(axis=0), 1),
                          np.arange(C)[:, None] == (taken - Action.TAKE)[None, :])  # [C, e]
        column, company = np.nonzero(gained.T > 0)  # variants, grouped by column
        at_take = hand[:, column]  # the hand the take was chosen with
        variant = np.arange(column.size)
        at_take[company, variant] -= 1
        greedy_prob = np.log(gained[company, column])
        uniform_prob = greedy_prob.copy()
        if takes:
            take_logged = logged[column]
            greedy_prob += _logged_log_prob(log.take_state, take_logged, seat, at_take, taken[column], params,
                                            temperature, rules, backend)
            uniform_prob -= np.log(_legal_count(log.take_state, take_logged, rules, backend))
        before = np.flatnonzero(earlier_seats[seat, game[rows[turn]]][column])  # variants with a put-down before
        if before.size:
            before_hand = at_take[:, before]
            earlier_logged = logged[column[before]]
            earlier_action = log.earlier_action.reshape(-1)[earlier_logged]
            before_hand[(earlier_action - Action.KEEP) % C, np.arange(before.size)] += 1
            earlier_known = log.earlier_state.known[seat].take(earlier_logged, axis=-1)
            deal = _hidden_put_down_log_count(earlier_known, before_hand, earlier_action)
            uniform_prob[before] += _uniform_put_down_log_prob(log.earlier_state.barred.take(earlier_logged),
                                                               earlier_known, before_hand) - deal
            greedy_prob[before] += _logged_log_prob(log.earlier_state, earlier_logged, seat, before_hand,
                                                    earlier_action, params, temperature, rules, backend) - deal
        # Sum the variants' probabilities per column.
        starts = np.flatnonzero(np.r_[True, column[1:] != column[:-1]])
        uniform[seat, rows[turn]] += np.logaddexp.reduceat(uniform_prob, starts)
        greedy[seat, rows[turn]] += np.logaddexp.reduceat(greedy_prob, starts)
    return greedy, uniform


def older_put_down_evidence(log: History, public: State, viewer: np.ndarray, params: GreedyParams,
                            temperature: float, rules: Rules, rng: np.random.Generator, hands: int = 24,
                            backend: str | None = None) -> np.ndarray:
    """float[7, n]: per seat and game of ``public`` (n games, seen by ``viewer`` int[n]),
    the log-likelihood ratio of the softmax-greedy model against the uniformly random one
    over the seat's older put-downs of this round in ``log`` (``History.older_state``: the
    ones before the last two, which :func:`seat_log_likelihoods` reads with the present
    hands). 0 for the viewer and where nothing older is logged.

    The hand a seat held at an older put-down is not chained to its present one: it is its
    publicly known cards then, plus the put-down card where that was not known, filled up
    from the cards nobody could see then, ``hands`` times (each sample weighted by 1 / the
    count of the put-down's company among its unknown cards, as the card was one of
    them). Each put-down adds ``log E[P_greedy(put-down | hand)] - log E[P_uniform(...)]``,
    the expectations over those samples: evidence from the seat's record of how it plays,
    not from what it holds now. The viewer's own cards then are counted as unseen (it saw
    them, but which were in its hand is not logged): the estimate uses less than the
    viewer knew, never more."""
    backend = resolve_backend(backend)
    n = public.batch_size
    evidence = np.zeros((P, n))
    seats = np.arange(P)[None, :, None]
    valid = log.older_valid(public) & (seats != viewer[None, None, :]) & (seats < public.num_players[None, None, :])
    slot, seat, game = np.nonzero(valid)
    if game.size == 0:
        return evidence
    put_downs = (slot * P + seat) * n + game  # rows of log.older_state
    rows = np.repeat(put_downs, hands)  # `hands` samples each
    seat_of_row = np.repeat(seat, hands)
    states = log.older_state
    action = log.older_action.reshape(-1)[rows]  # (its flat index is the state's row)
    company = (action - Action.KEEP) % C
    column = np.arange(rows.size)
    known = states.hand[seat_of_row, :, rows].T.astype(np.int64)  # [C, r] (public: hand = known)
    put_known = known[company, column] > 0
    hand = known.copy()
    hand[company, column] += ~put_known  # an unknown put-down card was one of the hidden ones
    # The cards nobody could see then, [C, r].
    pool = np.repeat(queries.unseen(states.take(put_downs), seat).astype(np.int64), hands, axis=1)
    pool[company, column] -= ~put_known
    need = HAND_SIZE + 1 - hand.sum(axis=0)  # a hand holds HAND_SIZE + 1 cards at a put-down
    hand += _draw_from_pool(pool, need, rng, backend)
    log_weight = np.where(put_known, 0.0, -np.log(np.maximum(hand[company, column] - known[company, column], 1)))
    greedy = np.empty(rows.size)
    for s in np.unique(seat_of_row):
        mine = np.flatnonzero(seat_of_row == s)
        greedy[mine] = _logged_log_prob(states, rows[mine], int(s), hand[:, mine], action[mine], params,
                                                 temperature, rules, backend)
    uniform = _uniform_put_down_log_prob(states.barred.take(rows), known, hand)
    starts = np.arange(0, rows.size, hands)
    ratio = np.logaddexp.reduceat(greedy + log_weight, starts) - np.logaddexp.reduceat(uniform + log_weight, starts)
    # A put-down the greedy model all but rules out counts as a bounded amount of evidence.
    np.add.at(evidence, (seat, game), np.maximum(ratio, -MAX_PUT_DOWN_EVIDENCE))
    return evidence


def _compositions() -> tuple[np.ndarray, np.ndarray]:
    """(int[4, 56, C], bool[4, 56]): for k = 0..HAND_SIZE hidden cards, every way to hold
    k cards of the C companies (counts per company), padded with the first one."""
    rows = []
    for k in range(HAND_SIZE + 1):
        counts = [np.bincount(combo, minlength=C)
                  for combo in itertools.combinations_with_replacement(range(C), k)]
        rows.append(np.array(counts, np.int64).reshape(-1, C))
    width = max(len(r) for r in rows)
    table = np.stack([np.concatenate([r, np.repeat(r[:1], width - len(r), axis=0)]) for r in rows])
    valid = np.stack([np.arange(width) < len(r) for r in rows])
    return table, valid


COMPOSITIONS, COMPOSITION_VALID = _compositions()
MAX_COMPOSITIONS = COMPOSITIONS.shape[1]  # 56: three cards of six companies
_LOG_FACTORIAL = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, DECK_SIZE + 1)))])


def hidden_hand_counts(public: State, seat: np.ndarray) -> np.ndarray:
    """int64[7, n]: how many cards of each other seated player's hand ``seat`` (int[n])
    cannot see in ``public`` (a public state: hands hold their known cards); 0 for the seat
    itself and the empty seats."""
    seats = np.arange(P)[:, None]
    others = (seats != seat[None, :]) & (seats < public.num_players[None, :])
    return np.where(others, HAND_SIZE - public.hand.sum(axis=1, dtype=np.int64), 0)


def _log_choose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log C(n, k), element-wise; -inf where k > n or either is negative."""
    ok = (k >= 0) & (k <= n)
    n, k = np.where(ok, n, 0), np.where(ok, k, 0)
    return np.where(ok, _LOG_FACTORIAL[n] - _LOG_FACTORIAL[k] - _LOG_FACTORIAL[n - k], -np.inf)


def _log_deal(pool: np.ndarray, composition: np.ndarray, size: np.ndarray) -> np.ndarray:
    """float[m]: the log-chance that ``size`` (int[m]) cards dealt uniformly from ``pool``
    (int[m, C], counts per company) are ``composition`` (int[m, C]): hypergeometric."""
    return _log_choose(pool, composition).sum(axis=1) - _log_choose(pool.sum(axis=1), size)


def sample_hands(posterior: np.ndarray, log_deal: np.ndarray, need: np.ndarray, pool: np.ndarray,
                 count: np.ndarray, rng: np.random.Generator, backend: str | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Hidden hands for ``count[i]`` (int[n]) worlds of each game i, and their log-weights.

    posterior: float[7, n, 56], each seat's unnormalized log-chance of each composition of
    its ``need`` (int[7, n]) hidden cards (``COMPOSITIONS[need]``); log_deal: the same
    shape, the log-chance of its deal alone; pool: int[C, n], the unseen cards. Each world
    draws every seat's hand from the seat's own posterior; the seats' hands are dealt from
    one pool, so the world's log-weight is the log-ratio of their joint deal to the product
    of their separate deals (-inf where together they need more cards of a company than
    the pool holds), which makes the weighted worlds follow the joint posterior. A seat
    whose every composition has chance 0 (its record is impossible under the model) is
    drawn from its deal alone. backend: ``"numba"`` draws the hands with
    :func:`startups_env.agents.sampling_kernel.hands_from_draws` (the same hands, the
    weights to rounding); None: the fastest installed.
    Returns (int64[7, C, m], float[m]) with m = count.sum(), game i's worlds consecutive."""
    seats = np.flatnonzero(need.any(axis=1))
    cumulative = np.empty((seats.size, count.size, MAX_COMPOSITIONS))
    for row, s in enumerate(seats):
        stuck = ~np.isfinite(posterior[s].max(axis=1))
        log_p = np.where(stuck[:, None], log_deal[s], posterior[s])
        p = np.exp(log_p - log_p.max(axis=1, keepdims=True))
        cumulative[row] = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
    draws = rng.random((seats.size, int(count.sum())))
    if resolve_backend(backend) == "numba":
        from . import sampling_kernel  # (imported on first use: it needs numba)

        return sampling_kernel.hands_from_draws(cumulative, draws, seats, need, log_deal, pool, count, COMPOSITIONS,
                                                COMPOSITION_VALID, _LOG_FACTORIAL)
    return _hands_from_draws(cumulative, draws, seats, need, log_deal, pool, count)


def _hands_from_draws(cumulative: np.ndarray, draws: np.ndarray, seats: np.ndarray, need: np.ndarray,
                      log_deal: np.ndarray, pool: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sample_hands` from its draws: seat ``seats[k]`` of world j holds the first
    composition whose cumulative chance (``cumulative[k]``, float[n, 56] per game) reaches
    ``draws[k, j]``."""
    n = count.size
    game = np.repeat(np.arange(n), count)
    m = game.size
    bounds = np.concatenate([[0], np.cumsum(count)])  # game i's worlds: bounds[i]:bounds[i + 1]
    hands = np.zeros((P, C, m), np.int64)
    log_separate = np.zeros(m)
    pool_w = pool[:, game].T  # [m, C]
    for row, s in enumerate(seats):
        size = need[s]
        choice = np.empty(m, np.intp)
        for i in range(n):  # (the compositions whose cumulative chance is below each draw)
            choice[bounds[i]:bounds[i + 1]] = np.searchsorted(cumulative[row, i], draws[row, bounds[i]:bounds[i + 1]])
        choice = np.minimum(choice, MAX_COMPOSITIONS - 1)
        # (a padding slot, reached only by rounding, stands for the first composition)
        choice = np.where(COMPOSITION_VALID[size[game], choice], choice, 0)
        hands[s] = COMPOSITIONS[size[game], choice].T
        log_separate += log_deal[s, game, choice]
    total = hands.sum(axis=0).T  # [m, C] all hidden hand cards
    log_joint = (_LOG_FACTORIAL[pool_w].sum(axis=1)
                 - _LOG_FACTORIAL[hands].sum(axis=(0, 1))
                 - np.where(pool_w >= total, _LOG_FACTORIAL[np.maximum(pool_w - total, 0)], np.inf).sum(axis=1))
    pool_total, sizes = pool_w.sum(axis=1), need[:, game]
    log_joint -= (_LOG_FACTORIAL[pool_total] - _LOG_FACTORIAL[sizes].sum(axis=0)
                  - _LOG_FACTORIAL[np.maximum(pool_total - sizes.sum(axis=0), 0)])
    feasible = (pool_w >= total).all(axis=1)
    hands[:, :, ~feasible] = 0  # (dealt at random instead; their weight is 0)
    return hands, np.where(feasible, log_joint - log_separate, -np.inf)


def _shuffled_pool(pool: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """int[m, 45]: each column's pool (``pool`` int[C, m], counts per company) as a list of
    company ids in the order of ``keys`` (float[m, 45] in [0, 1): slot k of the list by
    company has key ``keys[i, k]``; changed), padded with C at the end."""
    bounds = np.cumsum(pool, axis=0)  # [C, m]
    cards = (np.arange(DECK_SIZE)[None, None, :] >= bounds.T[:, :, None]).sum(axis=1)  # [m, 45]; C = padding
    keys[cards == C] = 2.0
    return np.take_along_axis(cards, np.argsort(keys, axis=1), axis=1)


def _draw_from_pool(pool: np.ndarray, need: np.ndarray, rng: np.random.Generator,
                    backend: str | None = None) -> np.ndarray:
    """int64[C, r]: need[i] cards drawn uniformly without replacement from the cards
    ``pool[:, i]`` (counts per company), as counts per company (on the numba backend by
    :mod:`startups_env.agents.sampling_kernel`: the same cards from the same keys)."""
    r = need.size
    keys = rng.random((r, DECK_SIZE))
    if resolve_backend(backend) == "numba":
        from . import sampling_kernel  # (imported on first use: it needs numba)

        return sampling_kernel.draw_counts(keys, np.ascontiguousarray(pool, np.int64), need.astype(np.int64))
    drawn = _shuffled_pool(pool, keys)
    chosen = np.where(np.arange(DECK_SIZE)[None, :] < need[:, None], drawn, C)
    flat = (np.arange(r)[:, None] * (C + 1) + chosen).reshape(-1)
    return np.bincount(flat, minlength=r * (C + 1)).reshape(r, C + 1)[:, :C].T.astype(np.int64)


def _take(state: State, rows: np.ndarray, backend: str | None) -> State:
    """``state.take(rows)``; on the numba backend in one compiled pass
    (:func:`startups_env.agents.sampling_kernel.take_worlds`: the same State)."""
    if resolve_backend(backend) == "numba":
        from . import sampling_kernel  # (imported on first use: it needs numba)

        return sampling_kernel.take_worlds(state, rows)
    return state.take(rows)


def _legal_count(states: State, rows: np.ndarray, rules: Rules, backend: str) -> np.ndarray:
    """int[r]: how many actions are legal in rows ``rows`` of ``states`` (not changed; rows
    repeat, one per hypothesis: each distinct one is asked once)."""
    distinct, where = np.unique(rows, return_inverse=True)
    return Simulator.from_state(states.take(distinct), rules, backend=backend).legal_mask().sum(axis=1)[where]


def _uniform_put_down_log_prob(barred: np.ndarray, known: np.ndarray, hand: np.ndarray) -> np.ndarray:
    """float[r]: the log-probability of any one legal put-down of a player holding ``hand``
    (int[C, r]), uniformly among them: a card of each company held, face up or (but the
    ``barred`` company, int[r], -1 none) into the market; -inf where the hand lacks cards it
    was known to hold (``known`` int[C, r])."""
    held = hand > 0
    barred = barred.astype(np.intp)
    barred_held = (barred >= 0) & held[np.maximum(barred, 0), np.arange(hand.shape[1])]
    count = 2 * held.sum(axis=0) - barred_held
    held_known = (hand >= known).all(axis=0)
    return np.where(held_known & (count > 0), -np.log(np.maximum(count, 1)), -np.inf)


def _hidden_put_down_log_count(known: np.ndarray, hand: np.ndarray, action: np.ndarray) -> np.ndarray:
    """float[r]: the log of the count of the put-down's company among the hand's unknown
    cards (``hand - known``, int[C, r], at the put-down ``action``) where none of that
    company was known to be in the hand; else 0.

    The sampled hands are dealt uniformly from what is unseen *after* the put-down. Where
    the card put down was an unknown one, the hand before held one more unknown card of its
    company, and a uniform deal of that hand has relative probability 1 / count (up to a
    factor the same for every world of a game); the put-down model chooses a company, not
    one of its cards. Dividing the likelihood by the count makes the weighted worlds follow
    the posterior. A put-down of a company known to be in hand leaves the unknown cards as
    they were."""
    company = (action - Action.KEEP) % C
    column = np.arange(action.size)
    count = hand[company, column].astype(np.int64) - known[company, column]
    return np.where(known[company, column] == 0, np.log(np.maximum(count, 1)), 0.0)


def _logged_log_prob(states: State, rows: np.ndarray, seat: int, hand: np.ndarray, action: np.ndarray,
                     params: GreedyParams, temperature: float, rules: Rules, backend: str) -> np.ndarray:
    """:func:`_decision_log_prob` of the decisions of ``seat`` in rows ``rows`` of
    ``states`` (a History's log, not changed; every row at the same phase); the compiled
    backend reads them in place."""
    if backend == "numba":
        from .greedy_kernel import decision_log_probs  # (imported on first use: it needs numba)

        return decision_log_probs(states, rows, hand, action, params, temperature)
    return _decision_log_prob(states.take(rows), seat, hand, action, params, temperature, rules, backend)


def _decision_log_prob(before: State, seat: int, hand: np.ndarray, action: np.ndarray, params: GreedyParams,
                       temperature: float, rules: Rules, backend: str | None = None) -> np.ndarray:
    """float64[r]: log-probability that ``seat``, holding ``hand`` (int[C, r]) in the public
    states ``before`` (r rows, the seat to act, all at a put-down or all at a take;
    modified), plays ``action`` under the softmax-greedy model, ``P(action) ~ exp(greedy
    score / temperature)`` over the legal actions; -inf where the hand lacks cards it was
    known to hold. On the numba backend (default where installed) compiled
    (:func:`startups_env.agents.greedy_kernel.decision_log_probs`):
    the same to rounding (their softmax sums in another order)."""
    before.hand[seat] = hand
    if resolve_backend(backend) == "numba":
        return _logged_log_prob(before, np.arange(before.batch_size), seat, hand, action, params, temperature, rules,
                                "numba")
    held_known = (hand >= before.known[seat]).all(axis=0)
    mask = Simulator.from_state(before, rules, backend="numpy").legal_mask()  # [r, 19]
    # (in float64: the log-sum of 12 float32 terms would carry float32's rounding into the weights)
    logits = np.where(mask.T, greedy_scores(state_features(before), params).astype(np.float64) / temperature,
                      -np.inf)
    chosen = logits[action, np.arange(action.size)] - np.logaddexp.reduce(logits, axis=0)
    return np.where(held_known & np.isfinite(chosen), chosen, -np.inf)


def _resample(log_weights: np.ndarray, game: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """int[sum(counts)]: rows drawn by systematic resampling, counts[i] of them from the
    consecutive rows of game i (``game`` sorted), with probabilities proportional to
    ``exp(log_weights)``; a game whose every weight is 0 is resampled uniformly."""
    n = counts.size
    starts = np.searchsorted(game, np.arange(n))
    top = np.maximum.reduceat(log_weights, starts)
    flat = ~np.isfinite(top)
    shifted = log_weights - np.where(flat, 0.0, top)[game]
    weights = np.where(flat[game], 1.0, np.exp(shifted))
    cumulative = np.cumsum(weights)
    before = np.concatenate([[0.0], cumulative])[starts]
    totals = np.add.reduceat(weights, starts)
    position = game + (cumulative - before[game]) / totals[game]  # in (game, game + 1]
    target_game = np.repeat(np.arange(n), counts)
    step = np.arange(target_game.size) - np.repeat(np.cumsum(counts) - counts, counts)
    targets = target_game + (step + rng.random(n)[target_game]) / counts[target_game]
    ends = np.append(starts[1:], game.size)
    return np.clip(np.searchsorted(position, targets, side="right"), starts[target_game], ends[target_game] - 1)


class Outcomes(NamedTuple):
    """One round of a search's rollouts: an entry per sampled world and candidate plan
    (int[k] ``game``, ``plan``, ``world``; ``world`` numbers the round's worlds, each
    belonging to one game) and its value (float[k]; the mean of its rollouts)."""

    game: np.ndarray
    plan: np.ndarray
    world: np.ndarray
    value: np.ndarray


def _clear_losers(rounds: list[Outcomes], alive: np.ndarray, sums: np.ndarray, z: float) -> np.ndarray:
    """bool[n, NUM_PLANS]: the alive plans (bool[n, NUM_PLANS]) whose value trails their
    game's leader (the alive plan of the highest ``sums``) by more than ``z`` standard
    errors of the mean paired difference, over every world both met in ``rounds`` (common
    random numbers: a plan alive now met every world of its game so far, as did the
    leader). A difference that is the same in every world counts as clear when it is
    positive."""
    n = alive.shape[0]
    lead = np.where(alive, sums, -np.inf).argmax(axis=1)
    moments = np.zeros((3, n * NUM_PLANS))  # per (game, plan): worlds, sum and sum of squares of the deficit
    for outcomes in rounds:
        game, plan = outcomes.game, outcomes.plan
        leads = plan == lead[game]
        lead_value = np.zeros(outcomes.world.max() + 1)
        lead_value[outcomes.world[leads]] = outcomes.value[leads]
        counted = alive[game, plan] & ~leads
        deficit = (lead_value[outcomes.world] - outcomes.value)[counted]
        flat = (game * NUM_PLANS + plan)[counted]
        for k, weights in enumerate((None, deficit, deficit * deficit)):
            moments[k] += np.bincount(flat, weights=weights, minlength=n * NUM_PLANS)
    worlds, total, squares = moments.reshape(3, n, NUM_PLANS)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / worlds
        variance = np.maximum(squares - total * mean, 0.0) / (worlds - 1)
        clear = np.where(variance > 0, mean > z * np.sqrt(variance / worlds), mean > 0)
    return alive & (worlds > 1) & clear


def _top(scores: np.ndarray, mask: np.ndarray, k: int) -> np.ndarray:
    """bool[B, A]: the k legal entries of each row with the highest scores (ties to the
    lower index). Legal entries with -inf scores still rank above illegal ones."""
    return mask & (_descending_rank(np.where(mask, np.maximum(scores, -1e30), -np.inf)) < k)


def _descending_rank(scores: np.ndarray) -> np.ndarray:
    """int[B, A]: each entry's place in its row, 0 for the highest score (ties to the lower index)."""
    return np.argsort(np.argsort(-scores, axis=1, kind="stable"), axis=1, kind="stable")
