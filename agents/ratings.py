"""Ratings of tournament entries that do not depend on the order of the games: one
Plackett-Luce fit over all games at once, and a bootstrap interval over deals.

**Model.** Entry i has a strength w_i > 0. A game's finishing order is drawn by picking the
winner among the players with probability proportional to strength, then second place
among the others in the same way, and so on (Plackett-Luce). The likelihood of a game is
the product, over its places but the last, of w_chosen / (sum of w over the players not
yet placed); the likelihood of a tournament is the product over its games, so it does not
depend on their order. (A rating updated game by game, such as OpenSkill or Elo, weighs
late games more: the same games in another order give other ratings.)

**Scale.** ``rating_i = 400 * log10(w_i)``, shifted so that the mean rating of the entries
is 0: points relative to the average entry of this fit, on Elo's scale. In a two-player
game an entry rated d points above another wins with probability 1 / (1 + 10^(-d / 400))
(e.g. +100 points: 64%); at a table of n, entry i wins with probability
10^(R_i/400) / sum_j 10^(R_j/400). Ratings from different fits share no zero, so compare
entries within one fit.

**Prior.** Every pair of entries is credited with ``prior`` virtual two-player games won
by each of them (default 1: one win each way). Without it an entry that wins every game
(or loses every game) has no finite maximum, and entries that never met have no defined
gap. The virtual games depend only on differences of ratings (the fit stays shift-free)
and pull all ratings toward each other; an entry gets 2 * prior * (entries - 1) of them,
against one real choice per place of each real game, so they matter only for a handful of
games. The fit maximises the likelihood of the real and the virtual games together.

**Fit.** Hunter's MM algorithm (Hunter 2004, "MM algorithms for generalized Bradley-Terry
models"): w_i <- (places entry i was chosen for) / (sum over the choices it was eligible
for of 1 / the eligible players' total strength), which increases the likelihood at every
step and converges to the unique maximum (the virtual games make the comparison graph
strongly connected). Games are first reduced to counts of distinct choices (who was
chosen, among whom), so the cost of a fit does not grow with the number of games.

**Ties.** A tie has no Plackett-Luce order, and the rules of Startups break every tie (by
3-point coins, then by seat order from the last turn), so the arena never produces one;
ranks with a tie are a ValueError, not silently broken one way or the other.

**Copies.** Several players of one game may be the same entry (the ladder pools the N-1
copies of an opponent): they share its strength. A choice among copies of one entry only
says nothing and is left out.

**Interval.** A percentile bootstrap: whole groups of games (the arena's deals, i.e. all
seat rotations of a deal together, since they share their cards) are resampled with
replacement and the fit repeated; the interval of an entry holds the central ``level``
share of its replicate ratings. The resampling is drawn from ``seed``, so it is
reproducible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from startups_env.checks import check_seed, is_int

#: Rating points per natural-log unit of strength (400 points = a factor of 10).
POINTS = 400.0 / math.log(10.0)

_TOLERANCE = 1e-12  # largest change of any log-strength in the last MM step
_MAX_ITERATIONS = 100_000
_CELLS = 1 << 22  # bootstrap replicates are fitted in blocks of at most this many [replicate, deal] cells


@dataclass(frozen=True)
class Ratings:
    """The result of :func:`rate`: ratings in points (see the module doc) and their
    bootstrap replicates. ``samples`` is float[B, E], one fit per bootstrap replicate
    (B = 0 when no interval was asked for)."""

    points: np.ndarray  # float[E]
    samples: np.ndarray  # float[B, E]
    level: float
    prior: float

    @property
    def intervals(self) -> np.ndarray:
        """float[E, 2]: each entry's ``level`` percentile bootstrap interval (NaN without replicates)."""
        return self._interval(self.samples)

    def difference(self, i: int, j: int) -> tuple[float, float, float]:
        """Rating of entry i minus that of entry j, with its bootstrap interval (the
        replicates of the difference, not a difference of intervals)."""
        lo, hi = self._interval(self.samples[:, [i]] - self.samples[:, [j]])[0]
        return float(self.points[i] - self.points[j]), float(lo), float(hi)

    def _interval(self, samples: np.ndarray) -> np.ndarray:
        if samples.shape[0] == 0:
            return np.full((samples.shape[1], 2), np.nan)
        tail = (1.0 - self.level) / 2
        return np.quantile(samples, [tail, 1.0 - tail], axis=0).T


def rate(ranks, entries=None, *, num_entries: int | None = None, groups=None, prior: float = 1.0,
         replicates: int = 1000, level: float = 0.95, seed=0) -> Ratings:
    """Plackett-Luce ratings of the entries of a set of games, with bootstrap intervals.

    ranks: int[G, S]: the place of each player (slot) of each game, lower is better (only
        the order within a game counts; 0-based ranks as the arena stores them do).
        Places within a game must differ (see *Ties* in the module doc).
    entries: which entry each slot is: None (slot s is entry s), int[S] (the same in every
        game) or int[G, S]; values in 0..num_entries-1, repeats allowed (*Copies*).
    num_entries: E, default the largest entry + 1.
    groups: int[G] labels of the groups of games resampled together (the arena's deals);
        default each game alone.
    prior: virtual games won each way by every pair of entries, > 0 (*Prior*).
    replicates: bootstrap replicates (0: no interval); level: the interval's coverage.
    seed: a non-negative int or a numpy SeedSequence; the same seed, the same intervals.
    """
    ranks, entries, num_entries = _check_games(ranks, entries, num_entries)
    prior = _check_prior(prior)
    if not is_int(replicates) or replicates < 0:
        raise ValueError(f"replicates must be a non-negative int, got {replicates!r}")
    if not isinstance(level, (int, float)) or isinstance(level, bool) or not 0.0 < level < 1.0:
        raise ValueError(f"level must be a number strictly between 0 and 1, got {level!r}")
    seed = check_seed(seed, none_ok=False)
    games = ranks.shape[0]
    if groups is None:
        group_of_game = np.arange(games)
    else:
        labels = np.asarray(groups)
        if labels.shape != (games,):
            raise ValueError(f"groups must have one label per game, shape [{games}], got {list(labels.shape)}")
        group_of_game = np.unique(labels, return_inverse=True)[1].reshape(-1)
    chosen, risk, game = _choices(ranks, entries, num_entries)
    kinds, kind = _distinct(chosen, risk)
    counts = np.bincount(kind, minlength=kinds[0].size).astype(np.float64)
    points = _fit(kinds, counts[None], num_entries, prior)[0]

    samples = np.empty((replicates, num_entries))
    deals = int(group_of_game.max()) + 1 if games else 0
    if replicates and not deals:
        samples[:] = points  # no games: nothing to resample
    elif replicates:
        # Choices of each kind in each group: a replicate's counts are its group
        # multiplicities times this table.
        width = kinds[0].size
        table = np.bincount(group_of_game[game] * width + kind, minlength=deals * width)
        table = table.reshape(deals, width).astype(np.float64)
        rng = np.random.default_rng(seed)
        block = max(1, _CELLS // deals)
        for start in range(0, replicates, block):
            size = min(block, replicates - start)
            drawn = rng.integers(0, deals, size=(size, deals))  # each replicate's deals, with replacement
            drawn += deals * np.arange(size)[:, None]
            multiplicity = np.bincount(drawn.reshape(-1), minlength=size * deals).reshape(size, deals)
            multiplicity = multiplicity.astype(np.float64)
            samples[start:start + size] = _fit(kinds, multiplicity @ table, num_entries, prior)
    return Ratings(points=points, samples=samples, level=float(level), prior=prior)


def format_rating(points: float, interval) -> str:
    """``"+57 [+21, +95]"``: a rating and its interval, in whole points."""
    lo, hi = interval
    return f"{points:+.0f} [{lo:+.0f}, {hi:+.0f}]"


def fit(ranks, entries=None, *, num_entries: int | None = None, prior: float = 1.0) -> np.ndarray:
    """float[E]: the maximum-likelihood ratings of :func:`rate` (same arguments), without
    an interval."""
    ranks, entries, num_entries = _check_games(ranks, entries, num_entries)
    prior = _check_prior(prior)
    chosen, risk, _ = _choices(ranks, entries, num_entries)
    kinds, kind = _distinct(chosen, risk)
    counts = np.bincount(kind, minlength=kinds[0].size).astype(np.float64)
    return _fit(kinds, counts[None], num_entries, prior)[0]


# ----------------------------------------------------------------------------- internals

def _check_games(ranks, entries, num_entries):
    arr = np.asarray(ranks)
    if arr.ndim != 2 or arr.shape[1] < 2 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise ValueError(f"ranks must be an int array [games, players] with at least 2 players, "
                         f"got {arr.dtype} {list(arr.shape)}")
    arr = arr.astype(np.int64)
    games, slots = arr.shape
    ordered = np.sort(arr, axis=1)
    tied = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
    if tied.size:
        g = int(tied[0])
        raise ValueError(f"games {tied[:10].tolist()} have tied ranks (game {g}: {arr[g].tolist()}); "
                         "Plackett-Luce needs a strict order, so break ties before rating")
    if entries is None:
        who = np.broadcast_to(np.arange(slots), (games, slots))
    else:
        who = np.asarray(entries)
        if who.shape not in ((slots,), (games, slots)) or not np.issubdtype(who.dtype, np.integer):
            raise ValueError(f"entries must be an int array [{slots}] or [{games}, {slots}], "
                             f"got {who.dtype} {list(who.shape)}")
        who = np.broadcast_to(who.astype(np.int64), (games, slots))
    top = int(who.max()) + 1 if who.size else slots
    if num_entries is None:
        num_entries = top
    elif not is_int(num_entries) or num_entries < top:
        raise ValueError(f"num_entries must be an int of at least {top} (the largest entry + 1), got {num_entries!r}")
    if who.size and who.min() < 0:
        raise ValueError(f"entries must be non-negative, got {int(who.min())}")
    return arr, who, int(num_entries)


def _check_prior(prior) -> float:
    if not isinstance(prior, (int, float, np.floating, np.integer)) or isinstance(prior, bool) \
            or not math.isfinite(prior) or prior <= 0:
        raise ValueError(f"prior must be a positive finite number of virtual games, got {prior!r}")
    return float(prior)


def _choices(ranks: np.ndarray, who: np.ndarray, num_entries: int):
    """Every informative choice of every game: the entry chosen (int[R]), how many players
    of each entry it was chosen among (int[R, E]), and its game (int[R])."""
    games, slots = ranks.shape
    finishing = np.take_along_axis(who, np.argsort(ranks, axis=1), axis=1)  # [G, place] -> entry
    onehot = (finishing[:, :, None] == np.arange(num_entries)).astype(np.int64)  # [G, place, E]
    left = np.cumsum(onehot[:, ::-1], axis=1)[:, ::-1]  # players not yet placed, by entry
    chosen = finishing[:, :-1].reshape(-1)  # the last place is no choice
    risk = left[:, :-1].reshape(-1, num_entries)
    game = np.repeat(np.arange(games), slots - 1)
    informative = (risk > 0).sum(axis=1) > 1  # a choice among copies of one entry says nothing
    return chosen[informative], risk[informative], game[informative]


def _distinct(chosen: np.ndarray, risk: np.ndarray):
    """The distinct (chosen, risk) kinds and each choice's kind: a fit needs only their counts."""
    rows = np.column_stack([chosen, risk]).astype(np.int64)
    # Sorted by a lexicographic sort rather than np.unique(axis=0), which is several times slower.
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    first = np.ones(rows.shape[0], bool)
    first[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    kind = np.empty(rows.shape[0], np.int64)
    kind[order] = np.cumsum(first) - 1
    unique = ordered[first]
    return (unique[:, 0], unique[:, 1:]), kind


def _fit(kinds, counts: np.ndarray, num_entries: int, prior: float) -> np.ndarray:
    """float[B, E]: the MM fixed point, in points centred on the mean, for each row of
    choice counts (float[B, K] over ``kinds``), all rows at once."""
    rows = counts.shape[0]
    if num_entries == 1:
        return np.zeros((rows, 1))
    # The virtual games: entry i chosen over entry j, for every ordered pair.
    i, j = np.nonzero(~np.eye(num_entries, dtype=bool))
    pair_risk = np.zeros((i.size, num_entries))
    pair_risk[np.arange(i.size), i] = 1
    pair_risk[np.arange(i.size), j] = 1
    chosen = np.concatenate([kinds[0], i])
    risk = np.concatenate([kinds[1].astype(np.float64), pair_risk])
    counts = np.concatenate([counts, np.full((rows, i.size), prior)], axis=1)  # [B, K]
    picked = np.zeros((risk.shape[0], num_entries))
    picked[np.arange(risk.shape[0]), chosen] = 1
    wins = counts @ picked  # [B, E] > 0: every entry wins virtual games
    theta = np.zeros((rows, num_entries))
    for _ in range(_MAX_ITERATIONS):
        strength = np.exp(theta)
        eligible = counts / (strength @ risk.T)  # [B, K] count / the eligible players' total strength
        new = np.log(wins) - np.log(eligible @ risk)
        new -= new.mean(axis=1, keepdims=True)
        step = np.abs(new - theta).max()
        theta = new
        if step < _TOLERANCE:
            return POINTS * theta
    raise RuntimeError(f"the Plackett-Luce fit did not converge in {_MAX_ITERATIONS} iterations")
