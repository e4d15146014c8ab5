"""The README teaches with code that runs: every code block is executed here.

* ``python`` blocks run in one namespace, in order (an example may build on the one before);
* ``bash`` blocks outside "Quick start" run line by line in the project root (their
  settings are kept small on purpose); the Quick start block installs the project, which
  ``.ci/run`` and ``shared/scripts/fresh-start.sh`` exercise instead;
* the environment card in the README is the one ``python -m startups_env.docs`` prints.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _sections() -> list[tuple[str, str, str]]:
    """(section title, language, code) of every fenced block."""
    out, title = [], ""
    pos = 0
    for match in BLOCK.finditer(README):
        heads = re.findall(r"^## (.+)$", README[pos:match.start()], re.M)
        if heads:
            title = heads[-1]
        pos = match.end()
        out.append((title, match.group(1), match.group(2)))
    return out


BLOCKS = _sections()
PYTHON_BLOCKS = [code for _, lang, code in BLOCKS if lang == "python"]
SHELL_LINES = [
    line.strip()
    for title, lang, code in BLOCKS
    if lang == "bash" and title != "Quick start"
    for line in code.splitlines()
    if line.strip() and not line.strip().startswith("#")
]


def test_readme_has_the_two_quick_start_commands():
    quick = [code for title, _, code in BLOCKS if title == "Quick start"]
    assert quick, "README needs a code block under '## Quick start'"
    lines = [line for line in quick[0].splitlines() if line.strip()]
    assert len(lines) == 2
    assert "train/selfplay.py" in lines[0] and "pytest" in lines[1]
    assert all(line.startswith("pip install torch==2.13.0 && pip install -e ") for line in lines)


def test_readme_environment_card_matches_the_code():
    from startups_env.docs import environment_card

    assert environment_card() in README, "regenerate with: python -m startups_env.docs"


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    assert PYTHON_BLOCKS, "the README should show the batch API in Python"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    for code in PYTHON_BLOCKS:
        exec(compile(code, "README.md", "exec"), namespace)


@pytest.fixture(scope="module")
def shell_dir(tmp_path_factory):
    """One folder for all README commands: a later command may read what an earlier wrote."""
    return tmp_path_factory.mktemp("readme")


@pytest.mark.parametrize("line", SHELL_LINES)
def test_readme_shell_commands_run(line, shell_dir):
    argv = shlex.split(line)
    assert argv[0] == "python", f"README shell examples should be python commands: {line}"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, *argv[1:]], cwd=shell_dir, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
