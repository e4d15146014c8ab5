"""The repository stands alone: no tracked file refers to a path outside it.

A clone holds only what git tracks, so a link, command or note that names a folder beside
the repository (one level up), a folder of the machine it was written on (a home or work
folder) or a scratch file of some run (in the system's temporary folder) points at nothing
for anyone else. Notebooks are checked with their saved outputs, which is where a run's temporary
paths end up. Binary files (the shipped weights) are not read.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Written in pieces so that this file does not match itself.
_UP_AND_OUT = r"\.\./+" + "shared"
_MACHINE_ROOTS = "|".join(["work", "tmp", "home", "root", "mnt", "opt", "var/tmp", "Users"])
# An absolute path into one of those folders (a file in the temporary folder), not prose like "in /tmp." or
# "/usr/bin/env" (a shebang names a program every machine has, not a file of this one).
_MACHINE_PATH = r"(?<![\w.~/-])/(?:" + _MACHINE_ROOTS + r")/[\w.-]"
# A top-level shared/ folder that the repository does not have.
_SHARED = r"(?<![\w./-])" + "shared" + r"/[\w.-]"
OUTSIDE = re.compile("|".join([_UP_AND_OUT, _MACHINE_PATH, _SHARED]))


def outside_paths(text: str) -> list[str]:
    """The lines of ``text`` that name a path outside the repository."""
    return [line.strip() for line in text.splitlines() if OUTSIDE.search(line)]


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    files = []
    for name in filter(None, listed.stdout.split("\0")):
        path = ROOT / name
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue  # binary
        files.append(path)
    return files


def test_the_rule_catches_outside_paths_and_spares_ordinary_text():
    # The examples are joined from pieces, like the patterns, so this file passes its own check.
    up, tmp, work = "..", "/" + "tmp", "/" + "work"
    assert outside_paths(f"[`RULES.md`]({up}/shared/RULES.md) of the project")  # the README line it replaced
    assert outside_paths(f"python train/selfplay.py --out {tmp}/runs2/g2")
    assert outside_paths(f'"policy: {tmp}/startups_selfplay_wztcvat8/policy.pt"')  # a notebook's saved output
    assert outside_paths(f"cd {work}/main && git status")
    assert outside_paths("see " + "shared" + "/scripts/fresh-start.sh")
    assert not outside_paths("#!/usr/bin/env bash")
    assert not outside_paths(f"rather than a stray folder in {tmp}.")
    assert not outside_paths("write it under runs/quickstart (docs/rules.md, agents/weights/README.md)")
    assert not outside_paths("the ppo + search + 2 greedy table, a shared table with the search bot")


def test_git_is_available():
    """The next test lists files with git; without git it would check nothing."""
    assert _tracked_text_files(), "git ls-files listed no files"


@pytest.mark.parametrize("path", _tracked_text_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_tracked_file_refers_outside_the_repository(path):
    text = path.read_bytes().decode("utf-8", errors="replace")
    assert not outside_paths(text), f"{path.relative_to(ROOT)} names paths outside the repository"
