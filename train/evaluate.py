"""Evaluating a policy network in the arena, and drawing a run's learning curve (shared by
the self-play trainer and the distillation script)."""

from __future__ import annotations

import os

from startups_env.agents.arena import run_arena
from startups_env.agents.ppo import ActorCritic, PPOAgent
from startups_env.files import atomic_write
from startups_env.rules import Rules


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
    """The policy's row of each arena result: win rate (and its interval), mean rank and score, games."""
    out = {}
    for opp, res in results.items():
        row = res.entry_stats()[0]
        out[opp] = {"win_rate": row["win_rate"], "win_ci": row["win_ci"], "mean_rank": row["mean_rank"],
                    "mean_score": row["mean_score"], "games": row["games"]}
    return out


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
