"""Every command-line tool starts, both ways the README's table shows: the console script
(``pyproject.toml``, ``[project.scripts]``) and its ``python -m`` form, each with ``--help``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _console_scripts() -> dict[str, str]:
    """script name -> module, from pyproject.toml's [project.scripts] (read as text: tomllib
    is not in Python 3.10)."""
    text = (ROOT / "pyproject.toml").read_text()
    section = re.search(r"^\[project\.scripts\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M)
    assert section, "pyproject.toml has no [project.scripts]"
    scripts = dict(re.findall(r'^([\w-]+)\s*=\s*"([\w.]+):main"', section.group(1), re.M))
    assert scripts, "no console scripts found in pyproject.toml"
    return scripts


SCRIPTS = _console_scripts()


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=300)


@pytest.mark.parametrize(("script", "module"), sorted(SCRIPTS.items()))
def test_readme_table_lists_the_tool(script, module):
    rows = [line for line in README.splitlines() if line.startswith(f"| `{script}` |")]
    assert rows, f"README's command-line table has no row for {script}"
    assert f"`python -m {module}`" in rows[0], f"README's row for {script} should show python -m {module}"


@pytest.mark.parametrize("module", sorted(set(SCRIPTS.values())))
def test_module_form_starts(module):
    done = _run([sys.executable, "-m", module, "--help"])
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout


@pytest.mark.parametrize(("script", "module"), sorted(SCRIPTS.items()))
def test_console_script_starts(script, module):
    try:
        points = {e.name: e.value for e in metadata.entry_points(group="console_scripts")}
    except Exception as exc:  # pragma: no cover - metadata is part of the standard library
        pytest.fail(f"cannot read installed entry points: {exc}")
    if script not in points:
        pytest.skip(f"{script} is not installed here (pip install -e . installs it)")
    assert points[script] == f"{module}:main"
    path = Path(sys.executable).parent / script
    assert path.exists(), f"{script} is installed but not beside {sys.executable}"
    done = _run([str(path), "--help"])
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout


def test_the_training_script_starts_from_its_file():
    """``python train/selfplay.py``, the Quick start's form."""
    done = _run([sys.executable, "train/selfplay.py", "--help"])
    assert done.returncode == 0, done.stderr[-2000:]
