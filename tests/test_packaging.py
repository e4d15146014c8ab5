"""What ``pip install .`` puts into site-packages.

The repository keeps its bots in ``agents/`` and its training code in ``train/``, but the
wheel must install them inside the one top-level package (``startups_env.agents``,
``startups_env.train``): generic top-level names such as ``agents`` belong to other
packages (the OpenAI Agents SDK installs one), and two of them overwrite each other.
"""

from __future__ import annotations

import configparser
import importlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# (folder in the repository, the package it is installed as)
INSTALLED_AS = {"startups_env": "startups_env", "agents": "startups_env/agents", "train": "startups_env/train"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    (path,) = out.glob("startups_env-*.whl")
    with zipfile.ZipFile(path) as archive:
        yield archive


def _tracked(pattern: str) -> list[str]:
    return subprocess.run(["git", "ls-files", pattern], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.split()


def test_the_wheel_adds_one_top_level_package(wheel):
    top = {name.split("/")[0] for name in wheel.namelist()}
    top = {name for name in top if not name.endswith(".dist-info")}
    assert top == {"startups_env"}


def test_every_tracked_module_and_the_weights_are_installed_under_startups_env(wheel):
    names = set(wheel.namelist())
    expected = []
    for folder, package in INSTALLED_AS.items():
        for path in _tracked(f"{folder}/*.py") + _tracked(f"{folder}/weights/*"):
            expected.append(package + path[len(folder):])
    assert expected, "git ls-files found nothing: is this a git checkout?"
    missing = [path for path in expected if path not in names]
    assert not missing, f"not in the wheel: {missing}"


def test_the_web_tables_page_is_installed(wheel):
    """The page the web table serves (startups_env.tools.web) is package data."""
    page = _tracked("startups_env/tools/web_static/*")
    assert page and not [path for path in page if path not in set(wheel.namelist())]


def test_the_wheel_carries_the_license(wheel):
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in wheel.namelist())


def test_every_console_script_names_a_main_that_exists(wheel):
    (entry_points,) = [name for name in wheel.namelist() if name.endswith(".dist-info/entry_points.txt")]
    config = configparser.ConfigParser()
    config.read_string(wheel.read(entry_points).decode())
    scripts = dict(config["console_scripts"])
    assert {"startups-arena", "startups-ladder", "startups-play", "startups-train"} <= set(scripts)
    for script, target in scripts.items():
        module, _, function = target.partition(":")
        assert module.startswith("startups_env"), script
        assert callable(getattr(importlib.import_module(module), function)), script
