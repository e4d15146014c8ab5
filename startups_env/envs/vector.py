"""Batch adapters in which a learner holds one seat per game and opponents play the rest.

Two layers over one :class:`~startups_env.startups.simulator.Simulator`:

* :class:`SeatBatch` — pure numpy, no gymnasium or SB3: ``reset()`` / ``step(actions)`` /
  ``action_masks()`` on B games at once. Used by the native trainer (``train/selfplay.py``)
  to avoid per-env Python overheads.
* :class:`StartupsVecEnv` — a Stable-Baselines3 ``VecEnv`` over a :class:`SeatBatch`, with
  ``action_masks()`` for ``sb3_contrib.MaskablePPO``.

In every game the learner sits in a seat drawn at random when the game is dealt (so it
does not always move first), and the table size may be drawn per game too (e.g. a mix of
3-7 players). The other seats of a game are all played by one *opponent*, drawn per game
from a list handed in by the caller (an opponent pool; optional sampling weights). An
opponent is a policy (:mod:`startups_env.table.policy`): a batched callable ``opponent(obs, mask)
-> actions`` (obs float32[k, OBS_DIM] of the seat to act, mask bool[k, 19], actions int[k])
or any object with such an ``act`` method, given what its ``needs`` declare: ``public=`` (a
:class:`~startups_env.startups.state.State` of the k games holding only what the acting seat may
know) and ``history=`` (the :class:`~startups_env.startups.history.History` the batch keeps of its
games, the learner's moves included, when an opponent needs it). The opponents are seated
by a :class:`startups_env.table.driver.Table`, as in the arena, so a bot plays here as it plays
there. The library never imports a bot: callers bring their own.

``step`` applies the learner's decisions, then lets the opponents play (only the games
that wait for them advance) until the learner is to act again in every game. Finished
games are dealt again at once (new seat, table size and opponent); the finished game's
last observation, reward and result come back beside the first observation of the new
game. Observations are always the learner's view (``observe.observe`` with its seat).

Rewards: 0 on every decision but the last of a game, where the learner gets its terminal
reward under ``rules.reward`` ("win", "rank", "score" or "margin", see :class:`~startups_env.Rules`).
A game cut by the turn cap ends *truncated* (``TimeLimit.truncated`` in SB3's infos).

Contract: a game in which the learner would never act (possible only with a tiny turn
cap) is dealt again without producing an episode. An illegal learner action raises
``ValueError`` and no game changes; an opponent returning an illegal action raises
``ValueError`` naming the opponent, after which the batch must be ``reset()`` (see
:class:`SeatBatch`).

Example with sb3-contrib (three uniformly random opponents per 4-player game, 3-7 mixed
here)::

    from sb3_contrib import MaskablePPO
    from startups_env.envs.vector import StartupsVecEnv

    env = StartupsVecEnv(num_envs=64, players="3-7", seed=0)   # default opponent: random
    model = MaskablePPO("MlpPolicy", env, n_steps=128, verbose=1)
    model.learn(total_timesteps=50_000)

    obs = env.reset()
    actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)

Pass ``opponents=[fn, ...]`` (e.g. ``startups_env.agents.make_agent("greedy", seed=0)``: bots, not their
names, since the library never imports a bot) to play other bots.
Observations are raw counts (see :mod:`startups_env.startups.observe`); wrap the env in SB3's
``VecNormalize(env, norm_reward=False)`` if your policy wants normalised inputs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from startups_env.checks import check_seed, is_int
from startups_env.game import Game
from startups_env.startups import queries
from startups_env.startups.observe import HIDDEN_DIM, hidden_observation
from startups_env.startups.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from startups_env.table import Table
from startups_env.table.games import DEFAULT_GAME, game_by_name
from startups_env.table.policy import as_policy, policy_name

Opponent = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: The trainer's privileged critic input is the hidden part of the AEC env's global state
#: (``raw_env.state()``): one definition, in :mod:`startups_env.startups.observe`.
privileged_observation = hidden_observation
PRIVILEGED_DIM = HIDDEN_DIM


def parse_players(spec, low: int = MIN_PLAYERS, high: int = MAX_PLAYERS) -> tuple[int, ...]:
    """Table sizes from a spec: an int (``4``), a string ``"4"``, ``"3-7"`` (inclusive
    range) or ``"3,4,6"``, or a sequence of ints. Returns the sorted distinct sizes, each
    in ``low..high`` (default: the sizes *Startups* plays)."""
    if isinstance(spec, bool):
        raise ValueError(f"players must be an int, a range like '3-7' or a list of ints, got {spec!r}")
    if isinstance(spec, (int, np.integer)):
        sizes = [int(spec)]
    elif isinstance(spec, str):
        text = spec.strip()
        try:
            if "-" in text:
                lo, hi = (int(x) for x in text.split("-"))
                if lo > hi:
                    raise ValueError
                sizes = list(range(lo, hi + 1))
            else:
                sizes = [int(x) for x in text.split(",")]
        except ValueError:
            raise ValueError(f"players must look like '4', '3-7' or '3,4,6', got {spec!r}") from None
    elif isinstance(spec, Sequence) and len(spec) > 0 and all(is_int(x) for x in spec):
        sizes = [int(x) for x in spec]
    else:
        raise ValueError(f"players must be an int, a range like '3-7' or a list of ints, got {spec!r}")
    bad = [n for n in sizes if not low <= n <= high]
    if bad:
        raise ValueError(f"players must be between {low} and {high}, got {bad}")
    return tuple(sorted(set(sizes)))


random_legal_actions = queries.uniform_legal  # (the old name of the sampler, kept for callers)


class RandomOpponent:
    """Uniformly random legal play; the default opponent of :class:`SeatBatch`."""

    name = "random"

    def __init__(self, rng: np.random.Generator | int | None = None):
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return queries.uniform_legal(mask, self.rng)


class SeatBatch:
    """B games with the learner in one seat each; opponents play the other seats.

    Args:
        num_envs: number of games B played at once.
        opponents: a callable / agent or a list of them (default: one uniformly random
            opponent). Each game draws one of them when dealt; it plays all other seats.
        rules: :class:`~startups_env.Rules` (``num_players`` is the default table size), or
            the settings of ``game``.
        players: table sizes to draw from per game, e.g. ``4``, ``"3-7"``, ``[3, 5]``
            (default ``rules.num_players``); uniform over the listed sizes.
        opponent_weights: sampling weights over ``opponents`` (default uniform); can be
            changed later with :meth:`set_opponent_weights` (applies to games dealt later).
        seed: a non-negative int, a ``numpy.random.SeedSequence`` or None; seeds the deals,
            seats, table sizes, opponent draws and the default random opponent.
            ``reset(seed=...)`` re-seeds. Anything else raises ``ValueError`` naming ``seed``.
        history: keep the games' :class:`~startups_env.startups.history.History` for opponents that
            read it (None, default: when one of ``opponents`` needs it; True: also for
            opponents that :meth:`set_opponents` may bring later; False: never, and such an
            opponent is refused).
        game: the game played, by name (:mod:`startups_env.table.games`) or as a Game
            (default *Startups*).

    Errors: an illegal learner action or wrong-shaped ``actions`` raises ``ValueError`` and
    changes nothing. An opponent can only be judged after the learner's move is applied (it
    acts on the position that move creates), so when an opponent fails (an illegal or
    malformed action, or an exception of its own) the batch is left mid-turn. Rolling back
    would mean copying the whole state and the random streams on every ``step``, the
    training hot path, to serve a rare error; instead the batch is marked as broken and
    ``step()`` / ``action_masks()`` raise ``RuntimeError`` naming the failed opponent until
    ``reset()`` deals afresh (which would otherwise let the learner's actions be played in
    the opponents' seats).

    Attributes (all int arrays of shape [B], valid for the game being played):
        learner_seat, opponent (index into ``opponents``), num_players (property).
        decisions: total decisions applied so far, all seats (learner and opponents).
    """

    def __init__(self, num_envs: int, opponents=None, *, rules=None, players=None,
                 opponent_weights=None, seed=None, history: bool | None = None, game: str | Game = DEFAULT_GAME):
        if not is_int(num_envs) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.game = game_by_name(game)
        self.rules = self.game.default_rules() if rules is None else self.game.check_rules(rules)
        self.players = parse_players(self.rules.num_players if players is None else players,
                                     self.game.min_players, self.game.max_players)
        self._default_opponent = opponents is None
        if opponents is None:
            opponents = [RandomOpponent()]
        elif callable(opponents) or hasattr(opponents, "act") or isinstance(opponents, str):
            opponents = [opponents]
        self.opponents: list = list(opponents)
        if not self.opponents:
            raise ValueError("opponents must hold at least one opponent")
        for i, opp in enumerate(self.opponents):
            try:
                as_policy(opp)
            except ValueError as exc:
                raise ValueError(f"opponent {i}: {exc}") from None
        self._weights = self._check_weights(opponent_weights)
        b = self.num_envs
        self.learner_seat = np.zeros(b, np.int8)
        self.opponent = np.zeros(b, np.int64)
        self.episode_return = np.zeros(b, np.float32)
        self.episode_length = np.zeros(b, np.int64)  # learner decisions in the current game
        self.decisions = 0
        self._started = np.zeros(b, np.float64)  # wall clock when each game was dealt
        self.sim = self.game.make_simulator(self.rules, b, 0)
        if history is not None and not isinstance(history, bool):
            raise ValueError(f"history must be None, True or False, got {history!r}")
        # Every move of the games goes through the table (the learner's too), so that the
        # history it keeps, if any, is complete.
        self._table = Table(self.sim, self.opponents, history=history, role="opponent")
        self._seed(seed)
        self._ready = False
        self._broken: str | None = None  # why step() is refused until reset(), see the class doc

    # ------------------------------------------------------------------ setup
    def _check_weights(self, weights) -> np.ndarray:
        n = len(self.opponents)
        if weights is None:
            return np.full(n, 1.0 / n)
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise ValueError(f"opponent_weights must be {n} non-negative finite numbers with a positive sum, got {weights!r}")
        return w / w.sum()

    def set_opponent_weights(self, weights) -> None:
        """Sampling weights over ``self.opponents`` for games dealt from now on."""
        self._weights = self._check_weights(weights)

    def set_opponents(self, opponents: Sequence, weights=None) -> None:
        """Replace the opponent list (games in progress whose index no longer exists are
        re-assigned a newly drawn opponent at once). Weights as in the constructor."""
        old = self.opponents
        self.opponents = list(opponents)
        try:
            weights = self._check_weights(weights)
            self._table.set_policies(self.opponents)
        except ValueError:
            self.opponents = old
            raise
        self._weights = weights
        stale = np.flatnonzero(self.opponent >= len(self.opponents))
        if stale.size:
            self.opponent[stale] = self.rng.choice(len(self.opponents), size=stale.size, p=self._weights)

    def _seed(self, seed) -> None:
        # Independent streams for the deals, our own draws and the default opponent.
        seed = check_seed(seed)  # before anything is re-seeded
        if isinstance(seed, np.random.SeedSequence):
            # Spawn from a copy: spawning advances the caller's sequence, so the same object
            # given twice (to the constructor, then to reset) would seed different games.
            seq = np.random.SeedSequence(seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size,
                                         n_children_spawned=seed.n_children_spawned)
        else:
            seq = np.random.SeedSequence(seed)
        sim_seq, own_seq, opp_seq = seq.spawn(3)
        self.sim.rng = np.random.default_rng(sim_seq)
        self.rng = np.random.default_rng(own_seq)
        if self._default_opponent:
            self.opponents[0].rng = np.random.default_rng(opp_seq)

    # ------------------------------------------------------------------ API
    @property
    def num_players(self) -> np.ndarray:
        """int8[B] table size of each game being played."""
        return self.sim.state.num_players.copy()

    def reset(self, seed=None) -> np.ndarray:
        """Deal every game afresh (re-seeding first if ``seed`` is given) and let the
        opponents seated before the learner play. Returns obs float32[B, OBS_DIM]."""
        if seed is not None:
            self._seed(seed)
        b = self.num_envs
        self._table.reset(num_players=self.rng.choice(self.players, size=b).astype(np.int8))
        self._assign(np.arange(b))
        self._ready, self._broken = True, None
        out = self._new_results()
        try:
            self._play_opponents(out)
        except BaseException as exc:
            self._halt(exc)
            raise
        return self.observe()

    def observe(self) -> np.ndarray:
        """float32[B, obs_dim]: the learner's observation in every game."""
        return self.game.observe(self.sim.state, self.learner_seat)

    def privileged(self) -> np.ndarray:
        """float32[B, PRIVILEGED_DIM]: the hidden information of every game from the learner's
        seat (:func:`privileged_observation`), for asymmetric critics in training."""
        if self.game.privileged is None:
            return np.zeros((self.num_envs, 0), np.float32)
        return self.game.privileged(self.sim.state, self.learner_seat)

    def action_masks(self) -> np.ndarray:
        """bool[B, num_actions]: the learner's legal actions (it is to act in every game)."""
        self._check_ready()
        return self.sim.legal_mask()

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Apply the learner's actions int[B], let the opponents play, deal finished games
        again. Returns ``(obs, reward, terminated, truncated, info)``:

        obs float32[B, OBS_DIM] (of the new game where one ended), reward float32[B],
        terminated/truncated bool[B] (the game of this step ended), and info, a dict of
        arrays whose rows are valid where a game ended: ``terminal_obs`` float32[B, D]
        (the learner's last view of the finished game), ``terminal_privileged`` float32[B,
        PRIVILEGED_DIM] (:func:`privileged_observation` of it), ``score`` int16, ``rank`` int8
        (0 = won), ``num_players`` int8, ``opponent`` int64, ``episode_return`` float32,
        ``episode_length`` int64 (learner decisions), ``episode_time`` float64 (seconds);
        plus ``decisions`` (int, all seats' decisions applied in this call).

        Bad learner actions raise ``ValueError`` and change nothing; a failing opponent
        leaves the batch needing ``reset()`` (see the class doc).
        """
        self._check_ready()
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape [{self.num_envs}] (one per game), got {list(a.shape)}")
        out = self._new_results()
        before = self.decisions
        result = self._table.step(a)  # raises ValueError on an illegal action, changing nothing
        try:  # from here on the learner's move is applied: a failure leaves the batch mid-turn
            self.decisions += self.num_envs
            self.episode_length += 1
            self._collect(result, np.ones(self.num_envs, bool), out)
            self._play_opponents(out)
        except BaseException as exc:
            self._halt(exc)
            raise
        obs = self.observe()
        out["decisions"] = self.decisions - before
        reward = out.pop("reward")
        terminated = out.pop("terminated")
        truncated = out.pop("truncated")
        return obs, reward, terminated, truncated, out

    # ------------------------------------------------------------------ internals
    def _check_ready(self) -> None:
        if self._broken is not None:
            raise RuntimeError(self._broken)
        if not self._ready:
            raise RuntimeError("call reset() before step() or action_masks()")

    def _halt(self, exc: BaseException) -> None:
        """Refuse ``step()`` until ``reset()``: ``exc`` struck after the learner's move was
        applied, so some games wait for an opponent (see the class doc)."""
        k, self._table.acting = self._table.acting, None
        why = "by an error" if k is None else f"when opponent {policy_name(self.opponents[k])!r} failed"
        self._ready = False
        self._broken = (
            f"the batch was left mid-turn {why} ({type(exc).__name__}: {exc}); "
            "call reset() before step() or action_masks()"
        )

    def _new_results(self) -> dict[str, Any]:
        b = self.num_envs
        return {
            "reward": np.zeros(b, np.float32),
            "terminated": np.zeros(b, bool),
            "truncated": np.zeros(b, bool),
            "terminal_obs": np.zeros((b, self.game.obs_dim), np.float32),
            "terminal_privileged": np.zeros((b, self.game.privileged_dim), np.float32),
            "score": np.zeros(b, np.int16),
            "rank": np.full(b, -1, np.int8),
            "num_players": np.zeros(b, np.int8),
            "opponent": np.full(b, -1, np.int64),
            "episode_return": np.zeros(b, np.float32),
            "episode_length": np.zeros(b, np.int64),
            "episode_time": np.zeros(b, np.float64),
        }

    def _assign(self, games: np.ndarray) -> None:
        """Draw a learner seat and an opponent for freshly dealt games."""
        n = self.sim.state.num_players[games]
        self.learner_seat[games] = (self.rng.random(games.size) * n).astype(np.int8)
        self.opponent[games] = self.rng.choice(len(self.opponents), size=games.size, p=self._weights)
        self.episode_return[games] = 0.0
        self.episode_length[games] = 0
        self._started[games] = time.perf_counter()

    def _collect(self, result, stepped: np.ndarray, out: dict[str, Any]) -> None:
        """Record the games that ended in this simulator step and deal them again."""
        ended = np.flatnonzero(stepped & (result.terminated | result.truncated))
        if not ended.size:
            return
        s = self.sim.state
        seat = self.learner_seat[ended].astype(np.intp)
        played = self.episode_length[ended] > 0  # learner acted at least once
        ep = ended[played]
        if ep.size:
            seat_ep = seat[played]
            reward = result.rewards[ep, seat_ep]
            self.episode_return[ep] += reward
            out["reward"][ep] = reward
            out["terminated"][ep] = result.terminated[ep]
            out["truncated"][ep] = result.truncated[ep]
            finished = s.take(ep)
            out["terminal_obs"][ep] = self.game.observe(finished, seat_ep)
            if self.game.privileged is not None:
                out["terminal_privileged"][ep] = self.game.privileged(finished, seat_ep)
            out["score"][ep] = result.scores[ep, seat_ep]
            out["rank"][ep] = result.ranks[ep, seat_ep]
            out["num_players"][ep] = s.num_players[ep]
            out["opponent"][ep] = self.opponent[ep]
            out["episode_return"][ep] = self.episode_return[ep]
            out["episode_length"][ep] = self.episode_length[ep]
            out["episode_time"][ep] = time.perf_counter() - self._started[ep]
        self._table.reset_games(ended, num_players=self.rng.choice(self.players, size=ended.size).astype(np.int8))
        self._assign(ended)

    def _play_opponents(self, out: dict[str, Any]) -> None:
        """Advance every game in which an opponent is to act until the learner is."""
        s = self.sim.state
        while True:
            waiting = s.current != self.learner_seat  # finished games were dealt again already
            games = np.flatnonzero(waiting)
            if not games.size:
                return
            # Each opponent object is called once, on all its games (see startups_env.table.driver).
            actions = self._table.act(who=self.opponent, games=games)
            result = self._table.step(actions, active=waiting)
            self.decisions += games.size
            self._collect(result, waiting, out)


# ---------------------------------------------------------------------- SB3 adapter
try:  # SB3 is an optional dependency of the library ("train" extra).
    from gymnasium import spaces
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError:  # pragma: no cover - exercised only without SB3 installed
    VecEnv = None


if VecEnv is not None:

    class StartupsVecEnv(VecEnv):
        """Stable-Baselines3 ``VecEnv``: B games, the learner in one random seat each,
        opponents inside ``step_wait``. Arguments as :class:`SeatBatch` (``game=`` picks
        the game; *Startups* by default).

        Observation space ``Box(low, high, (obs_dim,), float32)`` with the game's
        observation bounds (for *Startups*
        :func:`~startups_env.startups.observe.observation_bounds`) over the table sizes drawn; action space
        ``Discrete(num_actions)`` (19 in *Startups*); ``action_masks()`` -> bool[num_envs, num_actions] (sb3-contrib's
        MaskablePPO finds it through ``env_method``). Infos of finished games carry
        ``terminal_observation``, ``episode`` ({"r", "l", "t"}), ``TimeLimit.truncated``,
        ``score``, ``rank``, ``num_players``, ``opponent`` and ``is_success`` (the learner
        won), which SB3's logger reports as the success rate.
        """

        render_mode = None

        def __init__(self, num_envs: int = 16, opponents=None, *, rules: Rules | None = None, players=None,
                     opponent_weights=None, seed=None, history: bool | None = None, game: str | Game = DEFAULT_GAME):
            self.batch = SeatBatch(num_envs, opponents, rules=rules, players=players,
                                   opponent_weights=opponent_weights, seed=seed, history=history, game=game)
            game = self.batch.game
            low, high = game.observation_bounds(self.batch.rules, self.batch.players)  # over the table sizes drawn
            observation_space = spaces.Box(low, high, (game.obs_dim,), np.float32)
            super().__init__(num_envs, observation_space, spaces.Discrete(game.num_actions))
            self._actions: np.ndarray | None = None
            self._seed_pending = seed  # checked by SeatBatch above

        # -- VecEnv API
        def seed(self, seed: int | None = None) -> list[int | None]:
            """Seeds the next ``reset()`` (all games draw from one seeded stream). ``seed``
            is None or a non-negative int, checked here (``ValueError``) rather than at that
            reset, where the error would point away from the bad value."""
            seed = check_seed(seed, sequence_ok=False)
            self._seed_pending = seed
            return [None if seed is None else seed + i for i in range(self.num_envs)]

        def reset(self) -> np.ndarray:
            # The pending seed is dropped only once used: a reset that fails (e.g. an opponent
            # error) keeps it for the next one instead of silently running unseeded.
            obs = self.batch.reset(seed=self._seed_pending)
            self._seed_pending = None
            self._reset_seeds()
            self._reset_options()
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            """Takes what SB3 passes for a ``Discrete`` space: int[num_envs] (or
            int[num_envs, 1], or a list of ints). Anything else raises ``ValueError`` before
            anything is stored: reshaping would let a [2, 2] batch pass for 4 envs, and
            casting would play 0.7 as 0. SB3's own paths (``predict``, the policy's sampled
            actions, ``action_space.sample()``) always give integers, so floats are refused
            even when whole. Action ids are checked by the simulator in ``step_wait``, which
            raises and changes no game."""
            n = self.num_envs
            try:
                a = np.asarray(actions)
            except (ValueError, TypeError):  # e.g. a ragged list
                raise ValueError(f"actions must be {n} ints (shape [{n}] or [{n}, 1]), got {actions!r}") from None
            if a.shape not in ((n,), (n, 1)):
                raise ValueError(f"actions must have shape [{n}] or [{n}, 1] (one per env), got {list(a.shape)}")
            if a.dtype.kind not in "iu":  # signed or unsigned integers (bool is kind "b")
                raise ValueError(f"actions must be integers, got dtype {a.dtype}: {a.ravel()[:10].tolist()}")
            self._actions = a.reshape(n).astype(np.int64)  # a copy: the caller may reuse its buffer

        def step_wait(self):
            if self._actions is None:
                raise RuntimeError("step_async must be called before step_wait")
            actions, self._actions = self._actions, None
            obs, reward, terminated, truncated, info = self.batch.step(actions)
            dones = terminated | truncated
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            for i in np.flatnonzero(dones):
                infos[i] = {
                    "terminal_observation": info["terminal_obs"][i],
                    "episode": {
                        "r": float(info["episode_return"][i]),
                        "l": int(info["episode_length"][i]),
                        "t": round(float(info["episode_time"][i]), 6),
                    },
                    "TimeLimit.truncated": bool(truncated[i]),
                    "is_success": bool(info["rank"][i] == 0),
                    "score": int(info["score"][i]),
                    "rank": int(info["rank"][i]),
                    "num_players": int(info["num_players"][i]),
                    "opponent": int(info["opponent"][i]),
                }
            return obs, reward, dones, infos

        def action_masks(self) -> np.ndarray:
            """bool[num_envs, num_actions]: the learner's legal actions."""
            return self.batch.action_masks()

        def close(self) -> None:
            pass

        def _indices(self, indices) -> list[int]:
            if indices is None:
                return list(range(self.num_envs))
            if isinstance(indices, (int, np.integer)):
                return [int(indices)]
            return [int(i) for i in indices]

        def get_attr(self, attr_name: str, indices=None) -> list[Any]:
            value = getattr(self, attr_name)  # AttributeError if absent, as SB3 expects
            return [value for _ in self._indices(indices)]

        def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
            setattr(self, attr_name, value)

        def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
            idx = self._indices(indices)
            if method_name == "action_masks":  # one row per env, as sb3-contrib stacks them
                masks = self.action_masks()
                return [masks[i] for i in idx]
            result = getattr(self, method_name)(*method_args, **method_kwargs)
            return [result for _ in idx]

        def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
            return [False for _ in self._indices(indices)]

    __all__ = ["PRIVILEGED_DIM", "RandomOpponent", "SeatBatch", "StartupsVecEnv", "parse_players",
               "privileged_observation", "random_legal_actions"]
else:  # pragma: no cover
    __all__ = ["PRIVILEGED_DIM", "RandomOpponent", "SeatBatch", "parse_players", "privileged_observation",
               "random_legal_actions"]
