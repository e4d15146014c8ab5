"""PettingZoo AEC wrappers that fit the Startups environment to other RL libraries.

``docs/integrations.md`` has a tested recipe per library; these are the pieces the recipes
import, so that nobody copies them:

* :class:`TerminateIllegal` - for libraries that step actions sampled *without* the mask
  (RLlib's environment pre-check, a plain random agent): a masked-out action ends the game
  with a penalty for the offender, as PettingZoo's classic games do with their
  ``TerminateIllegalWrapper``. Without it an illegal action raises ``ValueError`` and
  leaves the game unchanged (the default).
* :class:`MaskInInfos` - the observation becomes the bare float32 vector and the legal
  actions move to ``infos[agent]["action_mask"]``: for SuperSuit (whose observation
  wrappers want a ``Box``) and AgileRL (which reads masks from the infos).
* :class:`RenameKeys` - renames the keys of the observation dictionary, e.g. to RLlib's
  ``{"observations", "action_mask"}`` that its action-masking RLModule expects.

Each wraps an AEC env (``startups_env.env(...)`` or another wrapper) and stays an AEC env,
so PettingZoo's ``turn_based_aec_to_parallel`` can be applied on top for libraries that
want the parallel API.
"""

from __future__ import annotations

import operator

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from startups_env.startups.rules import NUM_ACTIONS

__all__ = ["MaskInInfos", "RenameKeys", "TerminateIllegal"]


def _legal_index(action) -> int | None:
    """The action as an int in [0, 19) if it is one, else None (the env then reports it)."""
    if isinstance(action, np.ndarray) and action.size == 1:
        action = action.reshape(())[()]
    if action is None or isinstance(action, (bool, np.bool_)):
        return None
    try:
        value = operator.index(action)
    except TypeError:
        return None
    return value if 0 <= value < NUM_ACTIONS else None


class TerminateIllegal(BaseWrapper):
    """An illegal action ends the game with ``illegal_reward`` for the agent that played it.

    An action id in 0-18 that the mask forbids ends the game at once: the offender gets
    ``illegal_reward`` (default -1), every other agent 0 (PettingZoo's convention; not zero-sum),
    every agent is terminated with ``infos[agent] = {"illegal_action": action, "offender":
    agent_name}``, all masks are zero, and the agents then leave through their dead steps as
    at a normal end. Anything that is not an action id (None while the game runs, 19, 2.5)
    still raises ``ValueError``: that is a bug in the caller whatever the policy.
    """

    def __init__(self, env, illegal_reward: float = -1.0):
        super().__init__(env)
        self.illegal_reward = float(illegal_reward)
        self._ended_illegally = False

    def reset(self, seed=None, options=None):
        self._ended_illegally = False
        super().reset(seed=seed, options=options)

    def observe(self, agent):
        obs = super().observe(agent)
        if self._ended_illegally:
            obs["action_mask"] = np.zeros_like(obs["action_mask"])
        return obs

    def step(self, action):
        agent = self.agent_selection
        value = _legal_index(action)
        if (value is None or self._ended_illegally or self.terminations[agent] or self.truncations[agent]
                or super().observe(agent)["action_mask"][value]):
            super().step(action)
            return
        raw = self.unwrapped
        for other in raw.agents:
            raw.rewards[other] = self.illegal_reward if other == agent else 0.0
            raw.terminations[other] = True
            raw.infos[other] = {"illegal_action": value, "offender": agent}
        raw._cumulative_rewards[agent] = 0.0  # (the offender's reward so far was seen in last())
        raw._accumulate_rewards()
        self._ended_illegally = True


class MaskInInfos(BaseWrapper):
    """Observations are the bare float32 vector; ``infos[agent]["action_mask"]`` holds the
    agent's int8 mask (all zeros unless it is on turn), refreshed after every step. The
    other info keys (the end-of-game ``score``, ``rank``, ...) are kept.

    ``as_list=True`` gives the mask as a list of ints instead of an array: AgileRL tests
    ``None in masks`` over the agents' masks, which an array makes ambiguous."""

    def __init__(self, env, as_list: bool = False):
        super().__init__(env)
        self.as_list = bool(as_list)

    def observation_space(self, agent):
        return self.env.observation_space(agent)["observation"]

    def observe(self, agent):
        return self.env.observe(agent)["observation"]

    @property
    def infos(self):
        inner = self.env.infos
        out = {}
        for agent in inner:
            mask = self.env.observe(agent)["action_mask"]
            out[agent] = {**inner[agent], "action_mask": mask.tolist() if self.as_list else mask}
        return out


class RenameKeys(BaseWrapper):
    """Renames the observation dictionary's keys, e.g. ``RenameKeys(env, observation="observations")``
    for RLlib's action-masking RLModule. Keys not named keep their names."""

    def __init__(self, env, **names: str):
        super().__init__(env)
        unknown = sorted(set(names) - {"observation", "action_mask"})
        if unknown:
            raise ValueError(f"RenameKeys renames 'observation' and 'action_mask', got {unknown}")
        self._names = {"observation": "observation", "action_mask": "action_mask", **names}
        self._spaces = {agent: spaces.Dict({self._names[k]: v for k, v in env.observation_space(agent).items()})
                        for agent in env.possible_agents}

    def observation_space(self, agent):
        return self._spaces[agent]

    def observe(self, agent):
        return {self._names[k]: v for k, v in self.env.observe(agent).items()}


def agilerl_vec_env(parallel_env):
    """AgileRL's one-game vector env (``PzDummyVecEnv``) over ``parallel_env`` (PettingZoo's
    ``turn_based_aec_to_parallel(MaskInInfos(env(...), as_list=True))``), with the infos of
    each new game.

    AgileRL 2.58's ``PzDummyVecEnv`` resets a finished game by itself but returns the finished
    game's infos, whose masks are all zeros, so the first move of the next game is sampled
    without a mask; its multi-process ``AsyncPettingZooVecEnv`` stacks the masks into arrays,
    which its IPPO's ``None in masks`` test cannot take. This subclass returns the new game's
    infos after such a reset. Needs ``agilerl`` (imported here, not at module import)."""
    from agilerl.vector.dummy_vec_env import PzDummyVecEnv

    class _FreshInfos(PzDummyVecEnv):
        def step(self, actions, *args, **kwargs):
            obs, rewards, terminated, truncated, infos = super().step(actions, *args, **kwargs)
            if all(np.nan_to_num(t, nan=1.0).all() or np.nan_to_num(tr, nan=1.0).all()
                   for t, tr in zip(terminated.values(), truncated.values())):
                infos = {**self._env.aec_env.infos}  # the game PzDummyVecEnv has just dealt
            return obs, rewards, terminated, truncated, infos

    return _FreshInfos(parallel_env)
