"""Self-play PPO for *Startups* in one readable file (CleanRL style).

    python -m startups_env.train.selfplay                                  # defaults: <= 15 min on 2 busy cores
    python -m startups_env.train.selfplay --total-steps 200000 --out runs/quick
    python -m startups_env.train.selfplay --out runs/quick --resume --total-steps 400000   # continue
    tensorboard --logdir runs
    python -m startups_env.agents.arena --agents ppo:runs/quick/policy.pt,greedy,greedy,greedy --players 4

**Environment.** ``num_envs`` games run in lockstep on one batch simulator
(``startups_env.vector.SeatBatch``): the learner holds one random seat per game, table
sizes are drawn per game from ``--players`` (default a mix of 3-7), and all other seats
of a game are played by one opponent drawn from the pool when the game is dealt. Every
learner decision is one PPO sample; opponents' decisions are played inside the batch.

**Opponent pool.** The live policy itself (sampled play, a fixed share
``--self-play-share`` of games), frozen snapshots of past selves (one joins every
``--snapshot-every`` learner steps, the oldest leaves beyond ``--pool-size``), and the
baselines of ``--baselines`` (arena agent specs: ``greedy``, ``search[determinizations=8]``,
``ppo:PATH``). Apart from the live policy,
games are shared out by prioritised fictitious self-play: opponent k gets weight
``(1 - s_k + 0.05) ** --pfsp-power`` where s_k is the learner's recent placing against it
(1 = won every game, 0 = always last), so opponents the learner does not yet beat are met
more often (``--pfsp-power 0``: uniform).

**Reward.** Terminal only: the simulator's ``"rank"`` scheme by default,
``1 - 2 * rank / (N - 1)`` (+1 winner ... -1 last, zero-sum), which gives a signal in
every game of a 3-7 table, where a pure win/loss reward (``--reward win``) is mostly -1/(N-1).
No score shaping (``--reward score`` exists in the simulator; not used by default).
``--reward margin`` (a smooth win: the tanh of the score margin over the best rival)
trained no better than ``win`` from the same start (docs/experiments.md).

**Policy.** Separate actor and critic MLPs over the observation and derived per-company
features; by default the actor starts from the ``greedy`` bot (``--greedy-prior``: the
bot's action scores are inputs, and a learned multiple of them is added to the logits),
so training refines a sensible player instead of rediscovering one.

**Starting point.** ``--init-policy PATH`` starts a new run from a policy file instead
of from scratch, e.g. one distilled from the search bot by ``python -m startups_env.train.distill``
(the shipped policy was made that way: imitation first, then PPO).

**PPO.** Masked logits (``torch.where(mask, logits, finfo.min)``), GAE, clipped policy
loss, entropy bonus, linear learning-rate decay, advantage normalisation per minibatch.
A game cut by the turn cap is bootstrapped with the value of its last observation.

**Outputs** in ``--out``: ``checkpoint.pt`` (everything needed to resume: weights, args,
rules, optimizer, step counters, pool, generator states; written atomically at intervals
and at the end), ``policy.pt`` (weights + config + provenance, the file to ship or to
load as ``ppo:PATH``), ``eval.json`` (final arena results) and TensorBoard logs
(``charts/``, ``losses/``, ``eval/``). All files are data: ``torch.load(...,
weights_only=True)`` reads them.

**Resume.** ``--resume`` reloads ``checkpoint.pt`` from ``--out``: model, optimizer,
pool, counters and generator states; flags given on the command line override the saved
ones (e.g. a larger ``--total-steps``); the network shape cannot change. Games that were
in progress are dealt afresh, and TensorBoard events after the checkpoint's step are
purged, so nothing written is lost or duplicated.
"""

from __future__ import annotations

import argparse
import ast
import copy
import dataclasses
import inspect
import itertools
import json
import math
import os
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from startups_env.agents.arena import run_arena
from startups_env.agents.registry import build_agent, split_names
from startups_env.agents.ppo import ActorCritic, PPOAgent, checkpoint_dict, model_from_checkpoint, read_checkpoint
from startups_env.files import atomic_write
from startups_env.observe import OBS_DIM
from startups_env.rules import NUM_ACTIONS, REWARD_SCHEMES, Rules
from startups_env.vector import PRIVILEGED_DIM, SeatBatch, parse_players


@dataclass
class Args:
    exp_name: str = "selfplay"
    """name of the run (TensorBoard text and policy metadata)"""
    seed: int = 1
    """seed of everything: deals, seats, opponents, initialisation, sampling"""
    out: str = "runs/selfplay"
    """output folder: checkpoint.pt, policy.pt, eval.json, TensorBoard events"""
    resume: bool = False
    """continue from OUT/checkpoint.pt (flags given now override the saved ones)"""
    total_steps: int = 2_500_000
    """learner decisions to train for (PPO samples; opponents' decisions come on top)"""
    max_seconds: float = 810.0
    """also stop after this many seconds of training wall time in this invocation (0: no limit; the
    default keeps a default run within 15 minutes on a busy 2-core machine). A safety stop only: the
    learning rate decays by steps, so that a seeded run that ends at --total-steps is the same every time
    (a run cut by this cap ends before its rate reaches 0)"""
    num_envs: int = 1024
    """games played in parallel"""
    num_steps: int = 16
    """learner decisions per game per rollout (rollout = num_envs * num_steps samples)"""
    players: str = "3-7"
    """table sizes drawn per game: a number, a range like 3-7, or a list like 3,4,6"""
    reward: str = "rank"
    """terminal reward scheme of the simulator: rank, win, score or margin"""
    turn_cap: int = 400
    """turns after which a game is truncated (and bootstrapped)"""
    hidden: str = "128,128"
    """widths of the hidden layers of the actor and of the critic"""
    features: bool = True
    """feed the network derived per-company features (startups_env.agents.ppo.derived_features) beside the observation"""
    greedy_prior: bool = True
    """start the policy from the greedy bot: its action scores are an input and a learned multiple of them is
    added to the actor's logits (startups_env.agents.ppo.ActorCritic). Measured: a 300k-step run wins 0.25 / 0.78 of 1000 games
    against 3 greedy / 3 random bots with it and 0.18 / 0.70 without, for about 17% fewer decisions per second"""
    init_policy: str = ""
    """start a new run from this policy file (e.g. one distilled from the search bot by startups_env.train.distill) instead of
    from scratch: its actor, and its critic with the privileged inputs at zero weight; --hidden, --features and
    --greedy-prior must match it (ignored on --resume)"""
    privileged_critic: bool = True
    """give the critic (training only) every seat's hand, the pile's make-up and the kind of opponent at the
    table; the policy still acts from its own observation"""
    learning_rate: float = 1e-3
    """Adam learning rate (decays linearly to 0 at total_steps if anneal_lr); 1e-3 measured
    better than 3e-4 here (parity with greedy at 0.6M steps instead of not by 3M)"""
    anneal_lr: bool = True
    """decay the learning rate linearly over the run"""
    gamma: float = 1.0
    """discount (games are short and the reward is terminal)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    num_minibatches: int = 16
    """minibatches per epoch (16 x 1024 samples: 4x the gradient steps of 4 measured better)"""
    update_epochs: int = 4
    """passes over each rollout"""
    clip_coef: float = 0.2
    """PPO ratio clip"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """gradient norm clip"""
    target_kl: float = 0.0
    """stop an update's epochs early above this approximate KL (0: never)"""
    self_play_share: float = 0.3
    """share of games against the live policy itself"""
    baselines: str = "random,greedy"
    """comma-separated agents (arena specs, e.g. greedy or search[determinizations=8]) that join the opponent pool"""
    pool_size: int = 8
    """frozen past selves kept in the pool"""
    snapshot_every: int = 200_000
    """learner steps between snapshots joining the pool"""
    pfsp_power: float = 2.0
    """prioritisation toward opponents the learner does not beat (0: uniform)"""
    eval_every: int = 500_000
    """learner steps between evaluations (arena vs each eval opponent)"""
    eval_games: int = 200
    """games per opponent in periodic evaluations"""
    eval_opponents: str = "random,greedy"
    """agents the evaluation plays against (all other seats)"""
    eval_players: int = 4
    """table size of evaluations"""
    final_eval_games: int = 1000
    """games per opponent in the final evaluation table (0: skip)"""
    checkpoint_every: int = 500_000
    """learner steps between checkpoints (one is always written at the end)"""
    torch_threads: int = 1
    """torch intra-op threads. 1 by default: the simulator and the opponents run between the
    network calls anyway, and on a shared 2-core machine 2 threads measured 5-15x slower"""
    progress: bool = True
    """show a tqdm progress bar"""


# ----------------------------------------------------------------------------- command line
def _field_docs(cls) -> dict[str, str]:
    """The docstring under each dataclass field (read from the source, as tyro does)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body
    docs = {}
    for node, nxt in itertools.pairwise(body):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)):
            docs[node.target.id] = nxt.value.value.strip()
    return docs


def build_parser() -> argparse.ArgumentParser:
    """An argparse parser from :class:`Args`: ``--field-name VALUE`` per field,
    ``--flag/--no-flag`` for booleans. Defaults are SUPPRESSed so that the caller can tell
    which flags were given (resume merges them over the saved args)."""
    parser = argparse.ArgumentParser(prog="python -m startups_env.train.selfplay", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                                     argument_default=argparse.SUPPRESS)
    docs = _field_docs(Args)
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        # argparse %-formats help texts: a literal % in a docstring must be doubled.
        help_text = f"{docs.get(f.name, '')} (default: {f.default})".replace("%", "%%")
        if f.type in (bool, "bool"):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, help=help_text)
        else:
            kind = {"int": int, "float": float, "str": str}.get(f.type if isinstance(f.type, str) else f.type.__name__)
            parser.add_argument(flag, type=kind, metavar=f.name.upper(), help=help_text)
    return parser


def parse_args(argv=None) -> tuple[Args, dict[str, Any]]:
    """(Args with defaults filled in, the dict of flags given explicitly)."""
    given = vars(build_parser().parse_args(argv))
    return Args(**given), given


def check_args(args: Args) -> None:
    """Raise ValueError naming the first bad setting."""
    parse_players(args.players)
    if args.reward not in REWARD_SCHEMES:
        raise ValueError(f"--reward must be one of {REWARD_SCHEMES}, got {args.reward!r}")
    hidden_sizes(args.hidden)
    for name in ("torch_threads", "total_steps", "num_envs", "num_steps", "num_minibatches", "update_epochs", "snapshot_every",
                 "eval_every", "checkpoint_every", "eval_games"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if (args.num_envs * args.num_steps) % args.num_minibatches:
        raise ValueError("--num-envs * --num-steps must be divisible by --num-minibatches")
    if not 0.0 <= args.self_play_share < 1.0:
        raise ValueError(f"--self-play-share must be in [0, 1), got {args.self_play_share}")
    if args.pool_size < 0 or args.final_eval_games < 0 or args.seed < 0:
        raise ValueError("--pool-size, --final-eval-games and --seed must be >= 0")
    # (low, high, low inclusive): NaN fails every comparison, so it is caught too.
    for name, (low, high, closed) in {"learning_rate": (0.0, math.inf, False), "gamma": (0.0, 1.0, True),
                                      "gae_lambda": (0.0, 1.0, True), "clip_coef": (0.0, math.inf, False),
                                      "ent_coef": (0.0, math.inf, True), "vf_coef": (0.0, math.inf, True),
                                      "max_grad_norm": (0.0, math.inf, False), "target_kl": (0.0, math.inf, True),
                                      "pfsp_power": (0.0, math.inf, True), "max_seconds": (0.0, math.inf, True)}.items():
        value = getattr(args, name)
        if not ((low <= value if closed else low < value) and value <= high and math.isfinite(value)):
            interval = f"{'[' if closed else '('}{low:g}, {high:g}{']' if math.isfinite(high) else ')'}"
            raise ValueError(f"--{name.replace('_', '-')} must be a finite number in {interval}, got {value}")
    if not args.out:
        raise ValueError("--out must name a folder")
    Rules(num_players=args.eval_players, turn_cap=args.turn_cap)  # validates both
    if args.init_policy and not os.path.isfile(args.init_policy):
        raise ValueError(f"--init-policy {args.init_policy}: no such file")
    for flag, names in (("--baselines", args.baselines), ("--eval-opponents", args.eval_opponents)):
        for name in split_names(names):
            try:  # built once here, so that a typo or a missing checkpoint fails before any training
                build_agent(name)
            except (ValueError, FileNotFoundError) as exc:
                raise ValueError(f"{flag}: {exc}") from None


def hidden_sizes(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in str(text).split(",")]
    except ValueError:
        raise ValueError(f"--hidden must be comma-separated widths like 256,256, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise ValueError(f"--hidden must be comma-separated positive widths, got {text!r}")
    return sizes


# ----------------------------------------------------------------------------- files
def plain(obj: Any) -> Any:
    """obj with numpy scalars/arrays turned into Python numbers/lists and tuples into lists,
    recursively, so that ``torch.load(weights_only=True)`` accepts it."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return obj


def atomic_save(obj: Any, path: str) -> None:
    """torch.save of plain data, atomically and flushed to disk (:func:`atomic_write`): a
    reader (or a resume after a crash) sees the old file or the new one, never a torn one."""
    atomic_write(path, lambda f: torch.save(plain(obj), f), durable=True)


def atomic_write_text(text: str, path: str) -> None:
    atomic_write(path, lambda f: f.write(text), binary=False)


def git_revision() -> str:
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                              timeout=10, check=False).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def start_from_policy(model: ActorCritic, path: str) -> None:
    """Load a policy file's weights into a new run's ``model``. The networks must agree in
    everything but the critic's training-only extra inputs, which start at zero weight (so
    the critic starts as the file's critic). Raises ValueError (CheckpointError) on a
    mismatch or an unreadable file."""
    source = model_from_checkpoint(read_checkpoint(path), path)
    mine = (model.hidden, model.features, model.greedy_prior)
    theirs = (source.hidden, source.features, source.greedy_prior)
    if mine != theirs:
        raise ValueError(f"--init-policy {path}: its network (hidden, features, greedy prior) = {theirs} differs "
                         f"from this run's {mine}")
    target = model.state_dict()
    for name, weights in source.state_dict().items():
        if target[name].shape == weights.shape:
            target[name] = weights
        elif name == "critic.0.weight" and target[name].shape[1] > weights.shape[1]:
            # The extra inputs are the critic's last columns.
            target[name] = torch.cat([weights, torch.zeros(weights.shape[0], target[name].shape[1] - weights.shape[1])], dim=1)
        else:
            raise ValueError(f"--init-policy {path}: its critic takes more inputs than this run's "
                             f"(--privileged-critic / --baselines differ from the run that wrote it?)")
    model.load_state_dict(target)


# ----------------------------------------------------------------------------- opponent pool
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


def pool_weights(pool: list[PoolEntry], args: Args) -> np.ndarray:
    """Sampling weights: the live policy gets its fixed share, the others share the rest by
    prioritised fictitious self-play (more weight where the learner places worse)."""
    others = [e for e in pool if e.kind != "self"]
    weights = np.zeros(len(pool))
    tilt = np.array([(1.0 - e.score + 0.05) ** args.pfsp_power for e in others])
    share_self = args.self_play_share if others else 1.0
    j = 0
    for i, e in enumerate(pool):
        if e.kind == "self":
            weights[i] = share_self
        else:
            weights[i] = (1.0 - share_self) * tilt[j] / tilt.sum()
            j += 1
    return weights


# ----------------------------------------------------------------------------- evaluation
def evaluate(model: ActorCritic, opponents: list[str], players: int, games: int, seed: int, rules: Rules,
             rate: bool = False):
    """Arena (seat-rotated) of the greedy-argmax policy against ``players - 1`` copies of
    each opponent. Returns {opponent: ArenaResult}; entry 0 is the policy. OpenSkill
    ratings (``rate``) are left out of the periodic evaluations, where only speed counts."""
    agent = PPOAgent(model, deterministic=True, name="ppo")
    rules = Rules(num_players=players, turn_cap=rules.turn_cap)
    results = {}
    was_training = model.training
    model.eval()
    for opp in opponents:
        results[opp] = run_arena([agent] + [opp] * (players - 1), players, games, seed=seed, rules=rules, rate=rate)
    model.train(was_training)
    return results


def eval_summary(results) -> dict[str, dict[str, float]]:
    out = {}
    for opp, res in results.items():
        row = res.entry_stats()[0]
        out[opp] = {"win_rate": row["win_rate"], "win_ci": row["win_ci"], "mean_rank": row["mean_rank"],
                    "mean_score": row["mean_score"], "games": row["games"]}
    return out


# ----------------------------------------------------------------------------- training
def train(args: Args, given: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run (or resume) a training run; returns the final evaluation summary."""
    given = dict(vars(args) if given is None else given)
    os.makedirs(args.out, exist_ok=True)
    ckpt_path = os.path.join(args.out, "checkpoint.pt")
    saved = None
    if args.resume:
        if os.path.exists(ckpt_path):
            saved = read_checkpoint(ckpt_path)
            if saved.get("kind") != "training":
                raise ValueError(f"{ckpt_path} is not a training checkpoint (kind={saved.get('kind')!r})")
            merged = {**saved["args"], **{k: v for k, v in given.items() if k in saved["args"]}}
            # Flags added after a checkpoint was written default to what that run did.
            merged.setdefault("features", False)
            merged.setdefault("privileged_critic", False)
            if hidden_sizes(merged["hidden"]) != list(saved["config"]["hidden"]):
                raise ValueError(f"--hidden {merged['hidden']} differs from the checkpoint's {saved['config']['hidden']}")
            merged.setdefault("greedy_prior", False)
            for flag in ("features", "greedy_prior"):
                if bool(merged[flag]) != bool(saved["config"].get(flag, False)):
                    raise ValueError(f"--{flag.replace('_', '-')} {merged[flag]} differs from the checkpoint's network")
            merged["resume"], merged["out"] = True, args.out
            args = Args(**{f.name: merged.get(f.name, f.default) for f in dataclasses.fields(Args)})
        else:
            print(f"--resume: no checkpoint in {args.out}, starting a new run", file=sys.stderr)
    check_args(args)

    torch.set_num_threads(args.torch_threads)
    players = parse_players(args.players)
    rules = Rules(num_players=players[0], turn_cap=args.turn_cap, reward=args.reward)
    seeds = np.random.SeedSequence(args.seed)
    env_seq, np_seq, torch_seq = seeds.spawn(3)
    np_rng = np.random.default_rng(np_seq)
    gen = torch.Generator().manual_seed(int(torch_seq.generate_state(1)[0]))

    # Opponent kinds the privileged critic is told about: the live policy, a snapshot, each baseline.
    baseline_names = split_names(args.baselines)
    kinds = ["self", "snapshot", *baseline_names]
    extra_dim = PRIVILEGED_DIM + len(kinds) if args.privileged_critic else 0
    if saved is not None and int(saved["config"].get("critic_extra", 0)) != extra_dim:
        raise ValueError("--privileged-critic / --baselines differ from the checkpoint's critic "
                         f"({saved['config'].get('critic_extra', 0)} extra inputs, these flags give {extra_dim})")

    def new_network(generator: torch.Generator | None = None) -> ActorCritic:
        return ActorCritic(OBS_DIM, hidden_sizes(args.hidden), NUM_ACTIONS, generator=generator,
                           features=args.features, critic_extra=extra_dim, greedy_prior=args.greedy_prior)

    model = new_network(gen)
    if saved is None and args.init_policy:
        start_from_policy(model, args.init_policy)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=1e-5)
    global_step = decisions = updates = 0
    wall_before = 0.0
    schedule = {"snapshot": args.snapshot_every, "eval": args.eval_every, "checkpoint": args.checkpoint_every}
    history: list[dict] = []

    # The pool: the live policy, baselines, then snapshots.
    pool = [PoolEntry("self", "self", PPOAgent(model, seed=int(np_rng.integers(2**31)), deterministic=False,
                                               name="self"))]
    for name in baseline_names:
        pool.append(PoolEntry(name, "baseline", build_agent(name, seed=int(np_rng.integers(2**31)))))

    if saved is not None:
        model.load_state_dict(model_from_checkpoint(saved, ckpt_path).state_dict())
        optimizer.load_state_dict(saved["optimizer"])
        global_step, decisions, updates = saved["global_step"], saved["decisions"], saved["updates"]
        wall_before = saved["wall_time"]
        schedule = dict(saved["schedule"])
        history = list(saved["history"])
        np_rng.bit_generator.state = saved["rng"]["numpy"]
        gen.set_state(saved["rng"]["torch"])
        known = {e.name: e for e in pool}
        for data in saved["pool"]:
            if data["kind"] == "snapshot":
                snap = new_network()
                snap.load_state_dict(data["model"])
                entry = PoolEntry(data["name"], "snapshot", frozen_agent(snap, data["name"], int(np_rng.integers(2**31))),
                                  step=data["step"])
                pool.append(entry)
            else:
                entry = known.get(data["name"])
                if entry is None:  # a baseline dropped from --baselines on resume
                    continue
            entry.score, entry.games = data["score"], data["games"]
        model.train()
        print(f"resumed from {ckpt_path} at step {global_step:,} (update {updates})", file=sys.stderr)

    # Environments: a fresh deal on resume, seeded from (seed, updates) so it differs from the first run.
    batch = SeatBatch(args.num_envs, [e.agent for e in pool], rules=rules, players=players,
                      opponent_weights=pool_weights(pool, args),
                      seed=np.random.SeedSequence([int(env_seq.generate_state(1)[0]), updates]))

    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(args.out, purge_step=global_step if saved is not None else None)
    if saved is None:
        writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
            f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()))

    def make_checkpoint() -> dict[str, Any]:
        return checkpoint_dict(
            model, kind="training", args=dataclasses.asdict(args),
            rules={"players": args.players, "rounds": rules.rounds, "turn_cap": rules.turn_cap, "reward": rules.reward},
            global_step=global_step, decisions=decisions, updates=updates,
            wall_time=wall_before + time.perf_counter() - start,
            optimizer=optimizer.state_dict(), pool=[e.to_data() for e in pool],
            rng={"numpy": np_rng.bit_generator.state, "torch": gen.get_state()},
            schedule=dict(schedule), history=history)

    def run_eval(games: int, seed: int) -> dict[str, dict[str, float]]:
        results = evaluate(model, opponents, args.eval_players, games, seed, rules)
        summary = eval_summary(results)
        for opp, row in summary.items():
            writer.add_scalar(f"eval/win_rate_vs_{opp}", row["win_rate"], global_step)
            writer.add_scalar(f"eval/mean_rank_vs_{opp}", row["mean_rank"], global_step)
            writer.add_scalar(f"eval/mean_score_vs_{opp}", row["mean_score"], global_step)
        history.append({"step": global_step, **{opp: row["win_rate"] for opp, row in summary.items()}})
        return results

    opponents = split_names(args.eval_opponents)
    b, t_len = args.num_envs, args.num_steps
    obs_buf = torch.zeros((t_len, b, OBS_DIM))
    mask_buf = torch.zeros((t_len, b, NUM_ACTIONS), dtype=torch.bool)
    act_buf = torch.zeros((t_len, b), dtype=torch.long)
    logp_buf = torch.zeros((t_len, b))
    val_buf = torch.zeros((t_len, b))
    rew_buf = torch.zeros((t_len, b))
    done_buf = torch.zeros((t_len, b))
    extra_buf = torch.zeros((t_len, b, extra_dim))
    batch_size = b * t_len
    minibatch = batch_size // args.num_minibatches
    kind_onehot = np.eye(len(kinds), dtype=np.float32)

    def critic_extra(privileged: np.ndarray, opponent: np.ndarray) -> torch.Tensor | None:
        """The privileged critic's extra inputs: hidden cards (scaled) + opponent kind."""
        if not extra_dim:
            return None
        kind = np.array([kinds.index(e.name if e.kind == "baseline" else e.kind) for e in pool])[opponent]
        return torch.from_numpy(np.concatenate([privileged / 5.0, kind_onehot[kind]], axis=1))

    from tqdm import tqdm

    bar = tqdm(total=args.total_steps, initial=min(global_step, args.total_steps), unit="step", unit_scale=True,
               disable=not args.progress, dynamic_ncols=True, mininterval=1.0, file=sys.stderr)
    last_eval = " ".join(f"{k[:3]} {v:.2f}" for k, v in history[-1].items() if k != "step") if history else "-"
    start = time.perf_counter()
    revision = git_revision()  # the code this run (or resumption) started with, however long it runs
    cpu_seconds = 0.0  # CPU time of the training iterations (excludes evaluations)
    obs = batch.reset()
    mask = batch.action_masks()
    try:
        while global_step < args.total_steps and not (0 < args.max_seconds <= time.perf_counter() - start):
            t0, c0 = time.perf_counter(), time.process_time()
            d0 = batch.decisions
            if args.anneal_lr:
                # By steps only: a schedule that read the clock would make seeded runs differ.
                optimizer.param_groups[0]["lr"] = args.learning_rate * max(0.0, 1.0 - global_step / args.total_steps)
            ep_ret, ep_len, ep_win, ep_place, ep_trunc = [], [], [], [], []
            opp_sum = np.zeros(len(pool))
            opp_cnt = np.zeros(len(pool))
            # ---------------------------------------------------------------- rollout
            model.eval()
            for step in range(t_len):
                obs_t, mask_t = torch.from_numpy(obs), torch.from_numpy(mask)
                extra_t = critic_extra(batch.privileged(), batch.opponent)
                with torch.inference_mode():
                    logits, value = model(obs_t, mask_t, extra_t)
                    gumbel = -torch.log(-torch.log(torch.rand(logits.shape, generator=gen).clamp_(1e-20, 1.0)))
                    action = (logits + gumbel).argmax(dim=1)
                    logp = F.log_softmax(logits, dim=1).gather(1, action[:, None]).squeeze(1)
                obs_buf[step], mask_buf[step], act_buf[step] = obs_t, mask_t, action
                logp_buf[step], val_buf[step] = logp, value
                if extra_dim:
                    extra_buf[step] = extra_t
                obs, reward, terminated, truncated, info = batch.step(action.numpy())
                done = terminated | truncated
                if truncated.any():  # cut by the turn cap: bootstrap with the value of where it stood
                    with torch.inference_mode():
                        reward = reward.copy()
                        tail = model.value(torch.from_numpy(info["terminal_obs"][truncated]),
                                           critic_extra(info["terminal_privileged"][truncated],
                                                        info["opponent"][truncated])).numpy()
                        reward[truncated] += args.gamma * tail
                rew_buf[step] = torch.from_numpy(reward)
                done_buf[step] = torch.from_numpy(done.astype(np.float32))
                mask = batch.action_masks()
                if done.any():
                    n = info["num_players"][done].astype(np.float64)
                    place = 1.0 - info["rank"][done] / (n - 1)  # 1 = won, 0 = last
                    ep_ret += info["episode_return"][done].tolist()
                    ep_len += info["episode_length"][done].tolist()
                    ep_win += (info["rank"][done] == 0).tolist()
                    ep_place += place.tolist()
                    ep_trunc += truncated[done].tolist()
                    np.add.at(opp_sum, info["opponent"][done], place)
                    np.add.at(opp_cnt, info["opponent"][done], 1)
            global_step += b * t_len
            rollout_time = time.perf_counter() - t0
            rollout_decisions = batch.decisions - d0
            decisions += rollout_decisions

            # ---------------------------------------------------------------- GAE
            with torch.inference_mode():
                next_value = model.value(torch.from_numpy(obs), critic_extra(batch.privileged(), batch.opponent))
            advantages = torch.zeros((t_len, b))
            last = torch.zeros(b)
            for step in reversed(range(t_len)):
                nxt = next_value if step == t_len - 1 else val_buf[step + 1]
                live = 1.0 - done_buf[step]
                delta = rew_buf[step] + args.gamma * nxt * live - val_buf[step]
                last = delta + args.gamma * args.gae_lambda * live * last
                advantages[step] = last
            returns = advantages + val_buf

            # ---------------------------------------------------------------- update
            t1 = time.perf_counter()
            model.train()
            f_obs, f_mask = obs_buf.reshape(-1, OBS_DIM), mask_buf.reshape(-1, NUM_ACTIONS)
            f_act, f_logp = act_buf.reshape(-1), logp_buf.reshape(-1)
            f_adv, f_ret, f_val = advantages.reshape(-1), returns.reshape(-1), val_buf.reshape(-1)
            f_extra = extra_buf.reshape(-1, extra_dim)
            with torch.no_grad():  # functions of the observation alone: once per update, not per epoch
                f_x, f_prior = model.inputs(f_obs)
            clipfracs, approx_kl = [], torch.zeros(())
            for _epoch in range(args.update_epochs):
                order = torch.from_numpy(np_rng.permutation(batch_size))
                for lo in range(0, batch_size, minibatch):
                    idx = order[lo:lo + minibatch]
                    logits, value = model.heads(f_x[idx], None if f_prior is None else f_prior[idx], f_mask[idx],
                                                f_extra[idx] if extra_dim else None)
                    log_probs = F.log_softmax(logits, dim=1)
                    new_logp = log_probs.gather(1, f_act[idx, None]).squeeze(1)
                    # Masked entries have probability 0: leave them out of the entropy sum.
                    entropy = -torch.where(f_mask[idx], log_probs.exp() * log_probs, 0.0).sum(dim=1)
                    log_ratio = new_logp - f_logp[idx]
                    ratio = log_ratio.exp()
                    with torch.no_grad():
                        approx_kl = ((ratio - 1) - log_ratio).mean()
                        clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                    adv = f_adv[idx]
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                    pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                    v_loss = 0.5 * ((value - f_ret[idx]) ** 2).mean()
                    ent = entropy.mean()
                    loss = pg_loss - args.ent_coef * ent + args.vf_coef * v_loss
                    optimizer.zero_grad()
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                    optimizer.step()
                if args.target_kl > 0 and approx_kl.item() > args.target_kl:
                    break
            updates += 1
            update_time = time.perf_counter() - t1
            if not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
                # Stop before a NaN network reaches a checkpoint, the pool or the policy file.
                raise ValueError(f"training diverged at step {global_step:,}: the network's weights are no longer "
                                 f"finite (last losses: policy {pg_loss.item()}, value {v_loss.item()}); "
                                 f"{ckpt_path} still holds the last good checkpoint (try a lower --learning-rate)")

            # ---------------------------------------------------------------- pool
            seen = opp_cnt > 0
            for i in np.flatnonzero(seen):
                pool[i].score = float(0.7 * pool[i].score + 0.3 * opp_sum[i] / opp_cnt[i])
                pool[i].games += int(opp_cnt[i])
            if args.pool_size > 0 and global_step >= schedule["snapshot"]:
                while schedule["snapshot"] <= global_step:
                    schedule["snapshot"] += args.snapshot_every
                name = f"snap@{global_step}"
                agent = frozen_agent(model, name, int(np_rng.integers(2**31)))
                snaps = [i for i, e in enumerate(pool) if e.kind == "snapshot"]
                entry = PoolEntry(name, "snapshot", agent, step=global_step)
                if len(snaps) >= args.pool_size:
                    pool[min(snaps, key=lambda i: pool[i].step)] = entry  # oldest leaves; its index is reused
                else:
                    pool.append(entry)
            batch.set_opponents([e.agent for e in pool], pool_weights(pool, args))

            # ---------------------------------------------------------------- logging
            elapsed = time.perf_counter() - t0
            cpu = max(time.process_time() - c0, 1e-9)  # what this process got of the CPU (shared machine)
            sps, dps = b * t_len / elapsed, rollout_decisions / elapsed
            cpu_seconds += cpu
            with torch.no_grad():
                var_y = f_ret.var()
                explained = float("nan") if var_y == 0 else float(1 - (f_ret - f_val).var() / var_y)
            writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
            writer.add_scalar("charts/steps_per_second", sps, global_step)
            writer.add_scalar("charts/decisions_per_second", dps, global_step)
            writer.add_scalar("charts/decisions_per_cpu_second", rollout_decisions / cpu, global_step)
            writer.add_scalar("charts/rollout_seconds", rollout_time, global_step)
            writer.add_scalar("charts/update_seconds", update_time, global_step)
            writer.add_scalar("charts/pool_size", len(pool), global_step)
            if ep_ret:
                writer.add_scalar("charts/episodic_return", float(np.mean(ep_ret)), global_step)
                writer.add_scalar("charts/episodic_length", float(np.mean(ep_len)), global_step)
                writer.add_scalar("charts/win_rate", float(np.mean(ep_win)), global_step)
                writer.add_scalar("charts/placing", float(np.mean(ep_place)), global_step)
                writer.add_scalar("charts/truncated_share", float(np.mean(ep_trunc)), global_step)
            for e in pool:
                if e.kind != "snapshot":
                    writer.add_scalar(f"charts/placing_vs_{e.name}", e.score, global_step)
            writer.add_scalar("losses/value_loss", v_loss.item(), global_step)
            writer.add_scalar("losses/policy_loss", pg_loss.item(), global_step)
            writer.add_scalar("losses/entropy", ent.item(), global_step)
            writer.add_scalar("losses/approx_kl", approx_kl.item(), global_step)
            writer.add_scalar("losses/clipfrac", float(np.mean(clipfracs)), global_step)
            writer.add_scalar("losses/explained_variance", explained, global_step)

            out_of_time = 0 < args.max_seconds <= time.perf_counter() - start
            if global_step >= schedule["eval"] or global_step >= args.total_steps or out_of_time:
                while schedule["eval"] <= global_step:
                    schedule["eval"] += args.eval_every
                run_eval(args.eval_games, seed=args.seed + 1)
                last_eval = " ".join(f"{k[:3]} {v:.2f}" for k, v in history[-1].items() if k != "step")
            bar.set_postfix_str(f"{sps:,.0f} steps/s {dps:,.0f} dec/s | eval {last_eval}", refresh=False)
            bar.update(min(global_step, args.total_steps) - bar.n)

            if global_step >= schedule["checkpoint"]:
                while schedule["checkpoint"] <= global_step:
                    schedule["checkpoint"] += args.checkpoint_every
                atomic_save(make_checkpoint(), ckpt_path)
    except KeyboardInterrupt:
        # Keep what was learned: the checkpoint is written at an update boundary.
        atomic_save(make_checkpoint(), ckpt_path)
        bar.close()
        writer.close()
        print(f"\ninterrupted; checkpoint at step {global_step:,} in {ckpt_path} (continue with --resume)",
              file=sys.stderr)
        raise
    bar.close()
    wall = wall_before + time.perf_counter() - start
    atomic_save(make_checkpoint(), ckpt_path)
    policy_path = os.path.join(args.out, "policy.pt")
    atomic_save(checkpoint_dict(model, kind="policy", args=dataclasses.asdict(args), global_step=global_step,
                                decisions=decisions, wall_time=wall, git_revision=revision,
                                command=" ".join(["python -m startups_env.train.selfplay", *sys.argv[1:]])), policy_path)

    summary: dict[str, Any] = {"global_step": global_step, "decisions": decisions, "wall_time": wall,
                               "steps_per_second": global_step / wall if wall else 0.0,
                               "decisions_per_second": decisions / wall if wall else 0.0}
    run_decisions = decisions - (saved["decisions"] if saved is not None else 0)
    print(f"trained {global_step:,} learner steps ({decisions:,} decisions, all seats) in {wall:.0f} s: "
          f"{summary['steps_per_second']:,.0f} learner steps/s, {summary['decisions_per_second']:,.0f} decisions/s "
          f"wall clock, evaluations included; {run_decisions / max(cpu_seconds, 1e-9):,.0f} decisions per "
          f"CPU second of training")
    if args.final_eval_games > 0:
        results = evaluate(model, opponents, args.eval_players, args.final_eval_games, args.seed + 2, rules, rate=True)
        summary["eval"] = eval_summary(results)
        for opp, res in results.items():
            writer.add_scalar(f"eval/final_win_rate_vs_{opp}", summary["eval"][opp]["win_rate"], global_step)
            print(f"\n== final evaluation: ppo vs {args.eval_players - 1} x {opp} ==")
            print(res.table())
        atomic_write_text(json.dumps({k: res.to_json() for k, res in results.items()}, indent=2),
                          os.path.join(args.out, "eval.json"))
    writer.close()
    curve = plot_learning_curve(args.out)
    if curve:
        print(f"learning curve: {curve}")
    print(f"policy: {policy_path}  (python -m startups_env.agents.arena --agents ppo:{policy_path},greedy,greedy,greedy "
          f"--players 4)")
    return summary


def plot_learning_curve(out_dir: str) -> str | None:
    """Write OUT/learning_curve.png from the run's TensorBoard scalars (every invocation,
    resumed ones included): episodic return and win rate of the training games, and the
    periodic evaluation win rates. Returns the path, or None when nothing was logged yet."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(out_dir, size_guidance={"scalars": 0})
    events.Reload()
    tags = events.Tags().get("scalars", [])
    train_tags = [t for t in ("charts/episodic_return", "charts/win_rate") if t in tags]
    eval_tags = sorted(t for t in tags if t.startswith("eval/win_rate_vs_"))
    if not train_tags and not eval_tags:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for ax, chosen, title in ((axes[0], train_tags, "training games"), (axes[1], eval_tags, "evaluation (arena)")):
        for tag in chosen:
            points = events.Scalars(tag)
            ax.plot([p.step for p in points], [p.value for p in points], marker="." if len(points) < 30 else None,
                    label=tag.split("/", 1)[1])
        ax.set_title(title)
        ax.set_xlabel("learner steps")
        ax.grid(alpha=0.3)
        if chosen:
            ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "learning_curve.png")
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=90))
    plt.close(fig)
    return path


def main(argv=None) -> int:
    args, given = parse_args(argv)
    try:
        train(args, given)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
