"""The batch simulator: every rule of *Startups* is written here, once, for B games at once.

Layout: every field of :class:`State` keeps the **game axis last**, so each per-company or
per-seat quantity is a contiguous length-B row and a rule becomes a handful of whole-row
numpy operations. Seats are padded to ``MAX_PLAYERS``; each game has its own
``num_players``, current player and phase.

Market cards of one company differ only in the coins on them (docs/rules.md, decision 2), and
coins are always laid on *every* card of a company at once, so the market of a company is
a FIFO queue kept as a ring buffer of *stamps*: ``paid[c]`` counts the coins laid on each
card of company c so far, and a card stores the value of ``paid[c]`` when it entered; its
coins are ``paid[c] - stamp``. A draw is then one add per company instead of one per card.

Public API: :class:`Simulator` (reset / legal_mask / observe / step); :class:`State` is
exposed for search bots and tests that need to copy or inspect games. The numbers that
follow from a position and are needed outside the step too (the draw cost, the coins a
take gets, the cards a seat cannot see, the chip, relative seats, the deck layout, the
score margin, the uniform legal sampler) are computed in :mod:`startups_env.queries`, which
this module calls.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from .rules import (
    COMPANY_SIZES,
    DECK_SIZE,
    HAND_SIZE,
    MARGIN_REWARD_SCALE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_ACTIONS,
    NUM_COMPANIES,
    PUT_PHASE,
    ROUND_CHIPS,
    SCORE_REWARD_SCALE,
    SORTED_DECK,
    STARTING_COINS,
    TAKE_PHASE,
    Action,
    Rules,
    action_to_string,
    pile_start,
)
from . import queries
from .queries import SLOTS, _company_rows, _read_only

P, C = MAX_PLAYERS, NUM_COMPANIES
_SORTED_DECK = np.array(SORTED_DECK, dtype=np.int8)
_CARD_BITS = np.int64(63)  # shuffled_decks: the card's index in the low bits of its sort key
_KEY_BITS = ~_CARD_BITS
_CARD_INDEX = np.arange(DECK_SIZE, dtype=np.int64)
_NO_ONE = -1
_NO_GAMES = np.empty(0, np.intp)  # shared, never modified: "no game ended"
_NO_GAMES.flags.writeable = False
_COMPANY_COLUMN = np.arange(C, dtype=np.int8)[:, None]
# Plain-int copies of the Action offsets for numpy expressions: numpy treats an IntEnum
# operand as a Python object, which makes `actions == Action.DRAW` several times slower.
_DRAW, _TAKE, _KEEP, _MARKET = int(Action.DRAW), int(Action.TAKE), int(Action.KEEP), int(Action.MARKET)
# A 0-d array: numpy compares an array with a 0-d array of its own dtype faster than with a
# numpy or Python scalar (which it must first inspect and convert).
_UNSIGNED_NUM_ACTIONS = np.array(NUM_ACTIONS, np.uintp)
# Constant operands of the step as 0-d arrays (see _UNSIGNED_NUM_ACTIONS): int8 for the
# int8 state arrays, intp for action ids and flat offsets.
_ZERO, _ONE = np.array(0, np.int8), np.array(1, np.int8)
_ONE16 = np.array(1, np.int16)
_SLOTS = np.array(SLOTS, np.int8)
_SEAT_ROWS = (np.arange(P, dtype=np.intp) * C)[None, :, None]  # seat * C: row of [seat, company 0] in [P * C]
_LAST_CARD, _DECK_SIZE = np.array(DECK_SIZE - 1, np.int8), np.array(DECK_SIZE, np.int8)
_COMPANIES = np.array(C, np.intp)
_DRAW_ID, _TAKE_ID, _KEEP_ID, _MARKET_ID = (np.array(x, np.intp) for x in (_DRAW, _TAKE, _KEEP, _MARKET))


@dataclass
class State:
    """B games, game axis last. Padded seats (>= num_players) hold zeros."""

    hand: np.ndarray  # int8[P, C, B]   cards of each company in each seat's hidden hand
    portfolio: np.ndarray  # int8[P, C, B]   face-up cards of each company per seat
    known: np.ndarray  # int8[P, C, B]  hand cards everyone knows of: taken from the market, not provably played since
    coins: np.ndarray  # int16[P, B]     1-point coin balance during play (scoring writes `scores`, not this)
    chip: np.ndarray  # int8[C, B]      seat holding each company's anti-monopoly chip, -1 none
    market_count: np.ndarray  # int8[C, B]  cards of each company in the market
    market_head: np.ndarray  # int8[C, B]  ring slot of the oldest (richest) market card
    market_paid: np.ndarray  # int16[C, B] coins laid on each card of company c so far
    market_stamp: np.ndarray  # int16[C, SLOTS, B]  market_paid when the card in a slot entered
    market_coins: np.ndarray  # int16[C, B] total coins on the market cards of company c
    deck: np.ndarray  # int8[45, B]     this round's deck in canonical order (removed, hands, pile)
    pile_pos: np.ndarray  # int8[B]     index into deck of the next pile card; 45 = exhausted
    num_players: np.ndarray  # int8[B]
    current: np.ndarray  # int8[B]      seat to act
    phase: np.ndarray  # int8[B]        0 take, 1 put-down
    barred: np.ndarray  # int8[B]       company the current player may not put into the market, -1 none
    turn: np.ndarray  # int16[B]        completed turns in this round
    round: np.ndarray  # int8[B]        0-based round index; equals `rules.rounds` once the round game is over
    round_points: np.ndarray  # int8[P, B]  sum of +2/+1/-1 chips (round game)
    plus2: np.ndarray  # int8[P, B]     +2 chips won (round game tie-break)
    plus1: np.ndarray  # int8[P, B]     +1 chips won (round game tie-break)
    scores: np.ndarray  # int16[P, B]   scores of the last scored round (valid once scored)
    threes: np.ndarray  # int16[P, B]   3-point coins received in the last scoring
    ranks: np.ndarray  # int8[P, B]     rank of the last scored round, 0 = best; -1 padded/unscored
    terminated: np.ndarray  # bool[B]  game over: the pile ran out (in the last round)
    truncated: np.ndarray  # bool[B]   game over: a round reached the turn cap
    capped: np.ndarray  # bool[B]      some round of this game reached the turn cap

    @classmethod
    def empty(cls, batch_size: int) -> "State":
        b = batch_size
        return cls(
            hand=np.zeros((P, C, b), np.int8),
            portfolio=np.zeros((P, C, b), np.int8),
            known=np.zeros((P, C, b), np.int8),
            coins=np.zeros((P, b), np.int16),
            chip=np.full((C, b), _NO_ONE, np.int8),
            market_count=np.zeros((C, b), np.int8),
            market_head=np.zeros((C, b), np.int8),
            market_paid=np.zeros((C, b), np.int16),
            market_stamp=np.zeros((C, SLOTS, b), np.int16),
            market_coins=np.zeros((C, b), np.int16),
            deck=np.zeros((DECK_SIZE, b), np.int8),
            pile_pos=np.full(b, DECK_SIZE, np.int8),
            num_players=np.full(b, MIN_PLAYERS, np.int8),
            current=np.zeros(b, np.int8),
            phase=np.zeros(b, np.int8),
            barred=np.full(b, _NO_ONE, np.int8),
            turn=np.zeros(b, np.int16),
            round=np.zeros(b, np.int8),
            round_points=np.zeros((P, b), np.int8),
            plus2=np.zeros((P, b), np.int8),
            plus1=np.zeros((P, b), np.int8),
            scores=np.zeros((P, b), np.int16),
            threes=np.zeros((P, b), np.int16),
            ranks=np.full((P, b), -1, np.int8),
            terminated=np.zeros(b, bool),
            truncated=np.zeros(b, bool),
            capped=np.zeros(b, bool),
        )

    @property
    def batch_size(self) -> int:
        return self.current.shape[0]

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated

    def take(self, games) -> "State":
        """A new State of the selected games (indices may repeat, e.g. to clone a game)."""
        games = np.asarray(games, dtype=np.intp)
        # (take along the last axis: about 3x faster than fancy indexing, and contiguous)
        return State(**{name: getattr(self, name).take(games, axis=-1) for name in _FIELD_NAMES})

    def put(self, games, other: "State") -> None:
        """Overwrite the selected games with the games of ``other`` (same order)."""
        games = np.asarray(games, dtype=np.intp)
        for f in fields(self):
            getattr(self, f.name)[..., games] = getattr(other, f.name)

    def copy(self) -> "State":
        return State(**{f.name: getattr(self, f.name).copy() for f in fields(self)})

    def nbytes_per_game(self) -> int:
        return sum(getattr(self, f.name).nbytes for f in fields(self)) // self.batch_size

    def market_take_coins(self) -> np.ndarray:
        """int16[C, B]: coins on the card a take of company c would take (0 if none);
        :func:`startups_env.queries.market_take_coins`."""
        return queries.market_take_coins(self)

    def unseen(self, seat: np.ndarray) -> np.ndarray:
        """int16[C, B]: cards of each company that ``seat`` (int[B]) cannot see (others'
        hands, pile, removed cards); :func:`startups_env.queries.unseen`."""
        return queries.unseen(self, seat)


_FIELD_NAMES = tuple(f.name for f in fields(State))  # (State.take is hot: fields() costs microseconds a call)


class StepResult(NamedTuple):
    """What :meth:`Simulator.step` returns, one row per game.

    rewards: float32[B, 7], non-zero only on the step a game ends (padded seats 0).
    terminated, truncated: bool[B], True from the step a game ends on (they persist while a
        finished game waits; with auto-reset they are True exactly on the ending step).
    scores, ranks: int16/int8[B, 7] final scores (1-point balance + 3 x 3-point coins) and
        ranks (0 = winner; in the round game the final round-game ranking) of games that
        ended in this step; 0 / -1 elsewhere.
    """

    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    scores: np.ndarray
    ranks: np.ndarray


class _Seats(NamedTuple):
    """Flat offsets of the player to act in each game (intp, read-only), computed once per
    state change together with the legal mask and shared by the mask and the step."""

    cur: np.ndarray  # [B] the seat to act
    cell: np.ndarray  # [B] offset of [cur, game] in a [P, B] array
    base: np.ndarray  # [B] offset of [cur, 0, 0] in a [P, C, B] array: + [c, game]'s offset in [C, B] gives [cur, c, game]
    own: np.ndarray | None  # [C, B] offset of [cur, c, game] in a [P, C, B] array (B = 1 only; else built when needed)
    next: np.ndarray  # [B] the seat after cur at the game's table: (cur + 1) % num_players


# A single game (the PettingZoo env) has only 27 (seat to act, table size) pairs: their
# offsets are built once, indexed [num_players][seat] (at B = 1, ``x * B + game`` is ``x``).
_ONE_GAME_SEATS = tuple(
    tuple(
        _Seats(*_read_only(np.array([p], np.intp), np.array([p], np.intp), np.array([p * C], np.intp),
                           p * C + np.arange(C, dtype=np.intp)[:, None], np.array([(p + 1) % max(n, 1)], np.intp)))
        for p in range(P)
    )
    for n in range(P + 1)
)


def shuffled_decks(rng: np.random.Generator, count: int) -> np.ndarray:
    """int8[count, 45] uniformly shuffled decks. Row i depends only on the generator's
    state and i, so the first games of a seed are the same at any batch size.

    Each row's 45 cards are put in the order of 45 random keys (uniform float64 in [0, 1)).
    The keys are sorted as integers with the card's index in their lowest 6 bits (a
    non-negative float's bits order like the float): a plain sort of numbers is about
    twice as fast as an argsort, and keys equal in their other bits (about once in 10^11
    decks) keep the cards' order."""
    packed = (rng.random((count, DECK_SIZE)).view(np.int64) & _KEY_BITS) | _CARD_INDEX
    packed.sort(axis=1)
    np.bitwise_and(packed, _CARD_BITS, out=packed)
    return _SORTED_DECK.take(packed)


def is_int(value) -> bool:
    """Whether ``value`` is an int or a numpy integer, bools excluded: ``True == 1`` would
    pass any range test meant for a count, a seat or a seed."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def check_seed(seed, *, none_ok: bool = True, sequence_ok: bool = True, generator_ok: bool = False):
    """``seed`` as given (an int as a Python int) if it is one of the accepted kinds, else a
    ValueError naming them: a non-negative int (bools refused: ``True`` is almost always a
    mistake), and where allowed None, a ``numpy.random.SeedSequence`` or a
    ``numpy.random.Generator``. Callers check up front, so that a bad seed is reported as
    such and not as a numpy error from deep inside a later ``reset()``."""
    if ((none_ok and seed is None) or (sequence_ok and isinstance(seed, np.random.SeedSequence))
            or (generator_ok and isinstance(seed, np.random.Generator))):
        return seed
    if is_int(seed) and seed >= 0:
        return int(seed)
    kinds = [kind for kind, ok in (("None", none_ok), ("a non-negative int", True),
                                   ("a numpy.random.SeedSequence", sequence_ok),
                                   ("a numpy.random.Generator", generator_ok)) if ok]
    raise ValueError(f"seed must be {' or '.join(kinds)}, got {seed!r}")


def validate_decks(decks, count: int, rounds: int = 1) -> np.ndarray:
    """Check explicit decks ([count, 45] or, for the round game, [count, rounds, 45]) and
    return them as int8 [count, rounds, 45]."""
    arr = np.asarray(decks)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"decks must be an integer array of company ids, got dtype {arr.dtype}")
    if arr.ndim == 2 and rounds == 1:
        arr = arr[:, None, :]
    if arr.ndim == 2 and rounds > 1:
        # One deck per game for the first round; later rounds are shuffled from the rng.
        arr = arr[:, None, :]
    if arr.ndim != 3 or arr.shape[0] != count or arr.shape[2] != DECK_SIZE or arr.shape[1] not in (1, rounds):
        raise ValueError(
            f"decks must have shape [{count}, {DECK_SIZE}]"
            + (f" or [{count}, {rounds}, {DECK_SIZE}]" if rounds > 1 else "")
            + f", got {list(np.shape(decks))}"
        )
    counts = np.stack([(arr == c).sum(axis=2) for c in range(C)], axis=-1)
    bad = np.flatnonzero((counts != np.array(COMPANY_SIZES)).any(axis=(1, 2)))
    if bad.size:
        g = int(bad[0])
        raise ValueError(
            f"decks of games {bad[:10].tolist()} are not a permutation of the 45 cards "
            f"(company counts must be {list(COMPANY_SIZES)}; game {g} has {counts[g, 0].tolist()})"
        )
    return arr.astype(np.int8)


BACKENDS = ("numpy", "numba")


def _load_kernels():
    """The compiled kernels, imported on first use (the import compiles or loads them)."""
    from . import kernels

    return kernels


@functools.lru_cache(maxsize=1)
def numba_available() -> bool:
    """Whether the compiled backend can run here (numba is installed; looked up once: the
    search builds a simulator for every batch of rollouts)."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def default_backend() -> str:
    """The fastest installed backend: ``"numba"`` where numba is installed, else ``"numpy"``."""
    return "numba" if numba_available() else "numpy"


def resolve_backend(backend: str | None) -> str:
    """``backend`` checked (None: :func:`default_backend`); a ValueError names the choices,
    and asking for numba where it is not installed says how to install it."""
    if backend is None:
        return default_backend()
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS} or None (the fastest installed), got {backend!r}")
    if backend == "numba" and not numba_available():
        raise ValueError("backend='numba' needs numba: pip install 'startups-env[fast]' (or pip install numba)")
    return backend


class Simulator:
    """B games of *Startups* in lockstep; one :meth:`step` applies one decision to each.

    Example::

        sim = Simulator(Rules(num_players=4), batch_size=1024, seed=0)
        while not sim.done.all():
            mask = sim.legal_mask()                       # bool[B, 19]
            actions = sim.random_actions(mask)            # or your policy
            result = sim.step(actions)                    # StepResult

    backend: ``"numpy"`` (the reference: whole-batch numpy operations) or ``"numba"`` (the
    compiled kernels of :mod:`startups_env.kernels`, game by game, proven equal to numpy
    state for state); None (default) takes the fastest installed, numba where it is
    installed (``pip install 'startups-env[fast]'``). Everything else (the API, the
    games a seed deals, results, errors, auto-reset, rewards) is the same on both.
    """

    def __init__(self, rules: Rules | None = None, batch_size: int = 1, *, seed=None, auto_reset: bool = False,
                 decks=None, num_players=None, backend: str | None = None):
        self._configure(rules, batch_size, auto_reset, seed, backend)
        self._state = State.empty(self.batch_size)
        self.reset(seed=seed, decks=decks, num_players=num_players)

    def _configure(self, rules: Rules | None, batch_size: int, auto_reset: bool, seed, backend: str | None) -> None:
        """Everything but the games: check the arguments, set up the caches and the generator."""
        self.backend = resolve_backend(backend)
        self._kernels = _load_kernels() if self.backend == "numba" else None
        if rules is None:
            rules = Rules()
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a startups_env.Rules, got {type(rules).__name__}")
        if not is_int(batch_size) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        seed = check_seed(seed, generator_ok=True)
        self.rules = rules
        self.batch_size = int(batch_size)
        self.auto_reset = bool(auto_reset)
        self._mask_cache: np.ndarray | None = None  # bool[19, B], valid until the state changes
        self._compiled_mask: np.ndarray | None = None  # the compiled backend's: see _cache_compiled_mask
        self._phase_cache: tuple[np.ndarray, np.ndarray] | None = None  # _phase_games(), valid with _mask_cache
        self._seats_cache: _Seats | None = None  # _seat_cells(), valid with _mask_cache
        self._phase_counts: tuple[int, int] = (0, 0)  # games in the take / put-down phase, valid with _mask_cache
        self._turn_cap = np.array(rules.turn_cap, np.int16)  # (as s.turn; Rules caps it at 30000)
        self.rng = np.random.default_rng(seed)
        self._round_decks: np.ndarray | None = None  # int8[B, rounds, 45] explicit round-game decks
        self._arange = np.arange(self.batch_size)
        self._batch = np.array(self.batch_size, np.intp)
        self._one_action = np.zeros(1, np.intp)  # _step_one's action buffer
        self._one_game = np.zeros(1, np.intp)  # game 0: the game whose round ended, at B = 1
        self._all_active = np.ones(self.batch_size, bool)
        self._over = np.zeros(self.batch_size, bool)  # the compiled step's "round ended" flags
        # row * B: the flat offset of row r of an [R, B] array (R <= 45), to address the
        # columns of some games (+ games) through flat views.
        self._row_starts = (np.arange(DECK_SIZE, dtype=np.intp) * self.batch_size)[:, None]

    @classmethod
    def from_state(cls, state: State, rules: Rules | None = None, *, seed=None,
                   backend: str | None = None) -> "Simulator":
        """A simulator that continues the games of ``state`` (used as is, not copied), e.g. a
        search bot's rollouts from sampled states (``State.take`` of a running batch with
        hidden cards re-dealt). Later rounds of the round game are shuffled from ``seed``."""
        if not isinstance(state, State):
            raise ValueError(f"state must be a startups_env.core.State, got {type(state).__name__}")
        # Every field must be laid out as State.empty would make it for this batch: the step
        # writes through flat views sized from the batch, so a field of another batch size or
        # dtype would be stepped silently wrong (or fail deep inside a rule). Checked here,
        # once, not in step.
        current = state.current
        if not isinstance(current, np.ndarray) or current.ndim != 1 or current.shape[0] < 1:
            raise ValueError(f"state.current must be int8[B] with B >= 1 (it sets the batch size), got "
                             f"{type(current).__name__} {list(np.shape(current))}")
        b = current.shape[0]
        template = State.empty(1)  # (a few microseconds; a rollout from the state costs far more)
        for f in fields(state):
            want = getattr(template, f.name)
            shape = want.shape[:-1] + (b,)
            got = getattr(state, f.name)
            if not isinstance(got, np.ndarray) or got.shape != shape or got.dtype != want.dtype:
                given = (f"{got.dtype}{list(got.shape)}" if isinstance(got, np.ndarray)
                         else type(got).__name__)
                raise ValueError(f"state.{f.name} must be {want.dtype}{list(shape)} for a batch of {b} games "
                                 f"(as State.empty({b})), got {given}")
        sim = cls.__new__(cls)  # (no deal: the games are given)
        sim._configure(rules, b, False, seed, backend)
        sim._validate_num_players(state.num_players)
        sim.state = state
        return sim

    @property
    def state(self) -> State:
        """The games (game axis last). Assigning a new State is safe; after writing into
        the arrays in place (e.g. ``sim.state.put(...)``), call :meth:`state_changed`."""
        return self._state

    @state.setter
    def state(self, state: State) -> None:
        if not isinstance(state, State):
            raise ValueError(f"state must be a startups_env.core.State, got {type(state).__name__}")
        if state.batch_size != self.batch_size:
            raise ValueError(f"state holds {state.batch_size} games, this simulator {self.batch_size}")
        self._state = state
        self.state_changed()

    def state_changed(self) -> None:
        """Forget the cached legal mask: required after writing into ``sim.state`` in place
        (or assigning its fields)."""
        state = self._state
        for f in fields(state):  # the step writes through flat views, which need contiguous arrays
            array = getattr(state, f.name)
            if not array.flags.c_contiguous:
                setattr(state, f.name, np.ascontiguousarray(array))
        self._mask_cache = None
        self._phase_cache = None
        self._seats_cache = None

    # ------------------------------------------------------------------ reset
    def reset(self, seed=None, *, decks=None, num_players=None) -> None:
        """Start every game afresh.

        seed: an int, a ``numpy.random.Generator`` (used as is) or None (keep the current
            generator). Decks shuffled from it, and games auto-reset later, follow from it.
        decks: explicit decks in canonical order, int [B, 45] (or [B, rounds, 45] for the
            round game); default: shuffled from the generator.
        num_players: an int or int [B] of per-game table sizes (default ``rules.num_players``).
        """
        b = self.batch_size
        seed = check_seed(seed, generator_ok=True)
        players = self._validate_num_players(num_players)
        checked = None if decks is None else validate_decks(decks, b, self.rules.rounds)
        if isinstance(seed, np.random.Generator):
            self.rng = seed
        elif seed is not None:
            self.rng = np.random.default_rng(seed)
        s = self.state
        s.num_players[:] = players
        s.round[:] = 0
        s.round_points[:] = 0
        s.plus2[:] = 0
        s.plus1[:] = 0
        s.terminated[:] = False
        s.truncated[:] = False
        s.capped[:] = False
        self._mask_cache = None
        self._round_decks = checked if checked is not None and checked.shape[1] > 1 else None
        first = checked[:, 0, :] if checked is not None else shuffled_decks(self.rng, b)
        self._start_rounds(self._arange, first, np.zeros(b, np.int8))

    def _validate_num_players(self, num_players) -> np.ndarray:
        if num_players is None:
            return np.full(self.batch_size, self.rules.num_players, np.int8)
        arr = np.asarray(num_players)
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or arr.ndim > 1 or (
            arr.ndim == 1 and arr.shape[0] != self.batch_size
        ):
            raise ValueError(f"num_players must be an int or an int array of shape [{self.batch_size}], got {num_players!r}")
        if ((arr < MIN_PLAYERS) | (arr > MAX_PLAYERS)).any():
            raise ValueError(f"num_players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {np.unique(arr).tolist()}")
        return np.broadcast_to(arr, (self.batch_size,)).astype(np.int8)

    def _start_rounds(self, games: np.ndarray, decks: np.ndarray, starters: np.ndarray) -> None:
        """Deal a fresh round in the given games from decks int8[n, 45] (on the compiled
        backend by ``kernels.deal_rounds``, one game at a time)."""
        s = self.state
        if self._kernels is not None:
            k = self._kernels
            threaded = games.size >= k.PARALLEL_ROUNDS_FROM
            deal = k.deal_rounds_parallel if threaded else k.deal_rounds
            deal(k.thread_count() if threaded else 1, np.ascontiguousarray(games, np.intp),
                 np.ascontiguousarray(decks, np.int8), np.ascontiguousarray(starters, np.int8), s.deck, s.hand,
                 s.portfolio, s.known, s.coins, s.chip, s.market_count, s.market_head, s.market_paid, s.market_coins,
                 s.num_players, s.pile_pos, s.current, s.phase, s.barred, s.turn)
            self._mask_cache = None
            return
        n_players = s.num_players[games].astype(np.intp)
        # Flat offsets of rows 0..44 of the dealt games: the first P * C address a [P, C, B]
        # array, the first P a [P, B] one, the first C a [C, B] one. (Writing columns through
        # flat offsets is about twice as fast as ``array[:, games] = ...``.)
        cells = self._row_starts + games
        s.deck.reshape(-1)[cells] = decks.T
        # Count the cards dealt to the 7 seats: one bincount over the flat [seat, company,
        # game] offset of every dealt card (several times faster than a one-hot sum).
        n = games.size
        dealt = decks[:, queries.HANDS].reshape(n, P, HAND_SIZE)
        offsets = (_SEAT_ROWS + dealt) * n + np.arange(n)[:, None, None]  # [n, P, HAND_SIZE]
        hands = np.bincount(offsets.ravel(), minlength=P * C * n).reshape(P, C, n).astype(np.int8)
        seated = np.arange(P)[:, None] < n_players[None, :]  # [P, n] seats past N get no hand and no coins
        hands *= seated[:, None, :]
        seat_company = cells[:P * C]
        s.hand.reshape(-1)[seat_company] = hands.reshape(P * C, n)
        s.portfolio.reshape(-1)[seat_company] = 0
        s.known.reshape(-1)[seat_company] = 0
        s.coins.reshape(-1)[cells[:P]] = seated * STARTING_COINS
        company = cells[:C]
        s.chip.reshape(-1)[company] = _NO_ONE
        for market in (s.market_count, s.market_head, s.market_paid, s.market_coins):
            market.reshape(-1)[company] = 0
        s.pile_pos[games] = pile_start(n_players)
        s.current[games] = starters
        s.phase[games] = TAKE_PHASE
        s.barred[games] = _NO_ONE
        s.turn[games] = 0
        self._mask_cache = None

    # ------------------------------------------------------------------ queries
    @property
    def current_player(self) -> np.ndarray:
        """int8[B]: the seat to act in each game."""
        return self.state.current.copy()

    @property
    def done(self) -> np.ndarray:
        """bool[B]: the game is over (terminated or truncated) and waits for a reset."""
        return self.state.done

    def _flat(self, rows: np.ndarray) -> np.ndarray:
        """rows * B + game (intp[B] or [k, B]): the flat offset of row ``rows[..., g]`` of game g
        in an [..., B] array. At B = 1 that is ``rows`` itself, so no numpy call is spent."""
        if self.batch_size == 1:
            return rows
        return rows * self._batch + self._arange  # (a 0-d intp: int8 rows are widened, not wrapped)

    def _per_game(self, x: np.ndarray) -> np.ndarray:
        """x[B], to be combined with [k, B] arrays: at B = 1 a 0-d view, which numpy
        broadcasts without its (slower) general iterator."""
        return x.reshape(()) if self.batch_size == 1 else x

    def _seat_cells(self) -> _Seats:
        """The offsets of the player to act (see :class:`_Seats`)."""
        s, b = self.state, self.batch_size
        if b == 1:
            return _ONE_GAME_SEATS[s.num_players.item()][s.current.item()]
        cur = s.current.astype(np.intp)
        following = cur + 1
        following *= following < s.num_players  # (cur + 1) % num_players, without a slow integer modulo
        # (The [C, B] ``own`` offsets are only needed by the put-down mask: built there.)
        return _Seats(cur, cur * b + self._arange, cur * (C * b), None, following)

    def _phase_games(self) -> tuple[np.ndarray, np.ndarray]:
        """bool[B] masks of running games in the take and in the put-down phase (cached
        together with the legal mask; callers must not modify them)."""
        if self._mask_cache is not None and self._phase_cache is not None:
            return self._phase_cache
        s = self.state
        done = s.terminated | s.truncated
        phase = s.phase.view(bool)  # phase is 0 (take) or 1 (put-down)
        return ~(phase | done), phase > done  # (phase > done: put-down and running)

    def _legal_rows(self) -> np.ndarray:
        """bool[19, B] legal mask (cached until the state changes)."""
        if self._mask_cache is not None:
            return self._mask_cache
        if self._kernels is not None:
            s = self.state
            mask = self._kernels.new_mask(self.batch_size)
            self._kernels.legal_rows(mask, s.hand, s.coins, s.chip, s.market_count, s.current, s.phase, s.barred,
                                     s.terminated, s.truncated)
            return self._cache_compiled_mask(mask)
        s, b = self.state, self.batch_size
        take, put = self._phase_cache = self._phase_games()
        seats = self._seats_cache = self._seat_cells()
        # (np.count_nonzero is a much cheaper "any" than ndarray.any() on small arrays.)
        counts = self._phase_counts = (np.count_nonzero(take), np.count_nonzero(put))
        mask = np.zeros((NUM_ACTIONS, b), bool)
        # "& take" / "& put" are skipped where every game is in that phase (always at B = 1).
        if counts[0]:
            lacks_chip = queries.lacks_chip(s.chip, self._per_game(s.current))  # [C, B]
            can_draw = s.coins.reshape(-1)[seats.cell] >= queries.draw_cost(s.market_count, lacks_chip)
            can_take = (s.market_count > _ZERO) & lacks_chip
            if counts[0] < b:
                can_draw &= take
                can_take &= take
            mask[_DRAW] = can_draw
            mask[_TAKE:_KEEP] = can_take
        if counts[1]:
            own = seats.own if seats.own is not None else seats.base + _company_rows(b)
            in_hand = s.hand.reshape(-1)[own] > _ZERO
            if counts[1] < b:
                in_hand &= put
            mask[_KEEP:_MARKET] = in_hand
            mask[_MARKET:] = in_hand & (_COMPANY_COLUMN != self._per_game(s.barred))
        self._mask_cache = mask
        return mask

    def _cache_compiled_mask(self, mask: np.ndarray) -> np.ndarray:
        """Cache a mask the kernels wrote (bool[19, W], ``kernels.new_mask``): the kernels
        read it whole (``_compiled_mask``), the numpy code its [19, B] view."""
        self._compiled_mask = mask
        self._mask_cache = mask[:, :self.batch_size]
        return self._mask_cache

    def legal_mask(self) -> np.ndarray:
        """bool[B, 19] in the canonical action encoding; all False in finished games.
        The array is the caller's own (a fresh copy each call)."""
        return self._legal_rows().T.copy(order="K")

    def random_actions(self, mask: np.ndarray | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
        """int8[B]: a uniformly random legal action in every game (some in-range id in
        finished games, which ``step`` ignores), from one float32 draw per game
        (:func:`startups_env.queries.legal_choice`).

        mask: bool[B, 19] to sample from (default: the legal mask); rng: default the
        simulator's generator."""
        rows = self._legal_rows() if mask is None else np.asarray(mask, bool).T
        rng = self.rng if rng is None else rng
        # Only the action rows some game can use (take or put-down ids) are scanned.
        used = np.flatnonzero(rows.any(axis=1)) if mask is not None else None
        if used is None:
            take, put = self._phase_games()
            lo = _DRAW if np.count_nonzero(take) else _KEEP
            hi = NUM_ACTIONS if np.count_nonzero(put) else _KEEP
        elif used.size:
            lo, hi = int(used[0]), int(used[-1]) + 1
        else:
            lo, hi = 0, 0
        choice = np.full(rows.shape[1], lo, np.int8)
        if hi <= lo:
            return choice
        u = rng.random(rows.shape[1], dtype=np.float32)
        if self._kernels is not None:
            flags = self._compiled_mask if mask is None else np.ascontiguousarray(rows)
            scratch = np.empty((2, rows.shape[1]), np.int8)
            self._kernels.legal_choice(flags, u, lo, hi, choice, scratch[0], scratch[1])
        else:
            choice += queries.legal_choice(rows[lo:hi], u)
        return choice

    # ------------------------------------------------------------------ step
    def _check_active(self, active) -> np.ndarray:
        """``step``'s ``active`` as a bool[B] array, or a ValueError naming what it got."""
        active = np.asarray(active)
        if active.dtype != bool or active.shape != (self.batch_size,):
            raise ValueError(f"active must be a bool array of shape [{self.batch_size}], got "
                             f"{active.dtype} {list(active.shape)}")
        return active

    def _check_actions(self, actions) -> np.ndarray:
        arr = np.asarray(actions)
        if arr.shape != (self.batch_size,):
            raise ValueError(f"actions must have shape [{self.batch_size}] (one per game), got {list(arr.shape)}")
        if arr.dtype.kind not in "iu":  # signed or unsigned integers (bool is kind "b")
            raise ValueError(f"actions must be integers, got dtype {arr.dtype}")
        arr = arr.astype(np.intp, copy=False)
        if self.batch_size == 1:  # one game: a Python comparison instead of two numpy calls
            out_of_range = not 0 <= arr.item() < NUM_ACTIONS
        else:  # negative ids wrap to huge unsigned values
            out_of_range = np.count_nonzero(arr.view(np.uintp) >= _UNSIGNED_NUM_ACTIONS)
        if out_of_range:
            bad = np.flatnonzero((arr < 0) | (arr >= NUM_ACTIONS))
            raise ValueError(
                f"actions out of range [0, {NUM_ACTIONS}) in games {bad[:10].tolist()}: {arr[bad[:10]].tolist()}"
            )
        return arr

    def step(self, actions, active=None) -> StepResult:
        """Apply one decision in every game (actions int[B]; ignored in finished games).

        active: optional bool[B]; games where it is False are left untouched and their
        actions ignored, so an adapter can advance some games while others wait (e.g. for
        a learner's decision).

        An illegal action in any running game raises ``ValueError`` naming the games and
        actions, and no game changes.
        """
        a = self._check_actions(actions)
        if self._kernels is not None:
            return self._step_compiled(a, active)
        rows = self._legal_rows()
        take, put = self._phase_cache  # valid with the mask, like the game counts
        counts = self._phase_counts
        legal = rows.take(self._flat(a))
        if active is not None:
            active = self._check_active(active)
            take, put = take & active, put & active
            counts = (np.count_nonzero(take), np.count_nonzero(put))
        running = take | put
        if np.count_nonzero(running > legal):  # some running game got an illegal action
            self._raise_illegal(a, legal, running)
        return self._apply(a, rows, take, put, counts)

    def _raise_illegal(self, a: np.ndarray, legal: np.ndarray, running: np.ndarray):
        """The ValueError of :meth:`step` for actions ``a`` where ``running > legal``."""
        s = self.state
        illegal = np.flatnonzero(~legal & running)
        details = ", ".join(
            f"game {g}: {action_to_string(a[g])} ({int(a[g])}) in {('take', 'put-down')[s.phase[g]]} phase"
            for g in illegal[:10]
        )
        raise ValueError(f"illegal actions in {illegal.size} game(s): {details}")

    def _step_compiled(self, a: np.ndarray, active) -> StepResult:
        """:meth:`step` on the numba kernels (``a`` checked, intp[B]): the legality of every
        action is checked before any game changes."""
        rows = self._legal_rows()
        active = self._all_active if active is None else self._check_active(active)
        s = self.state
        if self._kernels.count_illegal(self._compiled_mask, a, active, s.terminated, s.truncated):
            self._raise_illegal(a, rows.take(self._flat(a)), active & ~s.done)
        over = self._over
        k = self._kernels
        step = k.step_games_parallel if self.batch_size >= k.PARALLEL_FROM else k.step_games
        self._mask_cache = None
        legal = k.new_mask(self.batch_size)  # the next mask, filled by the step
        step(a, active, self.rules.turn_cap, over, legal, s.hand, s.portfolio, s.known, s.coins, s.chip,
             s.market_count, s.market_head, s.market_paid, s.market_stamp, s.market_coins, s.deck, s.pile_pos,
             s.num_players, s.current, s.phase, s.barred, s.turn, s.capped, s.terminated, s.truncated)
        ended = np.flatnonzero(over) if np.count_nonzero(over) else _NO_GAMES
        if ended.size and self.auto_reset and self.rules.rounds == 1:
            result = self._end_and_redeal(ended, legal)
        else:
            result = self._finish(ended)
            if ended.size:  # scored, maybe re-dealt: their masks follow from the state now
                k.legal_columns(ended, legal, s.hand, s.coins, s.chip, s.market_count, s.current, s.phase, s.barred,
                                s.terminated, s.truncated)
        self._cache_compiled_mask(legal)
        return result

    def _end_and_redeal(self, ended: np.ndarray, legal: np.ndarray) -> StepResult:
        """:meth:`_finish` with auto-reset in one-round games on the kernels, and the next
        mask of the ended games (into ``legal``): one compiled call scores, reports,
        re-deals and masks them (``kernels.end_games``), from the same draws of the
        generator as ``_auto_reset``; the rewards follow from the scores and ranks."""
        s, k = self.state, self._kernels
        terminated, truncated = s.terminated.copy(), s.truncated.copy()
        rewards, scores, ranks = self._no_results()
        n = ended.size
        parallel = n >= k.PARALLEL_ROUNDS_FROM
        end = k.end_games_parallel if parallel else k.end_games
        end(k.thread_count() if parallel else 1, ended, shuffled_decks(self.rng, n),
            np.zeros(n, np.int8), terminated, truncated, scores, ranks, legal, s.hand, s.portfolio, s.known, s.coins,
            s.chip, s.market_count, s.market_head, s.market_paid, s.market_coins, s.deck, s.num_players, s.pile_pos,
            s.current, s.phase, s.barred, s.turn, s.capped, s.terminated, s.truncated, s.round, s.round_points,
            s.plus2, s.plus1, s.scores, s.threes, s.ranks)
        rewards[ended] = self._rewards(ended).T
        return StepResult(rewards, terminated, truncated, scores, ranks)

    def _step_one(self, action: int) -> StepResult | None:
        """:meth:`step` for a batch of one running game, with ``action`` a Python int in
        0-18 (the PettingZoo env's path: the same rules, less overhead). An illegal action
        raises ``ValueError`` and leaves the game unchanged. Returns None instead of a
        StepResult when no round ended (then there is nothing to report: no rewards, and
        the game is not over)."""
        if self.batch_size != 1:
            raise ValueError(f"_step_one needs a batch of one game, this simulator has {self.batch_size}")
        rows = self._legal_rows()
        if not rows[action, 0]:
            raise ValueError(f"illegal action {action} ({action_to_string(action)})")
        if self._kernels is not None:
            self._mask_cache = None
            s = self.state
            legal = self._kernels.new_mask(1)  # the next mask, filled by the step (fresh: a caller may hold the last)
            if not self._kernels.step_one_game(legal, action, self.rules.turn_cap, s.hand, s.portfolio, s.known,
                                               s.coins, s.chip, s.market_count, s.market_head, s.market_paid,
                                               s.market_stamp, s.market_coins, s.deck, s.pile_pos, s.num_players,
                                               s.current, s.phase, s.barred, s.turn, s.capped, s.terminated,
                                               s.truncated):
                self._cache_compiled_mask(legal)
                return None
            return self._finish(self._one_game)
        a = self._one_action
        a[0] = action
        take, put = self._phase_cache
        return self._apply(a, rows, take, put, self._phase_counts, result=False)

    def _apply(self, actions: np.ndarray, rows: np.ndarray, take: np.ndarray, put: np.ndarray,
               counts: tuple[int, int], result: bool = True) -> StepResult | None:
        """Apply legal ``actions`` (intp[B]) in the ``take`` and ``put`` games (``counts``
        of each; ``rows`` the legal mask they were checked against). With ``result=False``,
        None when no round ended."""
        b = self.batch_size
        seats = self._seats_cache  # valid with the mask
        self._mask_cache = None
        if counts[0]:
            self._apply_take(take, actions, seats, rows, counts[0] == b)
        ended = _NO_GAMES
        if counts[1]:
            ended = self._apply_put(put, actions, seats, counts[1] == b)
        if not result and not ended.size:
            return None
        return self._finish(ended)

    # The two phases below are whole-batch masked arithmetic: games outside the phase get
    # zero increments or have their old values written back. Where every game is in the
    # phase (always at B = 1) the masking is skipped: an all-True mask adds the same as
    # the constant 1, which numpy adds without casting. Flat offsets address one entry per
    # game through a flat view (``arr.reshape(-1)[cells]``: State arrays are C-contiguous,
    # see the ``state`` setter; indexing a flat view is 2-3x faster than ``arr.take`` /
    # ``arr.put``, which check every index); selects between two small-int arrays are
    # arithmetic (``old + (new - old) * mask``: several times faster than ``np.where``);
    # constant operands are 0-d arrays of the array's dtype (cheaper for numpy than Python
    # ints). At B = 1 (the PettingZoo env) the number and the kind of numpy calls is the cost.
    def _apply_take(self, take: np.ndarray, actions: np.ndarray, seats: _Seats, rows: np.ndarray,
                    every: bool) -> None:
        """Take phase in the games where ``take`` is set."""
        s = self.state
        seat = seats.cell
        coins = s.coins.reshape(-1)  # flat views: see the note above _apply_take
        draw = actions == _DRAW_ID
        if not every:
            draw &= take
        grab = take ^ draw  # take & (actions != DRAW)
        any_draw, any_grab = np.count_nonzero(draw), np.count_nonzero(grab)
        b = self.batch_size
        every_draw, every_grab = any_draw == b, any_grab == b
        if any_draw:
            # Lay 1 coin on every market card of companies whose chip the drawer lacks, i.e.
            # of the companies it may take from: the legal take rows (drawers are takers).
            pay = rows[_TAKE:_KEEP]  # [C, B]
            if not every_draw:
                pay = pay & self._per_game(draw)
            s.market_paid += pay
            s.market_coins += s.market_count * pay
            coins[seat] -= queries.draw_cost(s.market_count, pay)
        if any_grab:
            company = actions - _TAKE_ID  # intp; made 0 where not taking from the market
            if not every_grab:
                company *= grab
            row = self._flat(company)  # flat offset into [C, B] arrays
            market_head = s.market_head.reshape(-1)
            head = market_head[row]
            stamp = s.market_stamp.reshape(-1)[self._flat(company * _SLOTS + head)]
            gained = queries.card_coins(s.market_paid.reshape(-1)[row], stamp)  # (the take is legal: a card is there)
            one = _ONE if every_grab else grab
            if not every_grab:
                gained *= grab
            head += one
            head *= head != _SLOTS  # the ring wraps
            coins[seat] += gained
            s.market_coins.reshape(-1)[row] -= gained
            s.market_count.reshape(-1)[row] -= one
            market_head[row] = head
            if every_grab:
                s.barred[:] = company
            else:  # (arithmetic select: numpy's where is several times slower on small ints)
                s.barred += (company - s.barred) * grab
            s.known.reshape(-1)[seats.base + row] += one  # [cur, company, game]
        # The card each game gains (any valid company where none: it gains 0 of it).
        if any_draw:
            card = s.deck.reshape(-1)[self._flat(np.minimum(s.pile_pos, _LAST_CARD))]
            gained_card = (company + (card - company) * draw) if any_grab else card
            s.pile_pos += _ONE if every_draw else draw
        else:
            gained_card = company
        cell = seats.base + self._flat(gained_card)
        if every:
            s.hand.reshape(-1)[cell] += _ONE
            s.phase.fill(PUT_PHASE)
        else:
            s.hand.reshape(-1)[cell] += take
            s.phase |= take

    def _apply_put(self, put: np.ndarray, actions: np.ndarray, seats: _Seats, every: bool) -> np.ndarray:
        """Put a card down and end the turn where ``put`` is set; returns the games whose
        round ended."""
        s = self.state
        cur = seats.cur
        keep = actions < _MARKET_ID
        if not every:
            keep &= put
        to_market = put ^ keep  # put & (actions >= MARKET)
        # Put-down ids 7-18 name company (id - 7) % 6 for both kinds. Games not putting get
        # some valid company too; every write below adds 0 or writes back the old value there.
        company = (actions - _KEEP_ID) % _COMPANIES
        row = self._flat(company)  # flat offset of [company, game] in [C, B] arrays
        cell = seats.base + row  # flat offset of [cur, company, game]
        one = _ONE if every else put
        s.hand.reshape(-1)[cell] -= one
        # Others know one fewer card of that company may still be in hand.
        known = s.known.reshape(-1)
        known[cell] = np.maximum(known[cell] - one, _ZERO)
        b = self.batch_size
        any_keep = np.count_nonzero(keep)
        if any_keep:
            portfolio, chip = s.portfolio.reshape(-1), s.chip.reshape(-1)
            mine = portfolio[cell] + (_ONE if any_keep == b else keep)
            portfolio[cell] = mine
            # The chip goes to the first owner, later only to a strictly larger portfolio.
            holder = chip[row]  # int8, -1 none
            theirs = portfolio[self._flat(np.maximum(holder, _ZERO) * _COMPANIES + company)]
            takes_chip = queries.takes_chip(holder, mine, theirs)
            if any_keep < b:
                takes_chip &= keep
            chip[row] = holder + (cur - holder) * takes_chip  # (arithmetic select: see _apply_take)
        any_market = np.count_nonzero(to_market)
        if any_market:
            every_market = any_market == b
            market_count, market_stamp = s.market_count.reshape(-1), s.market_stamp.reshape(-1)
            count = market_count[row]
            slot = s.market_head.reshape(-1)[row] + count
            slot -= _SLOTS * (slot >= _SLOTS)  # the ring wraps (head and count are each < SLOTS)
            slot_cell = self._flat(company * _SLOTS + slot)
            paid = s.market_paid.reshape(-1)[row]  # the new card's stamp
            if not every_market:  # (free slots keep their old values: states stay canonical)
                old = market_stamp[slot_cell]
                paid = old + (paid - old) * to_market
            market_stamp[slot_cell] = paid
            market_count[row] = count + (_ONE if every_market else to_market)
        # End of turn.
        if every:
            s.turn += _ONE16
            s.phase.fill(TAKE_PHASE)
            s.barred.fill(_NO_ONE)
        else:
            s.turn += put
            s.phase ^= put  # 1 -> 0 where putting (put implies phase 1)
            s.barred[put] = _NO_ONE
        over = (s.pile_pos >= _DECK_SIZE) | (s.turn >= self._turn_cap)  # the round ends
        if not every:
            over &= put
        # The turn passes on where a card was put and the round goes on.
        s.current[:] = np.where(over, cur, seats.next) if every else np.where(put > over, seats.next, cur)
        if not np.count_nonzero(over):
            return _NO_GAMES
        s.capped |= over & (s.pile_pos < _DECK_SIZE)
        return np.flatnonzero(over)

    def finish_rounds(self, games) -> StepResult:
        """Apply the end of a round, as :meth:`step` does when a round ends (scores and ranks,
        the round game's chips and next deal, the game-over flags, rewards, auto-reset), in
        ``games`` (int[k]): games whose round is over (the pile ran out, or the turn cap
        was reached) but was left unscored, because a caller played it to its end outside
        ``step`` (the search bot's compiled rollouts do). Other games are refused."""
        games = np.asarray(games)
        if games.dtype == bool or not np.issubdtype(games.dtype, np.integer) or games.ndim != 1:
            raise ValueError(f"games must be a 1-d int array of game indices, got {games!r}")
        games = games.astype(np.intp)
        s = self.state
        if games.size and (games.min() < 0 or games.max() >= self.batch_size):
            raise ValueError(f"games must be indices in [0, {self.batch_size}), got {games[:10].tolist()}")
        unfinished = ~((s.pile_pos[games] >= DECK_SIZE) | (s.turn[games] >= self._turn_cap)) | s.done[games]
        if np.count_nonzero(unfinished):
            raise ValueError(f"games {games[unfinished][:10].tolist()} are not at the end of a round")
        self._mask_cache = None
        return self._finish(games)

    def _no_results(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A step's rewards, scores and ranks ([B, 7] each) where no round ended: zeros,
        zeros and -1, for the ended games to be written into."""
        b = self.batch_size
        ranks = np.empty((b, P), np.int8)
        ranks.fill(-1)
        return np.zeros((b, P), np.float32), np.zeros((b, P), np.int16), ranks

    def _finish(self, ended: np.ndarray) -> StepResult:
        rewards, scores, ranks = self._no_results()
        s = self.state
        if ended.size:
            self._score_rounds(ended)
            if self.rules.rounds > 1:
                ended = self._advance_rounds(ended)
            if ended.size:
                s.terminated[ended] = ~s.capped[ended]
                s.truncated[ended] = s.capped[ended]
                rewards[ended] = self._rewards(ended).T
                scores[ended] = s.scores.take(ended, axis=1).T
                ranks[ended] = s.ranks.take(ended, axis=1).T
        terminated, truncated = s.terminated.copy(), s.truncated.copy()
        if self.auto_reset and ended.size:
            self._auto_reset(ended)
        return StepResult(rewards, terminated, truncated, scores, ranks)

    def _score_rounds(self, games: np.ndarray) -> None:
        """Final payout of a round in the given games; fills scores, threes and ranks (on
        the compiled backend by ``kernels.score_rounds``, one game at a time)."""
        s = self.state
        if self._kernels is not None:
            k = self._kernels
            score = k.score_rounds_parallel if games.size >= k.PARALLEL_ROUNDS_FROM else k.score_rounds
            score(games, s.hand, s.portfolio, s.coins, s.current, s.num_players, s.scores, s.threes, s.ranks)
            return
        n_players = s.num_players[games].astype(np.int16)
        seat_company = self._row_starts[:P * C] + games  # flat offsets of [seat, company, game]
        seat_rows = seat_company[:P]  # flat offsets of [seat, game]
        holdings = (s.hand.reshape(-1)[seat_company] + s.portfolio.reshape(-1)[seat_company]).reshape(P, C, -1)  # <= 10
        paid, received = company_payouts(holdings)
        balance = s.coins.reshape(-1)[seat_rows] - paid.sum(axis=1, dtype=np.int16)
        threes = received.sum(axis=1, dtype=np.int16)
        scores = (balance + 3 * threes).astype(np.int16)
        # Tie-breaks: more 3-point coins, then the later player counting back from the
        # player who took the final turn (recency 0 is best).
        seat = np.arange(P)[:, None]
        recency = queries.relative_seat(s.current[games][None, :].astype(np.int16), seat, n_players[None, :])
        key = scores.astype(np.int64) * 10_000 + threes * 10 - recency
        valid = seat < n_players[None, :]
        key = np.where(valid, key, -(2**62))  # padded seats last
        # A seat's rank: how many seats have a larger key (the keys of a table's seats
        # differ: recency does). Padded seats' ranks are overwritten below.
        ranks = np.add.reduce(key[None, :, :] > key[:, None, :], axis=1, dtype=np.int8)
        s.scores.reshape(-1)[seat_rows] = scores * valid
        s.threes.reshape(-1)[seat_rows] = threes * valid
        s.ranks.reshape(-1)[seat_rows] = np.where(valid, ranks, -1)

    def _advance_rounds(self, games: np.ndarray) -> np.ndarray:
        """Round game: award round chips, deal the next round where rounds remain.
        Returns the games whose whole game is over."""
        s = self.state
        n_players = s.num_players[games].astype(np.int16)
        rank = s.ranks[:, games].astype(np.int16)
        first, second, last = ROUND_CHIPS
        is_last = rank == (n_players - 1)[None, :]
        chips = np.where(rank == 0, first, 0) + np.where((rank == 1) & ~is_last, second, 0) + np.where(is_last, last, 0)
        s.round_points[:, games] += chips.astype(np.int8)
        s.plus2[:, games] += rank == 0
        s.plus1[:, games] += (rank == 1) & ~is_last
        s.round[games] += 1
        more = s.round[games] < self.rules.rounds
        going_on = games[more]
        if going_on.size:
            starters = np.argmax(is_last[:, more], axis=0).astype(np.int8)  # last place starts
            if self._round_decks is not None:
                decks = self._round_decks[going_on, s.round[going_on]]
            else:
                decks = shuffled_decks(self.rng, going_on.size)
            self._start_rounds(going_on, decks, starters)
        finished = games[~more]
        if finished.size:
            self._rank_round_game(finished)
        return finished

    def _rank_round_game(self, games: np.ndarray) -> None:
        """Final round-game ranking: points, then +2 chips, then +1 chips, then the last
        round's placing. Stored in ranks; the last round's scores stay in scores."""
        s = self.state
        n_players = s.num_players[games].astype(np.int64)
        seat = np.arange(P)[:, None]
        last_rank = s.ranks[:, games].astype(np.int64)
        key = (s.round_points[:, games].astype(np.int64) * 100 + s.plus2[:, games]) * 100 + s.plus1[:, games]
        key = key * 10 - last_rank
        valid = seat < n_players[None, :]
        key = np.where(valid, key, -(2**62))  # padded seats last (negating int64.min would overflow to itself)
        order = np.argsort(-key, axis=0, kind="stable")
        ranks = np.empty_like(order)
        np.put_along_axis(ranks, order, np.arange(P)[:, None].repeat(games.size, axis=1), axis=0)
        s.ranks[:, games] = np.where(valid, ranks, -1)

    def _rewards(self, games: np.ndarray, dtype=np.float32) -> np.ndarray:
        """[P, n] terminal rewards of finished games under ``rules.reward``, computed in
        ``dtype``: float32 for the batch (the learners' dtype), float64 for the AEC env, whose
        zero-sum rewards must sum to 0 to float64 precision (in float32, -1/3 rounds to
        -0.33333334 and a 4-player "win" game sums to -3e-8)."""
        s = self.state
        n_players = s.num_players[games].astype(dtype)
        ranks = s.ranks.take(games, axis=1)
        rank = ranks.astype(dtype)
        valid = ranks >= 0
        scheme = self.rules.reward
        if scheme == "win":
            reward = np.where(rank == 0, 1.0, -1.0 / (n_players[None, :] - 1))
        elif scheme == "rank":
            reward = queries.rank_value(rank, n_players[None, :])
        else:
            round_game = self.rules.rounds > 1
            value = (s.round_points if round_game else s.scores)[:, games].astype(dtype)
            if scheme == "score":
                value = np.where(valid, value, 0.0)
                mean = value.sum(axis=0) / n_players
                reward = (value - mean[None, :]) / (1.0 if round_game else SCORE_REWARD_SCALE)
            else:  # margin over the best other seated player
                margin = queries.score_margin(value, valid)
                reward = np.tanh((margin + 0.5) / (1.0 if round_game else MARGIN_REWARD_SCALE))
        return np.where(valid, reward, 0.0).astype(dtype)

    def reset_games(self, games, *, num_players=None) -> None:
        """Deal fresh games (decks shuffled from the generator) in the selected games only;
        the other games are untouched. num_players: an int or int[len(games)] of new table
        sizes for them (default: keep each game's size)."""
        idx = np.asarray(games)
        if idx.dtype == bool or not np.issubdtype(idx.dtype, np.integer) or idx.ndim != 1:
            raise ValueError(f"games must be a 1-d int array of game indices, got {games!r}")
        if idx.size and (idx.min() < 0 or idx.max() >= self.batch_size or np.unique(idx).size != idx.size):
            raise ValueError(f"games must be distinct indices in [0, {self.batch_size}), got {idx[:10].tolist()}")
        idx = idx.astype(np.intp)
        if num_players is not None:
            arr = np.asarray(num_players)
            if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or arr.ndim > 1 or (
                arr.ndim == 1 and arr.shape[0] != idx.size
            ):
                raise ValueError(f"num_players must be an int or an int array of shape [{idx.size}], got {num_players!r}")
            if ((arr < MIN_PLAYERS) | (arr > MAX_PLAYERS)).any():
                raise ValueError(f"num_players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {np.unique(arr).tolist()}")
            self.state.num_players[idx] = arr
        if idx.size:
            self._auto_reset(idx)

    def _auto_reset(self, games: np.ndarray) -> None:
        s = self.state
        s.round[games] = 0
        s.round_points[:, games] = 0
        s.plus2[:, games] = 0
        s.plus1[:, games] = 0
        s.terminated[games] = False
        s.truncated[games] = False
        s.capped[games] = False
        self._start_rounds(games, shuffled_decks(self.rng, games.size), np.zeros(games.size, np.int8))


def company_payouts(holdings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The final payout of a round, company by company (also used by the renderer to
    explain a scoring). holdings: int[P, C, n] cards per seat (hand + portfolio).

    Returns (paid, received), each int[P, C, n]: the coins each seat pays for each company
    (its cards there, if another seat holds strictly the most) and the 3-point coins the
    sole majority holder receives (the sum of those payments). A tie for most: nobody pays.
    """
    most = holdings.max(axis=0)
    sole = np.add.reduce(holdings == most, axis=0, dtype=np.int8) == 1  # [C, n]
    winner = holdings.argmax(axis=0)  # [C, n]
    is_winner = np.arange(holdings.shape[0])[:, None, None] == winner
    paid = holdings * (sole & ~is_winner)  # each minority holder pays 1 coin per card
    received = (is_winner & sole) * paid.sum(axis=0, dtype=paid.dtype)  # (in holdings' dtype: 45 cards fit int8)
    return paid, received


def public_state(state: State, seat) -> State:
    """A copy of ``state`` holding only what ``seat`` (int[B]) may know: other seats' hands
    are replaced by the cards publicly known to be in them (``known``), and the whole deck
    is blanked to -1: the pile and the removed cards are hidden, and the cards already
    dealt from it are where play put them (hands, portfolios, market), while their order in
    the deck would tell who was dealt what. Search bots sample the rest.
    A seat of -1 keeps no hand: every hand is reduced to its known cards.
    """
    if not isinstance(state, State):
        raise ValueError(f"state must be a startups_env.core.State, got {type(state).__name__}")
    b = state.batch_size
    arr = np.asarray(seat)
    # (checked before the cast: float seats would be truncated, and a wrong length would
    # surface as a broadcast error)
    if arr.shape != (b,):
        raise ValueError(f"seat must have shape [{b}] (one per game), got {list(arr.shape)}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"seat must be integer seats, got dtype {arr.dtype}")
    off_table = (arr < -1) | (arr >= state.num_players)
    if np.count_nonzero(off_table):
        bad = np.flatnonzero(off_table)
        raise ValueError(f"seat must be -1 or a seat at the table in every game; games {bad[:10].tolist()} "
                         f"have seats {arr[bad[:10]].tolist()} at tables of {state.num_players[bad[:10]].tolist()}")
    seat = arr.astype(np.intp)
    public = state.copy()
    others = np.arange(P)[:, None] != seat[None, :]  # [P, B]
    public.hand = np.where(others[:, None, :], state.known, state.hand).astype(np.int8)
    public.deck[:] = -1
    return public
