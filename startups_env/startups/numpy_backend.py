"""The numpy backend: every rule of *Startups* for B games at once, in whole-row numpy
operations over the :class:`~startups_env.startups.state.State` (game axis last).

This is the vectorized reference that the package promises, and what runs without numba:
the compiled backend (:mod:`.numba_backend`) is proven equal to it state for state. A
:class:`NumpyBackend` is bound to one :class:`~startups_env.startups.simulator.Simulator`
(which chose it, once) and applies the rules to that simulator's games: the deal
(:meth:`~NumpyBackend.deal`), the legal mask (:meth:`~NumpyBackend.legal_rows`), the step
(take and put-down phases) and the scoring of a finished round (:meth:`~NumpyBackend.score`).
What does not depend on the backend (the round game's chips, rewards, auto-reset, the
checks of the caller's input) is the simulator's.

The numbers that follow from a position and are needed outside the step too (a draw's
price, a market card's coins, the chip) come from :mod:`.queries`, each written once.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from startups_env.startups import queries
from startups_env.startups.observe import observe_one_game
from startups_env.startups.queries import SLOTS, company_rows, read_only
from startups_env.startups.rules import (
    CHIP_TRIPLES_COINS,
    DECK_SIZE,
    HAND_SIZE,
    MAX_PLAYERS,
    NUM_ACTIONS,
    NUM_COMPANIES,
    PAYOUT_IN_POINTS,
    PUT_PHASE,
    STARTING_COINS,
    TAKE_PHASE,
    Action,
    pile_start,
)
from startups_env.startups.state import NO_ONE, StepResult, clear_games, illegal_actions_error

P, C = MAX_PLAYERS, NUM_COMPANIES
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
        _Seats(*read_only(np.array([p], np.intp), np.array([p], np.intp), np.array([p * C], np.intp),
                           p * C + np.arange(C, dtype=np.intp)[:, None], np.array([(p + 1) % max(n, 1)], np.intp)))
        for p in range(P)
    )
    for n in range(P + 1)
)



class NumpyBackend:
    """The rules applied with numpy to the games of one simulator (``sim``), whose state
    it reads and changes in place. It keeps the legal mask and the offsets of the players
    to act until the state changes (:meth:`forget`)."""

    name = "numpy"

    def __init__(self, sim):
        self.sim = sim
        b = self.batch_size = sim.batch_size
        self._mask_cache: np.ndarray | None = None  # bool[19, B], valid until the state changes
        self._phase_cache: tuple[np.ndarray, np.ndarray] | None = None  # phase_games(), valid with _mask_cache
        self._seats_cache: _Seats | None = None  # _seat_cells(), valid with _mask_cache
        self._phase_counts: tuple[int, int] = (0, 0)  # games in the take / put-down phase, valid with _mask_cache
        self._turn_cap = np.array(sim.rules.turn_cap, np.int16)  # (as s.turn; Rules caps it at 30000)
        self._options = np.array(sim.rules.option_bits, np.int8)
        self._market_row = sim.rules.market_row
        self._arange = np.arange(b)
        self._batch = np.array(b, np.intp)
        self._one_action = np.zeros(1, np.intp)  # step_one's action buffer
        # row * B: the flat offset of row r of an [R, B] array (R <= 45), to address the
        # columns of some games (+ games) through flat views.
        self._row_starts = (np.arange(DECK_SIZE, dtype=np.intp) * b)[:, None]

    @property
    def state(self):
        return self.sim.state

    def forget(self) -> None:
        """Drop what was kept of the state: it changed outside the rules."""
        self._mask_cache = None
        self._phase_cache = None
        self._seats_cache = None

    def choose(self, rows: np.ndarray, given: bool, u: np.ndarray, lo: int, hi: int, choice: np.ndarray) -> None:
        """Add to ``choice`` (int8[B], ``lo`` everywhere) the index, among the legal actions
        lo..hi-1 of each game (``rows`` bool[19, B]), of the one that the uniform ``u``
        (float32[B]) picks (:func:`startups_env.startups.queries.legal_choice`)."""
        choice += queries.legal_choice(rows[lo:hi], u)

    def step(self, a: np.ndarray, active: np.ndarray | None) -> StepResult:
        """Apply the checked actions ``a`` (intp[B]) in the running (and ``active``) games;
        an illegal one raises ValueError before any game changes."""
        rows = self.legal_rows()
        take, put = self._phase_cache  # valid with the mask, like the game counts
        counts = self._phase_counts
        legal = rows.take(self._flat(a))
        if active is not None:
            take, put = take & active, put & active
            counts = (np.count_nonzero(take), np.count_nonzero(put))
        running = take | put
        if np.count_nonzero(running > legal):  # some running game got an illegal action
            raise illegal_actions_error(self.state, a, legal, running)
        return self._apply(a, rows, take, put, counts)

    def step_one(self, action: int) -> StepResult | None:
        """:meth:`step` in a batch of one running game, ``action`` a legal Python int (the
        PettingZoo env's path: the same rules, fewer numpy calls). None where the round
        goes on (nothing to report)."""
        a = self._one_action
        a[0] = action
        take, put = self._phase_cache
        return self._apply(a, self._mask_cache, take, put, self._phase_counts, result=False)

    def observe_one(self, seat: int) -> np.ndarray:
        """float32[OBS_DIM]: the observation of ``seat`` in game 0."""
        return observe_one_game(self.state, seat, None)[0]

    def end_and_deal(self, ended: np.ndarray, decks: np.ndarray, results: StepResult) -> None:
        """Under auto-reset in the one-round game: score the ``ended`` games (intp[k]),
        report them in ``results`` (terminated unless capped, truncated if capped, their
        scores and ranks by seat; the rewards are the simulator's), clear them and deal them
        fresh rounds from ``decks`` (int8[k, 45]), seat 0 to begin."""
        s = self.state
        self.score(ended)
        results.terminated[ended] = ~s.capped[ended]
        results.truncated[ended] = s.capped[ended]
        results.scores[ended] = s.scores.take(ended, axis=1).T
        results.ranks[ended] = s.ranks.take(ended, axis=1).T
        clear_games(s, ended)
        self.deal(ended, decks, np.zeros(ended.size, np.int8))

    def deal(self, games: np.ndarray, decks: np.ndarray, starters: np.ndarray) -> None:
        """Deal a fresh round in ``games`` (intp[n]) from ``decks`` (int8[n, 45], canonical
        order), seat ``starters[i]`` (int8[n]) to begin."""
        s = self.state
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
        s.chip.reshape(-1)[company] = NO_ONE
        for market in (s.market_count, s.market_head, s.market_paid, s.market_coins):
            market.reshape(-1)[company] = 0
        s.pile_pos[games] = pile_start(n_players)
        s.options[games] = self._options
        if self._market_row:
            s.market_order[:, games] = NO_ONE
        s.current[games] = starters
        s.phase[games] = TAKE_PHASE
        s.barred[games] = NO_ONE
        s.turn[games] = 0
        self._mask_cache = None


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

    def phase_games(self) -> tuple[np.ndarray, np.ndarray]:
        """bool[B] masks of running games in the take and in the put-down phase (cached
        together with the legal mask; callers must not modify them)."""
        if self._mask_cache is not None and self._phase_cache is not None:
            return self._phase_cache
        s = self.state
        done = s.terminated | s.truncated
        phase = s.phase.view(bool)  # phase is 0 (take) or 1 (put-down)
        return ~(phase | done), phase > done  # (phase > done: put-down and running)

    def legal_rows(self) -> np.ndarray:
        """bool[19, B] legal mask (cached until the state changes)."""
        if self._mask_cache is not None:
            return self._mask_cache
        s, b = self.state, self.batch_size
        take, put = self._phase_cache = self.phase_games()
        seats = self._seats_cache = self._seat_cells()
        # (np.count_nonzero is a much cheaper "any" than ndarray.any() on small arrays.)
        counts = self._phase_counts = (np.count_nonzero(take), np.count_nonzero(put))
        mask = np.zeros((NUM_ACTIONS, b), bool)
        # "& take" / "& put" are skipped where every game is in that phase (always at B = 1).
        if counts[0]:
            lacks_chip = queries.lacks_chip(s.chip, self._per_game(s.current))  # [C, B]
            purse = s.coins.reshape(-1)[seats.cell]
            can_take = (s.market_count > _ZERO) & lacks_chip
            if self._market_row:  # a free draw (the pile is never empty at a take); a take costs its place
                can_draw = take.copy()
                can_take &= purse >= queries.row_prices(s.market_order)
            else:
                can_draw = purse >= queries.draw_cost(s.market_count, lacks_chip)
            if counts[0] < b:
                can_draw &= take
                can_take &= take
            mask[_DRAW] = can_draw
            mask[_TAKE:_KEEP] = can_take
        if counts[1]:
            own = seats.own if seats.own is not None else seats.base + company_rows(b)
            in_hand = s.hand.reshape(-1)[own] > _ZERO
            if counts[1] < b:
                in_hand &= put
            mask[_KEEP:_MARKET] = in_hand
            mask[_MARKET:] = in_hand & (_COMPANY_COLUMN != self._per_game(s.barred))
        self._mask_cache = mask
        return mask


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
        return self.sim.end_rounds(ended)

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
        if any_draw and not self._market_row:  # (on a market row a draw is free)
            self._pay_for_draw(draw, every_draw, rows, coins, seat)
        if any_grab:
            company = self._grab(actions, grab, every_grab, seats, coins)
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

    def _pay_for_draw(self, draw: np.ndarray, every_draw: bool, rows: np.ndarray, coins: np.ndarray, seat) -> None:
        """The drawers' coins onto the market (``coins``: the flat view of State.coins)."""
        s = self.state
        # Lay 1 coin on every market card of companies whose chip the drawer lacks, i.e.
        # of the companies it may take from: the legal take rows (drawers are takers).
        pay = rows[_TAKE:_KEEP]  # [C, B]
        if not every_draw:
            pay = pay & self._per_game(draw)
        s.market_paid += pay
        s.market_coins += s.market_count * pay
        coins[seat] -= queries.draw_cost(s.market_count, pay)

    def _grab(self, actions: np.ndarray, grab: np.ndarray, every_grab: bool, seats: _Seats,
              coins: np.ndarray) -> np.ndarray:
        """Take a market card, with its coins, where ``grab`` is set; returns the company
        taken (0 where none)."""
        s = self.state
        seat = seats.cell
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
        if self._market_row:
            self._take_from_row(company, grab, seat)
        return company

    def _apply_put(self, put: np.ndarray, actions: np.ndarray, seats: _Seats, every: bool) -> np.ndarray:
        """Put a card down and end the turn where ``put`` is set; returns the games whose
        round ended."""
        s = self.state
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
        any_keep = np.count_nonzero(keep)
        if any_keep:
            self._keep(keep, any_keep, company, row, cell, seats.cur)
        any_market = np.count_nonzero(to_market)
        if any_market:
            self._to_market(to_market, any_market == self.batch_size, company, row)
        return self._end_turn(put, seats, every)

    def _keep(self, keep: np.ndarray, count: int, company: np.ndarray, row: np.ndarray, cell: np.ndarray,
              cur: np.ndarray) -> None:
        """The card goes face up into the portfolio in the ``keep`` games (``count`` of
        them); the anti-monopoly chip follows."""
        s = self.state
        portfolio, chip = s.portfolio.reshape(-1), s.chip.reshape(-1)
        mine = portfolio[cell] + (_ONE if count == self.batch_size else keep)
        portfolio[cell] = mine
        # The chip goes to the first owner, later only to a strictly larger portfolio.
        holder = chip[row]  # int8, -1 none
        theirs = portfolio[self._flat(np.maximum(holder, _ZERO) * _COMPANIES + company)]
        takes_chip = queries.takes_chip(holder, mine, theirs)
        if count < self.batch_size:
            takes_chip &= keep
        chip[row] = holder + (cur - holder) * takes_chip  # (arithmetic select: see _apply_take)

    def _to_market(self, to_market: np.ndarray, every_market: bool, company: np.ndarray, row: np.ndarray) -> None:
        """The card joins its company's market queue, with no coins, in the ``to_market`` games."""
        s = self.state
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
        if self._market_row:  # it joins the end of the row
            end = s.market_count.sum(axis=0, dtype=np.intp) - to_market  # the row's length before it
            games = np.flatnonzero(to_market)
            s.market_order[end[games], games] = company[games]

    def _take_from_row(self, company: np.ndarray, grab: np.ndarray, seat: np.ndarray) -> None:
        """Where the market is a row: in the ``grab`` games (bool[B]) the taker (flat
        offsets ``seat``) pays one coin, out of the game, for each card in front of the
        front-most card of ``company`` (int[B]), which leaves the row."""
        s = self.state
        games = np.flatnonzero(grab)
        order = s.market_order[:, games]  # [45, k]
        place = (order == company[games]).argmax(axis=0)  # the card's place (queries.row_prices)
        s.coins.reshape(-1)[seat[games]] -= place.astype(np.int16)
        slot = np.arange(DECK_SIZE)[:, None]
        after = np.minimum(slot + (slot >= place), DECK_SIZE - 1)  # the cards behind it move up one
        shifted = np.take_along_axis(order, after, axis=0)
        shifted[-1] = NO_ONE
        s.market_order[:, games] = shifted

    def _end_turn(self, put: np.ndarray, seats: _Seats, every: bool) -> np.ndarray:
        """End the turn in the ``put`` games: the next seat takes, unless the round ended
        (the pile is out or the turn cap is reached). Returns the games whose round ended."""
        s = self.state
        if every:
            s.turn += _ONE16
            s.phase.fill(TAKE_PHASE)
            s.barred.fill(NO_ONE)
        else:
            s.turn += put
            s.phase ^= put  # 1 -> 0 where putting (put implies phase 1)
            s.barred[put] = NO_ONE
        over = (s.pile_pos >= _DECK_SIZE) | (s.turn >= self._turn_cap)  # the round ends
        if not every:
            over &= put
        # The turn passes on where a card was put and the round goes on.
        cur = seats.cur
        s.current[:] = np.where(over, cur, seats.next) if every else np.where(put > over, seats.next, cur)
        if not np.count_nonzero(over):
            return _NO_GAMES
        s.capped |= over & (s.pile_pos < _DECK_SIZE)
        return np.flatnonzero(over)

    def score(self, games: np.ndarray) -> None:
        """Final payout of the round in ``games`` (intp[n]): fills scores, threes and ranks."""
        s = self.state
        n_players = s.num_players[games].astype(np.int16)
        seat_company = self._row_starts[:P * C] + games  # flat offsets of [seat, company, game]
        seat_rows = seat_company[:P]  # flat offsets of [seat, game]
        holdings = (s.hand.reshape(-1)[seat_company] + s.portfolio.reshape(-1)[seat_company]).reshape(P, C, -1)  # <= 10
        scores, threes = round_scores(holdings, s.coins.reshape(-1)[seat_rows], self.sim.rules.option_bits)
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


def round_scores(holdings: np.ndarray, coins: np.ndarray, options: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, threes), int16[P, n]: each seat's score from its final ``holdings``
    (int[P, C, n]) and ``coins`` (int[P, n]) under the options of play ``options``
    (``Rules.option_bits``), and the shares paid to it (the 3-point coins it received; in
    points under ``payout_in_points``). Also used by the renderer to explain a scoring."""
    paid, received = company_payouts(holdings)
    paid = paid.sum(axis=1, dtype=np.int16)
    threes = received.sum(axis=1, dtype=np.int16)
    in_points = options & PAYOUT_IN_POINTS
    balance = coins if in_points else coins - paid
    if options & CHIP_TRIPLES_COINS:  # a majority holder's coins count 3 points (a debt stays 1 a coin)
        balance = balance + 2 * np.maximum(balance, 0) * majority_holders(holdings).any(axis=1)
    scores = balance + 3 * threes
    if in_points:
        scores -= 3 * paid
    return scores.astype(np.int16), threes


def company_payouts(holdings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The final payout of a round, company by company (also used by the renderer to
    explain a scoring). holdings: int[P, C, n] cards per seat (hand + portfolio).

    Returns (paid, received), each int[P, C, n]: the coins each seat pays for each company
    (its cards there, if another seat holds strictly the most) and the 3-point coins the
    sole majority holder receives (the sum of those payments). A tie for most: nobody pays.
    """
    majority = majority_holders(holdings)
    sole = majority.any(axis=0)  # [C, n]
    paid = holdings * (sole & ~majority)  # each minority holder pays 1 coin per card
    received = majority * paid.sum(axis=0, dtype=paid.dtype)  # (in holdings' dtype: 45 cards fit int8)
    return paid, received


def majority_holders(holdings: np.ndarray) -> np.ndarray:
    """bool[P, C, n]: the seat holds strictly more cards of the company than every other
    seat (``holdings`` int[P, C, n], hands added): the payout's majority holder, and under
    ``Rules.chip_triples_coins`` the holder of the company's anti-monopoly chip when scored.
    A tie for most: nobody."""
    most = holdings.max(axis=0)
    sole = np.add.reduce(holdings == most, axis=0, dtype=np.int8) == 1  # [C, n]
    winner = holdings.argmax(axis=0)  # [C, n]
    return (np.arange(holdings.shape[0])[:, None, None] == winner) & sole


