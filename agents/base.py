"""The batch agent interface and two drivers (agents are built by name in
:mod:`startups_env.agents.registry`, which no bot imports).

An :class:`Agent` picks one legal action in each of B games at once from what its player
may know: the observation vector (``startups_env.observe``) and, for agents that sample
hidden information (search), the :func:`startups_env.core.public_state`. Agents never
receive a full :class:`~startups_env.core.State`, so they cannot peek at hidden cards.

Drivers:

* :func:`act_for_seats` chooses the next action in every running game of a
  :class:`~startups_env.core.Simulator`, where each seat of each game is played by one
  of a list of agents; each agent is called once per step on all the games it is to move
  in (this is what the arena and the search bot's opponents model use).
* :func:`play_aec_game` lets agents play one game of the PettingZoo AEC environment.

Both keep a :class:`PutDownLog` for agents that read the table's history
(``reads_put_downs``): every seat's last two put-downs, as the whole table saw them.
"""

from __future__ import annotations

import abc
import time
from typing import TYPE_CHECKING

import numpy as np

from startups_env.core import State, check_seed, public_state
from startups_env.observe import observe
from startups_env.rules import MAX_PLAYERS, NUM_ACTIONS

if TYPE_CHECKING:  # pragma: no cover
    from startups_env.core import Simulator

class Agent(abc.ABC):
    """A policy over a batch of games.

    Attributes:
        name: a short display name (the arena prints it).
        needs_public_state: if True, callers must pass
            ``public=startups_env.core.public_state(state, seats)`` to :meth:`act`.
        reads_put_downs: if True (with ``needs_public_state``), callers that keep a
            :class:`PutDownLog` of the games also pass ``put_downs=log.take(games)`` to
            :meth:`act` (the drivers of this module do; other callers may omit it).
    """

    name: str = "agent"
    needs_public_state: bool = False
    reads_put_downs: bool = False

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(check_seed(seed, generator_ok=True))

    @abc.abstractmethod
    def act(self, obs: np.ndarray, mask: np.ndarray, public: State | None = None) -> np.ndarray:
        """obs float32[B, OBS_DIM] (``startups_env.observe``), mask bool[B, 19] (every row of
        a running game has a legal action) -> int64[B] legal actions. Agents with
        ``reads_put_downs`` also accept ``put_downs=`` (a :class:`PutDownLog` of the same
        games, or None)."""

    def seed(self, seed: int | None) -> None:
        """Reseed the agent's own generator (agents never use global random state)."""
        self.rng = np.random.default_rng(check_seed(seed, generator_ok=True))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def check_act_inputs(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate the arguments of :meth:`Agent.act`; returns them as float32 / bool arrays."""
    obs = np.asarray(obs)
    mask = np.asarray(mask)
    if obs.ndim != 2:
        raise ValueError(f"obs must be float32[B, OBS_DIM], got shape {list(obs.shape)}")
    if mask.dtype != bool or mask.ndim != 2 or mask.shape != (obs.shape[0], NUM_ACTIONS):
        raise ValueError(f"mask must be bool[{obs.shape[0]}, {NUM_ACTIONS}], got {mask.dtype} {list(mask.shape)}")
    if not mask.any(axis=1).all():
        bad = np.flatnonzero(~mask.any(axis=1))
        raise ValueError(f"mask rows {bad[:10].tolist()} have no legal action (finished games must not be passed)")
    # Deliberately no NaN/inf test of obs: it would read all B x OBS_DIM values (about 1-2 us
    # at B=1, 70-110 us at B=4096 measured), several times the cost of the checks above and
    # 5-20% of the random bot's whole act; observe() never produces them.
    return obs.astype(np.float32, copy=False), mask


class PutDownLog:
    """Every seat's last two put-downs in each of B games, as the whole table saw them.

    A put-down is public: everyone sees which card went where. What it says about the
    player's hidden hand depends on the table at that moment, so the log keeps, per seat
    and game, the fully public state just before each of that seat's last two put-downs
    (every hand reduced to its publicly known cards: :func:`~startups_env.core.public_state`
    for no seat), the put-down actions, and the take of the latest put-down's turn (a draw
    or a market take: public too). Nothing hidden is stored, so any agent may read it.

    Attributes:
        state, earlier_state: States of ``MAX_PLAYERS * B`` rows (row ``seat * B + game``)
            before the latest and the one-before-latest put-down.
        action, earlier_action: int64[MAX_PLAYERS, B], those put-down action ids; -1 where
            the seat has not put down that many cards in the game yet.
        take_action: int64[MAX_PLAYERS, B], the take (0 draw, 1-6 market) of the turn of
            the latest put-down.
    """

    def __init__(self, batch_size: int):
        self.state = State.empty(MAX_PLAYERS * batch_size)
        self.earlier_state = State.empty(MAX_PLAYERS * batch_size)
        self.action = np.full((MAX_PLAYERS, batch_size), -1, np.int64)
        self.earlier_action = self.action.copy()
        self.take_action = self.action.copy()
        self._pending_take = self.action.copy()  # the take of each seat's turn in progress

    @property
    def batch_size(self) -> int:
        return self.action.shape[1]

    def record(self, state: State, actions: np.ndarray) -> None:
        """Log the takes and put-downs among ``actions`` (int[B], about to be played in
        ``state``)."""
        actions = np.asarray(actions)
        running = ~state.done
        takes = np.flatnonzero((state.phase == 0) & running)
        self._pending_take[state.current[takes].astype(np.intp), takes] = actions[takes]
        games = np.flatnonzero((state.phase == 1) & running)
        if games.size == 0:
            return
        seat = state.current[games].astype(np.intp)
        rows = seat * self.batch_size + games
        self.earlier_state.put(rows, self.state.take(rows))
        self.earlier_action[seat, games] = self.action[seat, games]
        self.state.put(rows, public_state(state.take(games), np.full(games.size, -1)))
        self.action[seat, games] = actions[games]
        self.take_action[seat, games] = self._pending_take[seat, games]

    def reset(self, games) -> None:
        """Forget the given games (call it when a game is dealt again)."""
        games = np.asarray(games, np.intp)
        for entries in (self.action, self.earlier_action, self.take_action, self._pending_take):
            entries[:, games] = -1

    def take(self, games) -> "PutDownLog":
        """A log of the selected games (int[n], in that order)."""
        games = np.asarray(games, np.intp)
        view = PutDownLog.__new__(PutDownLog)
        rows = (np.arange(MAX_PLAYERS)[:, None] * self.batch_size + games[None, :]).reshape(-1)
        view.state, view.earlier_state = self.state.take(rows), self.earlier_state.take(rows)
        view.action, view.earlier_action = self.action[:, games], self.earlier_action[:, games]
        view.take_action, view._pending_take = self.take_action[:, games], self._pending_take[:, games]
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


def act_for_seats(sim: Simulator, agents_by_seat, assignment: np.ndarray | None = None, *,
                  timings: dict | None = None, log: PutDownLog | None = None, record: bool = True) -> np.ndarray:
    """int64[B]: the next action in every game of ``sim`` (0 in finished games).

    agents_by_seat: a list of agents. By default seat s of every game is played by
        ``agents_by_seat[s]``; with ``assignment`` (int[B, N], N >= each game's table size),
        seat s of game g is played by ``agents_by_seat[assignment[g, s]]`` (the arena uses
        this to rotate seats).

    Each distinct agent object is called once, on all the games in which one of its seats
    is to move, with those players' observations and legal masks (and their public states
    if it asks for them). Raises ValueError if an agent returns an illegal action.

    timings: optional dict; for each agent called, ``timings[i]`` (i = the agent's first
    index in ``agents_by_seat``) accumulates ``[decisions, seconds inside act()]``.

    log: the :class:`PutDownLog` of ``sim``'s games, for agents that read it; the takes and
    put-downs chosen here are recorded in it (as if played: call ``sim.step`` with the result),
    unless ``record`` is False: then the caller records what it plays (``log.record``), e.g.
    when the actions chosen here only label the decisions and others are played.
    """
    state = sim.state
    b = state.batch_size
    agents = list(agents_by_seat)
    if not agents:
        raise ValueError("agents_by_seat is empty")
    current = state.current.astype(np.intp)
    if assignment is None:
        if (state.num_players > len(agents)).any():
            raise ValueError(f"{len(agents)} agents for tables of up to {int(state.num_players.max())} players")
        who = current
    else:
        assignment = np.asarray(assignment)
        if assignment.ndim != 2 or assignment.shape[0] != b or assignment.shape[1] < int(state.num_players.max()):
            raise ValueError(f"assignment must be int[{b}, >= table size], got shape {list(assignment.shape)}")
        who = assignment[np.arange(b), current].astype(np.intp)
        if who.min() < 0 or who.max() >= len(agents):
            raise ValueError(f"assignment refers to agents outside 0..{len(agents) - 1}")
    actions = np.zeros(b, np.int64)
    running = ~state.done
    if not running.any():
        return actions
    mask = sim.legal_mask()
    obs = observe(state)  # the player to act in every game (finished games: harmless rows)
    # Group the entries by agent object, so one agent playing several seats is called once.
    groups: dict[int, list[int]] = {}
    for index, agent in enumerate(agents):
        groups.setdefault(id(agent), []).append(index)
    for indices in groups.values():
        agent = agents[indices[0]]
        games = np.flatnonzero(running & np.isin(who, indices))
        if games.size == 0:
            continue
        extra = {}
        if agent.needs_public_state:
            sub = state.take(games)
            extra["public"] = public_state(sub, sub.current)
            if agent.reads_put_downs and log is not None:
                extra["put_downs"] = log.take(games)
        started = time.perf_counter()
        chosen = np.asarray(agent.act(obs[games], mask[games], **extra))
        if timings is not None:
            entry = timings.setdefault(indices[0], [0, 0.0])
            entry[0] += games.size
            entry[1] += time.perf_counter() - started
        if chosen.shape != (games.size,):
            raise ValueError(f"agent {agent.name!r} returned shape {list(chosen.shape)} for {games.size} games")
        ok = mask[games, np.clip(chosen, 0, NUM_ACTIONS - 1)] & (chosen >= 0) & (chosen < NUM_ACTIONS)
        if not ok.all():
            bad = np.flatnonzero(~ok)[:5]
            raise ValueError(
                f"agent {agent.name!r} chose illegal actions {chosen[bad].tolist()} in games {games[bad].tolist()}"
            )
        actions[games] = chosen
    if log is not None and record:
        log.record(state, actions)
    return actions


def _aec_simulator(env):
    """The Simulator behind a PettingZoo AEC env, for agents that need the public state."""
    base = getattr(env, "unwrapped", env)
    for attr in ("sim", "simulator", "_sim"):
        sim = getattr(base, attr, None)
        if sim is not None and hasattr(sim, "state"):
            return sim
    raise ValueError("this environment does not expose its Simulator (env.unwrapped.sim); "
                     "agents with needs_public_state cannot play it")


def play_aec_game(env, agents: dict, *, seed: int | None = None) -> dict:
    """Play one game of a PettingZoo AEC env (``startups_env.aec.env(...)``) with the given
    agents (a dict from env agent name, ``player_i``, to :class:`Agent`).

    Each agent sees its observation dict (``observation``, ``action_mask``) as a batch of
    one. Returns ``{"rewards": {name: cumulative reward}, "steps": decisions played,
    "truncated": bool, "infos": {name: last info}}``.
    """
    env.reset(seed=seed)
    missing = [a for a in env.possible_agents if a not in agents]
    if missing:
        raise ValueError(f"no agent given for {missing}; env agents are {list(env.possible_agents)}")
    rewards = {a: 0.0 for a in env.possible_agents}
    log = PutDownLog(1) if any(agent.reads_put_downs for agent in agents.values()) else None
    infos: dict = {}
    steps = 0
    truncated = False
    for name in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        rewards[name] += float(reward)
        infos[name] = info
        truncated = truncated or bool(trunc)
        if term or trunc:
            env.step(None)
            continue
        agent = agents[name]
        observation = np.asarray(obs["observation"], np.float32)[None]
        mask = np.asarray(obs["action_mask"]).astype(bool)[None]
        extra = {}
        if agent.needs_public_state or log is not None:
            sim = _aec_simulator(env)
            if agent.needs_public_state:
                extra["public"] = public_state(sim.state, sim.state.current)
                if agent.reads_put_downs:
                    extra["put_downs"] = log.take([0])
        action = int(np.asarray(agent.act(observation, mask, **extra))[0])
        if log is not None:
            log.record(sim.state, np.array([action]))
        env.step(action)
        steps += 1
    return {"rewards": rewards, "steps": steps, "truncated": truncated, "infos": infos}
