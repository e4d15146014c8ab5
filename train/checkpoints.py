"""The self-play trainer's files beyond the policy network: a training checkpoint (what
``--resume`` needs: weights, args, rules, optimizer, counters, pool, generator states),
reading one back, and starting a new run from a policy file (``--init-policy``).
Everything is plain data: ``torch.load(..., weights_only=True)`` reads it."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from startups_env.agents.ppo import ActorCritic, checkpoint_dict, model_from_checkpoint, read_checkpoint


from .common import hidden_sizes
from .pool import OpponentPool


@dataclass
class Progress:
    """A run's counters, kept across resumptions."""

    global_step: int = 0  # learner decisions trained on
    decisions: int = 0  # decisions of all seats
    updates: int = 0  # PPO updates
    wall_time: float = 0.0  # training seconds of the earlier invocations
    schedule: dict[str, int] = field(default_factory=dict)  # the next step of each periodic event
    history: list[dict] = field(default_factory=list)  # the periodic evaluations' win rates


def read_training_checkpoint(path: str) -> dict[str, Any] | None:
    """The training checkpoint at ``path``, or None (with a note) when there is none yet."""
    if not os.path.exists(path):
        print(f"--resume: no checkpoint in {os.path.dirname(path)}, starting a new run", file=sys.stderr)
        return None
    saved = read_checkpoint(path, game=None)  # the run's own game, whatever --game says
    if saved.get("kind") != "training":
        raise ValueError(f"{path} is not a training checkpoint (kind={saved.get('kind')!r})")
    return saved


def merge_saved_args(saved: dict[str, Any], given: dict[str, Any], out: str) -> dict[str, Any]:
    """A resumed run's settings: the checkpoint's, overridden by the flags ``given`` now.
    ValueError if they ask for another network than the saved one."""
    merged = {**saved["args"], **{k: v for k, v in given.items() if k in saved["args"]}}
    trained = saved["config"].get("game", "startups")  # (a checkpoint without a game is Startups')
    if merged.get("game", trained) != trained:
        raise ValueError(f"--game {merged['game']}: the checkpoint in {out} was trained on the game {trained!r}; "
                         f"leave --game out to continue it")
    merged["game"] = trained
    # Flags added after a checkpoint was written default to what that run did.
    merged.setdefault("features", False)
    merged.setdefault("privileged_critic", False)
    if hidden_sizes(merged["hidden"]) != list(saved["config"]["hidden"]):
        raise ValueError(f"--hidden {merged['hidden']} differs from the checkpoint's {saved['config']['hidden']}")
    merged.setdefault("greedy_prior", False)
    for flag in ("features", "greedy_prior"):
        # (the saved run's flag, or its network's: a game whose network has no such input
        # trains without it whatever the flag said)
        if bool(merged[flag]) not in (bool(saved["config"].get(flag, False)), bool(saved["args"].get(flag, False))):
            raise ValueError(f"--{flag.replace('_', '-')} {merged[flag]} differs from the checkpoint's network")
    merged["resume"], merged["out"] = True, out
    merged["overwrite"] = False  # the saved run's --overwrite replaced what came before it, not this run
    return merged


def training_checkpoint(model: ActorCritic, optimizer: torch.optim.Optimizer, args: dict[str, Any], rules,
                        progress: Progress, wall_time: float, pool: OpponentPool, np_rng: np.random.Generator,
                        gen: torch.Generator) -> dict[str, Any]:
    """Everything ``--resume`` needs (``wall_time``: of all invocations so far)."""
    return checkpoint_dict(
        model, kind="training", args=args,
        rules={"players": args["players"], "rounds": getattr(rules, "rounds", 1), "turn_cap": rules.turn_cap, "reward": rules.reward},
        global_step=progress.global_step, decisions=progress.decisions, updates=progress.updates,
        wall_time=wall_time, optimizer=optimizer.state_dict(), pool=pool.to_data(),
        rng={"numpy": np_rng.bit_generator.state, "torch": gen.get_state()},
        schedule=dict(progress.schedule), history=progress.history)


def restore_training(saved: dict[str, Any], path: str, model: ActorCritic, optimizer: torch.optim.Optimizer,
                     pool: OpponentPool, np_rng: np.random.Generator, gen: torch.Generator,
                     new_network: Callable[[], ActorCritic]) -> Progress:
    """Load a training checkpoint into a run built from its (merged) args; returns its counters.
    ValueError if the critic's inputs differ from the checkpoint's."""
    if int(saved["config"].get("critic_extra", 0)) != model.critic_extra:
        raise ValueError("--privileged-critic / --baselines differ from the checkpoint's critic "
                         f"({saved['config'].get('critic_extra', 0)} extra inputs, these flags give "
                         f"{model.critic_extra})")
    model.load_state_dict(model_from_checkpoint(saved, path).state_dict())
    optimizer.load_state_dict(saved["optimizer"])
    progress = Progress(saved["global_step"], saved["decisions"], saved["updates"], saved["wall_time"],
                        dict(saved["schedule"]), list(saved["history"]))
    np_rng.bit_generator.state = saved["rng"]["numpy"]
    gen.set_state(saved["rng"]["torch"])
    pool.restore(saved["pool"], new_network, np_rng)
    model.train()
    print(f"resumed from {path} at step {progress.global_step:,} (update {progress.updates})", file=sys.stderr)
    return progress


def start_from_policy(model: ActorCritic, path: str, drop_critic_inputs: bool = False) -> None:
    """Load a policy file's weights into a new run's ``model``. The networks must agree in
    everything but the critic's training-only extra inputs, which start at zero weight (so
    the critic starts as the file's critic). Where the file's critic takes more of them,
    ``drop_critic_inputs`` keeps its weights of the inputs ``model`` has (a fit that never
    sees them), else that is refused. Raises ValueError (CheckpointError) on a mismatch or
    an unreadable file."""
    source = model_from_checkpoint(read_checkpoint(path, model.game), path)
    mine = (model.hidden, model.features, model.greedy_prior)
    theirs = (source.hidden, source.features, source.greedy_prior)
    if mine != theirs:
        raise ValueError(f"--init-policy {path}: its network (hidden, features, greedy prior) = {theirs} differs "
                         f"from this run's {mine}")
    target = model.state_dict()
    for name, weights in source.state_dict().items():
        if name not in target:  # a head play never reads (the hand belief): not carried over
            continue
        if target[name].shape == weights.shape:
            target[name] = weights
        elif name == "critic.0.weight" and target[name].shape[1] > weights.shape[1]:
            # The extra inputs are the critic's last columns.
            target[name] = torch.cat([weights, torch.zeros(weights.shape[0], target[name].shape[1] - weights.shape[1])], dim=1)
        elif name == "critic.0.weight" and drop_critic_inputs:
            target[name] = weights[:, :target[name].shape[1]]
        else:
            raise ValueError(f"--init-policy {path}: its critic takes more inputs than this run's "
                             f"(--privileged-critic / --baselines differ from the run that wrote it?)")
    model.load_state_dict(target)
