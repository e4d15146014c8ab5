"""The one table driver: policies seated at a batch of games.

Every tool that lets bots play runs on :class:`Table` (or, for one PettingZoo game, on
:func:`play_aec_game`): the arena and ladder (:func:`act_for_seats`), the vector env's
opponents (:class:`startups_env.envs.vector.SeatBatch`), the replay recorder
(:func:`startups_env.tools.replay.record_game`) and the terminal game. So a bot behaves the
same wherever it sits: it is called the same way, given what it declares it needs
(:mod:`startups_env.table.policy`: the public state, the history the table keeps, as
the game defines them: :mod:`startups_env.table.games`), and its answers are checked the same way.

A table

* seats a list of *entries* (policies, or plain callables ``f(obs, mask)``): entry
  ``assignment[g, s]`` plays seat s of game g (default: entry s plays seat s), or the
  caller says per step which entry is to move in each game (``act(who=...)``);
* calls each distinct policy object once per step, on all the games in which one of its
  entries is to move, in the order of its first entry, the games in ascending order;
* checks what comes back: int[k] legal action ids, else ``ValueError`` naming the
  policy, its entry, the games and the seats;
* keeps the games' history (in *Startups* a :class:`~startups_env.startups.history.History`) when a policy needs it (it
  must see every decision: step through :meth:`Table.step`, or log what you play
  yourself with :meth:`Table.record`);
* optionally times the policies (decisions and seconds inside ``act``, per entry).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from startups_env.table.games import game_of
from startups_env.table.policy import as_policy, needs_of, policy_name


class _Seat:
    """One distinct policy object at a table: the entries it plays, what it needs, and
    the checked call."""

    def __init__(self, policy, label: str, entries: list[int]):
        self.source = policy
        self.policy = as_policy(policy)
        self.needs = needs_of(self.policy)
        self.name = policy_name(policy)
        self.label = label
        self.entries = entries

    def ask(self, obs: np.ndarray, mask: np.ndarray, games: np.ndarray, seats: np.ndarray, *,
            public=None, history=None, timings: dict | None = None) -> np.ndarray:
        """The policy's checked actions int64[k] for k games (obs[k, D], mask bool[k, A];
        ``games`` and ``seats`` name them in errors)."""
        given = {}
        if "public" in self.needs:
            if public is None:
                raise ValueError(f"{self.label} needs the public state, which this driver does not give")
            given["public"] = public
        if "history" in self.needs:
            if history is None:
                raise ValueError(f"{self.label} reads the table's history (needs 'history'), which this driver "
                                 "does not keep: give it the game's history of the games that has seen every "
                                 "decision (e.g. play through startups_env.table.driver.Table)")
            given["history"] = history
        started = time.perf_counter()
        chosen = self.policy.act(obs, mask, **given)
        if timings is not None:
            entry = timings.setdefault(self.entries[0], [0, 0.0])
            entry[0] += games.size
            entry[1] += time.perf_counter() - started
        chosen = np.asarray(chosen)
        if chosen.shape != (games.size,) or chosen.dtype.kind not in "iu":
            raise ValueError(f"{self.label} returned {chosen.dtype} {list(chosen.shape)} for games "
                             f"{games[:10].tolist()} (seats {seats[:10].tolist()}); a policy returns "
                             f"int[{games.size}]: one integer action id per game")
        ok = (chosen >= 0) & (chosen < mask.shape[1])
        ok[ok] = mask[np.flatnonzero(ok), chosen[ok]]
        if not ok.all():
            bad = np.flatnonzero(~ok)[:10]
            raise ValueError(f"{self.label} chose illegal actions {chosen[bad].tolist()} in games "
                             f"{games[bad].tolist()} (seats {seats[bad].tolist()})")
        return chosen.astype(np.int64, copy=False)


def _seats(policies, role: str) -> list[_Seat]:
    """The distinct policy objects of ``policies``, in the order of their first entry."""
    entries = list(policies)
    if not entries:
        raise ValueError(f"no {role}s to seat")
    by_object: dict[int, list[int]] = {}
    for index, policy in enumerate(entries):
        by_object.setdefault(id(policy), []).append(index)
    seats = []
    for indices in by_object.values():
        policy = entries[indices[0]]
        try:
            seats.append(_Seat(policy, f"{role} {indices[0]} ({policy_name(policy)})", indices))
        except ValueError as exc:
            raise ValueError(f"{role} {indices[0]}: {exc}") from None
    return seats


class Table:
    """Policies seated at the games of one game's simulator (any game of
    :mod:`startups_env.table.games`, e.g. a :class:`~startups_env.startups.simulator.Simulator`).

    Args:
        sim: the games.
        policies: the entries: policies (see :mod:`startups_env.table.policy`) or callables
            ``f(obs, mask)``; one object may be several entries (it is still called once
            per step).
        assignment: int[B, N] (N >= each game's table size): entry ``assignment[g, s]``
            plays seat s of game g. Default: entry s plays seat s in every game.
        history: None (default): keep the game's history of the games (for *Startups* a
            :class:`~startups_env.startups.history.History`) if a policy needs one; True /
            False: keep one / none; or a history the caller keeps (e.g. across tables of
            the same games).
        timings: a dict to accumulate, per policy, ``timings[first entry] = [decisions,
            seconds inside act]`` (default: not timed).
        role: what the entries are called in errors ("agent", "opponent", ...).

    Attributes:
        history: the History kept (None without one).
        acting: the first entry of the policy being asked, while it is (None otherwise);
            a caller that catches an error can name the policy that failed.
    """

    def __init__(self, sim, policies: Sequence, *, assignment=None, history=None,
                 timings: dict | None = None, role: str = "policy"):
        self.game = game_of(sim)  # a ValueError for anything but a game's simulator
        self.sim = sim
        self.role = role
        self.timings = timings
        self.acting: int | None = None
        self._set(policies)
        self.assignment = self._check_assignment(assignment)
        self.history = self._check_history(history)

    def _check_history(self, history):
        """The history to keep: the caller's, a new one, or None (see the class doc)."""
        kind = self.game.history
        if kind is not None and isinstance(history, kind):
            if history.batch_size != self.sim.batch_size:
                raise ValueError(f"history holds {history.batch_size} games, the simulator {self.sim.batch_size}")
            return history
        if history is not None and not isinstance(history, bool):
            wanted = "a bool" if kind is None else f"a bool or a {kind.__module__}.{kind.__name__}"
            raise ValueError(f"history must be None, {wanted}, got {history!r}")
        keep = history if history is not None else any("history" in seat.needs for seat in self._by_object)
        if keep and kind is None:
            raise ValueError(f"{self.game.title} keeps no history of its games, which a policy here reads or "
                             "history=True asks for")
        return kind(self.sim.batch_size) if keep else None

    # ------------------------------------------------------------------ seating
    def _set(self, policies) -> None:
        self.policies = list(policies)
        self._by_object = _seats(self.policies, self.role)

    def set_policies(self, policies: Sequence) -> None:
        """Seat other entries (same games, same assignment rules). A policy that needs the
        history is refused (ValueError, nothing changed) where the table keeps none: the
        decisions played so far were not logged."""
        seats = _seats(policies, self.role)
        if self.history is None:
            reading = [seat.label for seat in seats if "history" in seat.needs]
            if reading:
                raise ValueError(f"{', '.join(reading)} read the table's history, which this table does not keep "
                                 "(create it with history=True)")
        self.policies, self._by_object = list(policies), seats

    def _check_assignment(self, assignment):
        if assignment is None:
            return None
        b = self.sim.batch_size
        assignment = np.asarray(assignment)
        state = self.sim.state
        if (assignment.ndim != 2 or assignment.shape[0] != b or assignment.shape[1] < int(state.num_players.max())
                or assignment.dtype.kind not in "iu"):
            raise ValueError(f"assignment must be int[{b}, >= table size], got {assignment.dtype} "
                             f"{list(assignment.shape)}")
        if assignment.min() < 0 or assignment.max() >= len(self.policies):
            raise ValueError(f"assignment refers to entries outside 0..{len(self.policies) - 1}")
        return assignment.astype(np.intp)

    def _who(self) -> np.ndarray:
        """int[B]: the entry to move in every game."""
        state = self.sim.state
        current = state.current.astype(np.intp)
        if self.assignment is None:
            if (state.num_players > len(self.policies)).any():
                raise ValueError(f"{len(self.policies)} entries for tables of up to {int(state.num_players.max())} "
                                 "players: without an assignment, entry s plays seat s")
            return current
        return self.assignment[np.arange(self.sim.batch_size), current]

    # ------------------------------------------------------------------ play
    def act(self, who=None, games=None) -> np.ndarray:
        """int64[B]: the next action of the player to act in ``games`` (int indices of
        running games; default: every running game), 0 elsewhere; nothing is played.

        who: int[B], the entry to move in each game (default: from the assignment, or entry
        = seat). Raises ValueError naming the policy, the games and the seats if a policy
        returns anything but legal action ids (int[k])."""
        sim = self.sim
        state = sim.state
        b = sim.batch_size
        actions = np.zeros(b, np.int64)
        if games is None:
            games = np.flatnonzero(~state.done)
        else:
            games = np.asarray(games, np.intp)
            if games.ndim != 1 or (games.size and state.done[games].any()):
                raise ValueError(f"games must be int indices of running games, got {games!r}")
        if games.size == 0:
            return actions
        who = self._who() if who is None else np.asarray(who)
        if who.shape != (b,):
            raise ValueError(f"who must be int[{b}] (the entry to move in each game), got {list(who.shape)}")
        mask = sim.legal_mask()
        obs = self.game.observe(state)  # the player to act in every game
        current = state.current
        movers = who[games]
        if np.count_nonzero((movers < 0) | (movers >= len(self.policies))):  # else those games would get 0
            raise ValueError(f"who names entries outside 0..{len(self.policies) - 1}: {np.unique(movers).tolist()}")
        for seat in self._by_object:
            own = movers == seat.entries[0] if len(seat.entries) == 1 else np.isin(movers, seat.entries)
            sel = games[own]
            if sel.size == 0:
                continue
            self.acting = seat.entries[0]  # stays set if the policy fails, for the caller's message
            public = history = None
            if "public" in seat.needs:
                if self.game.public_state is None:
                    raise ValueError(f"{seat.label} needs the public state, which {self.game.title} does not give")
                sub = state.take(sel)
                public = self.game.public_state(sub, sub.current)
            if "history" in seat.needs and self.history is not None:
                history = self.history.take(sel)
            actions[sel] = seat.ask(obs[sel], mask[sel], sel, current[sel], public=public, history=history,
                                    timings=self.timings)
        self.acting = None
        return actions

    def record(self, actions, active=None) -> None:
        """Log ``actions`` (int[B], about to be played; active: bool[B], where) in the
        history, for a caller that steps the games itself (no-op without a history)."""
        if self.history is not None:
            self.history.record(self.sim.state, actions, active)

    def step(self, actions, active=None):
        """``sim.step(actions, active)``, logged in the history. An illegal action raises
        ValueError and changes nothing, the history included."""
        if self.history is None:
            return self.sim.step(actions, active=active)
        before = self.history.prepare(self.sim.state)
        result = self.sim.step(actions, active=active)
        self.history.commit(before, actions, active)
        return result

    def reset(self, **kwargs) -> None:
        """``sim.reset(**kwargs)``; the history starts afresh."""
        self.sim.reset(**kwargs)
        if self.history is not None:
            self.history.reset()

    def reset_games(self, games, *, num_players=None) -> None:
        """``sim.reset_games(games, num_players=...)``; the history forgets those games."""
        self.sim.reset_games(games, num_players=num_players)
        if self.history is not None:
            self.history.reset(games)

    def play(self):
        """Play every game to its end; returns the simulator."""
        while not self.sim.done.all():
            self.step(self.act())
        return self.sim


def act_for_seats(sim, agents_by_seat, assignment: np.ndarray | None = None, *,
                  timings: dict | None = None, history=None, record: bool = True) -> np.ndarray:
    """int64[B]: the next action in every game of ``sim`` (0 in finished games), from a
    :class:`Table` seating ``agents_by_seat`` for one step (see there for ``assignment``
    and ``timings``).

    history: the :class:`~startups_env.startups.history.History` of ``sim``'s games, required when a
    policy needs it; the decisions chosen here are recorded in it (as if played: call
    ``sim.step`` with the result), unless ``record`` is False: then the caller records
    what it plays (``history.record``), e.g. when the actions chosen here only label the
    decisions and others are played. To play whole games, a :class:`Table` keeps the
    history itself.
    """
    table = Table(sim, agents_by_seat, assignment=assignment, history=False if history is None else history,
                  timings=timings, role="agent")
    actions = table.act()
    if record:
        table.record(actions)
    return actions


def play_aec_game(env, policies: dict, *, seed=None, options: dict | None = None) -> dict:
    """Play one game of a Startups PettingZoo AEC env (``startups_env.env(...)``).

    policies: a dict from env agent name (``player_i``) to a policy: one of ours
        (``startups_env.agents.make_agent(...)``), any object with ``act(obs, mask)``, a
        plain callable ``f(obs, mask) -> actions`` or a one-game PettingZoo-style
        ``f(observation_dict) -> action`` wrapped in
        :func:`startups_env.table.policy.pettingzoo_policy`. Each is called on a batch of one
        game and given what it needs: the public state from ``env.public_state(agent)``,
        the history from ``env.history`` (the env must keep one:
        ``startups_env.env(..., history=True)``; a ValueError says so before the game).
    seed, options: passed to ``env.reset`` (e.g. ``options={"deck": [45 company ids]}``).

    Returns ``{"rewards": {name: cumulative reward}, "steps": decisions played,
    "truncated": bool, "infos": {name: last info}}``.
    """
    names = list(env.possible_agents)
    if not isinstance(policies, dict):
        raise ValueError(f"policies must be a dict from agent name to policy, got {type(policies).__name__}")
    missing = [a for a in names if a not in policies]
    if missing:
        raise ValueError(f"no policy given for {missing}; env agents are {names}")
    unknown = [a for a in policies if a not in names]
    if unknown:
        raise ValueError(f"policies for {unknown}, which are not agents of this env ({names})")
    seats = {}
    for name in names:  # one _Seat per agent name: a policy object playing two names plays each of them
        policy = policies[name]
        seats[name] = _Seat(policy, f"the policy of {name} ({policy_name(policy)})", [names.index(name)])
    if any("history" in seat.needs for seat in seats.values()) and not getattr(env, "keeps_history", False):
        reading = [name for name, seat in seats.items() if "history" in seat.needs]
        raise ValueError(f"the policies of {reading} read the table's history, which this env does not keep: "
                         "create it with startups_env.env(..., history=True)")
    env.reset(seed=seed, options=options)
    rewards = {a: 0.0 for a in names}
    infos: dict = {}
    steps = 0
    truncated = False
    game = np.zeros(1, np.intp)
    for name in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        rewards[name] += float(reward)
        infos[name] = info
        truncated = truncated or bool(trunc)
        if term or trunc:
            env.step(None)
            continue
        seat = seats[name]
        public = env.public_state(name) if "public" in seat.needs else None
        history = env.history if "history" in seat.needs else None
        action = seat.ask(obs["observation"][None], obs["action_mask"][None].astype(bool), game,
                          np.array([names.index(name)]), public=public, history=history)
        env.step(int(action[0]))
        steps += 1
    return {"rewards": rewards, "steps": steps, "truncated": truncated, "infos": infos}
