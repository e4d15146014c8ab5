"""The batch simulator: B games of *Startups* in lockstep, on a backend chosen once.

:class:`Simulator` checks what callers give it, deals from its generator, and keeps what
does not depend on the backend: the end of a round (the round game's chips and next deal,
the game-over flags, auto-reset) and the rewards. The rules themselves (the deal, the
legal mask, the take and put-down step, the scoring of a round) are applied by its backend
object (``sim.engine``): :class:`~startups_env.startups.numpy_backend.NumpyBackend` or
:class:`~startups_env.startups.numba_backend.NumbaBackend`, resolved by
:func:`~startups_env.startups.backend.backend_class` when the simulator is made.

The state is :class:`~startups_env.startups.state.State` (game axis last); the numbers that
follow from a position (the draw price, the coins a take gets, unseen cards...) are
computed in :mod:`startups_env.startups.queries`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import fields

import numpy as np

from startups_env.checks import active_games, check_seed, game_indices, is_int
from startups_env.startups import queries
from startups_env.startups.backend import BACKENDS, backend_class, default_backend, numba_available, resolve_backend
from startups_env.startups.rules import (
    DECK_SIZE,
    MARGIN_REWARD_SCALE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_ACTIONS,
    ROUND_CHIPS,
    SCORE_REWARD_SCALE,
    Action,
    Rules,
    action_to_string,
    options_of_bits,
)
from startups_env.startups.state import (
    State,
    StepResult,
    clear_games,
    empty_results,
    public_state,
    shuffled_decks,
    validate_decks,
)

__all__ = ["BACKENDS", "Simulator", "State", "StepResult", "default_backend", "numba_available", "public_state",
           "resolve_backend", "shuffled_decks", "validate_decks"]

P = MAX_PLAYERS
_DRAW, _KEEP = int(Action.DRAW), int(Action.KEEP)
_UNSIGNED_NUM_ACTIONS = np.array(NUM_ACTIONS, np.uintp)  # (a 0-d array: numpy compares with it fastest)


def _rules_of_games(state: State, rules: Rules | None) -> Rules:
    """``rules`` (default the rulebook's) with the options of play of the games of
    ``state``; ValueError if its games were dealt under different options."""
    rules = Rules() if rules is None else rules
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a startups_env.Rules, got {type(rules).__name__}")
    bits = np.unique(state.options)
    if bits.size > 1:
        raise ValueError(f"the games of state were dealt under different options of play (State.options "
                         f"{bits.tolist()}); a simulator plays one ruleset")
    if int(bits[0]) == rules.option_bits:
        return rules
    return dataclasses.replace(rules, **options_of_bits(int(bits[0])))


class Simulator:
    """B games of *Startups* in lockstep; one :meth:`step` applies one decision to each.

    Example::

        sim = Simulator(Rules(num_players=4), batch_size=1024, seed=0)
        while not sim.done.all():
            mask = sim.legal_mask()                       # bool[B, 19]
            actions = sim.random_actions(mask)            # or your policy
            result = sim.step(actions)                    # StepResult

    backend: ``"numpy"`` (the reference: whole-batch numpy operations) or ``"numba"`` (the
    compiled kernels of :mod:`startups_env.startups.numba_backend`, game by game, proven equal
    to numpy state for state); None (default) takes the fastest installed, numba where it is
    installed (``pip install 'startups-env[fast]'``). Everything else (the API, the
    games a seed deals, results, errors, auto-reset, rewards) is the same on both.
    """

    def __init__(self, rules: Rules | None = None, batch_size: int = 1, *, seed=None, auto_reset: bool = False,
                 decks=None, num_players=None, backend: str | None = None):
        self._configure(rules, batch_size, auto_reset, seed, backend)
        self._state = State.empty(self.batch_size)
        self.reset(seed=seed, decks=decks, num_players=num_players)

    def _configure(self, rules: Rules | None, batch_size: int, auto_reset: bool, seed, backend: str | None) -> None:
        """Everything but the games: check the arguments, pick the backend, set up the generator."""
        engine_class = backend_class(backend)
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
        self._turn_cap = np.array(rules.turn_cap, np.int16)  # (as s.turn; Rules caps it at 30000)
        self.rng = np.random.default_rng(seed)
        self._round_decks: np.ndarray | None = None  # int8[B, rounds, 45] explicit round-game decks
        self._arange = np.arange(self.batch_size)
        #: The backend object that applies the rules to these games (chosen once, here).
        self.engine = engine_class(self)

    @property
    def backend(self) -> str:
        """The backend's name, ``"numpy"`` or ``"numba"``."""
        return self.engine.name

    @classmethod
    def from_state(cls, state: State, rules: Rules | None = None, *, seed=None,
                   backend: str | None = None) -> "Simulator":
        """A simulator that continues the games of ``state`` (used as is, not copied), e.g. a
        search bot's rollouts from sampled states (``State.take`` of a running batch with
        hidden cards re-dealt). Later rounds of the round game are shuffled from ``seed``.
        The games keep the options of play they were dealt under (``State.options``), as
        they keep their table sizes: ``rules`` gives the other settings."""
        if not isinstance(state, State):
            raise ValueError(f"state must be a startups_env.State, got {type(state).__name__}")
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
        new = cls.__new__(cls)  # (no deal: the games are given)
        new._configure(_rules_of_games(state, rules), b, False, seed, backend)
        new._validate_num_players(state.num_players)
        new.state = state
        return new

    @property
    def state(self) -> State:
        """The games (game axis last). Assigning a new State is safe; after writing into
        the arrays in place (e.g. ``sim.state.put(...)``), call :meth:`state_changed`."""
        return self._state

    @state.setter
    def state(self, state: State) -> None:
        if not isinstance(state, State):
            raise ValueError(f"state must be a startups_env.State, got {type(state).__name__}")
        if state.batch_size != self.batch_size:
            raise ValueError(f"state holds {state.batch_size} games, this simulator {self.batch_size}")
        if np.count_nonzero(state.options != self.rules.option_bits):
            raise ValueError(f"state's games were dealt under other options of play (State.options "
                             f"{np.unique(state.options).tolist()}) than this simulator's rules "
                             f"({self.rules.ruleset}); Simulator.from_state continues them under their own")
        self._state = state
        self.state_changed()

    def state_changed(self) -> None:
        """Forget the cached legal mask: required after writing into ``sim.state`` in place
        (or assigning its fields)."""
        state = self._state
        for f in fields(state):  # the rules write through flat views, which need contiguous, writeable arrays
            array = getattr(state, f.name)
            if not (array.flags.c_contiguous and array.flags.writeable):
                setattr(state, f.name, np.array(array, order="C"))
        self.engine.forget()


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
        self.engine.forget()
        self._round_decks = checked if checked is not None and checked.shape[1] > 1 else None
        first = checked[:, 0, :] if checked is not None else shuffled_decks(self.rng, b)
        self.engine.deal(self._arange, first, np.zeros(b, np.int8))

    def _validate_num_players(self, num_players, count: int | None = None) -> np.ndarray:
        """int8[count] table sizes from ``num_players`` (an int or int[count]; None: the
        rules' size), checked; ``count`` defaults to the batch size."""
        count = self.batch_size if count is None else count
        if num_players is None:
            return np.full(count, self.rules.num_players, np.int8)
        arr = np.asarray(num_players)
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or arr.ndim > 1 or (
            arr.ndim == 1 and arr.shape[0] != count
        ):
            raise ValueError(f"num_players must be an int or an int array of shape [{count}], got {num_players!r}")
        if ((arr < MIN_PLAYERS) | (arr > MAX_PLAYERS)).any():
            raise ValueError(f"num_players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {np.unique(arr).tolist()}")
        return np.broadcast_to(arr, (count,)).astype(np.int8)

    @property
    def current_player(self) -> np.ndarray:
        """int8[B]: the seat to act in each game."""
        return self.state.current.copy()

    @property
    def done(self) -> np.ndarray:
        """bool[B]: the game is over (terminated or truncated) and waits for a reset."""
        return self.state.done

    def legal_rows(self) -> np.ndarray:
        """bool[19, B]: the legal mask action-major (row a holds action a's flag in every
        game), kept until the state changes: read it, never write it."""
        return self.engine.legal_rows()

    def legal_mask(self) -> np.ndarray:
        """bool[B, 19] in the canonical action encoding; all False in finished games.
        The array is the caller's own (a fresh copy each call)."""
        return self.engine.legal_rows().T.copy(order="K")

    def random_actions(self, mask: np.ndarray | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
        """int8[B]: a uniformly random legal action in every game (some in-range id in
        finished games, which ``step`` ignores), from one float32 draw per game
        (:func:`startups_env.startups.queries.legal_choice`).

        mask: bool[B, 19] to sample from (default: the legal mask); rng: default the
        simulator's generator."""
        rows = self.engine.legal_rows() if mask is None else np.asarray(mask, bool).T
        rng = self.rng if rng is None else rng
        # Only the action rows some game can use (take or put-down ids) are scanned.
        used = np.flatnonzero(rows.any(axis=1)) if mask is not None else None
        if used is None:
            take, put = self.engine.phase_games()
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
        self.engine.choose(rows, mask is not None, u, lo, hi, choice)
        return choice

    def _check_active(self, active) -> np.ndarray:
        """``step``'s ``active`` as a bool[B] array, or a ValueError naming what it got."""
        return active_games(active, self.batch_size)

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
        return self.engine.step(a, None if active is None else self._check_active(active))

    def step_one(self, action: int) -> StepResult | None:
        """:meth:`step` for a batch of one running game, with ``action`` a Python int in
        0-18 (the PettingZoo env's path: the same rules, less overhead). An illegal action
        raises ``ValueError`` and leaves the game unchanged. Returns None instead of a
        StepResult when no round ended (then there is nothing to report: no rewards, and
        the game is not over)."""
        if self.batch_size != 1:
            raise ValueError(f"step_one needs a batch of one game, this simulator has {self.batch_size}")
        if not self.engine.legal_rows()[action, 0]:
            raise ValueError(f"illegal action {action} ({action_to_string(action)})")
        return self.engine.step_one(action)

    def observe_one(self, seat: int) -> np.ndarray:
        """float32[OBS_DIM]: the observation of ``seat`` (a Python int at the table) in the
        one game of a batch of one (the PettingZoo env's path)."""
        return self.engine.observe_one(seat)

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
        self.engine.forget()
        return self.end_rounds(games)


    def end_rounds(self, ended: np.ndarray) -> StepResult:
        """For the backends: the end of the round in ``ended`` (intp[k], games whose round
        is over and unscored, checked by the caller), as a step reports it. In the
        one-round game under auto-reset the backend scores, reports and re-deals them at
        once (``engine.end_and_deal``); otherwise :meth:`_finish`."""
        if not (ended.size and self.auto_reset and self.rules.rounds == 1):
            return self._finish(ended)
        s = self.state
        results = empty_results(self.batch_size)
        results.terminated[:] = s.terminated
        results.truncated[:] = s.truncated
        self.engine.end_and_deal(ended, shuffled_decks(self.rng, ended.size), results)
        results.rewards[ended] = self.rewards(ended).T
        return results

    def _finish(self, ended: np.ndarray) -> StepResult:
        rewards, _, _, scores, ranks = empty_results(self.batch_size)
        s = self.state
        if ended.size:
            self.engine.score(ended)
            if self.rules.rounds > 1:
                ended = self._advance_rounds(ended)
            if ended.size:
                s.terminated[ended] = ~s.capped[ended]
                s.truncated[ended] = s.capped[ended]
                rewards[ended] = self.rewards(ended).T
                scores[ended] = s.scores.take(ended, axis=1).T
                ranks[ended] = s.ranks.take(ended, axis=1).T
        terminated, truncated = s.terminated.copy(), s.truncated.copy()
        if self.auto_reset and ended.size:
            self._auto_reset(ended)
        return StepResult(rewards, terminated, truncated, scores, ranks)


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
            self.engine.deal(going_on, decks, starters)
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

    def rewards(self, games: np.ndarray, dtype=np.float32) -> np.ndarray:
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
        idx = game_indices(games, self.batch_size)
        if num_players is not None:
            self.state.num_players[idx] = self._validate_num_players(num_players, idx.size)
        if idx.size:
            self._auto_reset(idx)


    def _auto_reset(self, games: np.ndarray) -> None:
        clear_games(self.state, games)
        self.engine.deal(games, shuffled_decks(self.rng, games.size), np.zeros(games.size, np.int8))
