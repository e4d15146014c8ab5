"""A Stable-Baselines3 ``MaskablePPO`` (sb3-contrib) trained on
:class:`~startups_env.envs.vector.StartupsVecEnv`, as an agent: ``make_agent("sb3:model.zip")``.

The model sees the observation vector and the legal mask, as in training; it plays its most
likely legal action. Sampling (``deterministic=False`` in SB3's ``predict``) is not offered:
SB3 samples from torch's global generator, which an agent must not use. Loading a zip
unpickles parts of it (SB3's format): load only files you trust.
"""

from __future__ import annotations

import os

import numpy as np

from startups_env.startups.observe import OBS_DIM
from startups_env.startups.rules import NUM_ACTIONS

from .base import Agent, check_act_inputs


class SB3Agent(Agent):
    """Plays ``model.predict(obs, action_masks=mask, deterministic=True)``.

    normalizer: for a model trained behind SB3's ``VecNormalize``, that wrapper (or its
    saved statistics, ``VecNormalize.load``): observations go through its
    ``normalize_obs`` first, as in training."""

    name = "sb3"

    def __init__(self, model, normalizer=None, *, seed: int | None = None, name: str = "sb3"):
        super().__init__(seed)  # unused by the model: kept for the Agent interface
        self.model, self.normalizer, self.name = model, normalizer, name

    def act(self, obs, mask, *, public=None, history=None):
        obs, mask = check_act_inputs(obs, mask)
        if self.normalizer is not None:
            obs = self.normalizer.normalize_obs(obs)
        actions, _ = self.model.predict(obs, action_masks=mask, deterministic=True)
        return np.asarray(actions, np.int64).reshape(obs.shape[0])


def load_sb3_agent(path: str, *, seed: int | None = None) -> SB3Agent:
    """An :class:`SB3Agent` of a ``MaskablePPO.save`` zip. Raises FileNotFoundError for a
    missing file, ValueError when sb3-contrib is not installed or the file is not a
    MaskablePPO of this game's observation and actions."""
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as exc:
        raise ValueError(f"agent 'sb3:{path}' needs sb3-contrib, which is not importable here ({exc}); "
                         "install the project's 'train' extra (pip install 'startups-env[train]')") from exc
    if not os.path.isfile(path):
        raise FileNotFoundError(f"MaskablePPO model not found: {path}")
    try:
        model = MaskablePPO.load(path, device="cpu")
    except Exception as exc:  # SB3 raises many kinds (zip, pickle, key errors) for a bad file
        raise ValueError(f"{path} is not a MaskablePPO model ({type(exc).__name__}: {exc})") from exc
    obs_shape = getattr(model.observation_space, "shape", None)
    actions = getattr(model.action_space, "n", None)
    if obs_shape != (OBS_DIM,) or actions != NUM_ACTIONS:
        raise ValueError(f"{path} was trained on observations of shape {obs_shape} and {actions} actions; "
                         f"StartupsVecEnv has ({OBS_DIM},) and {NUM_ACTIONS}")
    return SB3Agent(model, seed=seed, name=f"sb3:{os.path.basename(path)}")
