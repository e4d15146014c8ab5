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

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from startups_env.envs import game_aec
from startups_env.startap import render
from startups_env.startap.game import GAME
from startups_env.startap.rules import MAX_FAILURES, NUM_ACTIONS, PHASE_NAMES
from startups_env.startap.simulator import Simulator

__all__ = ["env", "raw_env"]

_GAME_ZERO = np.zeros(1, np.intp)


def env(num_players: int = 4, render_mode: str | None = None, backend: str | None = None) -> AECEnv:
    """The Стартап AEC environment with PettingZoo's order-enforcing wrapper."""
    return wrappers.OrderEnforcingWrapper(raw_env(num_players, render_mode, backend))


class raw_env(game_aec.raw_env):
    """Стартап as an unwrapped PettingZoo ``AECEnv`` (see the module docstring): the env
    of any game (:class:`startups_env.envs.game_aec.raw_env`) with Стартап's eliminations,
    a picture, and the compiled one-game paths of its simulator.

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
        self._backend = backend
        super().__init__(GAME, num_players, render_mode)

    def _new_simulator(self) -> Simulator:
        return Simulator(1, num_players=self.num_players, backend=self._backend)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game; ``seed`` re-seeds the shuffles (None: keep the generator)."""
        self._out = 0  # agents put out so far
        self._skip_agent_selection = None
        super().reset(seed, options)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32[1191], "action_mask": int8[300]}`` of any agent."""
        self._require_game("observe")
        seat = self.agent_name_mapping[agent]
        obs = self.sim.engine.observe(np.array([seat]), _GAME_ZERO)[0]
        if seat == int(self.sim.state.current[0]) and not self.sim.done[0] and not self.terminations.get(agent, True):
            mask = self._legal().astype(np.int8)
        else:
            mask = np.zeros(NUM_ACTIONS, np.int8)
        return {"observation": obs, "action_mask": mask}

    def _legal(self) -> np.ndarray:
        return self.sim.engine.mask()[0]

    def _where(self) -> str:
        return f" in the {PHASE_NAMES[int(self.sim.state.phase[0])]} phase"

    def _play(self, action: int):
        return self.sim.step_one(action)

    def _next_turn(self) -> None:
        if np.count_nonzero(self.sim.state.failures[0] >= MAX_FAILURES) > self._out:
            self._eliminate()
        super()._next_turn()
        self._deads_step_first()

    def _eliminate(self) -> None:
        """An agent whose third failure put it out terminates now with its reward (its rank
        is fixed: below everyone still in); it leaves ``agents`` when stepped with None."""
        rewards = self.sim.rewards(_GAME_ZERO, np.float64)[:, 0]
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
        rewards = self.sim.rewards(_GAME_ZERO, np.float64)[:n, 0].tolist()
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

    def _picture(self, viewer: int | None) -> np.ndarray:
        return render.table_rgb(self.sim.state, 0, viewer)

