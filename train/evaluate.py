"""Evaluating a policy network in the arena, and drawing a run's learning curve (shared by
the self-play trainer and the distillation script)."""

from __future__ import annotations

import os

from startups_env.agents.arena import run_arena
from startups_env.agents.ppo import ActorCritic, PPOAgent

from startups_env.table.games import game_by_name
from startups_env.tools.files import atomic_write


def evaluate(model: ActorCritic, opponents: list[str], players: int, games: int, seed: int, rules,
             rate: bool = False):
    """Arena (seat-rotated) of the greedy-argmax policy against ``players - 1`` copies of
    each opponent. Returns {opponent: ArenaResult}; entry 0 is the policy. OpenSkill
    ratings (``rate``) are left out of the periodic evaluations, where only speed counts.
    The game is the model's; ``rules`` gives the turn cap."""
    agent = PPOAgent(model, deterministic=True, name="ppo")
    game = game_by_name(model.game)
    rules = game.make_rules(players, ruleset=getattr(rules, "ruleset", None), turn_cap=rules.turn_cap)
    results = {}
    was_training = model.training
    model.eval()
    for opp in opponents:
        results[opp] = run_arena([agent] + [opp] * (players - 1), players, games, seed=seed, rules=rules, rate=rate,
                                 game=game)
    model.train(was_training)
    return results


def eval_summary(results) -> dict[str, dict[str, float]]:
    """The policy's row of each arena result: win rate (and its interval), mean rank and score, games."""
    out = {}
    for opp, res in results.items():
        row = res.entry_stats()[0]
        out[opp] = {"win_rate": row["win_rate"], "win_ci": row["win_ci"], "mean_rank": row["mean_rank"],
                    "mean_score": row["mean_score"], "games": row["games"]}
    return out


def plot_learning_curve(out_dir: str, *, players: str = "", eval_players: int = 4, eval_games: int = 0,
                        final_games: int = 0) -> str | None:
    """Write OUT/learning_curve.png from the run's TensorBoard scalars (every invocation,
    resumed ones included). Left: the learner's win rate in its training games against each
    opponent of the pool (tables of ``players``). Right: the evaluations, the argmax policy
    against ``eval_players - 1`` copies of each opponent, the final evaluation's win rates as
    stars. The other arguments only label the axes. Returns the path, or None when nothing
    was logged yet."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(out_dir, size_guidance={"scalars": 0})
    events.Reload()
    tags = events.Tags().get("scalars", [])
    train_tags = sorted(t for t in tags if t.startswith("charts/win_rate_vs_")) or [t for t in ["charts/win_rate"] if t in tags]
    eval_tags = sorted(t for t in tags if t.startswith("eval/win_rate_vs_"))
    if not train_tags and not eval_tags:
        return None
    curve = {t: ([p.step for p in events.Scalars(t)], [p.value for p in events.Scalars(t)]) for t in train_tags + eval_tags}
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    names = {"self": "itself (the live policy)", "snapshots": "its past selves (snapshots)"}
    for tag in train_tags:
        name = tag.removeprefix("charts/win_rate_vs_")
        left.plot(*curve[tag], marker="." if len(curve[tag][0]) < 40 else None,
                  label="all opponents" if tag == "charts/win_rate" else f"vs {names.get(name, name)}")
    left.set_title(f"training games{f' ({players} players)' if players else ''}: learner's win rate\n"
                   "by the opponent at the table (it plays every other seat)", fontsize=10)
    star_label = f"final evaluation{f' ({final_games} games)' if final_games else ''}"
    for tag in eval_tags:
        name = tag.removeprefix("eval/win_rate_vs_")
        (line,) = right.plot(*curve[tag], marker="o", markersize=4, label=f"vs {eval_players - 1} x {name}")
        final = f"eval/final_win_rate_vs_{name}"
        if final in tags:
            points = events.Scalars(final)
            right.plot([p.step for p in points], [p.value for p in points], marker="*", markersize=12, ls="none",
                       color=line.get_color(), label=star_label)
            star_label = None  # one legend entry for the stars of every opponent
    right.axhline(1 / eval_players, color="grey", ls="--", lw=1, label=f"1 in {eval_players}: an even share")
    right.set_title(f"evaluation: the argmax policy, {eval_players} players"
                    f"{f', {eval_games} games a point' if eval_games else ''}", fontsize=10)
    steps = matplotlib.ticker.FuncFormatter(lambda x, _: f"{x / 1e6:g}M" if x >= 1e6 else f"{x / 1e3:g}k" if x else "0")
    for ax in (left, right):
        ax.xaxis.set_major_formatter(steps)
        ax.set_xlabel("learner steps")
        ax.set_ylabel("win rate")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "learning_curve.png")
    atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=90))
    plt.close(fig)
    return path
