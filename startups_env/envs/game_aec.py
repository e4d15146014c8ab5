"""The PettingZoo env of any game, and the one front door to every game's env.

:func:`make_env` is what ``startups_env.env(game=...)`` calls: the game's own env where
its :class:`~startups_env.game.Game` names one (``Game.env``, *Startups*' and Стартап's),
else :class:`raw_env`, which plays one game of the game's batch simulator through the
record alone (its observation, legal mask, step, rewards and ``render_text``). A game
added by a :class:`Game` record and nothing else is served so.
"""

from __future__ import annotations

import importlib
import operator

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from startups_env.game import Game
from startups_env.table.games import DEFAULT_GAME, game_by_name

__all__ = ["action_id", "begin_game", "make_env", "raw_env"]


def make_env(game: str | Game = DEFAULT_GAME, *args, **kwargs) -> AECEnv:
    """The PettingZoo env of ``game`` (a name or a :class:`Game`), with PettingZoo's
    order-enforcing wrapper; ``args`` and ``kwargs`` go to that game's env (every game's
    takes ``num_players`` and ``render_mode``; *Startups*' also ``rules`` and more,
    :func:`startups_env.envs.aec.env`)."""
    game = game_by_name(game)
    if game.env:
        module, _, name = game.env.partition(":")
        return getattr(importlib.import_module(module), name)(*args, **kwargs)
    return wrappers.OrderEnforcingWrapper(raw_env(game, *args, **kwargs))


def begin_game(env) -> None:
    """PettingZoo's per-game bookkeeping of an AEC env whose one game ``env.sim`` has just
    been dealt: every agent in, no rewards or flags yet, the seat to act selected (every game's env starts a game so)."""
    env.agents = env.possible_agents[:]
    env.rewards = dict.fromkeys(env.agents, 0.0)
    env._cumulative_rewards = dict.fromkeys(env.agents, 0.0)
    env.terminations = dict.fromkeys(env.agents, False)
    env.truncations = dict.fromkeys(env.agents, False)
    env.infos = {agent: {} for agent in env.agents}
    env.agent_selection = env.possible_agents[int(env.sim.state.current[0])]
    env._has_game = True
    if env.render_mode == "human":
        env.render()

def action_id(agent: str, action, num_actions: int) -> int:
    """``agent``'s ``action`` (an integer, or a one-element array) as a Python int id in
    [0, num_actions), or a ValueError that names the agent and what it got (every game's env reads its actions so)."""
    if isinstance(action, np.ndarray) and action.size == 1:
        action = action.reshape(())[()]
    if isinstance(action, (bool, np.bool_)):
        raise ValueError(f"{agent}: action must be an integer id 0-{num_actions - 1}, got {action!r}")
    try:
        value = operator.index(action)
    except TypeError:
        raise ValueError(f"{agent}: action must be an integer id 0-{num_actions - 1}, got {action!r}"
                         + (" (the game is running; None is only for finished agents)" if action is None else ""))
    if not 0 <= value < num_actions:
        raise ValueError(f"{agent}: action must be an integer id 0-{num_actions - 1}, got {value}")
    return value


class raw_env(AECEnv):
    """One game of ``game`` (a :class:`Game` or its name) as an unwrapped ``AECEnv``.

    Observation ``{"observation": float32[obs_dim], "action_mask": int8[num_actions]}``
    (the mask all zeros off turn), a Discrete(num_actions) action, the simulator's
    rewards once the game ends (``infos``: ``score``, ``rank``, ``truncated``). An action
    that is not an integer id, or an illegal one, raises ValueError naming the agent and
    leaves the game unchanged. render_mode: None, ``"ansi"`` or ``"human"`` (the game's
    ``render_text``). ``rules``: the game's rules in full (default
    ``game.make_rules(num_players)``), for a game's own env that reads them from its
    arguments.

    A game's own env subclasses this one and replaces what its game plays otherwise
    (:mod:`startups_env.envs.startap_aec`): the simulator (:meth:`_new_simulator`), a faster
    :meth:`observe` and :meth:`_legal`, the step (:meth:`_play`), what follows a step
    within the game (:meth:`_next_turn`) and at its end (:meth:`_end_game`), and a picture
    (:meth:`_picture`, for an ``"rgb_array"`` render mode).
    """

    metadata = {"name": "game_v0", "render_modes": ["ansi", "human"], "is_parallelizable": False, "render_fps": 2}

    def __init__(self, game: str | Game, num_players: int | None = None, render_mode: str | None = None, *,
                 rules=None):
        super().__init__()
        self.game = game_by_name(game)
        n = self.game.default_rules().num_players if num_players is None else num_players
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not (
                self.game.min_players <= n <= self.game.max_players):
            raise ValueError(f"num_players must be an int in {self.game.min_players}-{self.game.max_players}, "
                             f"got {num_players!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.metadata = {**self.metadata, "name": f"{self.game.name}_v0"}
        self.num_players, self.render_mode = int(n), render_mode
        self.rules = self.game.make_rules(self.num_players) if rules is None else rules
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agent_name_mapping = {agent: i for i, agent in enumerate(self.possible_agents)}
        low, high = self.game.observation_bounds(self.rules, (self.num_players,))
        space = spaces.Dict({"observation": spaces.Box(low, high, (self.game.obs_dim,), np.float32),
                             "action_mask": spaces.Box(0, 1, (self.game.num_actions,), np.int8)})
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {agent: spaces.Discrete(self.game.num_actions) for agent in self.possible_agents}
        self.sim = self._new_simulator()
        self._has_game = False

    def _new_simulator(self):
        """The game's simulator with the batch of one game this env plays."""
        return self.game.make_simulator(self.rules, 1, None)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def _require_game(self, call: str) -> None:
        if not self._has_game:
            raise ValueError(f"{call}() needs a game: call reset() first")

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game; ``seed`` re-seeds the shuffles (None: keep the generator)."""
        self.sim.reset(seed=seed)
        begin_game(self)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        self._require_game("observe")
        seat = self.agent_name_mapping[agent]
        obs = self.game.observe(self.sim.state, np.array([seat]))[0]
        mask = np.zeros(self.game.num_actions, np.int8)
        if agent == self.agent_selection and not self.sim.done[0]:
            mask[:] = self._legal()
        return {"observation": obs, "action_mask": mask}

    def _legal(self) -> np.ndarray:
        """bool[num_actions]: the legal actions of the agent on turn."""
        return self.sim.legal_mask()[0]

    def step(self, action) -> None:
        self._require_game("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        result = self._play(self._check_action(agent, action))
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if result is None:
            self._next_turn()
        else:
            self._end_game(result)
        if self.render_mode == "human":
            self.render()

    def _play(self, action: int):
        """Play the checked ``action``: the simulator's StepResult where the game ended, else None."""
        result = self.sim.step(np.array([action]))
        return result if result.terminated[0] or result.truncated[0] else None

    def _next_turn(self) -> None:
        """After a step within the game: select the agent to act."""
        self.agent_selection = self.possible_agents[int(self.sim.state.current[0])]

    def _check_action(self, agent: str, action) -> int:
        """``action`` as an int id, or a ValueError naming the agent and the legal actions."""
        value = action_id(agent, action, self.game.num_actions)
        legal = self._legal()
        if not legal[value]:
            names = ", ".join(f"{a} ({self.game.action_to_string(a)})" for a in np.flatnonzero(legal))
            raise ValueError(f"{agent}: illegal action {value} ({self.game.action_to_string(value)}){self._where()}; "
                             f"legal actions: {names}. The game is unchanged.")
        return value

    def _where(self) -> str:
        """Where the game stands, for an illegal action's message ("" or " in the ... phase")."""
        return ""

    def _end_game(self, result) -> None:
        truncated = bool(result.truncated[0])
        for i, agent in enumerate(self.agents):
            self.rewards[agent] = float(result.rewards[0, i])
            self.terminations[agent] = not truncated
            self.truncations[agent] = truncated
            self.infos[agent] = {"score": int(result.scores[0, i]), "rank": int(result.ranks[0, i]),
                                 "truncated": truncated}
        self._accumulate_rewards()

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        self._require_game("render")
        # The agent on turn sees its own hand; once the game is over, a spectator sees the table.
        viewer = None if self.sim.done[0] else self.agent_name_mapping[self.agent_selection]
        if self.render_mode == "rgb_array":
            return self._picture(viewer)
        text = self.game.render_text(self.sim.state, 0, viewer)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _picture(self, viewer: int | None) -> np.ndarray:
        """uint8[H, W, 3]: the table as ``viewer`` sees it (a game whose env has ``"rgb_array"``)."""
        raise NotImplementedError(f"{self.game.title} has no picture")

    def close(self) -> None:
        """Nothing to release."""
