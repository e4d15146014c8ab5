"""The self-play trainer's opponent pool and the privileged critic's inputs.

The pool holds the live policy (a fixed share of games), the baselines, and frozen
snapshots of past selves. Apart from the live policy, games are shared out by prioritised
fictitious self-play (PFSP): opponent k gets weight ``(1 - s_k + 0.05) ** pfsp_power``,
s_k being the learner's recent placing against it (1 = won every game, 0 = always last),
so opponents the learner does not yet beat are met more often.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from startups_env.agents.ppo import ActorCritic, PPOAgent
from startups_env.agents.registry import build_agent

from startups_env.envs.vector import PRIVILEGED_DIM
from startups_env.table.games import DEFAULT_GAME


@dataclass
class PoolEntry:
    name: str  # "self", a baseline name, or "snap@STEP"
    kind: str  # "self" | "baseline" | "snapshot"
    agent: Any
    step: int = 0  # learner step at which a snapshot was taken
    score: float = 0.5  # recent learner placing against it: 1 = always won, 0 = always last
    games: int = 0

    def to_data(self) -> dict[str, Any]:
        data = {"name": self.name, "kind": self.kind, "step": self.step, "score": self.score, "games": self.games}
        if self.kind == "snapshot":
            data["model"] = {k: v.clone() for k, v in self.agent.model.state_dict().items()}
        return data


def frozen_agent(model: ActorCritic, name: str, seed: int) -> PPOAgent:
    """A frozen copy of the model, playing sampled actions (opponents should be varied)."""
    frozen = copy.deepcopy(model).eval()
    for p in frozen.parameters():
        p.requires_grad_(False)
    return PPOAgent(frozen, seed=seed, deterministic=False, name=name)


class OpponentPool:
    """The live policy, the baselines (arena agent specs), then up to ``size`` snapshots.

    ``rng`` draws the seeds of the agents that sample (the live policy's and each
    snapshot's); the baselines get theirs from it too."""

    def __init__(self, model: ActorCritic, baselines: list[str], rng: np.random.Generator, *,
                 self_play_share: float, pfsp_power: float, size: int, game: str = DEFAULT_GAME):
        self.self_play_share, self.pfsp_power, self.size = self_play_share, pfsp_power, size
        self.entries = [PoolEntry("self", "self", PPOAgent(model, seed=int(rng.integers(2**31)), deterministic=False,
                                                           name="self"))]
        for name in baselines:
            self.entries.append(PoolEntry(name, "baseline", build_agent(name, seed=int(rng.integers(2**31)), game=game)))

    def agents(self) -> list[Any]:
        return [e.agent for e in self.entries]

    def weights(self) -> np.ndarray:
        """Sampling weights: the live policy gets its fixed share, the others share the rest by
        prioritised fictitious self-play (more weight where the learner places worse)."""
        others = [e for e in self.entries if e.kind != "self"]
        weights = np.zeros(len(self.entries))
        tilt = np.array([(1.0 - e.score + 0.05) ** self.pfsp_power for e in others])
        share_self = self.self_play_share if others else 1.0
        j = 0
        for i, e in enumerate(self.entries):
            if e.kind == "self":
                weights[i] = share_self
            else:
                weights[i] = (1.0 - share_self) * tilt[j] / tilt.sum()
                j += 1
        return weights

    def record(self, place_sum: np.ndarray, games: np.ndarray) -> None:
        """Fold a rollout's finished games into the scores: per entry, the sum of the learner's
        placings (1 = won, 0 = last) and the number of games."""
        for i in np.flatnonzero(games > 0):
            self.entries[i].score = float(0.7 * self.entries[i].score + 0.3 * place_sum[i] / games[i])
            self.entries[i].games += int(games[i])

    def add_snapshot(self, model: ActorCritic, step: int, rng: np.random.Generator) -> None:
        """A frozen copy of ``model`` joins; beyond ``size`` snapshots it takes the place (and
        the index) of the oldest."""
        name = f"snap@{step}"
        entry = PoolEntry(name, "snapshot", frozen_agent(model, name, int(rng.integers(2**31))), step=step)
        snaps = [i for i, e in enumerate(self.entries) if e.kind == "snapshot"]
        if len(snaps) >= self.size:
            self.entries[min(snaps, key=lambda i: self.entries[i].step)] = entry
        else:
            self.entries.append(entry)

    def to_data(self) -> list[dict[str, Any]]:
        return [e.to_data() for e in self.entries]

    def restore(self, data: list[dict[str, Any]], new_network: Callable[[], ActorCritic],
                rng: np.random.Generator) -> None:
        """Take back a checkpoint's pool (:meth:`to_data`): its snapshots and every entry's score.
        A baseline that is no longer in the pool (dropped from --baselines) is left out."""
        known = {e.name: e for e in self.entries}
        for item in data:
            if item["kind"] == "snapshot":
                snap = new_network()
                snap.load_state_dict(item["model"])
                entry = PoolEntry(item["name"], "snapshot", frozen_agent(snap, item["name"], int(rng.integers(2**31))),
                                  step=item["step"])
                self.entries.append(entry)
            else:
                entry = known.get(item["name"])
                if entry is None:
                    continue
            entry.score, entry.games = item["score"], item["games"]


class CriticInputs:
    """The privileged critic's extra inputs (training only): every seat's hidden cards and the
    pile's make-up (``SeatBatch.privileged()``, scaled), and the kind of opponent at the
    table, one-hot over the live policy, a snapshot, and each baseline."""

    def __init__(self, baselines: list[str], enabled: bool, privileged_dim: int = PRIVILEGED_DIM):
        self.kinds = ["self", "snapshot", *baselines]
        self.dim = privileged_dim + len(self.kinds) if enabled else 0
        self._onehot = np.eye(len(self.kinds), dtype=np.float32)

    def __call__(self, privileged: np.ndarray, opponent: np.ndarray, pool: OpponentPool) -> torch.Tensor | None:
        """privileged: float[B, privileged_dim]; opponent: each game's pool index. None when
        the critic has no extra inputs."""
        if not self.dim:
            return None
        kind = np.array([self.kinds.index(e.name if e.kind == "baseline" else e.kind) for e in pool.entries])[opponent]
        return torch.from_numpy(np.concatenate([privileged / 5.0, self._onehot[kind]], axis=1))
