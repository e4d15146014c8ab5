"""Expert iteration: rounds in which the search labels the positions a policy network
meets, the network is fitted to those labels, and the new network is measured.

    python -m startups_env.train.exit --out runs/exit --rounds 3 --round-games 200 --eval-games 2000
    python -m startups_env.train.exit --out runs/exit --rounds 6 ...   # later: three more rounds
    python -m startups_env.agents.arena --agents ppo:runs/exit/policy.pt,greedy,greedy,greedy --players 4

**A round** (``OUT/round_NNN/``):

1. *self-play tables*: ``--round-games`` games at table sizes drawn from ``--players``.
   The round's network (round 0: the game's reference bot, greedy in *Startups*) sits at
   one random seat of each game; every other seat is played by one opponent, the same
   for a whole shard, cycled over the round's list: the ladder's styles
   (``--styles``), the network itself, and one of its past selves;
2. *labels*: at each of the network's decisions the teacher (``--teacher``, the ``search``
   bot by default) says what it would play, while the network's own move is played
   (DAgger: the positions are those the network reaches); in *Startups* the other seats'
   true hands are recorded beside them. Shards of ``--shard-games`` games go to ``data/``, each written
   atomically as soon as it is played (:mod:`startups_env.train.distill`'s labelling);
3. *fit*: a new network on every round's data so far (:func:`startups_env.train.distill.fit`):
   the policy to the teacher's choices mixed with its action values (``--value-weight``
   of ``softmax(values / --value-temperature)``: the search values every candidate, and
   how much better its choice is than the others teaches more than the choice alone), the
   value to the games' outcomes, the hand-belief head (*Startups*) to the true hands; written
   atomically to ``policy.pt`` (weights only, a policy file that loads as ``ppo:PATH``) and
   copied to ``OUT/policy.pt``;
4. *evaluation*: the network against ``players - 1`` copies of each ``--eval-opponents``
   bot (seat-rotated duplicate games, the same deals every round), to ``round.json``.

``OUT/log.jsonl`` holds a line per finished round (rebuilt from the ``round.json``
files), and ``OUT/curve.png`` plots the win rates against the labelled decisions and
against the hours of labelling, fitting and evaluation.

**Resuming.** Every file is written atomically and the run starts where its files end: a
crash loses at most the shards being played. Every shard, fit and evaluation is seeded
from ``--seed`` and its round (and shard) alone, so a resumed run writes what an unbroken
one would have. ``OUT/settings.json`` holds the settings that shape the data and the
networks; a resumed run with other ones is refused (``--rounds``, the workers and the
evaluation's games and opponents may change: they apply to the rounds still to finish).
A round whose ``round.json`` is deleted is finished again from its shards: fitted anew
(to the same network) and evaluated with the settings of the day.

**Any game.** ``--game startap`` runs the same rounds on Стартап with its ``search``; the
table sizes, the styles, the round-0 network (the game's reference bot: ``builder``) and the
evaluation's opponents and table default to the game's. Its search values are mean rank
rewards (-1 to +1), twice the span of *Startups*' soft chance of winning, so a
``--value-temperature`` twice *Startups*' default (0.06) weighs them alike.

**Workers.** ``--workers N`` labels the shards and plays the evaluation on N local Ray
workers (:mod:`startups_env.tools.distributed`); the results are those of one process.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import sys
import time

import numpy as np

from startups_env.agents.arena import run_arena
from startups_env.agents.ppo import checkpoint_dict
from startups_env.agents.registry import build_agent, split_names
from startups_env.table.games import DEFAULT_GAME, game_by_name
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

from .common import atomic_save, atomic_write_text, derived_seed, git_revision, hidden_sizes, reference_bots
from .distill import SHARD_KEYS, fit, label_shard, load_shards, save_shard, shard_jobs
#: The settings that shape a run's data and networks: a resumed run must repeat them.
FIXED_SETTINGS = ("seed", "round_games", "shard_games", "players", "teacher", "styles", "hidden", "epochs",
                  "learning_rate", "eval_players", "value_weight", "value_temperature", "rules", "game")
#: What a run's settings.json written before a setting existed meant by it.
EARLIER_DEFAULTS = {"value_weight": 0.0, "value_temperature": 0.03, "rules": "rulebook", "game": DEFAULT_GAME}


def round_dir(out: str, index: int) -> str:
    return os.path.join(out, f"round_{index:03d}")


def round_players(out: str, index: int, styles: list[str], seed: int,
                  start: str = "greedy") -> tuple[str, list[str]]:
    """(the spec of round ``index``'s network, the opponents its shards cycle over). Round
    0's network is the bot ``start`` (the game's reference bot: *Startups*' greedy, which
    an untrained greedy-prior network plays); later rounds' is the previous round's
    policy, and its opponents are itself and one of its past selves (drawn from ``seed``
    and the round), then the styles."""
    if index == 0:
        return start, list(styles)
    current = f"ppo:{os.path.join(round_dir(out, index - 1), 'policy.pt')}"
    opponents = [current]  # (first: a round of few shards still plays itself)
    if index >= 2:
        past = int(np.random.default_rng([seed, index]).integers(0, index - 1))
        opponents.append(f"ppo:{os.path.join(round_dir(out, past), 'policy.pt')}")
    return current, opponents + list(styles)


def label_timed(job: dict, report=None) -> dict[str, np.ndarray]:
    """:func:`startups_env.train.distill.label_shard`, with the seconds it took in
    ``seconds`` (the labelling's cost per decision, wherever the shard was played)."""
    started = time.perf_counter()
    data = label_shard(job, report)
    data["seconds"] = np.float64(time.perf_counter() - started)
    return data


def label_round(args, pool, index: int) -> list[str]:
    """Play round ``index``'s shards that are not on disk yet (on ``pool``), each saved as
    soon as it is back (those on disk are reused, and said so). Returns the round's shard
    paths."""
    driver, opponents = round_players(args.out, index, split_names(args.styles), args.seed,
                                      reference_bots(args.game)[0])
    shards = -(-args.round_games // args.shard_games)
    jobs = shard_jobs(shards, args.shard_games, args.players, args.teacher, opponents, driver,
                      derived_seed(args.seed, index), args.rules, args.game)
    paths = [os.path.join(round_dir(args.out, index), "data", f"shard_{k:04d}.npz") for k in range(shards)]
    todo = [job for job in jobs if not os.path.exists(paths[job["index"]])]
    if len(todo) < shards:
        print(f"round {index}: reusing the {shards - len(todo)} of its {shards} shards already in "
              f"{os.path.dirname(paths[0])}", flush=True)
    for i, data in pool.run(label_timed, todo):
        k = todo[i]["index"]
        save_shard(data, paths[k])
        if args.progress:
            print(f"round {index} shard {k + 1}/{shards} vs {todo[i]['opponent']}: {data['action'].size:,} "
                  f"decisions, {choices_of(data['mask']):,} of them with a choice (labelled), in "
                  f"{float(data['seconds']):.0f} s", flush=True)
    return paths


def choices_of(mask: np.ndarray) -> int:
    """The decisions with a choice among ``mask``'s (bool[N, actions]): more than one legal
    action. Only those teach the network anything; the others are forced moves."""
    return int((mask.sum(axis=1) > 1).sum())


def shard_cost(paths: list[str]) -> tuple[int, int, float]:
    """(decisions, decisions with a choice, seconds of labelling) of the shards at ``paths``."""
    decisions = choices = 0
    seconds = 0.0
    for path in paths:
        with np.load(path, allow_pickle=False) as f:
            decisions += f["action"].size
            choices += choices_of(f["mask"])
            seconds += float(f["seconds"])
    return decisions, choices, seconds


def fit_round(args, index: int) -> tuple[str, dict, float]:
    """Fit round ``index``'s network on every round's shards so far and write its
    ``policy.pt`` (and ``OUT/policy.pt``). Returns (its path, the fit's figures, seconds)."""
    started = time.perf_counter()
    paths = [path for k in range(index + 1)
             for path in sorted(glob.glob(os.path.join(round_dir(args.out, k), "data", "shard_*.npz")))]
    keys = SHARD_KEYS + (("hands",) if args.game == DEFAULT_GAME else ()) + (("values",) if args.value_weight else ())
    model, report = fit(load_shards(paths, keys), hidden_sizes(args.hidden), args.epochs, args.learning_rate,
                        seed=derived_seed(args.seed, index),
                        log=(lambda line: print(f"  {line}", flush=True)) if args.progress else (lambda line: None),
                        value_weight=args.value_weight, value_temperature=args.value_temperature, game=args.game)
    path = os.path.join(round_dir(args.out, index), "policy.pt")
    atomic_save(checkpoint_dict(model, kind="policy", round=index, args=settings_of(args), fit=report,
                                git_revision=git_revision(),
                                command="python -m startups_env.train.exit " + " ".join(sys.argv[1:])), path)
    with open(path, "rb") as source:
        atomic_write(os.path.join(args.out, "policy.pt"), lambda f: shutil.copyfileobj(source, f))
    return path, report, time.perf_counter() - started


def evaluate_round(args, pool, policy: str) -> tuple[dict, float]:
    """The network at ``policy`` against ``eval_players - 1`` copies of each evaluation
    opponent: {opponent: its row (win rate, interval, games...)}, and the seconds taken.
    The deals depend on ``--seed`` alone: every round meets the same ones."""
    started = time.perf_counter()
    rows, game = {}, game_by_name(args.game)
    for opponent in split_names(args.eval_opponents):
        result = run_arena([f"ppo:{policy}"] + [opponent] * (args.eval_players - 1), args.eval_players,
                           args.eval_games, seed=args.seed, batch_size=args.eval_shard_games, rate=False,
                           workers=pool, rules=game.make_rules(args.eval_players, args.rules), game=game)
        row = result.entry_stats()[0]
        rows[opponent] = {key: row[key] for key in ("win_rate", "win_ci", "mean_rank", "games",
                                                    "seconds_per_decision")}
        print(f"  vs {args.eval_players - 1} x {opponent}: win rate {row['win_rate']:.3f} "
              f"[{row['win_ci'][0]:.3f}, {row['win_ci'][1]:.3f}] of {row['games']} games", flush=True)
    return rows, time.perf_counter() - started


def run_round(args, pool, index: int) -> dict:
    """Label, fit and evaluate round ``index``; its record (written to ``round.json``)."""
    def step(name: str) -> None:
        if args.progress:
            print(f"round {index}: {name}", flush=True)

    step("labelling")
    paths = label_round(args, pool, index)
    decisions, choices, label_seconds = shard_cost(paths)
    step("fitting")
    policy, report, fit_seconds = fit_round(args, index)
    step("evaluating")
    evaluation, eval_seconds = evaluate_round(args, pool, policy) if args.eval_games else ({}, 0.0)
    record = {"round": index, "eval_players": args.eval_players, "decisions": decisions, "choice_decisions": choices, "label_seconds": label_seconds,
              "fit_seconds": fit_seconds, "eval_seconds": eval_seconds, "fit": report, "eval": evaluation,
              "policy": policy}
    atomic_write_text(json.dumps(record, indent=1), os.path.join(round_dir(args.out, index), "round.json"))
    return record


def read_rounds(out: str) -> list[dict]:
    """The records of the finished rounds, in order, with the totals so far added:
    ``total_choice_decisions`` and ``total_hours`` (labelling, fitting and evaluation)."""
    records, decisions, seconds = [], 0, 0.0
    for path in sorted(glob.glob(os.path.join(out, "round_*", "round.json"))):
        with open(path) as f:
            record = json.load(f)
        decisions += record["choice_decisions"]
        seconds += record["label_seconds"] + record["fit_seconds"] + record["eval_seconds"]
        records.append({**record, "total_choice_decisions": decisions, "total_hours": seconds / 3600})
    return records


def write_log(out: str) -> list[dict]:
    """Rewrite ``OUT/log.jsonl`` (a line per finished round) and ``OUT/curve.png``."""
    records = read_rounds(out)
    atomic_write_text("".join(json.dumps(r) + "\n" for r in records), os.path.join(out, "log.jsonl"))
    if records and records[-1]["eval"]:
        plot_curve(records, os.path.join(out, "curve.png"))
    return records


def plot_curve(records: list[dict], path: str, title: str = "expert iteration") -> None:
    """The evaluation's win rates (95% intervals) per round, against the labelled decisions
    with a choice (left) and the hours spent (right), to the PNG ``path``; a dashed line at
    an even share of the wins."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    players = records[-1]["eval_players"]
    for opponent in records[-1]["eval"]:
        done = [r for r in records if opponent in r["eval"]]
        rate = np.array([r["eval"][opponent]["win_rate"] for r in done])
        low, high = np.array([r["eval"][opponent]["win_ci"] for r in done]).T
        games = done[-1]["eval"][opponent]["games"]
        for ax, key in zip(axes, ("total_choice_decisions", "total_hours")):
            ax.errorbar([r[key] for r in done], rate, yerr=[rate - low, high - rate], marker="o", capsize=3,
                        label=f"vs {players - 1} x {opponent} ({games} games a point)")
    for ax, label in zip(axes, ("labelled decisions (with a choice), all rounds so far",
                                "hours so far (labelling + fitting + evaluating)")):
        ax.axhline(1 / players, color="grey", ls="--", lw=1, label=f"1 in {players}: an even share")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel(f"the network's win rate, {players} players")
    fig.suptitle(f"{title}: one point per round", fontsize=10)
    fig.tight_layout()
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=90))
    plt.close(fig)


def settings_of(args) -> dict:
    """The run's settings that shape its data and networks (:data:`FIXED_SETTINGS`), as plain data."""
    return {key: list(value) if isinstance(value, tuple) else value
            for key, value in vars(args).items() if key in FIXED_SETTINGS}


def check_settings(args) -> None:
    """Write ``OUT/settings.json`` on a new run; on a resumed one, a ValueError naming the
    settings that differ from those the run started with."""
    path = os.path.join(args.out, "settings.json")
    mine = settings_of(args)
    if not os.path.exists(path):
        atomic_write(path, lambda f: f.write(json.dumps(mine, indent=1)), binary=False, make_folders=True)
        return
    with open(path) as f:
        saved = json.load(f)
    saved = {**EARLIER_DEFAULTS, **saved}
    differ = sorted(key for key in FIXED_SETTINGS if saved.get(key) != mine.get(key))
    if differ:
        raise ValueError(f"{args.out} holds a run with other settings: "
                         + ", ".join(f"{key.replace('_', '-')} {saved.get(key)!r} (now {mine.get(key)!r})"
                                     for key in differ)
                         + "; repeat them to resume it, or give another --out")


def game_defaults(args) -> None:
    """Fill in the settings whose defaults are the game's: ``--players``, ``--styles``,
    ``--eval-opponents`` and ``--eval-players``."""
    game = game_by_name(args.game)
    if args.players is None:
        args.players = tuple(range(max(3, game.min_players), game.max_players + 1))
    if args.styles is None:
        args.styles = ",".join(name for name in game.ladder[1] if name != "random")
    if args.eval_opponents is None:
        args.eval_opponents = ",".join(reference_bots(game))
    if args.eval_players is None:
        args.eval_players = game.usual_players


def check_args(args) -> None:
    """ValueError naming the first bad setting, before anything is written."""
    hidden_sizes(args.hidden)
    for name in ("rounds", "round_games", "shard_games", "epochs"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if not 0.0 <= args.value_weight <= 1.0 or args.value_temperature <= 0.0:
        raise ValueError(f"--value-weight must be in [0, 1] and --value-temperature > 0, got "
                         f"{args.value_weight} and {args.value_temperature}")
    if args.eval_games < 0 or args.eval_shard_games < 1:
        raise ValueError("--eval-games must be >= 0 and --eval-shard-games >= 1")
    game = game_by_name(args.game)
    if not game.min_players <= args.eval_players <= game.max_players:
        raise ValueError(f"--eval-players must be {game.min_players}-{game.max_players} in {game.title}, "
                         f"got {args.eval_players}")
    if not set(args.players) <= set(range(game.min_players, game.max_players + 1)):
        raise ValueError(f"--players must be table sizes of {game.title}, {game.min_players}-{game.max_players}; "
                         f"got {args.players}")
    if not split_names(args.styles) or not split_names(args.eval_opponents):
        raise ValueError("--styles and --eval-opponents must each name at least one bot")
    for spec in [args.teacher, *split_names(args.styles), *split_names(args.eval_opponents)]:
        build_agent(spec, game=game)  # a bad name fails here, before any game


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog("startups_env.train.exit"), description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--out", default="runs/exit", help="the run's folder (resumed where its files end)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds to have finished when the command ends")
    parser.add_argument("--round-games", type=int, default=200, help="labelled games a round")
    parser.add_argument("--shard-games", type=int, default=25, help="games a shard (one batch, one opponent)")
    parser.add_argument("--players", type=players_arg, default=None,
                        help=f"table sizes: {PLAYERS_FORMS}; default 3 up to the game's largest (3-7 in Startups)")
    parser.add_argument("--teacher", default="search", help="bot spec that labels the network's positions")
    parser.add_argument("--styles", default=None,
                        help="bots that play the other seats of the labelled games (with the network and a past "
                             "self); default: the styles of the game's ladder but random")
    parser.add_argument("--hidden", default="128,128", help="widths of the network's hidden layers")
    parser.add_argument("--epochs", type=int, default=20, help="passes over all rounds' decisions a fit")
    parser.add_argument("--learning-rate", type=float, default=1e-3, help="Adam learning rate (decays linearly to 0)")
    parser.add_argument("--value-weight", type=float, default=0.5,
                        help="share of the policy's target on the teacher's action values, softmax(values / "
                             "temperature); the rest on its choice (0: the choice alone)")
    parser.add_argument("--value-temperature", type=float, default=0.03,
                        help="temperature of that softmax, in the teacher's value units (the search's: a soft chance "
                             "of winning, 0-1)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games, the fits and the evaluations")
    parser.add_argument("--eval-games", type=int, default=2000, help="evaluation games per opponent a round (0: none)")
    parser.add_argument("--eval-opponents", default=None,
                        help="bots the network is evaluated against; default: the game's reference bot (greedy in "
                             "Startups, builder in Стартап)")
    parser.add_argument("--eval-players", type=int, default=None,
                        help="table size of the evaluation; default: the game's usual one (4)")
    parser.add_argument("--eval-shard-games", type=int, default=500,
                        help="evaluation games a shard (the results depend on it, not on the workers)")
    add_rules_argument(parser)
    add_progress_argument(parser, "a line per shard, per round's step and per fitting epoch")
    add_traceback_argument(parser)
    add_game_argument(parser)
    add_worker_arguments(parser)
    return parser


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        game_defaults(args)
        check_args(args)
        check_settings(args)
        done = len(read_rounds(args.out))
        if done:
            print(f"resuming {args.out}: {done} round(s) finished there, their shards and networks reused", flush=True)
        with workers_from_args(args) as pool:
            for index in range(done, args.rounds):
                record = run_round(args, pool, index)
                write_log(args.out)
                print(f"round {index} done: {record['choice_decisions']:,} labelled decisions (those with a choice; "
                      f"{record['decisions']:,} in all with the forced ones) in {record['label_seconds']:.0f} s of "
                      "labelling", flush=True)
        records = write_log(args.out)
    except (ValueError, FileNotFoundError, ConnectionError) as exc:
        return report_error(parser.prog, exc, args.traceback)
    except KeyboardInterrupt:
        kept = len(glob.glob(os.path.join(args.out, "round_*", "data", "shard_*.npz")))
        print(f"\ninterrupted: {kept} shard(s) kept in {args.out}; run the same command again to resume", file=sys.stderr,
              flush=True)
        return 130
    print(f"{len(records)} rounds in {args.out}: log.jsonl, curve.png, policy.pt (the latest network)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
