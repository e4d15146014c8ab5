"""Self-play PPO for *Startups*: one readable training loop, CleanRL style (``train()``
below: rollout, GAE, PPO update, pool, logging, evaluation, checkpoint). The opponent pool
and the privileged critic's inputs are in ``startups_env.train.pool``, the arena
evaluation and the learning curve in ``startups_env.train.evaluate``, the training
checkpoint and ``--resume`` in ``startups_env.train.checkpoints``.

    python -m startups_env.train.selfplay                                  # defaults: <= 15 min on 2 busy cores
    python -m startups_env.train.selfplay --total-steps 200000 --out runs/quick
    python -m startups_env.train.selfplay --out runs/quick --resume --total-steps 400000   # continue
    tensorboard --logdir runs
    python -m startups_env.agents.arena --agents ppo:runs/quick/policy.pt,greedy,greedy,greedy --players 4

**Environment.** ``num_envs`` games run in lockstep on one batch simulator
(``startups_env.envs.vector.SeatBatch``): the learner holds one random seat per game, table
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
weights_only=True)`` reads them. A new run refuses an ``--out`` that holds another run's
files, which it would replace (and whose TensorBoard events it would mix with its own):
``--resume`` continues that run, ``--overwrite`` deletes its files first.

**Resume.** ``--resume`` reloads ``checkpoint.pt`` from ``--out``: model, optimizer,
pool, counters and generator states; flags given on the command line override the saved
ones (e.g. a larger ``--total-steps``); the network shape cannot change. Games that were
in progress are dealt afresh, and TensorBoard events after the checkpoint's step are
purged, so nothing written is lost or duplicated.
"""


from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from startups_env.agents.ppo import ActorCritic, checkpoint_dict, read_checkpoint
from startups_env.agents.registry import build_agent, split_names
from startups_env.train.checkpoints import (
    Progress,
    merge_saved_args,
    read_training_checkpoint,
    restore_training,
    start_from_policy,
    training_checkpoint,
)
from startups_env.train.common import atomic_save, atomic_write_text, git_revision, hidden_sizes
from startups_env.train.evaluate import eval_summary, evaluate, plot_learning_curve
from startups_env.train.pool import CriticInputs, OpponentPool

from startups_env.envs.vector import SeatBatch, parse_players
from startups_env.startups.rules import REWARD_SCHEMES
from startups_env.table.games import DEFAULT_GAME, game_by_name
from startups_env.tools.cli import dataclass_parser, parse_dataclass, prog, report_error


@dataclass
class Args:
    exp_name: str = "selfplay"
    """name of the run (TensorBoard text and policy metadata)"""
    game: str = DEFAULT_GAME
    """the game to train on: startups (Oink Games' Startups) or another game of startups_env.table.games"""
    seed: int = 1
    """seed of everything: deals, seats, opponents, initialisation, sampling"""
    out: str = "runs/selfplay"
    """output folder: checkpoint.pt, policy.pt, eval.json, TensorBoard events"""
    resume: bool = False
    """continue from OUT/checkpoint.pt (flags given now override the saved ones)"""
    overwrite: bool = False
    """start a new run in an --out that holds one, deleting that run's files first (checkpoint, policy,
    evaluation, learning curve, TensorBoard events); without it (or --resume) such a folder is refused"""
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
    players: str = ""
    """table sizes drawn per game: a number, a range like 3-7 or a list like 3,4,6 (as every tool's --players);
    default: 3 up to the game's largest table (3-7 in Startups, 3-6 in Стартап)"""
    reward: str = "rank"
    """terminal reward scheme of the simulator: rank, win, score or margin"""
    turn_cap: int = 0
    """turns after which a game is truncated (and bootstrapped); 0: the game's own (400 in Startups, fixed at 60
    in Стартап)"""
    rules: str = "rulebook"
    """the ruleset of training and evaluation: a preset (rulebook, summary) or a comma-separated list of
    options (market_row, chip_triples_coins, payout_in_points), as every tool's --rules (docs/rules.md)"""
    hidden: str = "128,128"
    """widths of the hidden layers of the actor and of the critic"""
    features: bool = True
    """feed the network derived per-company features (startups_env.agents.ppo.derived_features) beside the observation"""
    greedy_prior: bool = True
    """start the policy from the greedy bot: its action scores are an input and a learned multiple of them is
    added to the actor's logits (startups_env.agents.ppo.ActorCritic); it costs some speed (what it is worth, measured:
    docs/experiments.md)"""
    init_policy: str = ""
    """start a new run from this policy file (e.g. one distilled from the search bot by startups_env.train.distill) instead of
    from scratch: its actor, and its critic with the privileged inputs at zero weight; --hidden, --features and
    --greedy-prior must match it (ignored on --resume)"""
    privileged_critic: bool = True
    """give the critic (training only) every seat's hand, the pile's make-up and the kind of opponent at the
    table; the policy still acts from its own observation"""
    learning_rate: float = 1e-3
    """Adam learning rate (decays linearly to 0 at total_steps if anneal_lr; the default was chosen by
    measurement: docs/experiments.md)"""
    anneal_lr: bool = True
    """decay the learning rate linearly over the run"""
    gamma: float = 1.0
    """discount (games are short and the reward is terminal)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    num_minibatches: int = 16
    """minibatches per epoch (16 x 1024 samples with the defaults; chosen by measurement: docs/experiments.md)"""
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
    baselines: str = ""
    """comma-separated agents (arena specs, e.g. greedy or search[determinizations=8]) that join the opponent pool;
    default: the game's (random,greedy in Startups, random,builder in Стартап)"""
    pool_size: int = 8
    """frozen past selves kept in the pool"""
    snapshot_every: int = 200_000
    """learner steps between snapshots joining the pool"""
    pfsp_power: float = 2.0
    """prioritisation toward opponents the learner does not beat (0: uniform)"""
    eval_every: int = 0
    """learner steps between evaluations (arena vs each eval opponent; 0: a tenth of --total-steps, so that a
    short run draws a curve too). One more runs before the first update and one at the end"""
    eval_games: int = 200
    """games per opponent in periodic evaluations"""
    eval_opponents: str = ""
    """agents the evaluation plays against (all other seats); default: the game's, as --baselines"""
    eval_players: int = 4
    """table size of evaluations"""
    final_eval_games: int = 1000
    """games per opponent in the final evaluation table (0: skip)"""
    checkpoint_every: int = 500_000
    """learner steps between checkpoints (one is always written at the end)"""
    torch_threads: int = 1
    """torch intra-op threads. 1 by default: the simulator and the opponents run between the
    network calls anyway, and more threads compete with them for the cores (docs/experiments.md)"""
    progress: bool = True
    """show a tqdm progress bar"""
    traceback: bool = False
    """on an error, print Python's whole traceback before the message"""




# ----------------------------------------------------------------------------- command line
def parse_args(argv=None) -> tuple[Args, dict[str, Any]]:
    """(Args from the command line, the dict of flags given explicitly: ``--resume`` keeps
    the checkpoint's value of every other setting). One ``--field-name`` per field
    (``--flag/--no-flag`` for booleans), its help the docstring under the field
    (:func:`startups_env.tools.cli.dataclass_parser`)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = dataclass_parser(Args, prog("startups_env.train.selfplay"),
                              "Self-play PPO for Startups (CleanRL style): train a policy against a pool of "
                              "opponents. Flags given with --resume override the checkpoint's settings.")
    args = Args(**vars(parse_dataclass(parser, argv)))
    names = {f.name for f in dataclasses.fields(Args)}
    given = {}
    for token in argv:  # parsed, so each --name is a field's flag (or --no-name, --name=value)
        name = token[2:].split("=", 1)[0].replace("-", "_") if token.startswith("--") else ""
        name = name[3:] if name not in names and name.startswith("no_") else name
        if name in names:
            given[name] = getattr(args, name)
    return args, given


def check_args(args: Args) -> None:
    """Raise ValueError naming the first bad setting."""
    game = game_by_name(args.game)
    try:
        parse_players(table_sizes(args), game.min_players, game.max_players)
    except ValueError as exc:
        raise ValueError(f"--players: {exc}") from None
    if args.reward not in REWARD_SCHEMES:
        raise ValueError(f"--reward must be one of {REWARD_SCHEMES}, got {args.reward!r}")
    hidden_sizes(args.hidden)
    for name in ("torch_threads", "total_steps", "num_envs", "num_steps", "num_minibatches", "update_epochs", "snapshot_every",
                 "checkpoint_every", "eval_games"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if (args.num_envs * args.num_steps) % args.num_minibatches:
        raise ValueError("--num-envs * --num-steps must be divisible by --num-minibatches")
    if not 0.0 <= args.self_play_share < 1.0:
        raise ValueError(f"--self-play-share must be in [0, 1), got {args.self_play_share}")
    if args.pool_size < 0 or args.final_eval_games < 0 or args.seed < 0 or args.eval_every < 0:
        raise ValueError("--pool-size, --final-eval-games, --seed and --eval-every must be >= 0")
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
    try:
        game.make_rules(args.eval_players, ruleset=args.rules, **turn_cap(args))  # validates all three
    except ValueError as exc:
        raise ValueError(f"--rules, --eval-players or --turn-cap: {exc}") from None
    if args.resume and args.overwrite:
        raise ValueError("--resume continues the run in --out and --overwrite replaces it: give one of them")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise ValueError(f"--out {args.out} is a file, not a folder")
    if args.init_policy:
        try:  # read here, so that a missing or broken file fails before any folder or file is made
            read_checkpoint(args.init_policy, game.name)
        except (ValueError, FileNotFoundError) as exc:
            raise ValueError(f"--init-policy: {exc}") from None
    for flag, names in (("--baselines", args.baselines), ("--eval-opponents", args.eval_opponents)):
        for name in split_names(names):
            try:  # built once here, so that a typo or a missing checkpoint fails before any training
                build_agent(name, game=game.name)
            except (ValueError, FileNotFoundError) as exc:
                raise ValueError(f"{flag}: {exc}") from None


def table_sizes(args: Args) -> str:
    """--players, or the default: 3 up to the game's largest table."""
    game = game_by_name(args.game)
    return args.players or f"{max(3, game.min_players)}-{game.max_players}"


def turn_cap(args: Args) -> dict[str, int]:
    """The turn cap as a setting of the game's rules: none where --turn-cap is 0 (the game's own)."""
    return {"turn_cap": args.turn_cap} if args.turn_cap else {}


#: What a run writes in --out, besides TensorBoard's ``events.out.tfevents.*`` files.
RUN_FILES = ("checkpoint.pt", "policy.pt", "eval.json", "learning_curve.png")


def run_files(folder: str) -> list[str]:
    """The names of a training run's outputs in ``folder`` (none if it does not exist)."""
    if not os.path.isdir(folder):
        return []
    return sorted(name for name in os.listdir(folder) if name in RUN_FILES or name.startswith("events.out.tfevents."))


def check_no_run(args: Args) -> None:
    """ValueError if a new run (not ``--resume``d from a checkpoint) would write over a run in
    ``--out`` without ``--overwrite``: its policy and checkpoint would be replaced, and
    TensorBoard would mix both runs' events."""
    found = run_files(args.out)
    if found and not args.overwrite:
        shown = ", ".join(found[:4]) + (f" and {len(found) - 4} more" if len(found) > 4 else "")
        if args.resume:
            raise ValueError(f"--resume: {args.out} has no checkpoint.pt to continue from, but files of a run "
                             f"({shown}); replace them with --overwrite (instead of --resume) or use a new --out")
        raise ValueError(f"--out {args.out} already holds a training run ({shown}); continue it with --resume, "
                         f"train into another folder with a new --out, or replace it with --overwrite")


def clear_run(folder: str) -> None:
    """Delete the outputs of a run in ``folder`` (``--overwrite``); other files stay."""
    for name in run_files(folder):
        os.remove(os.path.join(folder, name))


def eval_interval(args: Args) -> int:
    """Learner steps between periodic evaluations: ``--eval-every``, or (0) a tenth of the run
    rounded up to whole rollouts, so that the evaluations fall evenly spaced."""
    rollout = args.num_envs * args.num_steps
    return args.eval_every or rollout * max(1, math.ceil(args.total_steps / 10 / rollout))


def resolve_args(args: Args, given: dict[str, Any] | None) -> tuple[Args, dict[str, Any] | None]:
    """(the run's checked settings, its training checkpoint when resuming one). On
    ``--resume`` the checkpoint's settings hold where no flag was ``given``."""
    given = dict(vars(args) if given is None else given)
    saved = read_training_checkpoint(os.path.join(args.out, "checkpoint.pt")) if args.resume else None
    if saved is not None:
        merged = merge_saved_args(saved, given, args.out)
        args = Args(**{f.name: merged.get(f.name, f.default) for f in dataclasses.fields(Args)})
    opponents = ",".join(game_by_name(args.game).opponents)  # the defaults follow the game
    args = dataclasses.replace(args, baselines=args.baselines or opponents, eval_opponents=args.eval_opponents or opponents)
    check_args(args)
    if saved is None:
        check_no_run(args)
    return args, saved


# ----------------------------------------------------------------------------- rollout
@dataclass
class Rollout:
    """One rollout's learner samples, each [num_steps, num_envs, ...]."""

    obs: torch.Tensor
    mask: torch.Tensor
    action: torch.Tensor
    logp: torch.Tensor
    value: torch.Tensor
    reward: torch.Tensor
    done: torch.Tensor
    extra: torch.Tensor  # the privileged critic's inputs ([..., 0] without them)

    @classmethod
    def empty(cls, num_steps: int, num_envs: int, extra_dim: int, obs_dim: int, num_actions: int) -> Rollout:
        t, b = num_steps, num_envs
        return cls(obs=torch.zeros((t, b, obs_dim)), mask=torch.zeros((t, b, num_actions), dtype=torch.bool),
                   action=torch.zeros((t, b), dtype=torch.long), logp=torch.zeros((t, b)), value=torch.zeros((t, b)),
                   reward=torch.zeros((t, b)), done=torch.zeros((t, b)), extra=torch.zeros((t, b, extra_dim)))


@dataclass
class Games:
    """The learner's games that ended during one rollout; per pool entry, the sums of the
    learner's placings (1 = won, 0 = last) and wins, and the number of games against it."""

    pool_size: int
    returns: list[float] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    wins: list[bool] = field(default_factory=list)
    placings: list[float] = field(default_factory=list)
    truncated: list[bool] = field(default_factory=list)
    place_sum: np.ndarray = field(init=False)
    win_sum: np.ndarray = field(init=False)
    count: np.ndarray = field(init=False)

    def __post_init__(self):
        self.place_sum, self.win_sum, self.count = (np.zeros(self.pool_size) for _ in range(3))

    def add(self, info: dict[str, np.ndarray], done: np.ndarray, truncated: np.ndarray) -> None:
        n = info["num_players"][done].astype(np.float64)
        place = 1.0 - info["rank"][done] / (n - 1)
        self.returns += info["episode_return"][done].tolist()
        self.lengths += info["episode_length"][done].tolist()
        self.wins += (info["rank"][done] == 0).tolist()
        self.placings += place.tolist()
        self.truncated += truncated[done].tolist()
        np.add.at(self.place_sum, info["opponent"][done], place)
        np.add.at(self.win_sum, info["opponent"][done], info["rank"][done] == 0)
        np.add.at(self.count, info["opponent"][done], 1)


def sample_actions(logits: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(actions sampled from the masked logits, their log-probabilities): Gumbel-max with the
    run's own generator (no global random state)."""
    gumbel = -torch.log(-torch.log(torch.rand(logits.shape, generator=gen).clamp_(1e-20, 1.0)))
    action = (logits + gumbel).argmax(dim=1)
    return action, F.log_softmax(logits, dim=1).gather(1, action[:, None]).squeeze(1)


def collect_rollout(model: ActorCritic, batch: SeatBatch, buf: Rollout, obs: np.ndarray, mask: np.ndarray,
                    critic_inputs, gen: torch.Generator, gamma: float, pool_size: int):
    """Fill ``buf`` with ``num_steps`` learner decisions in every game, from ``obs``/``mask``.
    ``critic_inputs(privileged, opponent)`` gives the critic's extra inputs. Returns the next
    (obs, mask) and the :class:`Games` that ended."""
    model.eval()
    games = Games(pool_size)
    for step in range(buf.action.shape[0]):
        obs_t, mask_t = torch.from_numpy(obs), torch.from_numpy(mask)
        extra_t = critic_inputs(batch.privileged(), batch.opponent)
        with torch.inference_mode():
            logits, value = model(obs_t, mask_t, extra_t)
            action, logp = sample_actions(logits, gen)
        buf.obs[step], buf.mask[step], buf.action[step] = obs_t, mask_t, action
        buf.logp[step], buf.value[step] = logp, value
        if extra_t is not None:
            buf.extra[step] = extra_t
        obs, reward, terminated, truncated, info = batch.step(action.numpy())
        done = terminated | truncated
        if truncated.any():  # cut by the turn cap: bootstrap with the value of where it stood
            with torch.inference_mode():
                reward = reward.copy()
                tail = model.value(torch.from_numpy(info["terminal_obs"][truncated]),
                                   critic_inputs(info["terminal_privileged"][truncated],
                                                 info["opponent"][truncated])).numpy()
                reward[truncated] += gamma * tail
        buf.reward[step] = torch.from_numpy(reward)
        buf.done[step] = torch.from_numpy(done.astype(np.float32))
        mask = batch.action_masks()
        if done.any():
            games.add(info, done, truncated)
    return obs, mask, games


def gae(buf: Rollout, next_value: torch.Tensor, gamma: float, lam: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(advantages, returns) by generalised advantage estimation; ``next_value``: the value
    of the observation after the rollout."""
    t_len = buf.reward.shape[0]
    advantages = torch.zeros_like(buf.reward)
    last = torch.zeros_like(next_value)
    for step in reversed(range(t_len)):
        nxt = next_value if step == t_len - 1 else buf.value[step + 1]
        live = 1.0 - buf.done[step]
        delta = buf.reward[step] + gamma * nxt * live - buf.value[step]
        last = delta + gamma * lam * live * last
        advantages[step] = last
    return advantages, advantages + buf.value


# ----------------------------------------------------------------------------- PPO update
def ppo_loss(model: ActorCritic, inputs: tuple, act, old_logp, adv, ret, args: Args):
    """(loss, policy loss, value loss, entropy, approximate KL, clip fraction) of one minibatch.
    inputs: the network's (features, greedy prior, mask, critic extra) of the minibatch."""
    logits, value = model.heads(*inputs)
    log_probs = F.log_softmax(logits, dim=1)
    new_logp = log_probs.gather(1, act[:, None]).squeeze(1)
    # Masked entries have probability 0: leave them out of the entropy sum.
    entropy = -torch.where(inputs[2], log_probs.exp() * log_probs, 0.0).sum(dim=1)
    log_ratio = new_logp - old_logp
    ratio = log_ratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean()
        clipfrac = ((ratio - 1.0).abs() > args.clip_coef).float().mean().item()
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)  # normalised per minibatch
    pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
    v_loss = 0.5 * ((value - ret) ** 2).mean()
    ent = entropy.mean()
    return pg_loss - args.ent_coef * ent + args.vf_coef * v_loss, pg_loss, v_loss, ent, approx_kl, clipfrac


def ppo_update(model: ActorCritic, optimizer: torch.optim.Optimizer, buf: Rollout, advantages: torch.Tensor,
               returns: torch.Tensor, args: Args, rng: np.random.Generator) -> dict[str, float]:
    """``args.update_epochs`` passes of clipped PPO over the rollout in shuffled minibatches
    (``rng`` shuffles). Returns the losses of the last minibatch and the update's statistics."""
    model.train()
    n = buf.action.numel()
    minibatch = n // args.num_minibatches
    obs, mask = buf.obs.reshape(n, model.obs_dim), buf.mask.reshape(n, model.num_actions)
    act, old_logp, extra = buf.action.reshape(n), buf.logp.reshape(n), buf.extra.reshape(n, buf.extra.shape[-1])
    adv, ret, val = advantages.reshape(n), returns.reshape(n), buf.value.reshape(n)
    with torch.no_grad():  # functions of the observation alone: once per update, not per epoch
        x, prior = model.inputs(obs)
    clipfracs, approx_kl = [], torch.zeros(())
    for _epoch in range(args.update_epochs):
        order = torch.from_numpy(rng.permutation(n))
        for lo in range(0, n, minibatch):
            idx = order[lo:lo + minibatch]
            inputs = (x[idx], None if prior is None else prior[idx], mask[idx], extra[idx] if extra.shape[1] else None)
            loss, pg_loss, v_loss, ent, approx_kl, clipfrac = ppo_loss(model, inputs, act[idx], old_logp[idx],
                                                                       adv[idx], ret[idx], args)
            clipfracs.append(clipfrac)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
        if args.target_kl > 0 and approx_kl.item() > args.target_kl:
            break
    with torch.no_grad():
        var_y = ret.var()
        explained = float("nan") if var_y == 0 else float(1 - (ret - val).var() / var_y)
    return {"value_loss": v_loss.item(), "policy_loss": pg_loss.item(), "entropy": ent.item(),
            "approx_kl": approx_kl.item(), "clipfrac": float(np.mean(clipfracs)), "explained_variance": explained}


# ----------------------------------------------------------------------------- the run
@dataclass
class Run:
    """What the pieces of a training run share."""

    args: Args
    rules: Any  # the game's settings (startups_env.Rules in Startups)
    model: ActorCritic
    optimizer: torch.optim.Optimizer
    np_rng: np.random.Generator  # shuffles minibatches, seeds the pool's agents
    gen: torch.Generator  # initialises the network, samples the learner's actions
    pool: OpponentPool
    critic: CriticInputs
    batch: SeatBatch
    writer: Any  # torch.utils.tensorboard.SummaryWriter
    progress: Progress
    resumed: bool
    start: float = 0.0  # perf_counter() when this invocation's training began
    revision: str = field(default_factory=git_revision)  # the code this invocation started with
    cpu_seconds: float = 0.0  # CPU time of this invocation's training iterations (evaluations excluded)

    @property
    def checkpoint_path(self) -> str:
        return os.path.join(self.args.out, "checkpoint.pt")

    def critic_inputs(self, privileged: np.ndarray, opponent: np.ndarray) -> torch.Tensor | None:
        return self.critic(privileged, opponent, self.pool)

    def out_of_time(self) -> bool:
        return 0 < self.args.max_seconds <= time.perf_counter() - self.start

    def save_checkpoint(self) -> None:
        wall = self.progress.wall_time + time.perf_counter() - self.start
        atomic_save(training_checkpoint(self.model, self.optimizer, dataclasses.asdict(self.args), self.rules,
                                        self.progress, wall, self.pool, self.np_rng, self.gen), self.checkpoint_path)


def setup(args: Args, saved: dict[str, Any] | None) -> Run:
    """Build a run from checked args, or take back ``saved`` (a training checkpoint) into it."""
    torch.set_num_threads(args.torch_threads)
    game = game_by_name(args.game)
    players = parse_players(table_sizes(args), game.min_players, game.max_players)
    rules = game.make_rules(players[0], ruleset=args.rules, reward=args.reward, **turn_cap(args))
    env_seq, np_seq, torch_seq = np.random.SeedSequence(args.seed).spawn(3)
    np_rng = np.random.default_rng(np_seq)
    gen = torch.Generator().manual_seed(int(torch_seq.generate_state(1)[0]))
    baselines = split_names(args.baselines)
    critic = CriticInputs(baselines, args.privileged_critic, game.privileged_dim)

    def new_network(generator: torch.Generator | None = None) -> ActorCritic:
        return ActorCritic(game.obs_dim, hidden_sizes(args.hidden), game.num_actions, generator=generator,
                           features=args.features, critic_extra=critic.dim, greedy_prior=args.greedy_prior,
                           game=game.name)

    model = new_network(gen)
    if saved is None and args.init_policy:
        start_from_policy(model, args.init_policy)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=1e-5)
    pool = OpponentPool(model, baselines, np_rng, self_play_share=args.self_play_share, pfsp_power=args.pfsp_power,
                        size=args.pool_size, game=game.name)
    if saved is None:
        progress = Progress(schedule={"snapshot": args.snapshot_every, "eval": eval_interval(args),
                                      "checkpoint": args.checkpoint_every})
    else:
        progress = restore_training(saved, os.path.join(args.out, "checkpoint.pt"), model, optimizer, pool, np_rng,
                                    gen, new_network)
    # Environments: a fresh deal on resume, seeded from (seed, updates) so it differs from the first run.
    batch = SeatBatch(args.num_envs, pool.agents(), rules=rules, players=players, opponent_weights=pool.weights(),
                      seed=np.random.SeedSequence([int(env_seq.generate_state(1)[0]), progress.updates]), game=game)
    from torch.utils.tensorboard import SummaryWriter

    if saved is None and args.overwrite:
        clear_run(args.out)
    os.makedirs(args.out, exist_ok=True)  # only now: a run that fails to start leaves no folder behind
    writer = SummaryWriter(args.out, purge_step=progress.global_step if saved is not None else None)
    if saved is None:
        writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(
            f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()))
    return Run(args, rules, model, optimizer, np_rng, gen, pool, critic, batch, writer, progress, saved is not None)


def due(schedule: dict[str, int], event: str, step: int, every: int, force: bool = False) -> bool:
    """Whether the periodic ``event`` falls due at ``step`` (or is ``force``d); if so its next
    step moves past ``step``."""
    if step < schedule[event] and not force:
        return False
    while schedule[event] <= step:
        schedule[event] += every
    return True


def update_pool(run: Run, games: Games) -> None:
    """The rollout's results into the PFSP scores; a snapshot when one is due; the batch's
    opponents and their weights for the next rollout."""
    run.pool.record(games.place_sum, games.count)
    step = run.progress.global_step
    if run.args.pool_size > 0 and due(run.progress.schedule, "snapshot", step, run.args.snapshot_every):
        run.pool.add_snapshot(run.model, step, run.np_rng)
    run.batch.set_opponents(run.pool.agents(), run.pool.weights())


def stop_if_diverged(run: Run, stats: dict[str, float]) -> None:
    """Stop before a NaN network reaches a checkpoint, the pool or the policy file."""
    if not all(bool(torch.isfinite(p).all()) for p in run.model.parameters()):
        raise ValueError(f"training diverged at step {run.progress.global_step:,}: the network's weights are no longer "
                         f"finite (last losses: policy {stats['policy_loss']}, value {stats['value_loss']}); "
                         f"{run.checkpoint_path} still holds the last good checkpoint (try a lower --learning-rate)")


# ----------------------------------------------------------------------------- logging and evaluation
def log_update(run: Run, games: Games, stats: dict[str, float], timing: dict[str, float]) -> None:
    """One update's scalars: speed (charts/), the training games (charts/, ``win_rate_vs_*``
    per opponent), losses (losses/)."""
    writer, step = run.writer, run.progress.global_step
    writer.add_scalar("charts/learning_rate", run.optimizer.param_groups[0]["lr"], step)
    for name, value in timing.items():
        writer.add_scalar(f"charts/{name}", value, step)
    writer.add_scalar("charts/pool_size", len(run.pool.entries), step)
    if games.returns:
        writer.add_scalar("charts/episodic_return", float(np.mean(games.returns)), step)
        writer.add_scalar("charts/episodic_length", float(np.mean(games.lengths)), step)
        writer.add_scalar("charts/win_rate", float(np.mean(games.wins)), step)
        writer.add_scalar("charts/placing", float(np.mean(games.placings)), step)
        writer.add_scalar("charts/truncated_share", float(np.mean(games.truncated)), step)
    for e in run.pool.entries:
        if e.kind != "snapshot":
            writer.add_scalar(f"charts/placing_vs_{e.name}", e.score, step)
    # The learner's win rate in this rollout's games against each baseline, itself and its past selves
    # (the pool as it was during the rollout: a snapshot may have joined since).
    entries = run.pool.entries[:games.pool_size]
    snaps = np.array([e.kind == "snapshot" for e in entries])
    groups = [(e.name, np.arange(len(entries)) == i) for i, e in enumerate(entries) if not snaps[i]]
    for name, chosen in groups + [("snapshots", snaps)]:
        if games.count[chosen].sum():
            writer.add_scalar(f"charts/win_rate_vs_{name}", games.win_sum[chosen].sum() / games.count[chosen].sum(), step)
    for name, value in stats.items():
        writer.add_scalar(f"losses/{name}", value, step)


def run_eval(run: Run, games: int, seed: int) -> None:
    """A periodic evaluation: logged under eval/ and kept in the run's history."""
    results = evaluate(run.model, split_names(run.args.eval_opponents), run.args.eval_players, games, seed, run.rules)
    step, summary = run.progress.global_step, eval_summary(results)
    for opp, row in summary.items():
        run.writer.add_scalar(f"eval/win_rate_vs_{opp}", row["win_rate"], step)
        run.writer.add_scalar(f"eval/mean_rank_vs_{opp}", row["mean_rank"], step)
        run.writer.add_scalar(f"eval/mean_score_vs_{opp}", row["mean_score"], step)
    run.progress.history.append({"step": step, **{opp: row["win_rate"] for opp, row in summary.items()}})


def eval_text(history: list[dict]) -> str:
    """The last evaluation's win rates, e.g. "vs random 0.79, vs greedy 0.27"."""
    return ", ".join(f"vs {k} {v:.2f}" for k, v in history[-1].items() if k != "step") if history else "none yet"


def curve_text(history: list[dict], eval_players: int, eval_games: int) -> str:
    """The periodic evaluations as a table, first to last: the learning curve in the
    terminal (the first row is the policy before training)."""
    opponents = [k for k in history[0] if k != "step"] if history else []
    lines = [f"evaluations during training: the policy's win rate against {eval_players - 1} copies of each "
             f"opponent, {eval_games} games a point (fair share {1 / eval_players:.3f})",
             f"{'learner steps':>13}" + "".join(f"  {'vs ' + opp:>10}" for opp in opponents)]
    for row in history:
        lines.append(f"{thousands(row['step']):>13}" + "".join(f"  {row[opp]:>10.3f}" for opp in opponents))
    return "\n".join(lines)


def thousands(x: float) -> str:
    return f"{x / 1000:.1f}k" if x >= 1000 else f"{x:.0f}"


def progress_bar(run: Run):
    """tqdm over learner steps; its own rate is left out, the postfix says what each speed counts."""
    from tqdm import tqdm

    return tqdm(total=run.args.total_steps, initial=min(run.progress.global_step, run.args.total_steps),
                unit_scale=True, disable=not run.args.progress, dynamic_ncols=True, mininterval=1.0, file=sys.stderr,
                bar_format="{percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} learner steps [{elapsed}<{remaining}]{postfix}")


def after_update(run: Run, bar, speed: tuple[float, float]) -> None:
    """The evaluation (when due, and at the end), the progress bar, the checkpoint (when due)."""
    args, progress = run.args, run.progress
    step = progress.global_step
    if due(progress.schedule, "eval", step, eval_interval(args), force=step >= args.total_steps or run.out_of_time()):
        run_eval(run, args.eval_games, seed=args.seed + 1)
    bar.set_postfix_str(f"learner {thousands(speed[0])} steps/s · all seats {thousands(speed[1])} decisions/s · "
                        f"last eval: {eval_text(progress.history)}", refresh=False)
    bar.update(min(step, args.total_steps) - bar.n)
    if due(progress.schedule, "checkpoint", step, args.checkpoint_every):
        run.save_checkpoint()


def finish(run: Run, saved: dict[str, Any] | None) -> dict[str, Any]:
    """The last checkpoint, the policy file, the final evaluation (eval.json), the learning curve."""
    args, progress, model = run.args, run.progress, run.model
    wall = progress.wall_time + time.perf_counter() - run.start
    run.save_checkpoint()
    policy_path = os.path.join(args.out, "policy.pt")
    atomic_save(checkpoint_dict(model, kind="policy", args=dataclasses.asdict(args), global_step=progress.global_step,
                                decisions=progress.decisions, wall_time=wall, git_revision=run.revision,
                                command=" ".join(["python -m startups_env.train.selfplay", *sys.argv[1:]])), policy_path)
    summary: dict[str, Any] = {"global_step": progress.global_step, "decisions": progress.decisions, "wall_time": wall,
                               "steps_per_second": progress.global_step / wall if wall else 0.0,
                               "decisions_per_second": progress.decisions / wall if wall else 0.0}
    run_decisions = progress.decisions - (saved["decisions"] if saved is not None else 0)
    print(f"trained {progress.global_step:,} learner steps ({progress.decisions:,} decisions, all seats) in {wall:.0f} s: "
          f"{summary['steps_per_second']:,.0f} learner steps/s, {summary['decisions_per_second']:,.0f} decisions/s "
          f"wall clock, evaluations included; {run_decisions / max(run.cpu_seconds, 1e-9):,.0f} decisions per "
          f"CPU second of training")
    if progress.history:
        print("\n" + curve_text(progress.history, args.eval_players, args.eval_games))
    if args.final_eval_games > 0:
        results = evaluate(model, split_names(args.eval_opponents), args.eval_players, args.final_eval_games,
                           args.seed + 2, run.rules, rate=True)
        summary["eval"] = eval_summary(results)
        for opp, res in results.items():
            run.writer.add_scalar(f"eval/final_win_rate_vs_{opp}", summary["eval"][opp]["win_rate"], progress.global_step)
            print(f"\n== final evaluation: ppo vs {args.eval_players - 1} x {opp} ==")
            print(res.table())
        atomic_write_text(json.dumps({k: res.to_json() for k, res in results.items()}, indent=2),
                          os.path.join(args.out, "eval.json"))
    run.writer.close()
    curve = plot_learning_curve(args.out, players=table_sizes(args), eval_players=args.eval_players,
                                eval_games=args.eval_games, final_games=args.final_eval_games)
    print_outputs(args, policy_path, curve)
    return summary


def print_outputs(args: Args, policy_path: str, curve: str | None) -> None:
    """Where each output of the run went, and how to look at it."""
    rival = split_names(args.eval_opponents)[-1]
    game = "" if args.game == DEFAULT_GAME else f"--game {args.game} "
    rows = [("policy", policy_path, f"play it: python -m startups_env.agents.arena {game}--agents ppo:{policy_path},"
                                    f"{rival},{rival},{rival} --players 4"),
            ("checkpoint", os.path.join(args.out, "checkpoint.pt"), f"continue: --resume --out {args.out}")]
    if args.final_eval_games > 0:
        rows.append(("final evaluation", os.path.join(args.out, "eval.json"), "the tables above, as data"))
    if curve:
        rows.append(("learning curve", curve, "win rates in training and in the evaluations"))
    rows.append(("TensorBoard logs", os.path.join(args.out, ""), f"tensorboard --logdir {args.out}"))
    print("\noutputs:")
    for what, path, note in rows:
        print(f"  {what:<17} {path}  ({note})")


# ----------------------------------------------------------------------------- training
def train(args: Args, given: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run (or resume) a training run; returns the final evaluation summary."""
    args, saved = resolve_args(args, given)
    run = setup(args, saved)
    model, optimizer, batch, progress = run.model, run.optimizer, run.batch, run.progress
    buf = Rollout.empty(args.num_steps, args.num_envs, run.critic.dim, run.model.obs_dim, run.model.num_actions)
    bar = progress_bar(run)
    if saved is None:  # where the curve starts: the untrained policy (greedy's moves with --greedy-prior)
        run_eval(run, args.eval_games, seed=args.seed + 1)
    run.start = time.perf_counter()
    obs, mask = batch.reset(), batch.action_masks()
    try:
        while progress.global_step < args.total_steps and not run.out_of_time():
            t0, c0, d0 = time.perf_counter(), time.process_time(), batch.decisions
            if args.anneal_lr:
                # By steps only: a schedule that read the clock would make seeded runs differ.
                optimizer.param_groups[0]["lr"] = args.learning_rate * max(0.0, 1.0 - progress.global_step / args.total_steps)
            obs, mask, games = collect_rollout(model, batch, buf, obs, mask, run.critic_inputs, run.gen, args.gamma,
                                               len(run.pool.entries))
            progress.global_step += buf.action.numel()
            rollout_time, rollout_decisions = time.perf_counter() - t0, batch.decisions - d0
            progress.decisions += rollout_decisions

            with torch.inference_mode():
                next_value = model.value(torch.from_numpy(obs), run.critic_inputs(batch.privileged(), batch.opponent))
            advantages, returns = gae(buf, next_value, args.gamma, args.gae_lambda)
            t1 = time.perf_counter()
            stats = ppo_update(model, optimizer, buf, advantages, returns, args, run.np_rng)
            progress.updates += 1
            update_time = time.perf_counter() - t1
            stop_if_diverged(run, stats)
            update_pool(run, games)

            elapsed = time.perf_counter() - t0
            cpu = max(time.process_time() - c0, 1e-9)  # what this process got of the CPU (shared machine)
            run.cpu_seconds += cpu
            speed = (buf.action.numel() / elapsed, rollout_decisions / elapsed)
            log_update(run, games, stats, {"steps_per_second": speed[0], "decisions_per_second": speed[1],
                                           "decisions_per_cpu_second": rollout_decisions / cpu,
                                           "rollout_seconds": rollout_time, "update_seconds": update_time})
            after_update(run, bar, speed)
    except KeyboardInterrupt:
        # Keep what was learned: the checkpoint is written at an update boundary.
        run.save_checkpoint()
        bar.close()
        run.writer.close()
        print(f"\ninterrupted; checkpoint at step {progress.global_step:,} in {run.checkpoint_path} (continue with "
              f"--resume)", file=sys.stderr)
        raise
    bar.close()
    return finish(run, saved)


def main(argv=None) -> int:
    args, given = parse_args(argv)
    try:
        train(args, given)
    except ValueError as exc:
        return report_error(prog("startups_env.train.selfplay"), exc, args.traceback)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
