"""The search bot's fused rollout: one compiled call plays a batch of sampled worlds to the
end of their round.

Each game of the batch first plays its plan (one action, or a market take and the
put-down after it), then every seat moves by the greedy bot's choice, each from what its
player may see (:func:`startups_env.agents.greedy_kernel.greedy_scores_game`), optionally
with random moves mixed in: each game and seat has a chance that a move is a uniformly
random legal one instead (the search sets it from its opponent model and
``rollout_epsilon``: :meth:`.rollout.Rollouts.random_chance`). The rules are those of :mod:`startups_env.startups.numba_backend`;
the game stops where its round ends (the pile runs out, or the turn cap, which the search
uses as its horizon). :func:`rollout` then scores the round with the simulator's own
end-of-round code (:meth:`startups_env.startups.simulator.Simulator.finish_rounds`), exactly as a rollout
stepped by the Simulator would be; :func:`rollout_outcomes`, what the search calls, scores
it in the same compiled call with the simulator's compiled scoring
(:func:`startups_env.startups.numba_backend.score_round_game`) and returns only what the search values: the
mover's rank in the round and its score margin.

With no random moves the rollout is deterministic and equal, game for game, to the
Simulator-stepped rollout of the numpy greedy (tests/test_rollout_kernel.py). Random moves
come from a small counter-based generator per game (SplitMix64) seeded from the caller's
``numpy.random.Generator``: the same seed gives the same rollouts on any number of threads.
"""

from __future__ import annotations

import numba
import numpy as np

from startups_env.startups import numba_backend as kernels
from startups_env.startups import numba_runtime
from startups_env.startups import queries
from startups_env.startups.rules import MAX_PLAYERS, NUM_ACTIONS, Rules
from startups_env.startups.simulator import Simulator
from startups_env.startups.state import State

from .. import greedy_kernel
from ..greedy import GreedyParams
from ..greedy_kernel import arrays, best_legal_game, greedy_scores_game, kernel_params

kernels.forget_stale_cache(__file__, kernels.__file__, greedy_kernel.__file__, queries.__file__)
numba_runtime.describe_kernels(__name__, "the search's rollouts", 35)

# Rollouts a call from which they run on numba's threads. A rollout plays dozens of moves, so
# far fewer games repay the threads' hand-off than the simulator's one step (its
# kernels.PARALLEL_FROM is 4,096): the search's calls of 256-4,096 rollouts took 1.6-2x less
# time on two threads, and its decisions about 8% less (docs/experiments.md, 2026-12-03,
# a later session).
PARALLEL_FROM = 256

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@numba.njit(cache=True, nogil=True, inline="always")
def _uniform(counter):
    """(u in [0, 1), next counter): SplitMix64 of a per-game counter."""
    counter = counter + _GOLDEN
    z = counter
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return np.float64(z >> _S11) * _UNIT, counter


@kernels.loop_body
def _play_game(g, action, second, r, chance, chance_row, counter, params, s, legal, scores):
    """Play game g of ``s`` to the end of its round: its plan (``action``, then ``second``
    where >= 0), then the rollout policy, a seat moving at random with the chance in its
    column of ``chance[chance_row]``, from the generator ``counter``. Returns whether the
    round ended (always, unless a plan's move was illegal: none is)."""
    planned = 1
    ended = False
    while not ended:
        if planned == 2:
            action = second
        if planned == 0 or action < 0:
            planned = 0
            kernels.legal_game(g, legal, s)
            choices = kernels.count_legal(legal, g, 0, NUM_ACTIONS)
            random_move = False
            if chance[chance_row, s.current[g]] > 0.0:
                u, counter = _uniform(counter)
                random_move = u < chance[chance_row, s.current[g]]
            if random_move:
                u, counter = _uniform(counter)
                action = kernels.nth_legal(legal, g, 0, NUM_ACTIONS, int(u * choices))
            elif choices == 1:  # (a forced move, a draw at an empty market most often: greedy's without its scores)
                action = kernels.nth_legal(legal, g, 0, NUM_ACTIONS, 0)
            else:
                greedy_scores_game(s, g, params, scores[g])
                action = best_legal_game(scores[g], legal[g, :])
        else:
            planned = 2 if planned == 1 else 0
        ended = kernels.step_game(g, action, r, s)
    return ended


def _play(first, second, r, chance, counters, params, s, legal, scores, over):
    """Play every game of ``s`` to the end of its round (:func:`_play_game`; game g's chances
    in row g of ``chance``); ``over`` is set where it ended."""
    for g in numba.prange(first.shape[0]):
        over[g] = _play_game(g, first[g], second[g], r, chance, g, counters[g], params, s, legal, scores)


def _play_and_score(first, second, mover, r, chance, chance_row, counters, params, s, legal, scores, rank,
                    margin):
    """Play every game of ``s`` to the end of its round (:func:`_play_game`; game g's chances
    in row ``chance_row[g]`` of ``chance``), score the round (kernels.score_round_game, as
    the simulator does) and write the mover's rank in it and its score less the best other
    seated player's (``queries.score_margin``); rank -1 where the round did not end."""
    for g in numba.prange(first.shape[0]):
        _play_and_score_game(g, first[g], second[g], mover[g], r, chance, chance_row[g], counters[g], params, s,
                             legal, scores, rank, margin)


@kernels.loop_body
def _play_and_score_game(g, first, second, seat, r, chance, chance_row, counter, params, s, legal, scores, rank,
                         margin):
    """:func:`_play_and_score` for game g (``seat`` the mover)."""
    rank[g] = -1.0
    if _play_game(g, first, second, r, chance, chance_row, counter, params, s, legal, scores):
        kernels.score_round_game(g, s)
        best_other = -np.inf
        for p in range(s.num_players[g]):
            if p != seat:
                best_other = max(best_other, np.float64(s.scores[p, g]))
        rank[g] = s.ranks[seat, g]
        margin[g] = np.float64(s.scores[seat, g]) - best_other


_play_serial, _play_parallel = kernels.serial_and_parallel(_play)
_play_and_score_serial, _play_and_score_parallel = kernels.serial_and_parallel(_play_and_score)


def rollout(state: State, first: np.ndarray, second: np.ndarray, mover: np.ndarray, rules: Rules,
            params: GreedyParams, rng: np.random.Generator, *, random_chance: np.ndarray | None = None) -> State:
    """Play the m games of ``state`` (changed in place, and returned) to the end of their
    round and score it: game i first plays ``first[i]`` and, where ``second[i]`` >= 0,
    ``second[i]`` (both legal), then the rollout policy moves (see the module docstring).
    ``random_chance`` (float[m, 7], optional) sets, per game and seat, the chance that a
    move is uniformly random instead (default 0: greedy moves only).
    ``rules.turn_cap`` stops a round early, scored as it stands. Afterwards ``state.scores``
    and ``state.ranks`` hold each game's round result, as a Simulator that stepped the
    games would leave them (round game: the next round is dealt from ``rng``)."""
    m = state.batch_size
    first, second, mover, random_chance, _, _ = _checked(m, first, second, mover, random_chance, None)
    counters, legal, scores = _scratch(m, rng)
    over = np.zeros(m, bool)
    play = _play_parallel if m >= PARALLEL_FROM else _play_serial
    play(first, second, rules.params, random_chance, counters, kernel_params(params), arrays(state), legal, scores,
         over)
    sim = Simulator.from_state(state, rules, seed=rng)
    sim.finish_rounds(np.flatnonzero(over))
    return sim.state


def rollout_outcomes(state: State, first: np.ndarray, second: np.ndarray, mover: np.ndarray, rules: Rules,
                     params: GreedyParams, rng: np.random.Generator, *, random_chance: np.ndarray | None = None,
                     chance_row: np.ndarray | None = None, stream: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(rank, margin), float64[m] each: the games of ``state`` played as :func:`rollout`
    plays them, and their round scored, in one compiled call; ``rank`` is ``mover``'s rank in
    the round (0: best) and ``margin`` its score less the best other seated player's
    (``queries.score_margin``). These are the round's, as the simulator scores it: in the
    last round of a round game, not the final ranking that :func:`rollout` leaves in
    ``state.ranks``. ``state`` (changed in place) is left at the end of the round, scored,
    with no next deal and no game-over flags. ``random_chance`` float[k, 7] (default 0) and
    ``chance_row`` int[m] (default: row i for game i): game i's random-move chances are row
    ``chance_row[i]``, so that games rolled out from one world can share its row.
    ``stream`` (int[m], default: each game its own): games with the same stream draw the
    same random numbers, in order (common random numbers: the candidates rolled out from
    one world meet the same random moves until their games part)."""
    m = state.batch_size
    first, second, mover, random_chance, chance_row, stream = _checked(m, first, second, mover, random_chance,
                                                                       chance_row, stream)
    counters, legal, scores = _scratch(m, rng, stream)
    rank, margin = np.empty(m), np.empty(m)
    play = _play_and_score_parallel if m >= PARALLEL_FROM else _play_and_score_serial
    play(first, second, mover, rules.params, random_chance, chance_row, counters, kernel_params(params),
         arrays(state), legal, scores, rank, margin)
    if (rank < 0).any():
        raise ValueError(f"rollouts {np.flatnonzero(rank < 0)[:10].tolist()} did not reach the end of their round: "
                         "a plan's move was illegal")
    return rank, margin


def _checked(m: int, first, second, mover, random_chance, chance_row, stream=None):
    """The rollouts' inputs as the kernels take them, their shapes checked."""
    first = np.ascontiguousarray(first, np.int64)
    second = np.ascontiguousarray(second, np.int64)
    mover = np.ascontiguousarray(mover, np.int64)
    chance_row = np.arange(m) if chance_row is None else np.ascontiguousarray(chance_row, np.int64)
    for name, x in (("first", first), ("second", second), ("mover", mover), ("chance_row", chance_row)):
        if x.shape != (m,):
            raise ValueError(f"{name} must have shape [{m}], got {list(x.shape)}")
    if random_chance is None:
        random_chance = np.zeros((m, MAX_PLAYERS))
    random_chance = np.ascontiguousarray(random_chance, np.float64)
    rows = random_chance.shape[0] if random_chance.ndim == 2 else 0
    if random_chance.shape != (rows, MAX_PLAYERS) or (m and not 0 <= chance_row.min() <= chance_row.max() < rows):
        raise ValueError(f"random_chance must have shape [k, {MAX_PLAYERS}] with a row for each rollout "
                         f"({m}, or chance_row into it), got {list(random_chance.shape)}")
    if stream is not None:
        stream = np.asarray(stream)
        if stream.shape != (m,) or not np.issubdtype(stream.dtype, np.integer) or (m and stream.min() < 0):
            raise ValueError(f"stream must be non-negative ints of shape [{m}], got {stream.dtype} of shape "
                             f"{list(stream.shape)}" + (f", min {stream.min()}" if stream.size else ""))
    return first, second, mover, random_chance, chance_row, stream


def _scratch(m: int, rng: np.random.Generator, stream: np.ndarray | None = None):
    """(counters, legal, scores): each rollout's generator, seeded from ``rng`` (one seed
    per distinct ``stream``, int[m] as :func:`_checked` leaves it; default: one per
    rollout), and the kernels' working rows."""
    if stream is None:
        counters = rng.integers(0, 2**63, size=m, dtype=np.int64).astype(np.uint64)
    else:
        seeds = rng.integers(0, 2**63, size=int(stream.max()) + 1 if m else 0, dtype=np.int64)
        counters = seeds[stream].astype(np.uint64)
    return counters, np.empty((m, NUM_ACTIONS), bool), np.empty((m, NUM_ACTIONS), np.float32)
