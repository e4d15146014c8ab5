"""Clone the builder bot of Стартап into a policy file, the starting point of the shipped
``ppo`` (agents/weights/README.md): play games with the builder in every seat, record each
decision (observation, mask, action) and the seat's final reward (the "rank" scheme), and
fit :class:`startups_env.agents.ppo.ActorCritic`'s actor to the actions (cross-entropy)
and its critic to the rewards (squared error).

    python scripts/startap_clone.py --games 1200 --epochs 6 --out runs/startap_clone/policy.pt
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F

from startups_env.agents.ppo import ActorCritic, checkpoint_dict
from startups_env.agents.startap_bots import make_startap_agent
from startups_env.startap.game import GAME
from startups_env.startap.observe import observe
from startups_env.startap.rules import Rules
from startups_env.startap.simulator import Simulator


def record(games: int, players: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(obs float32[D, OBS_DIM], mask bool[D, A], action int64[D], reward float32[D]) of every
    decision of ``games`` builder games at ``players`` seats."""
    sim = Simulator(games, seed=seed, rules=Rules(players, reward="rank"))
    bot = make_startap_agent("builder", seed=seed)
    obs, masks, actions, who = [], [], [], []
    while not sim.done.all():
        running = np.flatnonzero(~sim.done)
        o, m = observe(sim.state, games=running), sim.legal_mask()[running]
        a = bot.act(o, m)
        obs.append(o)
        masks.append(m)
        actions.append(a)
        who.append(running * 8 + sim.state.current[running])
        step = np.zeros(games, np.int64)
        step[running] = a
        sim.step(step)
    final = sim.rewards(np.arange(games)).T.reshape(-1)  # [games * P], game-major
    who = np.concatenate(who)
    reward = final[(who // 8) * sim.state.ranks.shape[1] + who % 8]
    return np.concatenate(obs), np.concatenate(masks), np.concatenate(actions), reward.astype(np.float32)


def fit(model: ActorCritic, data, epochs: int, seed: int, batch: int = 1024) -> None:
    obs, mask, action, reward = (torch.as_tensor(x) for x in data)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        order = torch.randperm(len(obs), generator=gen)
        hits = 0
        for start in range(0, len(obs), batch):
            i = order[start:start + batch]
            logits, value = model(obs[i], mask[i])
            loss = F.cross_entropy(logits, action[i]) + 0.5 * F.mse_loss(value, reward[i])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            hits += int((logits.argmax(dim=1) == action[i]).sum())
        print(f"epoch {epoch + 1}: agreement with the builder {hits / len(obs):.3f}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1200, help="games per table size (3, 4, 5, 6)")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="runs/startap_clone/policy.pt")
    args = parser.parse_args(argv)
    parts = [record(args.games // 4, n, args.seed + n) for n in (3, 4, 5, 6)]
    data = [np.concatenate(column) for column in zip(*parts)]
    print(f"{len(data[0])} decisions recorded", flush=True)
    torch.manual_seed(args.seed)
    model = ActorCritic(GAME.obs_dim, (128, 128), GAME.num_actions, features=False, game=GAME.name)
    fit(model, data, args.epochs, args.seed)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    torch.save(checkpoint_dict(model), tmp)
    os.replace(tmp, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
