"""Reading the other players' hands from the table's put-downs (everyone sees them, in the
:class:`~startups_env.startups.history.History` every driver keeps).

A player who has not moved since its last put-down held its present hand plus the card it
put down; before that, its hand then less the card its take gained (public for a market
take; for a draw, any card of that hand not publicly known to be there) plus the card it
put down the turn before. Every way the player's hidden cards can be made up (at most 56
compositions) is weighed by its chance in a uniform deal from the unseen cards times how
likely a player of the opponent model would have been to put down those cards
(:func:`seat_log_likelihoods`): an exact posterior per player (:func:`hand_posteriors`).
:func:`hand_hypotheses` draws hands from those posteriors into a
:class:`~.worlds.WorldPool`, from which the search deals its worlds.

The put-down models: softmax-greedy, ``P(action) ~ exp(greedy score / temperature)`` over
the legal actions (:func:`decision_log_prob`), and uniformly random among the legal
put-downs. Under the adaptive opponent model each other player is one or the other, its
older put-downs of the round (:func:`older_put_down_evidence`) and its last two weighing
the two.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from startups_env.startups import queries
from startups_env.startups.history import History
from startups_env.startups.rules import HAND_SIZE, MAX_PLAYERS, NUM_COMPANIES, Action, Rules
from startups_env.startups.simulator import Simulator
from startups_env.startups.state import State

from ..features import state_features
from ..greedy import GreedyParams, greedy_scores
from .config import SearchConfig
from .worlds import (
    COMPOSITION_VALID,
    COMPOSITIONS,
    MAX_COMPOSITIONS,
    WorldPool,
    deal_log_chance,
    draw_from_pool,
    hidden_hand_counts,
    sample_hands,
)

if TYPE_CHECKING:
    from .belief import HandBelief
    from .protocol import SearchBackend

P, C = MAX_PLAYERS, NUM_COMPANIES
MAX_PUT_DOWN_EVIDENCE = 5.0  # the most one older put-down can count against the greedy model (log-odds)


def hand_hypotheses(public: State, seat: np.ndarray, worlds: np.ndarray, log: History, config: SearchConfig,
                    rules: Rules, backend: SearchBackend, rng: np.random.Generator,
                    belief: HandBelief | None = None) -> WorldPool | None:
    """The hand hypotheses a decision's search draws its worlds from: for each game i of
    ``public`` (seen by ``seat`` int[n]), ``config.inference_oversample`` times
    ``min(worlds[i], config.determinizations)`` hands of the other seats drawn from their
    posteriors (:func:`hand_posteriors`, from ``log``, the games' History), each weighted
    by how the joint deal of its hands differs from the product of their separate deals
    (:func:`~.worlds.sample_hands`), so that the weighted hypotheses follow the joint
    posterior. None where no other player has put a card down.

    ``belief`` (a loaded hand-belief network, :mod:`.belief`): each seat's posterior is
    the network's base (its deal's chance, or that posterior) times the network's evidence
    (``exp(sum_c n_c e_c)`` for hidden cards n); the adaptive model's belief in each
    seat's type still comes from the put-downs."""
    logged = log.valid(public) & (np.arange(P)[:, None] != seat[None, :])
    if not logged.any():
        return None
    # As many hypotheses as an early decision's first round draws: late decisions search
    # more worlds (short rollouts), not more distinct hands.
    count = np.minimum(worlds, config.determinizations) * config.inference_oversample
    need = hidden_hand_counts(public, seat)  # [P, n]
    pool = queries.unseen(public, seat).astype(np.int64)  # [C, n]
    log_deal, posterior, greedy_belief = hand_posteriors(public, seat, log, logged, need, pool, config, rules,
                                                         backend, rng)
    if belief is not None:
        posterior = belief.composition_scores(public, seat, log, need, log_deal, posterior)
    hands, log_weights = sample_hands(posterior, log_deal, need, pool, count, rng, backend)
    return WorldPool(public, seat, hands.astype(np.int8), np.repeat(np.arange(public.batch_size), count),
                     log_weights, greedy_belief)


def hand_posteriors(public: State, seat: np.ndarray, log: History, logged: np.ndarray, need: np.ndarray,
                    pool: np.ndarray, config: SearchConfig, rules: Rules, backend: SearchBackend,
                    rng: np.random.Generator):
    """(log_deal, posterior, belief) of the other seats' hidden hand cards in the n games
    of ``public``: ``log_deal`` and ``posterior`` float[7, n, 56], each composition's
    (``COMPOSITIONS[need]``, ``need`` int[7, n]) log-chance by its deal from ``pool``
    (int[C, n]) alone and by deal and put-downs (unnormalized; the put-downs of the seats
    ``logged`` bool[7, n] count); ``belief`` float[n, 7], the adaptive model's chance that
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
        log_deal[s] = np.where(COMPOSITION_VALID[size, slot], deal_log_chance(probe_pool, composition, size), -np.inf)
    greedy, uniform = seat_log_likelihoods(probe, log, probe_game, logged, config.greedy,
                                           config.inference_temperature, rules, backend, takes=config.read_takes)
    belief = None
    if config.opponent_model == "adaptive":
        likelihood, belief = _adaptive_likelihood(public, seat, log, logged, log_deal, greedy, uniform, probe_game,
                                                  config, rules, backend, rng)
    else:
        likelihood = greedy
    log_deal = log_deal.reshape(P, n, MAX_COMPOSITIONS)
    return log_deal, log_deal + likelihood.reshape(P, n, MAX_COMPOSITIONS), belief


def _adaptive_likelihood(public: State, seat: np.ndarray, log: History, logged: np.ndarray, log_deal: np.ndarray,
                         greedy: np.ndarray, uniform: np.ndarray, probe_game: np.ndarray, config: SearchConfig,
                         rules: Rules, backend: SearchBackend, rng: np.random.Generator):
    """(likelihood float[7, m], belief float[n, 7]) under the adaptive model, from each
    composition's (m of them, of game ``probe_game``) log-chance of the put-downs under
    the greedy and the uniform model (float[7, m] each) and of its deal (``log_deal``):
    the put-downs' chance under the mixture of the two, each seat weighted by its chance of
    being greedy given its older put-downs; and that chance given all of them."""
    n = public.batch_size
    # A seat's older put-downs (before the two read with the hands) shift its prior.
    prior_odds = np.log(config.greedy_prior) - np.log1p(-config.greedy_prior)
    prior_odds = prior_odds + older_put_down_evidence(log, public, seat, config.greedy, config.inference_temperature,
                                                      rules, rng, backend)  # [P, n]
    prior, other = -np.logaddexp(0.0, -prior_odds), -np.logaddexp(0.0, prior_odds)  # log P(greedy), P(not)
    likelihood = np.logaddexp(prior[:, probe_game] + greedy, other[:, probe_game] + uniform)
    # Each seat's evidence: its put-downs' chance under each model over its deal.
    per_model = [np.logaddexp.reduce((log_deal + x).reshape(P, n, MAX_COMPOSITIONS), axis=2)
                 for x in (greedy, uniform)]  # [P, n]
    with np.errstate(invalid="ignore"):  # (-inf - -inf where no composition is possible: the prior)
        log_odds = prior_odds + per_model[0] - per_model[1]
    log_odds = np.where(np.isnan(log_odds), prior_odds, log_odds)
    belief = np.where(logged, 1.0 / (1.0 + np.exp(-np.clip(log_odds, -700, 700))), config.greedy_prior).T
    return likelihood, belief


def put_down_log_likelihood(worlds: State, log: History, game: np.ndarray, seats: np.ndarray,
                            params: GreedyParams, temperature: float, rules: Rules,
                            backend: SearchBackend, takes: bool = False) -> np.ndarray:
    """float[m]: log-likelihood of each sampled world (row r a world of game ``game[r]``
    of ``log``) under a model of the other players: each put down cards (and, with
    ``takes``, takes them) like the greedy bot with softmax noise, ``P(action) ~ exp(greedy
    score / temperature)``; the sum over the seats of :func:`seat_log_likelihoods`' greedy
    part (which says how)."""
    return seat_log_likelihoods(worlds, log, game, seats, params, temperature, rules, backend, takes)[0].sum(axis=0)


@dataclasses.dataclass(frozen=True)
class _SoftmaxGreedy:
    """The softmax-greedy model of a decision, on a backend."""

    params: GreedyParams
    temperature: float
    rules: Rules
    backend: SearchBackend

    def log_prob(self, states: State, rows: np.ndarray, seat: int, hand: np.ndarray, action: np.ndarray) -> np.ndarray:
        return self.backend.decision_log_probs(states, rows, seat, hand, action, self.params, self.temperature,
                                               self.rules)


def seat_log_likelihoods(worlds: State, log: History, game: np.ndarray, seats: np.ndarray,
                         params: GreedyParams, temperature: float, rules: Rules,
                         backend: SearchBackend, takes: bool = False) -> tuple[np.ndarray, np.ndarray]:
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
    Worlds in which the seat could not have held the cards it was known to hold get -inf."""
    model = _SoftmaxGreedy(params, temperature, rules, backend)
    m, n = worlds.batch_size, log.batch_size
    greedy, uniform = np.zeros((P, m)), np.zeros((P, m))
    earlier_seats = seats & log.earlier_valid()
    turn_seats = seats & (log.take_action >= 0) if takes else earlier_seats
    for seat in range(P):
        rows = np.flatnonzero(seats[seat, game])
        if rows.size == 0:
            continue
        logged = seat * n + game[rows]
        hand = worlds.hand[seat].take(rows, axis=-1)  # [C, r]; becomes the hand at the latest put-down
        greedy[seat, rows], uniform[seat, rows], known = _put_down_log_probs(log.state, log.action, logged, seat,
                                                                             hand, model)
        # The turn of the latest put-down: its take, and the put-down before it.
        turn = np.flatnonzero(turn_seats[seat, game[rows]])
        if turn.size == 0:
            continue
        turn_greedy, turn_uniform = _turn_before_log_probs(log, seat, hand[:, turn], known[:, turn], logged[turn],
                                                           earlier_seats[seat, game[rows[turn]]], model, takes)
        uniform[seat, rows[turn]] += turn_uniform
        greedy[seat, rows[turn]] += turn_greedy
    return greedy, uniform


def _put_down_log_probs(states: State, actions: np.ndarray, logged: np.ndarray, seat: int, hand: np.ndarray,
                        model: _SoftmaxGreedy) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(greedy, uniform, known): the log-probabilities, under each model, of ``seat``'s
    put-downs logged in rows ``logged`` of ``states`` (``actions`` the log's action array),
    made with ``hand`` (int[C, r], the hand after the put-down: the card put down is added
    to it here), each less :func:`_hidden_put_down_log_count`; and the cards known to be in
    the hand then (int[C, r])."""
    action = actions.reshape(-1)[logged]
    hand[(action - Action.KEEP) % C, np.arange(logged.size)] += 1
    known = states.known[seat].take(logged, axis=-1)
    deal = _hidden_put_down_log_count(known, hand, action)  # (the same under both models)
    uniform = _uniform_put_down_log_prob(states.barred.take(logged), known, hand) - deal
    greedy = model.log_prob(states, logged, seat, hand, action) - deal
    return greedy, uniform, known


def _turn_before_log_probs(log: History, seat: int, hand: np.ndarray, known: np.ndarray, logged: np.ndarray,
                           has_earlier: np.ndarray, model: _SoftmaxGreedy, takes: bool
                           ) -> tuple[np.ndarray, np.ndarray]:
    """(greedy, uniform), float[e] each: the log-probability under each model of what
    ``seat`` did in the turn of its latest put-down (logged in rows ``logged`` of ``log``)
    before putting down, given its hand at that put-down (``hand``, ``known`` int[C, e]):
    with ``takes``, the take; where ``has_earlier`` (bool[e]), the put-down of its turn
    before. Summed over the cards the take may have gained, each weighed by its chance."""
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
    at_take[company, np.arange(column.size)] -= 1
    greedy_prob = np.log(gained[company, column])
    uniform_prob = greedy_prob.copy()
    if takes:
        take_logged = logged[column]
        greedy_prob += model.log_prob(log.take_state, take_logged, seat, at_take, taken[column])
        uniform_prob -= np.log(_legal_count(log.take_state, take_logged, model.rules, model.backend))
    before = np.flatnonzero(has_earlier[column])  # variants with a put-down before
    if before.size:
        earlier_greedy, earlier_uniform, _ = _put_down_log_probs(log.earlier_state, log.earlier_action,
                                                                 logged[column[before]], seat, at_take[:, before],
                                                                 model)
        uniform_prob[before] += earlier_uniform
        greedy_prob[before] += earlier_greedy
    # Sum the variants' probabilities per column.
    starts = np.flatnonzero(np.r_[True, column[1:] != column[:-1]])
    return np.logaddexp.reduceat(greedy_prob, starts), np.logaddexp.reduceat(uniform_prob, starts)


def older_put_down_evidence(log: History, public: State, viewer: np.ndarray, params: GreedyParams,
                            temperature: float, rules: Rules, rng: np.random.Generator, backend: SearchBackend,
                            hands: int = 24) -> np.ndarray:
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
    the expectations over those samples, at least ``-MAX_PUT_DOWN_EVIDENCE``: evidence from
    the seat's record of how it plays, not from what it holds now. The viewer's own cards
    then are counted as unseen (it saw them, but which were in its hand is not logged): the
    estimate uses less than the viewer knew, never more."""
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
    hand += draw_from_pool(pool, need, rng, backend)
    log_weight = np.where(put_known, 0.0, -np.log(np.maximum(hand[company, column] - known[company, column], 1)))
    greedy = np.empty(rows.size)
    for s in np.unique(seat_of_row):
        mine = np.flatnonzero(seat_of_row == s)
        greedy[mine] = backend.decision_log_probs(states, rows[mine], int(s), hand[:, mine], action[mine], params,
                                                  temperature, rules)
    uniform = _uniform_put_down_log_prob(states.barred.take(rows), known, hand)
    starts = np.arange(0, rows.size, hands)
    ratio = np.logaddexp.reduceat(greedy + log_weight, starts) - np.logaddexp.reduceat(uniform + log_weight, starts)
    # A put-down the greedy model all but rules out counts as a bounded amount of evidence.
    np.add.at(evidence, (seat, game), np.maximum(ratio, -MAX_PUT_DOWN_EVIDENCE))
    return evidence


def decision_log_prob(before: State, seat: int, hand: np.ndarray, action: np.ndarray, params: GreedyParams,
                      temperature: float, rules: Rules) -> np.ndarray:
    """float64[r]: log-probability that ``seat``, holding ``hand`` (int[C, r]) in the public
    states ``before`` (r rows, the seat to act, all at a put-down or all at a take;
    modified), plays ``action`` under the softmax-greedy model, ``P(action) ~ exp(greedy
    score / temperature)`` over the legal actions; -inf where the hand lacks cards it was
    known to hold. The numpy reference of the backends' ``decision_log_probs``."""
    before.hand[seat] = hand
    held_known = (hand >= before.known[seat]).all(axis=0)
    mask = Simulator.from_state(before, rules, backend="numpy").legal_mask()  # [r, 19]
    # (in float64: the log-sum of 12 float32 terms would carry float32's rounding into the weights)
    logits = np.where(mask.T, greedy_scores(state_features(before), params).astype(np.float64) / temperature,
                      -np.inf)
    chosen = logits[action, np.arange(action.size)] - np.logaddexp.reduce(logits, axis=0)
    return np.where(held_known & np.isfinite(chosen), chosen, -np.inf)


def _legal_count(states: State, rows: np.ndarray, rules: Rules, backend: SearchBackend) -> np.ndarray:
    """int[r]: how many actions are legal in rows ``rows`` of ``states`` (not changed; rows
    repeat, one per hypothesis: each distinct one is asked once)."""
    distinct, where = np.unique(rows, return_inverse=True)
    return Simulator.from_state(states.take(distinct), rules, backend=backend.name).legal_mask().sum(axis=1)[where]


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
