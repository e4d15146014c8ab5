"""
# Стартап

A PettingZoo AEC environment for *Стартап* (Mosigra, 2011): 2-6 players turn project
ideas into income and the first to 27 coins wins. The rules, the card set, the action
encoding and every decision the rulebook leaves open are in `docs/startap.md`; they live in
the batch simulator `startups_env.startap.simulator.Simulator`, which this environment
drives with a batch of one game.

    from startups_env.envs.startap_aec import env
    e = env(num_players=4)
    e.reset(seed=0)
    for agent in e.agent_iter():
        obs, reward, termination, truncation, info = e.last()
        action = None if termination or truncation else e.action_space(agent).sample(obs["action_mask"])
        e.step(action)

**Decisions.** One agent acts at a time: the player offered a project, the next player to
commit to an incident's pool, the player whose part of the turn it is (a sequence of
decisions ending with "done", a feature's project and a situation's target among them),
the owner answering a work offer, or a player with staff deciding whom to fire at payday.
`agent_selection` is that agent (or an agent just put out, to be stepped with `None`).

**Observation.** `{"observation": float32[1191], "action_mask": int8[300]}`: what the
observed agent may know, seats relative to it (`startups_env.startap.observe.PIECES`); the
mask is all zeros for agents not on turn. Other hands, the decks and the pool's sealed
commitments are never in it.

**Actions.** Discrete(300), see `docs/startap.md` ("Actions"). An illegal action or one
that is not an integer id raises `ValueError` naming the agent and the legal actions, and
the game is unchanged.

**Rewards.** Zero until an agent leaves. A player whose third project fails is out: its
agent terminates at once with its reward (-1/(N-1): it cannot win) and leaves `agents`
when stepped with `None`; the others play on. When the game ends (27 coins at the end of a
turn, the last player left, or the 60-turn cap) the agents still in get theirs: +1 to the
winner and -1/(N-1) to each other agent, players tied on the tie-break sharing the mean of
their places' rewards (docs/startap.md, decision 14). `infos[agent]` then holds `"score"`
(coins), `"rank"` (0 = winner), `"truncated"` (the cap ended it) and `"eliminated"`.
"""

from __future__ import annotations

import operator

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from startups_env.envs.aec import begin_game
from startups_env.startap import render
from startups_env.startap.observe import OBS_DIM, observation_bounds
from startups_env.startap.rules import (MAX_FAILURES, MAX_PLAYERS, MIN_PLAYERS, NUM_ACTIONS, PHASE_NAMES, Rules,
                                        action_to_string)
from startups_env.startap.simulator import Simulator

__all__ = ["env", "raw_env"]

_GAME_ZERO = np.zeros(1, np.intp)




def env(num_players: int = 4, render_mode: str | None = None, backend: str | None = None) -> AECEnv:
    """The Стартап AEC environment with PettingZoo's order-enforcing wrapper."""
    return wrappers.OrderEnforcingWrapper(raw_env(num_players, render_mode, backend))


class raw_env(AECEnv):
    """Стартап as an unwrapped PettingZoo ``AECEnv`` (see the module docstring).

    Args:
        num_players: seats, 2-6 (default 4).
        render_mode: None, ``"ansi"`` (``render()`` returns the table as text),
            ``"human"`` (prints it after every step) or ``"rgb_array"`` (the table's text
            as a picture, uint8[H, W, 3]; needs Pillow).
        backend: the simulator's engine, ``"numpy"``, ``"numba"`` or None (the fastest installed).
    """

    metadata = {"name": "startap_v0", "render_modes": ["ansi", "human", "rgb_array"], "is_parallelizable": False,
                "render_fps": 2}

    def __init__(self, num_players: int = 4, render_mode: str | None = None, backend: str | None = None):
        super().__init__()
        if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) or not (
                MIN_PLAYERS <= num_players <= MAX_PLAYERS):
            raise ValueError(f"num_players must be an int in {MIN_PLAYERS}-{MAX_PLAYERS}, got {num_players!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.num_players = int(num_players)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agent_name_mapping = {agent: i for i, agent in enumerate(self.possible_agents)}
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self.observation_spaces = {
            agent: spaces.Dict({"observation": spaces.Box(*observation_bounds(Rules(self.num_players)), (OBS_DIM,), np.float32),
                                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)})
            for agent in self.possible_agents}
        self.sim = Simulator(1, num_players=self.num_players, backend=backend)
        self._has_game = False

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game; ``seed`` re-seeds the shuffles (None: keep the generator)."""
        self.sim.reset(seed=seed)
        self._out = 0  # agents put out so far
        self._skip_agent_selection = None
        begin_game(self)

    def _require_game(self, call: str) -> None:
        if not self._has_game:
            raise ValueError(f"{call}() needs a game: call reset() first")

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32[1191], "action_mask": int8[300]}`` of any agent."""
        self._require_game("observe")
        seat = self.agent_name_mapping[agent]
        obs = self.sim.engine.observe(np.array([seat]), _GAME_ZERO)[0]
        if seat == int(self.sim.state.current[0]) and not self.sim.done[0] and not self.terminations.get(agent, True):
            mask = self.sim.engine.mask()[0].astype(np.int8)
        else:
            mask = np.zeros(NUM_ACTIONS, np.int8)
        return {"observation": obs, "action_mask": mask}

    def step(self, action) -> None:
        self._require_game("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        value = self._check_action(agent, action)
        if not self.sim.engine.mask()[0, value]:
            legal = np.flatnonzero(self.sim.legal_mask()[0]).tolist()
            phase = PHASE_NAMES[int(self.sim.state.phase[0])]
            raise ValueError(f"{agent}: illegal action {value} ({action_to_string(value)}) in the {phase} phase; "
                             f"legal actions: {legal}. The game is unchanged.")
        result = self.sim.step_one(value)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if result is not None:
            self._end_game(result)
        else:
            if np.count_nonzero(self.sim.state.failures[0] >= MAX_FAILURES) > self._out:
                self._eliminate()
            self.agent_selection = self.possible_agents[int(self.sim.state.current[0])]
            self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    def _check_action(self, agent: str, action) -> int:
        if isinstance(action, np.ndarray) and action.size == 1:
            action = action.reshape(())[()]
        try:
            if isinstance(action, (bool, np.bool_)):
                raise TypeError
            value = operator.index(action)
        except TypeError:
            raise ValueError(f"{agent}: action must be an integer id 0-{NUM_ACTIONS - 1}, got {action!r}") from None
        if not 0 <= value < NUM_ACTIONS:
            raise ValueError(f"{agent}: action must be an integer id 0-{NUM_ACTIONS - 1}, got {value}")
        return value

    def _eliminate(self) -> None:
        """An agent whose third failure put it out terminates now with its reward (its rank
        is fixed: below everyone still in); it leaves ``agents`` when stepped with None."""
        rewards = self.sim.rewards(np.zeros(1, np.intp), np.float64)[:, 0]
        s = self.sim.state
        for agent in self.agents:
            i = self.agent_name_mapping[agent]
            if s.failures[0, i] >= MAX_FAILURES and not self.terminations.get(agent, True):
                self.rewards[agent] = float(rewards[i])
                self.terminations[agent] = True
                self.infos[agent] = {"score": int(s.coins[0, i]), "rank": int(s.ranks[0, i]), "truncated": False,
                                     "eliminated": True}
                self._out += 1
        self._accumulate_rewards()

    def _end_game(self, result) -> None:
        n = self.num_players
        truncated = bool(result.truncated[0])
        rewards = self.sim.rewards(np.zeros(1, np.intp), np.float64)[:n, 0].tolist()
        for agent in self.agents:
            if self.terminations[agent]:
                continue  # out earlier, paid then
            i = self.agent_name_mapping[agent]
            self.rewards[agent] = rewards[i]
            self.terminations[agent] = not truncated
            self.truncations[agent] = truncated
            self.infos[agent] = {"score": int(result.scores[0, i]), "rank": int(result.ranks[0, i]),
                                 "truncated": truncated, "eliminated": bool(self.sim.state.failures[0, i] >= MAX_FAILURES)}
        self._accumulate_rewards()

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        self._require_game("render")
        if self.render_mode == "rgb_array":
            return render.table_rgb(self.sim.state, 0, self.agent_name_mapping[self.agent_selection])
        text = table_text(self.sim, self.agent_name_mapping[self.agent_selection])
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""


def table_text(sim: Simulator, viewer: int) -> str:
    """The public table of game 0 as text, with the hand of ``viewer`` only."""
    return render.table_text(sim.state, 0, viewer)
