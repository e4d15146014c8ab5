"""Small helpers the training scripts share (selfplay, distill, sb3_compare): writing
result files atomically as plain data, the code revision a run started from, and the
``--hidden`` widths."""

from __future__ import annotations

import os
import subprocess
from typing import Any

import numpy as np
import torch

from startups_env.tools.files import atomic_write


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


def derived_seed(seed: int, index: int) -> int:
    """The seed of part ``index`` (a round, a shard) of a run seeded ``seed``: from the two
    alone, so a part is the same whichever parts ran before it."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def atomic_save(obj: Any, path: str) -> None:
    """torch.save of plain data, atomically and flushed to disk (:func:`atomic_write`): a
    reader (or a resume after a crash) sees the old file or the new one, never a torn one."""
    atomic_write(path, lambda f: torch.save(plain(obj), f), durable=True)


def atomic_write_text(text: str, path: str) -> None:
    atomic_write(path, lambda f: f.write(text), binary=False)


def git_revision() -> str:
    """The commit of the code in this folder ("unknown" outside a git checkout)."""
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                              timeout=10, check=False).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def hidden_sizes(text: str) -> list[int]:
    """``--hidden`` ("128,128") as a list of widths; ValueError on anything else."""
    try:
        sizes = [int(x) for x in str(text).split(",")]
    except ValueError:
        raise ValueError(f"--hidden must be comma-separated widths like 256,256, got {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise ValueError(f"--hidden must be comma-separated positive widths, got {text!r}")
    return sizes


def reference_bots(game) -> list[str]:
    """The bots ``game`` (a name or a Game) trains and evaluates against by default, but for
    ``random`` (*Startups*' ``greedy``, Стартап's ``builder``): the opponents of labelled
    games and the starting point of expert iteration."""
    from startups_env.table.games import game_by_name

    return [name for name in game_by_name(game).opponents if name != "random"]