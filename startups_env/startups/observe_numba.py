"""The observation of one seat in one game, compiled with numba (an optional dependency).

:func:`observe_game` writes the same float32 vector as :func:`startups_env.startups.observe.observe`
(bit for bit; ``tests/test_observe_kernel.py`` checks it on random states of every table
size, observer and round), in one compiled call instead of the ~40 Python and numpy
operations of the one-game path: the PettingZoo env's compiled backend observes with it.

The layout stays defined once, by :data:`startups_env.startups.observe.PIECES`: the kernel writes
each piece at the offset :data:`startups_env.startups.observe.SLICES` gives it, read here at import,
and the import fails if the pieces are not the ones, of the shapes, that the kernel writes
(a changed layout must change the kernel too, rather than leave it writing stale offsets).
The element-wise quantities the pieces hold (relative seats, take coins, cards left in the
pile, unseen cards) are :mod:`startups_env.startups.queries`' own functions, compiled.
"""

from __future__ import annotations

import numba
import numpy as np

from startups_env.startups import queries
from startups_env.startups.state import State, arrays
from startups_env.startups.observe import OBS_DIM, PIECES, SLICES
from startups_env.startups.rules import COMPANY_SIZES, MAX_PLAYERS, MIN_PLAYERS, NUM_COMPANIES, ROUND_GAME_ROUNDS

P, C = MAX_PLAYERS, NUM_COMPANIES

# The pieces, in order, with the shapes the kernel below writes them in.
_WRITTEN = {
    "num_players": (MAX_PLAYERS - MIN_PLAYERS + 1,), "phase": (2,), "current_player": (P,), "hand": (C,),
    "portfolios": (P, C), "known_hands": (P, C), "coins": (P,), "chips": (C, P), "market_cards": (C,),
    "market_coins": (C,), "take_coins": (C,), "pile": (1,), "barred": (C,), "unseen": (C,), "turn": (1,),
    "round": (ROUND_GAME_ROUNDS,), "round_points": (P,),
}
if [(p.name, p.shape) for p in PIECES] != list(_WRITTEN.items()):
    raise ImportError("startups_env.startups.observe.PIECES is not the layout startups_env.startups.observe_numba writes: "
                      "update the kernel with the pieces")

# Offsets of the pieces (module-level ints: numba compiles them in as constants).
_NUM_PLAYERS, _PHASE, _CURRENT, _HAND = (SLICES[k].start for k in ("num_players", "phase", "current_player", "hand"))
_PORTFOLIOS, _KNOWN, _COINS, _CHIPS = (SLICES[k].start for k in ("portfolios", "known_hands", "coins", "chips"))
_MARKET_CARDS, _MARKET_COINS, _TAKE_COINS = (SLICES[k].start for k in ("market_cards", "market_coins", "take_coins"))
_PILE, _BARRED, _UNSEEN, _TURN = (SLICES[k].start for k in ("pile", "barred", "unseen", "turn"))
_ROUND, _ROUND_POINTS = SLICES["round"].start, SLICES["round_points"].start
_LAST_ROUND = ROUND_GAME_ROUNDS - 1  # a finished round game has round = rounds: shown as the last
_SIZES = np.array(COMPANY_SIZES, np.int64)

# queries' element-wise functions, compiled as they are written there.
_relative_seat = numba.njit(queries.relative_seat)
_card_coins = numba.njit(queries.card_coins)
_pile_left = numba.njit(queries.pile_left)
_unseen_count = numba.njit(queries.unseen_count)


@numba.njit(cache=True)
def _take_coins(paid, head_stamp, count):
    # queries.take_coins (which calls card_coins, a Python function numba cannot see into)
    return _card_coins(paid, head_stamp) * (count > 0)


@numba.njit(cache=True, _nrt=False)
def observe_into(out, g, seat, s):
    """Write the observation of ``seat`` in game ``g`` of a State's arrays (the record of
    :func:`~startups_env.startups.state.arrays`) into ``out`` float32[OBS_DIM]. The seat
    must be seated (0 <= seat < num_players[g]); the caller checks."""
    for i in range(out.shape[0]):
        out[i] = 0
    n = np.int64(s.num_players[g])
    k = np.int64(seat)
    out[_NUM_PLAYERS + n - MIN_PLAYERS] = 1
    out[_PHASE + s.phase[g]] = 1
    out[_CURRENT + _relative_seat(np.int64(s.current[g]), k, n)] = 1
    for r in range(n):  # relative seat r is absolute seat a
        a = (k + r) % n
        for c in range(C):
            out[_PORTFOLIOS + r * C + c] = s.portfolio[a, c, g]
            out[_KNOWN + r * C + c] = s.known[a, c, g]
        out[_COINS + r] = s.coins[a, g]
        out[_ROUND_POINTS + r] = s.round_points[a, g]
    for c in range(C):
        own = np.int64(s.hand[k, c, g])
        out[_HAND + c] = own
        holder = np.int64(s.chip[c, g])
        if holder >= 0:
            out[_CHIPS + c * P + _relative_seat(holder, k, n)] = 1
        count = np.int64(s.market_count[c, g])
        out[_MARKET_CARDS + c] = count
        out[_MARKET_COINS + c] = s.market_coins[c, g]
        out[_TAKE_COINS + c] = _take_coins(np.int64(s.market_paid[c, g]),
                                           np.int64(s.market_stamp[c, s.market_head[c, g], g]), count)
        public = np.int64(0)
        for a in range(n):
            public += np.int64(s.portfolio[a, c, g]) + np.int64(s.known[a, c, g])
        out[_UNSEEN + c] = _unseen_count(_SIZES[c], public, own, np.int64(s.known[k, c, g]), count)
    out[_PILE] = _pile_left(np.int64(s.pile_pos[g]))
    if s.barred[g] >= 0:
        out[_BARRED + s.barred[g]] = 1
    out[_TURN] = s.turn[g]
    out[_ROUND + min(np.int64(s.round[g]), _LAST_ROUND)] = 1


def observe_game(state: State, game: int, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """float32[OBS_DIM]: the observation of ``seat`` in game ``game`` of ``state``, equal to
    ``observe(state, seats)[game]`` with ``seats[game] = seat``. ``out``: an optional
    float32[OBS_DIM] array to fill and return."""
    game, seat = int(game), int(seat)
    if not 0 <= game < state.batch_size:
        raise ValueError(f"game must be in [0, {state.batch_size}), got {game}")
    if not 0 <= seat < int(state.num_players[game]):
        raise ValueError(f"seat must be in [0, {int(state.num_players[game])}) (the table size), got {seat}")
    if out is None:
        out = np.empty(OBS_DIM, np.float32)
    elif out.shape != (OBS_DIM,) or out.dtype != np.float32:
        raise ValueError(f"out must be float32 of shape [{OBS_DIM}], got {out.dtype} {list(out.shape)}")
    observe_into(out, game, seat, arrays(state))
    return out
