"""Fingerprints of what the package plays, for proving a restructuring changes nothing.

    python scripts/fingerprint.py [--only games,arena,ladder,search,train] [--json out.json]

Prints one SHA-256 (first 16 hex digits) per item: the games a seed deals and plays on each
backend (batch, auto-reset, round game, turn cap, the one-game path of the PettingZoo env),
an arena table and a ladder (results only, not times), the search bot's choices on the
bench's recorded decisions (each backend), and the weights of a short seeded training run.
Run it before and after a change; every line must match. It uses the public API only, so it
runs on any revision that has it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def _digest(*chunks) -> str:
    h = hashlib.sha256()
    for chunk in chunks:
        if isinstance(chunk, np.ndarray):
            h.update(str(chunk.dtype).encode() + str(chunk.shape).encode())
            h.update(np.ascontiguousarray(chunk).tobytes())
        else:
            h.update(repr(chunk).encode())
    return h.hexdigest()[:16]


def _state_arrays(state):
    from dataclasses import fields

    return [getattr(state, f.name) for f in fields(state)]


def _batch_games(backend: str, rules_kwargs: dict, batch: int, seed: int, steps: int, **sim_kwargs) -> str:
    from startups_env import Rules, Simulator

    sim = Simulator(Rules(**rules_kwargs), batch_size=batch, seed=seed, backend=backend, **sim_kwargs)
    h = hashlib.sha256()
    for _ in range(steps):
        if sim.done.all():
            break
        mask = sim.legal_mask()
        result = sim.step(sim.random_actions())
        for array in [mask, *result, *_state_arrays(sim.state)]:
            h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()[:16]


def games() -> dict:
    out = {}
    for backend in ("numpy", "numba"):
        out[f"games/{backend}/4p"] = _batch_games(backend, dict(num_players=4), 64, 0, 400)
        out[f"games/{backend}/mixed-autoreset"] = _batch_games(
            backend, dict(num_players=4), 200, 1, 300, auto_reset=True,
            num_players=np.arange(200) % 6 + 2)
        out[f"games/{backend}/rounds"] = _batch_games(backend, dict(num_players=5, rounds=4, reward="rank"), 32, 2, 2000)
        out[f"games/{backend}/cap-margin"] = _batch_games(backend, dict(num_players=3, turn_cap=25, reward="margin"),
                                                          48, 3, 400)
        out[f"games/{backend}/score-autoreset"] = _batch_games(backend, dict(num_players=7, reward="score"), 5000, 4, 120,
                                                               auto_reset=True)
        out[f"aec/{backend}"] = _aec_games(backend)
    return out


def _aec_games(backend: str) -> str:
    from startups_env import env

    h = hashlib.sha256()
    for players, seed in ((3, 0), (4, 1), (7, 2)):
        game = env(num_players=players, backend=backend)
        game.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for agent in game.agent_iter():
            obs, reward, term, trunc, info = game.last()
            h.update(obs["observation"].tobytes() + obs["action_mask"].tobytes() + repr((agent, reward, term, trunc)).encode())
            if term or trunc:
                game.step(None)
            else:
                game.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return h.hexdigest()[:16]


def _arena_digest(result) -> str:
    return _digest(result.names, result.ranks, result.scores, result.truncated, result.turns, result.decisions)


def arena() -> dict:
    from startups_env.agents.arena import run_arena

    out = {"arena/styles": _arena_digest(run_arena("greedy,banker,hoarder,random", players=4, games=96, seed=1))}
    for backend in ("numpy", "numba"):
        out[f"arena/search/{backend}"] = _arena_digest(
            run_arena(f"search[backend={backend}],greedy,noisy", players=3, games=6, seed=2))
    return out


def ladder() -> dict:
    from startups_env.agents.ladder import run_ladder

    with open(os.devnull, "w") as quiet:
        stdout, sys.stdout = sys.stdout, quiet
        try:
            ladder = run_ladder([3], games=24, search_games=3, seed=1)
        finally:
            sys.stdout = stdout
    rows = [{k: v for k, v in row.items() if not k.endswith(("seconds", "per_decision")) and k != "batch_games"}
            for row in ladder["pairings"]]
    return {"ladder/pairings": _digest(json.dumps(rows, sort_keys=True, default=str)),
            "ladder/ratings": _digest(json.dumps(ladder["ratings"], sort_keys=True, default=str))}


def search() -> dict:
    from startups_env.agents.bench import search_decisions
    from startups_env.agents.registry import make_agent

    calls = search_decisions(4, 12, seed=0)
    out = {"search/recorded": _digest(*[call["obs"] for call in calls], *[call["mask"] for call in calls])}
    for backend in ("numpy", "numba"):
        bot = make_agent("search", seed=0, backend=backend)
        choices = []
        for call in calls:
            given = {**call, **{key: call[key].take(np.arange(call["obs"].shape[0]))
                                for key in ("public", "history") if key in call}}
            choices.append(np.asarray(bot.act(**given)))
        out[f"search/choices/{backend}"] = _digest(*choices)
    return out


def train() -> dict:
    import torch

    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([sys.executable, "-m", "startups_env.train.selfplay", "--total-steps", "2048", "--num-envs", "64",
                        "--num-steps", "16", "--eval-every", "1024", "--eval-games", "8", "--final-eval-games", "8",
                        "--seed", "3", "--torch-threads", "1", "--no-progress", "--out", os.path.join(folder, "run")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        weights = torch.load(os.path.join(folder, "run", "policy.pt"), weights_only=True)
        model = weights.get("model", weights) if isinstance(weights, dict) else weights
        tensors = [(key, value.numpy()) for key, value in sorted(model.items()) if hasattr(value, "numpy")]
        with open(os.path.join(folder, "run", "eval.json")) as f:
            evaluation = json.load(f)
    return {"train/weights": _digest(*[k for k, _ in tensors], *[v for _, v in tensors]),
            "train/eval": _digest(json.dumps(_without_times(evaluation), sort_keys=True))}


def _without_times(value):
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items()
                if k not in ("batch_games", "game") and not any(word in k for word in ("second", "time", "ms", "wall", "revision", "date"))}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


PARTS = {"games": games, "arena": arena, "ladder": ladder, "search": search, "train": train}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(PARTS), help="comma-separated parts: " + ",".join(PARTS))
    parser.add_argument("--json", help="also write the fingerprints to this JSON file")
    args = parser.parse_args(argv)
    found = {}
    for part in args.only.split(","):
        for key, value in PARTS[part]().items():
            print(f"{key:32s} {value}", flush=True)
            found[key] = value
    if args.json:
        with open(args.json, "w") as f:
            json.dump(found, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
