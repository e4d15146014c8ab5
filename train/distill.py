"""Distil the search bot into a policy network: play games with the ``search`` bot in one
seat, record its decisions, and fit :class:`startups_env.agents.ppo.ActorCritic` to them (behaviour
cloning). The result is an ordinary policy file, loadable as ``ppo:PATH`` and usable as the
starting point of ``train/selfplay.py --init-policy PATH``.

    python -m startups_env.train.distill --games 400 --out runs/distill            # a quick look
    python -m startups_env.train.distill --games 6000 --out runs/distill           # ~1 hour on 2 cores
    python -m startups_env.agents.arena --agents ppo:runs/distill/policy.pt,greedy,greedy,greedy --players 4

**Why.** PPO on this game plateaus well below the search bot (docs/experiments.md): a win/loss
signal after ~20 decisions of a 4-player game is noisy, and the search's one-step
improvement over greedy rollouts is hard to find by trial and error. The search's choices
are a dense, low-noise target instead: every decision is labelled with the move the search
would play (about 0.07 s of rollouts per decision).

**Any game.** ``--game startap`` distils Стартап's ``search`` the same way (its rollouts
play builders, so ``--opponents`` defaults to the game's reference bot: ``builder`` there,
``greedy`` in *Startups*). The network and the fit read the game's record
(:class:`startups_env.game.Game`); *Startups*' own parts (the greedy prior, the derived
features, the hand-belief head) are left out of other games' networks.

**Data.** ``--games`` games in shards of ``--shard-games`` (``OUT/data/shard_NNNN.npz``;
plain arrays, read with ``allow_pickle=False``). In each game the teacher sits at a random
seat and every other seat is played by one baseline; shard k uses the k-th name of
``--opponents`` (cycled; default the reference bot only: *Startups*' search models the
other players as greedy bots, so its choices against other kinds of players teach less;
measured in docs/experiments.md). A shard is written atomically when its games end, and shards already in
OUT are kept, so an interrupted run continues where it stopped. Only the teacher's
decisions are recorded: observation (as the policy sees it; uint8, see :func:`compact`), legal
mask, action.

**Workers.** ``--workers N`` labels the shards on N local Ray workers, ``--ray-address`` on a
cluster (:mod:`startups_env.tools.distributed`, docs/distributed.md). Shard k's games, teacher and
driver are seeded from (seed, k) alone, so the same seed writes the same shards for every
count of workers, and one process (the default) writes them too. Each shard is written by
this process as soon as a worker hands it back.

**Fit.** Cross-entropy of the masked policy on the teacher's actions at decisions with
more than one legal action, Adam with a linearly decaying learning rate; one game in ten
is held out and its accuracy printed per epoch beside the greedy bot's agreement with the
teacher (what the greedy prior alone scores). The critic is fitted to the teacher's game
results on the same samples (the simulator's ``"win"`` reward: +1 for a win, -1/(N-1)
otherwise), so a PPO run started from the policy has a value
baseline from its first update.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from startups_env.agents.features import features
from startups_env.agents.greedy import greedy_actions
from startups_env.agents.ppo import ActorCritic, checkpoint_dict
from startups_env.agents.registry import build_agent, split_names

from startups_env.startups.observe import hidden_observation
from startups_env.startups.rules import MAX_PLAYERS, NUM_ACTIONS, NUM_COMPANIES
from startups_env.table import act_for_seats
from startups_env.table.games import DEFAULT_GAME, game_by_name
from startups_env.table.policy import needs_of
from startups_env.tools.cli import (
    PLAYERS_FORMS,
    add_game_argument,
    add_progress_argument,
    add_rules_argument,
    add_traceback_argument,
    players_arg,
    prog,
    report_error,
)
from startups_env.tools.distributed import add_worker_arguments, workers_from_args
from startups_env.tools.files import atomic_write

from .checkpoints import start_from_policy
from .common import atomic_save, atomic_write_text, git_revision, hidden_sizes, reference_bots
from .evaluate import eval_summary, evaluate

SHARD_KEYS = ("obs", "mask", "action", "game", "won")
#: The other seats' hands in :func:`~startups_env.startups.observe.hidden_observation`:
#: relative seats 1..6 of its ``hands`` piece (seat 0, the observer's own, is observed).
OTHER_HANDS = slice(NUM_COMPANIES, MAX_PLAYERS * NUM_COMPANIES)


def collect_shard(teacher, opponent: str, games: int, players: tuple[int, ...], seed: int,
                  turn_cap: int | None = None, driver=None, ruleset: str = "rulebook",
                  game=DEFAULT_GAME) -> dict[str, np.ndarray]:
    """Play ``games`` games of ``game`` (a name or a :class:`~startups_env.game.Game`), the
    teacher (an Agent) at a random seat of each and ``opponent`` (an arena agent spec, e.g.
    ``greedy``) at all others, table sizes drawn from ``players``. Returns the teacher's
    decisions: obs uint8[N, obs_dim] (int16 in the rare shard with a value past 255; see
    :func:`compact`), mask bool[N, actions], action int16[N], game int32[N] (the game's
    index in the shard) and won bool[N] (that seat won the game); in *Startups*, hands
    uint8[N, 36] (the other seats' true hands, cards per company by relative seat 1..6:
    :data:`OTHER_HANDS` of the hidden observation); and where the teacher reports its
    values (the searches' ``last_values``), values float16[N, actions]
    (:func:`teacher_values`).

    driver: an Agent that plays the teacher's seat instead, the teacher only labelling
    its decisions (DAgger): the recorded positions are then those a student policy meets
    in its own games, where its mistakes lead.

    turn_cap: turns after which a game is truncated (None: the game's own); ruleset: the
    options of play (``game.make_rules``)."""
    game = game_by_name(game)
    sim, hero, opponents = teacher_tables(game, opponent, games, players, seed, turn_cap, ruleset)
    # Entry 0 is the teacher, entry 1 the opponent (one object playing every other seat).
    assignment = (np.arange(game.max_players)[None, :] != hero[:, None]).astype(np.intp)
    agents = [teacher, opponents]
    log = game.history(games) if "history" in needs_of(teacher) else None  # the driver's moves: logged below
    parts: dict[str, list[np.ndarray]] = {"obs": [], "mask": [], "action": [], "game": []}
    if game.name == DEFAULT_GAME:
        parts["hands"] = []
    if hasattr(teacher, "last_values"):
        parts["values"] = []
    while not sim.done.all():
        state = sim.state
        mine = np.flatnonzero(~state.done & (state.current == hero))
        obs, mask = game.observe(state), sim.legal_mask()
        actions = act_for_seats(sim, agents, assignment, history=log, record=False)
        parts["obs"].append(obs[mine].astype(np.int16))  # every entry is a small count; compacted below
        parts["mask"].append(mask[mine])
        parts["action"].append(actions[mine].astype(np.int16))
        parts["game"].append(mine.astype(np.int32))
        if "hands" in parts:
            parts["hands"].append(other_hands(state, mine, hero[mine]))
        if "values" in parts:
            parts["values"].append(teacher_values(teacher, mine.size, game.num_actions))
        if driver is not None and mine.size:
            actions[mine] = driver.act(obs[mine], mask[mine])
        if log is not None:
            log.record(state, actions)
        sim.step(actions)
    data = {k: np.concatenate(v) for k, v in parts.items()}
    data["obs"] = compact(data["obs"])
    if "hands" in data:
        data["hands"] = compact(data["hands"])
    if game.num_actions <= 128:
        data["action"] = data["action"].astype(np.int8)  # (the size of the shards written before other games)
    won = game.outcome(sim.state)["ranks"][np.arange(games), hero] == 0
    data["won"] = won[data["game"]]
    return data


def teacher_tables(game, opponent: str, games: int, players: tuple[int, ...], seed: int, turn_cap: int | None,
                   ruleset: str):
    """(a simulator of ``games`` games of ``game`` at sizes drawn from ``players``, the
    teacher's seat int[games] in each, the ``opponent`` bot), all drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    sizes = rng.choice(np.asarray(players), games)
    caps = {} if turn_cap is None else {"turn_cap": turn_cap}
    sim = game.make_simulator(game.make_rules(max(players), ruleset, **caps), games,
                              seed=np.random.default_rng(rng.integers(1 << 62)), num_players=sizes)
    hero = (rng.random(games) * sizes).astype(np.intp)
    return sim, hero, build_agent(opponent, seed=int(rng.integers(1 << 31)), game=game)


def other_hands(state, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """int16[k, 36]: in *Startups* games ``games`` of ``state``, the true hands of the seats
    after ``seats`` (relative seats 1..6, cards per company): the hand-belief head's target."""
    if not games.size:
        return np.zeros((0, OTHER_HANDS.stop - OTHER_HANDS.start), np.int16)
    return hidden_observation(state.take(games), seats)[:, OTHER_HANDS].astype(np.int16)


def teacher_values(teacher, decisions: int, num_actions: int = NUM_ACTIONS) -> np.ndarray:
    """float16[decisions, num_actions]: the teacher's value of each action at the decisions
    it was just asked (its ``last_values``: the search's), NaN where it searched none."""
    if decisions == 0:
        return np.zeros((0, num_actions), np.float16)  # the teacher was not asked: its last_values are older
    values = np.asarray(teacher.last_values)
    if values.shape != (decisions, num_actions):
        raise ValueError(f"teacher {teacher.name!r} gave last_values of shape {list(values.shape)} for "
                         f"{decisions} decisions")
    return values.astype(np.float16)


def compact(values: np.ndarray) -> np.ndarray:
    """Integer ``values`` in the smallest of uint8 and int16 that holds every one exactly.
    Observations are counts, one-hots and coins (at most 70), so uint8 holds a shard's
    observations unless a game ran past turn 255 (the turn cap allows more); loading
    promotes a mix of shards to int16."""
    if values.size == 0 or (values.min() >= 0 and values.max() <= 255):
        return values.astype(np.uint8)
    if values.min() < -(1 << 15) or values.max() >= 1 << 15:
        raise ValueError(f"values {values.min()}..{values.max()} do not fit int16")
    return values.astype(np.int16)


def label_shard(job: dict, report=None) -> dict[str, np.ndarray]:
    """Record shard ``job["index"]`` of a labelling run (:func:`shard_jobs`): build its
    teacher, and its driver if any, seeded from (seed, shard index) alone, and play
    :func:`collect_shard`. What a worker runs; the same job gives the same shard wherever
    it runs. ``report`` (see :class:`startups_env.tools.distributed.Workers`) is told the games
    done when the shard is over."""
    shard_seed, driver_seed = (int(x) for x in np.random.SeedSequence([job["seed"], job["index"]]).generate_state(2))
    game = job.get("game", DEFAULT_GAME)
    teacher = build_agent(job["teacher"], seed=shard_seed, game=game)
    driver = build_agent(job["driver"], seed=driver_seed, game=game) if job["driver"] else None
    data = collect_shard(teacher, job["opponent"], job["games"], job["players"], shard_seed, driver=driver,
                         ruleset=job.get("rules", "rulebook"), game=game)
    if report is not None:
        report(job["games"])
    return data


def shard_jobs(shards: int, shard_games: int, players: tuple[int, ...], teacher: str, opponents: list[str],
               driver: str, seed: int, ruleset: str = "rulebook", game: str = DEFAULT_GAME) -> list[dict]:
    """The labelling run's shards, 0..shards-1: shard k plays ``shard_games`` games against
    the k-th opponent (cycled), seeded from (seed, k): nothing depends on which worker
    plays it, or how many there are. ``ruleset``: the options of play, in each job unless
    they are the rulebook's; ``game``: the game's name."""
    rules = {"rules": ruleset} if ruleset != "rulebook" else {}
    return [{"index": k, "games": shard_games, "players": tuple(players), "teacher": teacher,
             "opponent": opponents[k % len(opponents)], "driver": driver, "seed": seed, "game": game, **rules}
            for k in range(shards)]


def save_shard(data: dict[str, np.ndarray], path: str) -> None:
    atomic_write(path, lambda f: np.savez_compressed(f, **data), make_folders=True)


def load_shards(paths: list[str], keys: tuple[str, ...] = SHARD_KEYS,
                kind: str = "distillation") -> dict[str, np.ndarray]:
    """The shards' arrays ``keys`` concatenated; where ``game`` is among them, it is
    renumbered to be unique across shards. Raises ValueError naming a file that is not a
    ``kind`` shard, or lacks one of ``keys`` (shards written before ``hands`` was recorded
    lack it)."""
    if not paths:
        raise ValueError("no shards to load")
    parts: dict[str, list[np.ndarray]] = {k: [] for k in keys}
    offset = 0
    for path in paths:
        try:
            with np.load(path, allow_pickle=False) as f:
                shard = {k: f[k] for k in keys}
        except (OSError, ValueError, KeyError, EOFError) as exc:
            raise ValueError(f"{path} is not a readable {kind} shard: {type(exc).__name__}: {exc}") from exc
        for k in keys:
            parts[k].append(shard[k] + offset if k == "game" else shard[k])
        if "game" in keys:
            offset += int(shard["game"].max(initial=-1)) + 1
    return {k: np.concatenate(v) for k, v in parts.items()}


def fit(data: dict[str, np.ndarray], hidden: list[int], epochs: int, learning_rate: float = 1e-3,
        batch_size: int = 512, seed: int = 0, log=print, value_weight: float = 0.0,
        value_temperature: float = 0.03, game=DEFAULT_GAME, init_policy: str = "") -> tuple[ActorCritic, dict[str, float]]:
    """Behaviour cloning of ``data`` (see :func:`load_shards`; decisions of ``game``, a name
    or a :class:`~startups_env.game.Game`) into a new :class:`ActorCritic` (in *Startups*
    with the greedy prior); prints held-out accuracy per epoch through ``log``. Returns the
    model and its held-out figures: ``accuracy`` (the policy's most likely action is the
    teacher's), ``decisions``, and in *Startups* ``greedy_agreement`` (the same for the
    greedy bot).

    Where ``data`` holds ``hands`` (the other seats' true hands), the network gets a
    hand-belief head fitted to them too (squared error in cards), and the figures add
    ``belief_error``: its held-out mean absolute error in cards per entry. value_weight
    and value_temperature: the policy's target mixes the teacher's choice with its action
    ``values`` (:func:`policy_targets`); 0: the choice alone. init_policy: a policy file to
    start from (:func:`~startups_env.train.checkpoints.start_from_policy`; its critic's
    training-only inputs dropped), to refine a trained policy instead of starting afresh."""
    game = game_by_name(game)
    rng = np.random.default_rng(seed)
    hands = torch.from_numpy(data["hands"].astype(np.float32)) if "hands" in data else None
    model = ActorCritic(game.obs_dim, hidden, game.num_actions, features=True, greedy_prior=True,
                        belief=hands is not None, generator=torch.Generator().manual_seed(seed), game=game.name)
    if init_policy:
        start_from_policy(model, init_policy, drop_critic_inputs=True)
    obs = torch.from_numpy(data["obs"].astype(np.float32))
    mask = torch.from_numpy(data["mask"])
    action = torch.from_numpy(data["action"].astype(np.int64))
    targets = None if not value_weight else torch.from_numpy(policy_targets(data, value_weight, value_temperature))
    returns = torch.from_numpy(win_returns(game, data))
    with torch.no_grad():
        x, prior = model.inputs(obs)  # no learned parameters: computed once
    train_rows, val_rows = split_rows(data, rng)
    report = {"decisions": float(train_rows.size), "accuracy": float("nan"), **greedy_agreement(model, data, val_rows)}
    log(f"{train_rows.size:,} training decisions, {val_rows.size:,} held out"
        + (f"; greedy bot agrees with the teacher on {report['greedy_agreement']:.3f} of the held-out ones"
           if "greedy_agreement" in report else ""))
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    total = epochs * -(-train_rows.size // batch_size)
    decay = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - step / total)  # linearly to 0
    for epoch in range(epochs):
        model.train()
        order = rng.permutation(train_rows)
        for start in range(0, order.size, batch_size):
            rows = torch.from_numpy(order[start:start + batch_size])
            logits, value = model.heads(x[rows], None if prior is None else prior[rows], mask[rows])
            loss = (policy_loss(logits, action[rows], None if targets is None else targets[rows])
                    + 0.5 * F.mse_loss(value, returns[rows]))
            if hands is not None:
                loss = loss + 0.1 * F.mse_loss(model.belief_counts(x[rows]), hands[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            decay.step()
        if val_rows.size:
            report.update(held_out_figures(model, x, prior, mask, action, hands, torch.from_numpy(val_rows)))
            belief = f", hand belief off by {report['belief_error']:.3f} cards an entry" if hands is not None else ""
            log(f"epoch {epoch + 1}/{epochs}: held-out accuracy {report['accuracy']:.3f}, "
                f"cross-entropy {report['cross_entropy']:.3f}{belief}")
    model.eval()
    return model, report


def win_returns(game, data: dict[str, np.ndarray]) -> np.ndarray:
    """float32[N]: the teacher's return at each decision under the simulator's "win" reward
    (+1 for a win, -1/(N-1) otherwise), the scheme of the PPO runs a fitted policy starts:
    what the critic learns."""
    players = table_sizes(game, data["obs"])
    return np.where(data["won"], 1.0, -1.0 / (players - 1)).astype(np.float32)


def greedy_agreement(model: ActorCritic, data: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, float]:
    """``{"greedy_agreement": the share of decisions ``rows`` where the greedy bot plays the
    teacher's action}`` for a network with the greedy prior (*Startups*'), else ``{}``."""
    if not model.greedy_prior:
        return {}
    greedy = greedy_actions(features(data["obs"][rows].astype(np.float32)), data["mask"][rows])
    return {"greedy_agreement": float(np.mean(greedy == data["action"][rows])) if rows.size else float("nan")}


def table_sizes(game, obs: np.ndarray) -> np.ndarray:
    """int[N]: the table size of each of ``game``'s observations ``obs``, read from their
    ``num_players`` piece (a one-hot of the sizes from ``game.min_players``; see
    ``game.obs_layout``)."""
    start = 0
    for piece in game.obs_layout.split(","):
        name, size = piece.split(":")
        if name == "num_players":
            return np.asarray(obs)[:, start:start + int(size)].argmax(axis=1) + game.min_players
        start += int(size)
    raise ValueError(f"{game.title}'s observation has no num_players piece ({game.obs_layout})")


def split_rows(data: dict[str, np.ndarray], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(training rows, held-out rows): the decisions with a choice (single-action ones
    teach nothing), one game in ten held out. ValueError where none is left to train on."""
    games = np.unique(data["game"])
    held_out = np.isin(data["game"], rng.choice(games, max(1, games.size // 10), replace=False))
    choice = data["mask"].sum(axis=1) > 1
    train_rows, val_rows = np.flatnonzero(choice & ~held_out), np.flatnonzero(choice & held_out)
    if train_rows.size == 0:
        raise ValueError("no decisions with a choice to learn from")
    return train_rows, val_rows


def policy_targets(data: dict[str, np.ndarray], value_weight: float, temperature: float) -> np.ndarray:
    """float32[N, 19]: the policy's target at each decision: ``value_weight`` of
    ``softmax(values / temperature)`` over the actions the teacher valued, and the rest on
    the teacher's choice (all of it where the teacher valued none). ValueError where
    ``data`` has no ``values`` or the settings are out of range."""
    if "values" not in data:
        raise ValueError("a fit to the teacher's values needs shards with values (labelled by the search)")
    if not 0.0 <= value_weight <= 1.0 or temperature <= 0.0:
        raise ValueError(f"value weight must be in [0, 1] and temperature > 0, got {value_weight}, {temperature}")
    values = data["values"].astype(np.float64)
    valued = ~np.isnan(values) & data["mask"]
    scaled = np.where(valued, values, -np.inf) / temperature
    peak = np.max(scaled, axis=1, keepdims=True)
    weights = np.where(valued, np.exp(scaled - np.where(np.isfinite(peak), peak, 0.0)), 0.0)
    total = weights.sum(axis=1, keepdims=True)
    soft = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)
    choice = np.eye(values.shape[1])[data["action"].astype(np.intp)]
    share = np.where(total > 0, value_weight, 0.0)
    return (share * soft + (1.0 - share) * choice).astype(np.float32)


def policy_loss(logits: torch.Tensor, action: torch.Tensor, targets: torch.Tensor | None) -> torch.Tensor:
    """Cross-entropy of the (masked) policy logits with the teacher's choices ``action``,
    or with the soft ``targets`` (:func:`policy_targets`) where given."""
    if targets is None:
        return F.cross_entropy(logits, action)
    return -(targets * F.log_softmax(logits, dim=1)).sum(dim=1).mean()


def held_out_figures(model: ActorCritic, x: torch.Tensor, prior: torch.Tensor, mask: torch.Tensor,
                     action: torch.Tensor, hands: torch.Tensor | None, rows: torch.Tensor) -> dict[str, float]:
    """The fit's figures on the held-out ``rows``: ``accuracy`` (the most likely action is
    the teacher's), ``cross_entropy``, and with ``hands`` the hand belief's mean absolute
    error in cards per entry (``belief_error``). Leaves the model in eval mode."""
    model.eval()
    with torch.no_grad():
        logits, _ = model.heads(x[rows], None if prior is None else prior[rows], mask[rows])
        figures = {"accuracy": (logits.argmax(dim=1) == action[rows]).float().mean().item(),
                   "cross_entropy": F.cross_entropy(logits, action[rows]).item()}
        if hands is not None:
            figures["belief_error"] = (model.belief_counts(x[rows]) - hands[rows]).abs().mean().item()
    return figures


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog("startups_env.train.distill"), description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--out", default="runs/distill",
                        help="output folder: data/ shards, policy.pt, eval.json (the final table, with --eval-games)")
    parser.add_argument("--games", type=int, default=6000, help="games to record (shards already in OUT count)")
    parser.add_argument("--shard-games", type=int, default=200, help="games per shard (played as one batch)")
    parser.add_argument("--players", type=players_arg, default="4", help=f"table sizes: {PLAYERS_FORMS}")
    add_rules_argument(parser)
    parser.add_argument("--teacher", default="search", help="arena agent spec of the player to imitate")
    parser.add_argument("--opponents", default=None,
                        help="baseline of each shard, cycled (one baseline plays every other seat); default: the "
                             "game's reference bot (greedy in Startups, builder in Стартап)")
    parser.add_argument("--driver", default="",
                        help="agent spec (e.g. ppo:runs/distill/policy.pt) that plays the teacher's seat while the "
                             "teacher only labels its decisions (DAgger); default: the teacher plays")
    parser.add_argument("--extra-data", nargs="*", default=[],
                        help="shard folders of earlier runs (their OUT/data) to fit on as well")
    parser.add_argument("--hidden", default="128,128", help="widths of the hidden layers")
    parser.add_argument("--init-policy", default="",
                        help="policy file the network starts from (e.g. agents/weights/ppo_startap.pt, with its "
                             "--hidden), to refine a trained policy on the teacher's labels; default: a new network")
    parser.add_argument("--epochs", type=int, default=20, help="passes over the recorded decisions")
    parser.add_argument("--learning-rate", type=float, default=1e-3, help="Adam learning rate (decays linearly to 0)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games, the teacher and the fit")
    parser.add_argument("--eval-games", type=int, default=1000,
                        help="arena games at the game's usual table (4 players) against each of its trainer "
                             "opponents for the final table (0: skip)")
    add_progress_argument(parser, "a line per shard and per fitting epoch")
    add_traceback_argument(parser)
    add_game_argument(parser)
    add_worker_arguments(parser)
    return parser


def _label_shards(args, todo: list[dict], paths: list[str]) -> None:
    """Play and label the shards ``todo`` on the workers, each written (atomically) to its
    path as soon as it is back, in whatever order the workers finish: a crash loses only
    the shards still being played."""
    with workers_from_args(args) as pool:
        if not pool.local:
            print(f"ray: {pool.startup_seconds:.1f} s to start or join the workers", flush=True)
        tick = time.perf_counter()
        for i, data in pool.run(label_shard, todo):
            k = todo[i]["index"]
            save_shard(data, paths[k])
            if not args.progress:
                continue
            won_per_game = data["won"][np.unique(data["game"], return_index=True)[1]]
            print(f"shard {k + 1}/{len(paths)} vs {todo[i]['opponent']}: {data['action'].size:,} decisions, "
                  f"{'driver' if args.driver else 'teacher'} won {won_per_game.mean():.3f}, "
                  f"{time.perf_counter() - tick:.0f} s since the start", flush=True)


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        hidden = hidden_sizes(args.hidden)
        if args.games < 1 or args.shard_games < 1 or args.epochs < 1:
            raise ValueError("--games, --shard-games and --epochs must be >= 1")
        build_agent(args.teacher, game=args.game)  # a bad teacher or driver fails here, before any shard
        if args.driver:
            build_agent(args.driver, game=args.game)
        data_dir = os.path.join(args.out, "data")  # made by the first shard written: a failed start leaves no folder
        started, revision = time.perf_counter(), git_revision()  # the code this run started with
        opponents = reference_bots(args.game) if args.opponents is None else split_names(args.opponents)
        if not opponents:
            raise ValueError("--opponents names no agent")
        shards = -(-args.games // args.shard_games)
        jobs = shard_jobs(shards, args.shard_games, args.players, args.teacher, opponents, args.driver, args.seed,
                          args.rules, args.game)
        paths = [os.path.join(data_dir, f"shard_{k:04d}.npz") for k in range(shards)]
        todo = [job for job in jobs if not os.path.exists(paths[job["index"]])]  # resume: written shards stay
        _label_shards(args, todo, paths)
        for folder in args.extra_data:
            found = sorted(glob.glob(os.path.join(folder, "shard_*.npz")))
            if not found:
                raise ValueError(f"--extra-data {folder}: no shard_*.npz files there")
            paths += found
        data = load_shards(paths)
        model, report = fit(data, hidden, args.epochs, args.learning_rate, seed=args.seed,
                            log=print if args.progress else (lambda line: None), game=args.game,
                            init_policy=args.init_policy)
    except (ValueError, FileNotFoundError, ConnectionError) as exc:  # a ppo:PATH's missing file; Ray
        return report_error(parser.prog, exc, args.traceback)
    policy_path = os.path.join(args.out, "policy.pt")
    atomic_save(checkpoint_dict(model, kind="policy", args=vars(args), fit=report,
                                wall_time=time.perf_counter() - started, git_revision=revision,
                                command="python -m startups_env.train.distill " + " ".join(sys.argv[1:] if argv is None else argv)),
                policy_path)
    print(f"policy: {policy_path}")
    if args.eval_games:
        game = game_by_name(args.game)
        results = evaluate(model, list(game.opponents)[::-1], game.usual_players, args.eval_games, args.seed + 1,
                           game.default_rules(ruleset=args.rules))
        for opp, row in eval_summary(results).items():
            lo, hi = row["win_ci"]
            print(f"vs 3 {opp}: win rate {row['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] of {row['games']} games")
        eval_path = os.path.join(args.out, "eval.json")
        atomic_write_text(json.dumps({opp: res.to_json() for opp, res in results.items()}, indent=2), eval_path)
        print(f"evaluation: {eval_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
