"""The public game record: what the whole table saw of every seat's recent put-downs.

A put-down is public: everyone sees which card went where. What it says about the
player's hidden hand depends on the table at that moment, so :class:`History` keeps, per
seat and game, the fully public state just before each of that seat's last two
put-downs, the put-down actions, and the take of the latest put-down's turn (a draw or a
market take: public too) with the public state just before it; and, as a longer record of
how each seat plays, the state and action of up to ``OLDER`` put-downs before the last
two. Nothing hidden is stored, so every seat may read it; bots that
read hands from it (search) declare ``needs = {"history"}`` (see
:mod:`startups_env.table.policy`) and every driver keeps one for them
(:class:`startups_env.table.driver.Table`, the vector env, the replay recorder; the PettingZoo
env with ``env(..., history=True)``).

A History has to see every decision of its games, in order, from the deal on:
:meth:`History.record` logs the decisions about to be played in a state, and
:meth:`History.reset` forgets games that are dealt again.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from startups_env.startups.rules import MAX_PLAYERS
from startups_env.startups.state import State, public_state

OLDER = 10  # put-downs per seat kept before the last two (a four-player round has about nine a seat)


class _Before(NamedTuple):
    """What :meth:`History.record` reads of the state before a step (see
    :meth:`History.prepare`)."""

    running: np.ndarray  # bool[B]
    phase: np.ndarray  # int8[B]
    current: np.ndarray  # intp[B]
    put_games: np.ndarray  # intp[k]: running games in the put-down phase
    public: State | None  # the k games, every hand reduced to its known cards (None if k = 0)
    take_games: np.ndarray  # intp[j]: running games in the take phase
    take_public: State | None  # the j games, as ``public``


class History:
    """Every seat's last two put-downs in each of B games, as the whole table saw them.

    Attributes:
        state, earlier_state: States of ``MAX_PLAYERS * B`` rows (row ``seat * B + game``),
            the fully public state (:func:`~startups_env.startups.state.public_state` for no seat:
            every hand reduced to its publicly known cards, no deck) before the latest and
            the one-before-latest put-down.
        action, earlier_action: int64[MAX_PLAYERS, B], those put-down action ids; -1 where
            the seat has not put down that many cards in the game yet.
        take_action: int64[MAX_PLAYERS, B], the take (0 draw, 1-6 market) of the turn of
            the latest put-down.
        take_state: a State like ``state``: the fully public state just before that take.
        older_state: a State of ``OLDER * MAX_PLAYERS * B`` rows (row ``(k * MAX_PLAYERS +
            seat) * B + game``, slot k in no particular order), the public state before
            each of the seat's put-downs before those two (the most recent ``OLDER``).
        older_action: int64[OLDER, MAX_PLAYERS, B], those put-downs; -1 for an empty slot.
            Check the slot's state's ``round`` against the game's (:meth:`older_valid`).
    """

    def __init__(self, batch_size: int):
        self.state = State.empty(MAX_PLAYERS * batch_size)
        self.earlier_state = State.empty(MAX_PLAYERS * batch_size)
        self.action = np.full((MAX_PLAYERS, batch_size), -1, np.int64)
        self.earlier_action = self.action.copy()
        self.take_action = self.action.copy()
        self._pending_take = self.action.copy()  # the take of each seat's turn in progress
        self.take_state = State.empty(MAX_PLAYERS * batch_size)
        self._pending_take_state = State.empty(MAX_PLAYERS * batch_size)  # the state before it
        self.older_state = State.empty(OLDER * MAX_PLAYERS * batch_size)
        self.older_action = np.full((OLDER, MAX_PLAYERS, batch_size), -1, np.int64)
        self._older_slot = np.zeros((MAX_PLAYERS, batch_size), np.int64)  # the slot the next one overwrites

    @property
    def batch_size(self) -> int:
        return self.action.shape[1]

    def record(self, state: State, actions: np.ndarray, active: np.ndarray | None = None) -> None:
        """Log the takes and put-downs among ``actions`` (int[B], about to be played in
        ``state``). active: bool[B], the games in which they are played (default: every
        running game)."""
        self.commit(self.prepare(state), actions, active)

    def prepare(self, state: State) -> _Before:
        """The first half of :meth:`record`, for a driver that must step first (the step
        may refuse the actions, and then nothing may be logged): what the log needs of
        ``state``, read before the step; log it with :meth:`commit` once the step is done."""
        if state.batch_size != self.batch_size:
            raise ValueError(f"this history holds {self.batch_size} games, the state {state.batch_size}")
        running = ~state.done
        put_games = np.flatnonzero((state.phase == 1) & running)
        public = public_state(state.take(put_games), np.full(put_games.size, -1)) if put_games.size else None
        take_games = np.flatnonzero((state.phase == 0) & running)
        take_public = public_state(state.take(take_games), np.full(take_games.size, -1)) if take_games.size else None
        return _Before(running, state.phase.copy(), state.current.astype(np.intp), put_games, public, take_games,
                       take_public)

    def commit(self, before: _Before, actions: np.ndarray, active: np.ndarray | None = None) -> None:
        """The second half of :meth:`record`: log ``actions`` as played from the state
        ``before`` (:meth:`prepare`) describes."""
        actions = np.asarray(actions)
        if actions.shape != (self.batch_size,):
            raise ValueError(f"actions must have shape [{self.batch_size}], got {list(actions.shape)}")
        playing = before.running if active is None else before.running & np.asarray(active, bool)
        takes = np.flatnonzero((before.phase == 0) & playing)
        self._pending_take[before.current[takes], takes] = actions[takes]
        if takes.size:
            played = playing[before.take_games]
            self._pending_take_state.put(before.current[takes] * self.batch_size + takes,
                                         before.take_public.take(np.flatnonzero(played)))
        keep = playing[before.put_games]
        games = before.put_games[keep]
        if games.size == 0:
            return
        seat = before.current[games]
        rows = seat * self.batch_size + games
        self._push_older(seat, games, rows)
        self.earlier_state.put(rows, self.state.take(rows))
        self.earlier_action[seat, games] = self.action[seat, games]
        self.state.put(rows, before.public if keep.all() else before.public.take(np.flatnonzero(keep)))
        self.action[seat, games] = actions[games]
        self.take_action[seat, games] = self._pending_take[seat, games]
        self.take_state.put(rows, self._pending_take_state.take(rows))

    def _push_older(self, seat: np.ndarray, games: np.ndarray, rows: np.ndarray) -> None:
        """Move the put-down about to leave ``earlier`` (seat[i] in games[i]; rows[i] its
        row) into that seat's ring of older ones."""
        has = self.earlier_action[seat, games] >= 0
        if not has.any():
            return
        seat, games, rows = seat[has], games[has], rows[has]
        slot = self._older_slot[seat, games]
        self.older_state.put((slot * MAX_PLAYERS + seat) * self.batch_size + games, self.earlier_state.take(rows))
        self.older_action[slot, seat, games] = self.earlier_action[seat, games]
        self._older_slot[seat, games] = (slot + 1) % OLDER

    def reset(self, games=None) -> None:
        """Forget the given games (default: all); call it when a game is dealt again."""
        games = slice(None) if games is None else np.asarray(games, np.intp)
        for entries in (self.action, self.earlier_action, self.take_action, self._pending_take):
            entries[:, games] = -1
        self.older_action[:, :, games] = -1
        self._older_slot[:, games] = 0

    def take(self, games) -> History:
        """The history of the selected games (int[n], in that order)."""
        games = np.asarray(games, np.intp)
        view = History.__new__(History)
        rows = (np.arange(MAX_PLAYERS)[:, None] * self.batch_size + games[None, :]).reshape(-1)
        view.state, view.earlier_state = self.state.take(rows), self.earlier_state.take(rows)
        view.action, view.earlier_action = self.action[:, games], self.earlier_action[:, games]
        view.take_action, view._pending_take = self.take_action[:, games], self._pending_take[:, games]
        view.take_state, view._pending_take_state = self.take_state.take(rows), self._pending_take_state.take(rows)
        older_rows = (np.arange(OLDER * MAX_PLAYERS)[:, None] * self.batch_size + games[None, :]).reshape(-1)
        view.older_state = self.older_state.take(older_rows)
        view.older_action, view._older_slot = self.older_action[:, :, games], self._older_slot[:, games]
        return view

    def valid(self, public: State) -> np.ndarray:
        """bool[MAX_PLAYERS, n]: seats whose latest logged put-down belongs to the round now
        played in ``public`` (the same n games)."""
        logged_round = self.state.round.reshape(MAX_PLAYERS, -1)
        return (self.action >= 0) & (logged_round == public.round[None, :])

    def earlier_valid(self) -> np.ndarray:
        """bool[MAX_PLAYERS, n]: seats whose put-down before the latest is logged, from the
        same round, with the take in between (check :meth:`valid` for the latest)."""
        same_round = self.earlier_state.round == self.state.round
        return (self.earlier_action >= 0) & (self.take_action >= 0) & same_round.reshape(MAX_PLAYERS, -1)

    def older_valid(self, public: State) -> np.ndarray:
        """bool[OLDER, MAX_PLAYERS, n]: the older slots holding a put-down of the round now
        played in ``public`` (the same n games)."""
        logged_round = self.older_state.round.reshape(OLDER, MAX_PLAYERS, -1)
        return (self.older_action >= 0) & (logged_round == public.round[None, None, :])


#: The former name (``startups_env.agents.base.PutDownLog``).
PutDownLog = History
