"""The code passes the project's pinned ruff rules (``[tool.ruff.lint]`` in pyproject.toml)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_ruff_check_is_clean():
    pytest.importorskip("ruff", reason="ruff comes with the dev extra: pip install -e '.[dev]'")
    command = [sys.executable, "-m", "ruff", "check", "--no-cache", str(ROOT)]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
