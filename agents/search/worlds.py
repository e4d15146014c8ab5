"""Drawing the search's worlds: the hidden cards of sampled games consistent with what the
searching player has seen.

:func:`determinize` deals a public state's hidden cards: each other player's hand keeps its
publicly known cards and is filled up from the cards the player cannot see
(``State.unseen``), and the rest of those cards are shuffled into the pile and the
removed cards. Hands may be given instead (drawn from the hand reading's posteriors by
:func:`sample_hands`); a :class:`WorldPool` keeps such hand hypotheses with their weights
and deals a fresh pile to each one it draws.

Every random number comes from the caller's generator, drawn here before the backend
(:mod:`.backends`) is asked to deal from them, so both backends deal the same cards. The
numpy deal (:func:`~startups_env.startups.state.deal_hidden_cards`) lives in the engine,
beside :func:`~startups_env.startups.state.public_state`, whose hiding it undoes: the
OpenSpiel game resamples its worlds with it too.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import TYPE_CHECKING

import numpy as np

from startups_env.startups.rules import DECK_SIZE, HAND_SIZE, MAX_PLAYERS, NUM_COMPANIES
from startups_env.startups.state import State, check_hidden_counts, hidden_hand_counts, shuffled_pool

if TYPE_CHECKING:
    from .protocol import SearchBackend

P, C = MAX_PLAYERS, NUM_COMPANIES


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
LOG_FACTORIAL = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, DECK_SIZE + 1)))])  # log k! for k = 0..45


def determinize(public: State, seat: np.ndarray, count, rng: np.random.Generator, backend: SearchBackend,
                hands: np.ndarray | None = None) -> State:
    """``count`` (an int, or int[n] per game) sampled worlds per game of ``public`` (a
    ``public_state`` of n games seen by ``seat`` int[n]), as one State; game i's worlds
    are consecutive rows, in game order.

    Other seats' hands are filled from their publicly known cards up to ``HAND_SIZE``
    with cards drawn uniformly without replacement from the unseen pool; the remaining
    pool cards are shuffled into the pile (deck positions ``pile_pos``..44) and the
    removed cards (positions 0..4). The seat's own cards and everything public stay.
    One ``rng.random((m, 45))`` draw orders each world's pool; ``backend`` deals from it.
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
    world = backend.take(public, rows)
    who = seat[rows]
    pool = world.unseen(who).astype(np.int64)  # [C, m]
    if hands is not None:
        _add_given_hands(world, who, pool, hands)
    need = hidden_hand_counts(world, who)  # [P, m] unknown hand cards
    check_hidden_counts(world, pool, need)
    keys = rng.random((world.batch_size, DECK_SIZE))  # the order of each world's pool cards
    backend.deal_hidden_cards(keys, pool, need, world)
    return world


def _add_given_hands(world: State, who: np.ndarray, pool: np.ndarray, hands: np.ndarray) -> None:
    """Add ``hands`` (int[7, C, m], the other seats' hidden cards chosen by the caller of
    :func:`determinize`) to ``world``'s hands and take them out of ``pool`` (int64[C, m]);
    a ValueError where they are not counts for the other seated seats or the pool lacks
    them."""
    m = world.batch_size
    seats = np.arange(P)[:, None]
    others = (seats != who[None, :]) & (seats < world.num_players.astype(np.intp)[None, :])  # [P, m]
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


def draw_from_pool(pool: np.ndarray, need: np.ndarray, rng: np.random.Generator,
                   backend: SearchBackend) -> np.ndarray:
    """int64[C, r]: need[i] cards drawn uniformly without replacement from the cards
    ``pool[:, i]`` (counts per company), as counts per company. One ``rng.random((r, 45))``
    draw orders the pools; ``backend`` counts the first cards."""
    keys = rng.random((need.size, DECK_SIZE))
    return backend.draw_counts(keys, pool, need)


def count_first_cards(keys: np.ndarray, pool: np.ndarray, need: np.ndarray) -> np.ndarray:
    """int64[C, r]: the first need[i] cards of pool i (``pool`` int[C, r]) in the order of
    ``keys`` (float[r, 45]; changed), as counts per company."""
    r = need.size
    drawn = shuffled_pool(pool, keys)
    chosen = np.where(np.arange(DECK_SIZE)[None, :] < need[:, None], drawn, C)
    flat = (np.arange(r)[:, None] * (C + 1) + chosen).reshape(-1)
    return np.bincount(flat, minlength=r * (C + 1)).reshape(r, C + 1)[:, :C].T.astype(np.int64)


def _log_choose(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log C(n, k), element-wise; -inf where k > n or either is negative."""
    ok = (k >= 0) & (k <= n)
    n, k = np.where(ok, n, 0), np.where(ok, k, 0)
    return np.where(ok, LOG_FACTORIAL[n] - LOG_FACTORIAL[k] - LOG_FACTORIAL[n - k], -np.inf)


def deal_log_chance(pool: np.ndarray, composition: np.ndarray, size: np.ndarray) -> np.ndarray:
    """float[m]: the log-chance that ``size`` (int[m]) cards dealt uniformly from ``pool``
    (int[m, C], counts per company) are ``composition`` (int[m, C]): hypergeometric."""
    return _log_choose(pool, composition).sum(axis=1) - _log_choose(pool.sum(axis=1), size)


def composition_evidence(evidence: np.ndarray, need: np.ndarray) -> np.ndarray:
    """float[7, n, 56]: ``sum_c n_c * evidence[s, i, c]`` for each composition n of
    ``need[s, i]`` hidden cards (:data:`COMPOSITIONS`; ``evidence`` float[7, n, C], a
    log-likelihood ratio per card, by seat): a per-card evidence as a log-likelihood of
    each composition (the hand-belief network's, :mod:`.belief`)."""
    return np.einsum("snkc,snc->snk", COMPOSITIONS[need], evidence)


def composition_posterior(scores: np.ndarray, need: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log_probs float[7, n, 56], expected float[7, n, C]): composition scores
    (float[7, n, 56], an unnormalised log-chance of each composition of ``need[s, i]``
    hidden cards; -inf where impossible) normalised over each seat's compositions, and the
    cards per company they expect. A seat with no possible composition (no hidden cards
    to score) gets NaN log-chances and expects nothing."""
    scores = np.where(COMPOSITION_VALID[need], scores, -np.inf)
    top = scores.max(axis=2, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):  # (the seats with no possible composition)
        log_probs = scores - top - np.log(np.exp(scores - top).sum(axis=2, keepdims=True))
    expected = np.einsum("snk,snkc->snc", np.nan_to_num(np.exp(log_probs)), COMPOSITIONS[need])
    return log_probs, expected


def sample_hands(posterior: np.ndarray, log_deal: np.ndarray, need: np.ndarray, pool: np.ndarray,
                 count: np.ndarray, rng: np.random.Generator, backend: SearchBackend
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
    drawn from its deal alone. One ``rng.random`` draw per seat and world; ``backend``
    picks the hands from them (the same hands on both, the weights to rounding).
    Returns (int64[7, C, m], float[m]) with m = count.sum(), game i's worlds consecutive."""
    seats = np.flatnonzero(need.any(axis=1))
    cumulative = np.empty((seats.size, count.size, MAX_COMPOSITIONS))
    for row, s in enumerate(seats):
        stuck = ~np.isfinite(posterior[s].max(axis=1))
        log_p = np.where(stuck[:, None], log_deal[s], posterior[s])
        p = np.exp(log_p - log_p.max(axis=1, keepdims=True))
        cumulative[row] = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
    draws = rng.random((seats.size, int(count.sum())))
    return backend.hands_from_draws(cumulative, draws, seats, need, log_deal, pool, count)


def hands_from_draws(cumulative: np.ndarray, draws: np.ndarray, seats: np.ndarray, need: np.ndarray,
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
    log_joint = (LOG_FACTORIAL[pool_w].sum(axis=1)
                 - LOG_FACTORIAL[hands].sum(axis=(0, 1))
                 - np.where(pool_w >= total, LOG_FACTORIAL[np.maximum(pool_w - total, 0)], np.inf).sum(axis=1))
    pool_total, sizes = pool_w.sum(axis=1), need[:, game]
    log_joint -= (LOG_FACTORIAL[pool_total] - LOG_FACTORIAL[sizes].sum(axis=0)
                  - LOG_FACTORIAL[np.maximum(pool_total - sizes.sum(axis=0), 0)])
    feasible = (pool_w >= total).all(axis=1)
    hands[:, :, ~feasible] = 0  # (dealt at random instead; their weight is 0)
    return hands, np.where(feasible, log_joint - log_separate, -np.inf)


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

    def sample(self, counts: np.ndarray, rng: np.random.Generator, backend: SearchBackend,
               repeat: np.ndarray | None = None) -> State:
        """counts[i] worlds of each game i: hypotheses drawn by weight (systematic
        resampling), each dealt a pile and removed cards of its own (:func:`determinize`): a
        hypothesis drawn twice meets two piles. ``repeat`` (int[r], optional): return r
        rows, row j a copy of drawn world ``repeat[j]`` (copies of a world share its pile)."""
        kept = _resample(self.log_weights, self.game, counts, rng)
        worlds = determinize(self.public, self.seat, counts, rng, backend, hands=self.hands[:, :, kept])
        return worlds if repeat is None else backend.take(worlds, repeat)


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
