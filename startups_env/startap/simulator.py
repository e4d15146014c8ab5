"""The batch simulator of *Стартап*: B games in lockstep, each at its own seat and decision;
one :meth:`Simulator.step` applies one decision in every game.

It has the surface of the Startups simulator that the table driver uses (``batch_size``,
``state`` with ``num_players``, ``current``, ``done`` and ``take``, ``legal_mask``,
``step``, ``reset``, ``reset_games``, ``done``, ``rewards``); the rules are those of
docs/startap.md, applied by :mod:`startups_env.startap.moves` and
:mod:`startups_env.startap.engine`.
"""

from __future__ import annotations

import numpy as np

from startups_env.checks import active_games, check_seed, game_indices, is_int
from startups_env.startap.backend import make_engine
from startups_env.startap.cards import NUM_INCIDENTS, NUM_OPPORTUNITIES, NUM_PROJECTS
from startups_env.startap.rules import MAX_PLAYERS, MIN_PLAYERS, NUM_ACTIONS, Rules, action_to_string
from startups_env.startap.state import State, StepResult

P = MAX_PLAYERS
_GAME_ZERO = np.zeros(1, np.intp)
DECK_SIZES = {"project_deck": NUM_PROJECTS, "opportunity_deck": NUM_OPPORTUNITIES, "incident_deck": NUM_INCIDENTS}


_IN_ORDER = {name: np.arange(size) for name, size in DECK_SIZES.items()}


def shuffled_decks(rng: np.random.Generator, count: int) -> dict[str, np.ndarray]:
    """Fresh shuffles of the three decks for ``count`` games: ``{"project_deck": int8[count,
    29], "opportunity_deck": int8[count, 50], "incident_deck": int8[count, 42]}``. (Shuffled
    as int64, numpy's fast path, then narrowed: the same draws and the same orders.)"""
    return {name: rng.permuted(np.broadcast_to(cards, (count, cards.size)), axis=1).astype(np.int8)
            for name, cards in _IN_ORDER.items()}


def uniform_legal(mask, rng: np.random.Generator) -> np.ndarray:
    """int64[B]: one uniformly random legal action per row of ``mask`` bool[B, A] (0 where a
    row has none), from one draw of ``rng`` per row."""
    mask = np.asarray(mask, bool)
    counts = mask.sum(axis=1)
    pick = (rng.random(mask.shape[0]) * counts).astype(np.int64)
    chosen = (mask & (np.cumsum(mask, axis=1) - 1 == pick[:, None])).argmax(axis=1)
    return np.where(counts > 0, chosen, 0)


class Simulator:
    """B games of *Стартап*; one :meth:`step` applies one decision to each.

    Example::

        sim = Simulator(batch_size=256, num_players=4, seed=0)
        while not sim.done.all():
            sim.step(sim.random_actions())
    """

    def __init__(self, batch_size: int = 1, *, num_players=None, seed=None, rules: Rules | None = None,
                 backend: str | None = None):
        if not is_int(batch_size) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if rules is not None and not isinstance(rules, Rules):
            raise ValueError(f"rules must be a startups_env.startap.rules.Rules, got {type(rules).__name__}")
        #: The settings (the reward scheme); ``num_players`` (an int or int[B]) defaults to
        #: rules.num_players.
        self.rules = rules if rules is not None else Rules()
        num_players = self.rules.num_players if num_players is None else num_players
        self.batch_size = int(batch_size)
        self.rng = np.random.default_rng(check_seed(seed, generator_ok=True))
        self.state = State.empty(self.batch_size)
        self._everyone: np.ndarray | None = None  # (every game active: a step's default)
        #: The engine of the rules, chosen once: ``backend`` "numpy" (the reference), "numba"
        #: (compiled), or None (the fastest installed); see startap/backend.py.
        self.engine = make_engine(backend, self)
        self.reset(num_players=num_players)

    # ------------------------------------------------------------ dealing
    def _players(self, num_players, count: int) -> np.ndarray:
        arr = np.asarray(num_players)
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or arr.ndim > 1 or (
                arr.ndim == 1 and arr.shape[0] != count):
            raise ValueError(f"num_players must be an int or an int array of shape [{count}], got {num_players!r}")
        if ((arr < MIN_PLAYERS) | (arr > MAX_PLAYERS)).any():
            raise ValueError(f"num_players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {np.unique(arr).tolist()}")
        return np.broadcast_to(arr, (count,)).astype(np.int8)

    def shuffled_decks(self, count: int) -> dict[str, np.ndarray]:
        """Fresh shuffles of the three decks for ``count`` games, from the generator."""
        return shuffled_decks(self.rng, count)

    def _check_decks(self, decks, count: int) -> dict[str, np.ndarray]:
        if not isinstance(decks, dict) or set(decks) != set(DECK_SIZES):
            raise ValueError(f"decks must be a dict with keys {sorted(DECK_SIZES)}")
        checked = {}
        for name, size in DECK_SIZES.items():
            arr = np.asarray(decks[name])
            if arr.shape != (count, size) or not np.issubdtype(arr.dtype, np.integer) or not (
                    np.sort(arr, axis=1) == np.arange(size)).all():
                raise ValueError(f"decks[{name!r}] must be int[{count}, {size}], each row a permutation of 0..{size - 1}")
            checked[name] = arr.astype(np.int8)
        return checked

    def _deal(self, games: np.ndarray, players: np.ndarray, decks: dict[str, np.ndarray]) -> None:
        self.engine.deal(np.ascontiguousarray(games, np.intp), players, decks)

    def reset(self, seed=None, *, num_players=None, decks=None) -> None:
        """Deal every game afresh. seed: an int, a Generator or None (keep the generator);
        num_players: an int or int[B] (default: keep each game's size); decks: optional
        ``{"project_deck": int[B, 29], "opportunity_deck": int[B, 50], "incident_deck":
        int[B, 42]}`` in dealing order (seat i gets cards 3i..3i+2 of the first two)."""
        b = self.batch_size
        seed = check_seed(seed, generator_ok=True)
        players = self._players(self.state.num_players if num_players is None else num_players, b)
        checked = None if decks is None else self._check_decks(decks, b)
        if isinstance(seed, np.random.Generator):
            self.rng = seed
        elif seed is not None:
            self.rng = np.random.default_rng(seed)
        self._deal(np.arange(b), players, checked or self.shuffled_decks(b))

    def reset_games(self, games, *, num_players=None) -> None:
        """Deal fresh games in ``games`` (distinct indices) only; others are untouched."""
        idx = game_indices(games, self.batch_size)
        players = self._players(self.state.num_players[idx] if num_players is None else num_players, idx.size)
        if idx.size:
            self._deal(idx, players, self.shuffled_decks(idx.size))

    # ------------------------------------------------------------ playing
    @property
    def done(self) -> np.ndarray:
        """bool[B]: the game is over and waits for a reset."""
        return self.state.done

    def legal_mask(self) -> np.ndarray:
        """bool[B, NUM_ACTIONS] (a fresh copy); all False in finished games."""
        return self.engine.mask().copy()

    def random_actions(self, mask: np.ndarray | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
        """int64[B]: a uniformly random legal action per game (0 in finished games), from one
        draw of ``rng`` (default: the simulator's generator) per game; ``mask``: optional
        bool[k, NUM_ACTIONS] to sample from instead of the legal masks (k actions)."""
        if mask is None:
            mask = self.engine.mask()
        else:
            mask = np.asarray(mask)
            if mask.dtype != bool or mask.ndim != 2 or mask.shape[1] != NUM_ACTIONS:
                raise ValueError(f"mask must be a bool array of shape [k, {NUM_ACTIONS}], got {mask.dtype} "
                                 f"{list(mask.shape)}")
        sample = self.engine.sample or uniform_legal
        return sample(mask, self.rng if rng is None else rng)

    def _inputs(self, actions, active) -> tuple[np.ndarray, np.ndarray]:
        """A step's arguments checked for shape and type: int64[B] actions, bool[B] active."""
        b = self.batch_size
        arr = np.asarray(actions)
        if arr.shape != (b,):
            raise ValueError(f"actions must have shape [{b}] (one per game), got {list(arr.shape)}")
        if arr.dtype.kind not in "iu":
            raise ValueError(f"actions must be integers, got dtype {arr.dtype}")
        if active is None:
            if self._everyone is None:
                self._everyone = np.ones(b, bool)
            act = self._everyone
        else:
            act = np.ascontiguousarray(active_games(active, b))
        return np.ascontiguousarray(arr, np.int64), act

    def _refuse(self, actions: np.ndarray, active: np.ndarray):
        """The ValueError for a step whose actions the engine found out of range or illegal
        in some active running game, naming them."""
        g = np.flatnonzero(active & ~self.state.done)
        a = actions[g]
        bad = (a < 0) | (a >= NUM_ACTIONS)
        if bad.any():
            return ValueError(f"actions out of range [0, {NUM_ACTIONS}) in games {g[bad][:10].tolist()}: "
                              f"{a[bad][:10].tolist()}; no game changed")
        illegal = ~self.engine.mask()[g, a]
        first = int(a[illegal][0])
        return ValueError(f"illegal actions in games {g[illegal][:10].tolist()}: {a[illegal][:10].tolist()} "
                          f"(first: {action_to_string(first)}); no game changed")

    def step(self, actions, active=None) -> StepResult:
        """Apply one decision in every running game (``active``: optional bool[B], where False
        the game waits). An illegal action or a bad shape raises ValueError and no game
        changes."""
        actions, active = self._inputs(actions, active)
        ended = self.engine.step(actions, active)
        if ended is None:
            raise self._refuse(actions, active)
        return self._results(ended)

    def step_one(self, action: int) -> StepResult | None:
        """The env's path, in a batch of one: play ``action`` (an int, legal: the caller has
        checked it against :meth:`legal_mask`) in game 0; the StepResult if that ended the
        game, else None."""
        return self._results(_GAME_ZERO) if self.engine.step_one(action) else None

    def _results(self, ended: np.ndarray) -> StepResult:
        s = self.state
        b = self.batch_size
        rewards = np.zeros((b, P), np.float32)
        scores = np.zeros((b, P), np.int16)
        ranks = np.full((b, P), -1, np.int8)
        if ended.size:
            rewards[ended] = self.rewards(ended).T
            ranks[ended] = s.ranks[ended]
            scores[ended] = np.where(ranks[ended] >= 0, s.coins[ended], 0)
        return StepResult(rewards, s.terminated.copy(), s.truncated.copy(), scores, ranks)

    def rewards(self, games, dtype=np.float32) -> np.ndarray:
        """[P, n] rewards of the ranked seats of ``games`` by ``rules.reward``: "win", +1 to
        the winner and -1/(N-1) to each other seat; "rank", 1 - 2 * rank / (N-1); seats that
        share a place (a tie) share the mean of their ranks' rewards. A seat is ranked once
        the game is over, or once it is out (a running game's eliminated seats: what the
        PettingZoo env pays them when they leave); 0 for the others and for empty seats."""
        games = np.asarray(games, np.intp)
        return self.engine.rewards(games, self.rules.reward == "rank").T.astype(dtype)
