"""The state of B games of *Startups*, as one record of arrays, and what is read off it.

Layout: every field of :class:`State` keeps the **game axis last**, so each per-company or
per-seat quantity is a contiguous length-B row. Seats are padded to ``MAX_PLAYERS``; each
game has its own ``num_players``, current player and phase.

Market cards of one company differ only in the coins on them (docs/rules.md, decision 2), and
coins are always laid on *every* card of a company at once, so the market of a company is
a FIFO queue kept as a ring buffer of *stamps*: ``paid[c]`` counts the coins laid on each
card of company c so far, and a card stores the value of ``paid[c]`` when it entered; its
coins are ``paid[c] - stamp``. A draw is then one add per company instead of one per card.
Where the market is a row (``Rules.market_row``: ``options`` has the MARKET_ROW bit), the
queues stay as they are and ``market_order`` also lists the market's companies in the order
their cards entered (a company's front-most card is the oldest of its queue); elsewhere
``market_order`` is never written and stays -1.

Both backends (:mod:`.numpy_backend`, :mod:`.numba_backend`) change a State in place; the
compiled one receives it as one record (:func:`startups_env.startups.numba_backend.arrays`).
"""

from __future__ import annotations

import operator
from collections import namedtuple
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from startups_env.startups import queries
from startups_env.startups.queries import SLOTS
from startups_env.startups.rules import (
    COMPANY_SIZES,
    DECK_SIZE,
    HAND_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_COMPANIES,
    NUM_REMOVED,
    PUT_PHASE,
    SORTED_DECK,
    action_to_string,
)

P, C = MAX_PLAYERS, NUM_COMPANIES
NO_ONE = -1  # no seat: an unheld chip, no barred company
_SORTED_DECK = np.array(SORTED_DECK, dtype=np.int8)
_CARD_BITS = np.int64(63)  # shuffled_decks: the card's index in the low bits of its sort key
_KEY_BITS = ~_CARD_BITS
_CARD_INDEX = np.arange(DECK_SIZE, dtype=np.int64)


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
    options: np.ndarray  # int8[B]      the options of play the game is dealt under (Rules.option_bits; 0 the rulebook)
    market_order: np.ndarray  # int8[45, B]  market_row games: the market's companies in entry order, -1 past its end

    @classmethod
    def empty(cls, batch_size: int) -> "State":
        b = batch_size
        return cls(
            hand=np.zeros((P, C, b), np.int8),
            portfolio=np.zeros((P, C, b), np.int8),
            known=np.zeros((P, C, b), np.int8),
            coins=np.zeros((P, b), np.int16),
            chip=np.full((C, b), NO_ONE, np.int8),
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
            barred=np.full(b, NO_ONE, np.int8),
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
            options=np.zeros(b, np.int8),
            market_order=np.full((DECK_SIZE, b), NO_ONE, np.int8),
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
        :func:`startups_env.startups.queries.market_take_coins`."""
        return queries.market_take_coins(self)

    def unseen(self, seat: np.ndarray) -> np.ndarray:
        """int16[C, B]: cards of each company that ``seat`` (int[B]) cannot see (others'
        hands, pile, removed cards); :func:`startups_env.startups.queries.unseen`."""
        return queries.unseen(self, seat)


_FIELD_NAMES = tuple(f.name for f in fields(State))  # (State.take is hot: fields() costs microseconds a call)


StateArrays = namedtuple("StateArrays", _FIELD_NAMES)
StateArrays.__doc__ = """The arrays of a :class:`State`, in its field order: the one record in which the compiled
rules take a state (numba passes it by value; a new field of State is a new field here)."""
_state_fields = operator.attrgetter(*_FIELD_NAMES)  # (one C call: the search asks for arrays at every kernel call)


def arrays(state: State) -> StateArrays:
    """The arrays of ``state`` as one record (not copied: the kernels change them in place)."""
    return StateArrays._make(_state_fields(state))


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


def empty_results(batch_size: int) -> StepResult:
    """A step's results where no round ended, for the ended games to be written into:
    zero rewards and scores, ranks -1, and the flags all False."""
    ranks = np.empty((batch_size, P), np.int8)
    ranks.fill(-1)
    return StepResult(np.zeros((batch_size, P), np.float32), np.zeros(batch_size, bool), np.zeros(batch_size, bool),
                      np.zeros((batch_size, P), np.int16), ranks)


def clear_games(state: State, games: np.ndarray) -> None:
    """Clear the game-level fields of ``games`` (round, round-game chips, the game-over
    flags), as before their first deal."""
    state.round[games] = 0
    state.round_points[:, games] = 0
    state.plus2[:, games] = 0
    state.plus1[:, games] = 0
    state.terminated[games] = False
    state.truncated[games] = False
    state.capped[games] = False


def illegal_actions_error(state: State, actions: np.ndarray, legal: np.ndarray, running: np.ndarray) -> ValueError:
    """The error of a step whose ``actions`` (int[B]) are not ``legal`` (bool[B]) in some
    ``running`` games (bool[B]): it names the games, the actions and the phases."""
    illegal = np.flatnonzero(~legal & running)
    details = ", ".join(
        f"game {g}: {action_to_string(actions[g])} ({int(actions[g])}) in {('take', 'put-down')[state.phase[g]]} phase"
        for g in illegal[:10]
    )
    return ValueError(f"illegal actions in {illegal.size} game(s): {details}")


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


def public_state(state: State, seat) -> State:
    """A copy of ``state`` holding only what ``seat`` (int[B]) may know: other seats' hands
    are replaced by the cards publicly known to be in them (``known``), and the whole deck
    is blanked to -1: the pile and the removed cards are hidden, and the cards already
    dealt from it are where play put them (hands, portfolios, market), while their order in
    the deck would tell who was dealt what. Search bots sample the rest.
    A seat of -1 keeps no hand: every hand is reduced to its known cards.
    """
    if not isinstance(state, State):
        raise ValueError(f"state must be a startups_env.State, got {type(state).__name__}")
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


# ----------------------------------------------------------------- dealing what is hidden
# The inverse of public_state: the hidden cards of a public state dealt uniformly at random,
# consistent with what its seat knows (the search's worlds, agents/search/worlds.py, and the
# OpenSpiel game's resampling, envs/openspiel.py, deal them so).


def hidden_hand_counts(public: State, seat: np.ndarray) -> np.ndarray:
    """int64[7, n]: how many cards of each other seated player's hand ``seat`` (int[n])
    cannot see in ``public`` (a public state: hands hold their known cards); 0 for the seat
    itself and the empty seats. A hand holds ``HAND_SIZE`` cards, one more while its player
    is to put one down."""
    seats = np.arange(P)[:, None]
    others = (seats != seat[None, :]) & (seats < public.num_players[None, :])
    size = HAND_SIZE + ((seats == public.current[None, :]) & (public.phase == PUT_PHASE)[None, :])
    return np.where(others, size - public.hand.sum(axis=1, dtype=np.int64), 0)


def check_hidden_counts(world: State, pool: np.ndarray, need: np.ndarray) -> None:
    """ValueError unless the unseen ``pool`` (int[C, n]) holds exactly the ``need``
    (int[7, n], :func:`hidden_hand_counts`) hidden hand cards, the pile and the five removed
    cards of each game of ``world``: a public state that no deal could have made."""
    if (need < 0).any():
        raise ValueError("a public hand holds more known cards than a hand can")
    pile_left = queries.pile_left(world.pile_pos.astype(np.int64))
    if not np.array_equal(pool.sum(axis=0), need.sum(axis=0) + pile_left + NUM_REMOVED):
        raise ValueError("the unseen pool does not match the hidden hands, pile and removed cards")


def deal_hidden(public: State, seat, keys: np.ndarray) -> State:
    """A copy of ``public`` (a :func:`public_state` of n games seen by ``seat``, int[n]) with
    its hidden cards dealt uniformly at random, consistent with what ``seat`` knows: each
    other seated player's hand keeps its publicly known cards and is filled up to
    ``HAND_SIZE`` from the cards ``seat`` cannot see (:func:`queries.unseen`); the rest of
    those cards go to the pile (deck positions ``pile_pos``..44) and the removed cards
    (positions 0..4), the other deck positions stay -1. ``keys`` float[n, 45], uniform in
    [0, 1), order each game's unseen cards (changed). ValueError for a public state that no
    deal could have made."""
    seat = np.asarray(seat, np.intp)
    if seat.shape != (public.batch_size,):
        raise ValueError(f"seat must have shape [{public.batch_size}], got {list(seat.shape)}")
    world = public.copy()
    pool = world.unseen(seat).astype(np.int64)
    need = hidden_hand_counts(world, seat)
    check_hidden_counts(world, pool, need)
    deal_hidden_cards(keys, pool, need, world)
    return world


def deal_hidden_cards(keys: np.ndarray, pool: np.ndarray, need: np.ndarray, world: State) -> None:
    """Deal each world's pool (``pool`` int64[C, m], counts per company) in the order of
    ``keys`` (float[m, 45]; changed): the first ``need`` (int64[7, m]) cards to the hands in
    seat order, the rest to the pile (from ``pile_pos`` on) and then the removed cards, in
    deck order. ``world.hand`` gains the hand cards; ``world.deck`` is rewritten."""
    m = world.batch_size
    cards = shuffled_pool(pool, keys)
    slot = np.arange(DECK_SIZE)

    hand_bounds = np.cumsum(need, axis=0)  # [P, m]
    owner = (slot[None, None, :] >= hand_bounds.T[:, :, None]).sum(axis=1)  # [m, 45] seat; P = not a hand card
    dealt = owner < P
    flat = (np.nonzero(dealt)[0] * P + owner[dealt]) * C + cards[dealt]
    extra = np.bincount(flat, minlength=m * P * C).reshape(m, P, C)
    world.hand += extra.transpose(1, 2, 0).astype(np.int8)

    # A deck card's source is its place in the shuffled list: after the hand cards, the
    # pile in deck order, then the removed cards in deck order.
    hidden = need.sum(axis=0)  # [m]
    pile_left = queries.pile_left(world.pile_pos.astype(np.int64))
    pos = slot[None, :]
    pile_pos = world.pile_pos.astype(np.int64)[:, None]
    removed = np.zeros((1, DECK_SIZE), bool)
    removed[:, queries.REMOVED] = True
    source = np.where(queries.in_pile(world.pile_pos).T, hidden[:, None] + pos - pile_pos,
                      np.where(removed, hidden[:, None] + pile_left[:, None] + pos - queries.REMOVED.start, -1))
    deck = np.where(source >= 0, np.take_along_axis(cards, np.maximum(source, 0), axis=1), -1)
    world.deck[:] = deck.T.astype(np.int8)


def shuffled_pool(pool: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """int[m, 45]: each column's pool (``pool`` int[C, m], counts per company) as a list of
    company ids in the order of ``keys`` (float[m, 45] in [0, 1): slot k of the list by
    company has key ``keys[i, k]``; changed), padded with C at the end."""
    bounds = np.cumsum(pool, axis=0)  # [C, m]
    cards = (np.arange(DECK_SIZE)[None, None, :] >= bounds.T[:, :, None]).sum(axis=1)  # [m, 45]; C = padding
    keys[cards == C] = 2.0
    return np.take_along_axis(cards, np.argsort(keys, axis=1), axis=1)
