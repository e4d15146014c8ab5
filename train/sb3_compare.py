"""SB3 ``MaskablePPO`` on ``StartupsVecEnv`` vs the native trainer, at equal wall time.

    python -m startups_env.train.sb3_compare --seconds 240 --out runs/compare

Both learners get the same opponents (the baselines of ``--opponents``, drawn per game,
no self-play, so that the two set-ups are the same problem), the same table sizes, the
same network (two ReLU layers of ``--hidden``) and the same wall-clock budget; then both
play the same arena evaluation (4 players, vs 3 random and vs 3 greedy). SB3 sees the
observations through ``VecNormalize`` (running mean/std), the native trainer through the
network's fixed input scale. Prints throughput (learner steps/s and all-seat
decisions/s, wall clock and per CPU second) and the arena table, and writes
``compare.json`` to ``--out``, with each learner's TensorBoard logs (``sb3/``, ``native/``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import torch
from startups_env.agents.arena import run_arena
from startups_env.agents.registry import build_agent, split_names
from startups_env.agents.sb3 import SB3Agent
from startups_env.train.common import atomic_write_text
from startups_env.train.selfplay import Args, resolve_args, train

from startups_env.envs.vector import StartupsVecEnv
from startups_env.startups.rules import Rules
from startups_env.tools.cli import PLAYERS_FORMS, prog


class WallClock:
    """An SB3 callback that stops training after a number of seconds."""

    def __new__(cls, seconds: float):
        from stable_baselines3.common.callbacks import BaseCallback

        class _Stop(BaseCallback):
            def _on_training_start(self) -> None:
                self.start = time.perf_counter()

            def _on_step(self) -> bool:
                return time.perf_counter() - self.start < seconds

        return _Stop()


def run_sb3(args) -> dict:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecNormalize

    opponents = [build_agent(spec, seed=i) for i, spec in enumerate(split_names(args.opponents))]
    env = StartupsVecEnv(args.num_envs, opponents, rules=Rules(reward="rank"), players=args.players, seed=args.seed)
    venv = VecNormalize(env, norm_obs=True, norm_reward=False)
    model = MaskablePPO("MlpPolicy", venv, n_steps=args.num_steps, batch_size=args.num_envs * args.num_steps // 16,
                        n_epochs=4, gamma=1.0, gae_lambda=0.95, ent_coef=0.01, learning_rate=args.learning_rate,
                        seed=args.seed,
                        policy_kwargs={"net_arch": [args.hidden, args.hidden], "activation_fn": torch.nn.ReLU},
                        verbose=0, tensorboard_log=os.path.join(args.out, "sb3"))  # not a stray SB3-<date> in /tmp
    stop = WallClock(args.seconds)
    decisions0, cpu0, start = env.batch.decisions, time.process_time(), time.perf_counter()
    model.learn(total_timesteps=10**9, callback=stop)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    decisions = env.batch.decisions - decisions0
    venv.training = False
    return {"model": model, "normalizer": venv, "steps": int(model.num_timesteps), "decisions": int(decisions),
            "wall": wall, "cpu": cpu}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=prog("startups_env.train.sb3_compare"), description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=240.0, help="training wall time of each learner")
    parser.add_argument("--players", default="3-7", help=f"table sizes: {PLAYERS_FORMS}")
    parser.add_argument("--opponents", default="random,greedy")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--num-envs", type=int, default=64, help="SB3 envs (the native run uses its defaults)")
    parser.add_argument("--num-steps", type=int, default=128, help="SB3 n_steps")
    parser.add_argument("--learning-rate", type=float, default=1e-3, help="both learners")
    parser.add_argument("--eval-games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="runs/compare")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the native run an earlier comparison left in OUT/native")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)

    # Native: same opponents, no self-play, same wall time (its own defaults otherwise).
    native_args = Args(out=os.path.join(args.out, "native"), seed=args.seed, players=args.players,
                       hidden=f"{args.hidden},{args.hidden}", self_play_share=0.0, pool_size=0,
                       baselines=args.opponents, pfsp_power=0.0, eval_every=10**12, final_eval_games=0,
                       checkpoint_every=10**12, progress=False, total_steps=10**12, max_seconds=args.seconds,
                       learning_rate=args.learning_rate, anneal_lr=False,  # SB3 keeps its rate constant too
                       greedy_prior=False, overwrite=args.overwrite)  # SB3's MlpPolicy starts from scratch too
    try:  # before SB3 trains: an earlier run in OUT/native (or a bad setting) is refused now, not minutes later
        resolve_args(native_args, None)
    except ValueError as exc:
        parser.error(str(exc))
    os.makedirs(args.out, exist_ok=True)

    report: dict = {"seconds": args.seconds, "players": args.players, "opponents": args.opponents}
    sb3 = run_sb3(args)
    report["sb3"] = {k: sb3[k] for k in ("steps", "decisions", "wall", "cpu")}
    print(f"sb3: {sb3['steps']:,} steps in {sb3['wall']:.0f} s", file=sys.stderr)

    native = train(native_args)
    report["native"] = {"steps": native["global_step"], "decisions": native["decisions"], "wall": native["wall_time"]}

    from startups_env.agents.ppo import load_ppo_agent

    learners = {"sb3": SB3Agent(sb3["model"], sb3["normalizer"]),
                "native": load_ppo_agent(os.path.join(native_args.out, "policy.pt"))}
    for name, side in (("sb3", report["sb3"]), ("native", report["native"])):
        side["steps_per_second"] = side["steps"] / side["wall"]
        side["decisions_per_second"] = side["decisions"] / side["wall"]
        print(f"{name:>6}: {side['steps']:>10,} learner steps in {side['wall']:.0f} s = "
              f"{side['steps_per_second']:,.0f} steps/s, {side['decisions_per_second']:,.0f} decisions/s")
    for opp in ("random", "greedy"):
        for name, agent in learners.items():
            res = run_arena([agent] + [opp] * 3, 4, args.eval_games, seed=args.seed + 7, rate=False)
            row = res.entry_stats()[0]
            report[name][f"win_rate_vs_{opp}"] = row["win_rate"]
            report[name][f"win_ci_vs_{opp}"] = row["win_ci"]
            print(f"{name:>6} vs 3 x {opp}: win rate {row['win_rate']:.3f} "
                  f"[{row['win_ci'][0]:.3f}, {row['win_ci'][1]:.3f}], mean rank {row['mean_rank']:.2f}")
    atomic_write_text(json.dumps(report, indent=2), os.path.join(args.out, "compare.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
