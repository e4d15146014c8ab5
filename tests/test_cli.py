"""Every command-line tool starts, both ways the README's table shows: the console script
(``pyproject.toml``, ``[project.scripts]``) and its ``python -m`` form, each with ``--help``."""

from __future__ import annotations

import io
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


def _exit_code(main, argv) -> int:
    """A tool's main: its return value, or the code argparse exits with."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def test_every_tool_reads_players_with_the_same_parser(tmp_path, capsys):
    """``--players`` is read by startups_env.envs.vector.parse_players in every tool (the ladder
    took only comma lists, and said "invalid literal for int()" of a range)."""
    from startups_env.agents.arena import main as arena
    from startups_env.agents.bench import main as bench
    from startups_env.agents.ladder import main as ladder
    from startups_env.agents.play import main as play
    from startups_env.train.distill import main as distill
    from startups_env.train.sb3_compare import main as sb3_compare
    from startups_env.train.selfplay import main as selfplay

    message = "players must look like '4', '3-7' or '3,4,6', got '3-x'"
    out = str(tmp_path / "out")
    for main, argv in [(ladder, []), (arena, ["--agents", "random"]), (bench, []), (distill, ["--out", out]),
                       (sb3_compare, ["--out", out]), (selfplay, ["--out", out])]:
        assert _exit_code(main, ["--players", "3-x", *argv]) == 2, main.__module__
        assert message in capsys.readouterr().err, main.__module__
    output = io.StringIO()
    assert play(["--players", "3-x"], input_fn=lambda prompt: "quit", output=output) == 2
    assert message in output.getvalue()
    assert not (tmp_path / "out").exists()


def test_a_console_script_names_itself_in_its_errors():
    """``startups-arena`` reported its errors as ``python -m startups_env.agents.arena: error:``."""
    path = Path(sys.executable).parent / "startups-arena"
    if not path.exists():
        pytest.skip("startups-arena is not installed here (pip install -e . installs it)")
    done = _run([str(path), "--players", "9", "--agents", "random"])
    assert done.returncode == 2 and "startups-arena: error: argument --players" in done.stderr, done.stderr
    done = _run([sys.executable, "-m", "startups_env.agents.arena", "--players", "9", "--agents", "random"])
    assert "python -m startups_env.agents.arena: error: argument --players" in done.stderr, done.stderr


# (module, arguments that fail after parsing or in it, whether it shows progress)
TOOLS = {
    "startups_env.agents.arena": (["--players", "3", "--agents", "nobody,random,random", "--games", "3"], True),
    "startups_env.agents.ladder": (["--players", "3", "--heroes", "nobody", "--games", "3"], True),
    "startups_env.agents.generalization": (["--heroes", "nobody", "--games", "4"], True),
    "startups_env.agents.play": (["--players", "3", "--opponents", "nobody"], False),
    "startups_env.agents.bench": (["--repeats", "0"], False),
    "startups_env.tools.replay": (["no_such_log.json"], False),
    "startups_env.train.selfplay": (["--total-steps", "0"], True),
    "startups_env.train.distill": (["--games", "0"], True),
    "startups_env.train.exit": (["--round-games", "0"], True),
    "startups_env.train.belief": (["--games", "0"], True),
}


@pytest.mark.parametrize("module", sorted(TOOLS))
def test_every_tool_follows_one_convention(module, tmp_path, capsys):
    """The arena showed progress unless --no-progress, the ladder hid it unless --progress;
    the trainer's errors came in a box without --traceback, the other trainers' as "error: ...":
    now every tool takes --traceback, reports an error as "PROG: error: ...", and every tool
    that shows progress shows it by default and takes --no-progress."""
    import importlib

    main = importlib.import_module(module).main
    argv, shows_progress = TOOLS[module]
    assert _exit_code(main, ["--help"]) == 0
    helped = " ".join(capsys.readouterr().out.split())
    assert "--traceback" in helped and ("--no-progress" in helped) == shows_progress, helped
    out = io.StringIO()
    if module == "startups_env.agents.play":
        code = main([*argv, "--traceback"], input_fn=lambda prompt: "quit", output=out)
    else:
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(tmp_path)  # (the trainers' default --out)
            code = _exit_code(main, [*argv, "--traceback"])
    err = capsys.readouterr().err + out.getvalue()
    assert code == 2 and f"python -m {module}: error: " in err, err
    assert "Traceback (most recent call last)" in err or module.endswith("bench"), err  # (bench: argparse's error)


def test_the_ladder_shows_progress_by_default_and_still_takes_progress(monkeypatch):
    from startups_env.agents import ladder

    seen = []
    monkeypatch.setattr(ladder, "run_ladder", lambda *a, **k: seen.append(k["progress"]) or {"matrix": []})
    for argv in ([], ["--no-progress"], ["--progress"]):
        assert ladder.main(["--players", "3", "--games", "3", *argv]) == 0
    assert seen == [True, False, True]


def test_results_name_the_game_and_the_ruleset(tmp_path, capsys, monkeypatch):
    """Only the arena's JSON said what was played: its text footer, its plot's title, the
    ladder's and the generalization table did not."""
    import matplotlib.figure

    from startups_env.agents import generalization, ladder
    from startups_env.agents.arena import main as arena

    titles = []
    real_title = matplotlib.figure.Figure.suptitle
    monkeypatch.setattr(matplotlib.figure.Figure, "suptitle", lambda fig, text, **k: titles.append(text)
                        or real_title(fig, text, **k))
    assert arena(["--players", "3", "--agents", "greedy,random,random", "--games", "3", "--rules", "summary",
                  "--plot", str(tmp_path / "a.png"), "--no-progress"]) == 0
    assert "Startups, ruleset summary: 3 players, 3 games" in capsys.readouterr().out
    assert titles and titles[0].startswith("Startups, ruleset summary: 3 players")
    assert ladder.main(["--players", "3,4", "--games", "4", "--heroes", "greedy", "--styles", "random",
                        "--no-progress", "--plot", str(tmp_path / "ladder.png")]) == 0  # (the ladder had no --plot)
    out = capsys.readouterr().out
    assert out.startswith("ladder: Startups, ruleset rulebook\n") and "ladder ratings, Startups, ruleset rulebook" in out
    assert titles[-1] == "ladder: Startups, ruleset rulebook" and (tmp_path / "ladder.png").read_bytes()[:4] == b"\x89PNG"
    assert generalization.main(["--heroes", "random", "--rulesets", "summary", "--games", "4", "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("Startups, rulesets summary: win rate against 3 x greedy")


def test_the_trainer_reads_its_flags_as_the_other_tools_do(capsys):
    """The trainer's flags came from tyro, whose errors were boxes: now argparse's, one line,
    naming the nearest flag of a typo; --help still shows each field's docstring."""
    from startups_env.train.selfplay import main, parse_args

    assert _exit_code(main, ["--total-step", "5"]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith("python -m startups_env.train.selfplay: error: unrecognized arguments: --total-step 5 "
                                "(did you mean --total-steps?)") and "╭" not in err, err
    assert _exit_code(main, ["--help"]) == 0
    helped = " ".join(capsys.readouterr().out.split())
    assert "--total-steps INT learner decisions to train for" in helped and "--no-greedy-prior" in helped, helped
    args, given = parse_args(["--total-steps", "7", "--no-progress", "--rules=summary"])
    assert (args.total_steps, args.progress, args.rules, args.seed) == (7, False, "summary", 1)
    assert given == {"total_steps": 7, "progress": False, "rules": "summary"}
