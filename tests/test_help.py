"""``help(startups_env)`` is a real guide: it names the two entry points and every submodule,
and shows the lazily imported PettingZoo env."""

import importlib.util
import pydoc
import re
import subprocess
import sys

import startups_env


def test_help_names_the_entry_points_and_submodules():
    text = pydoc.render_doc(startups_env, renderer=pydoc.plaintext)
    for name in ("env(", "raw_env", "Simulator", "Rules"):
        assert name in text, name
    doc = startups_env.__doc__
    listed = re.findall(r"^\* ``(\w+)`` --", doc, re.M) + re.findall(r"; ``(\w+)`` --", doc)
    assert {"startups", "table", "envs", "tools", "checks", "agents", "train"} <= set(listed)
    for name in listed:  # every submodule the docstring lists exists
        assert importlib.util.find_spec(f"startups_env.{name}") is not None, name


def test_env_and_raw_env_are_listed_before_they_are_imported():
    """dir() shows them (so help() and tab completion do) without importing PettingZoo."""
    code = ("import sys, startups_env; names = dir(startups_env); "
            "print('env' in names, 'raw_env' in names, 'pettingzoo' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True", "False"]
    from startups_env.envs.aec import raw_env

    assert startups_env.raw_env is raw_env
    assert isinstance(startups_env.env().unwrapped, raw_env)  # the front door's default game
