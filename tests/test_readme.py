"""The README and the pages of docs/ teach with code that runs: every code block is executed here.

* ``python`` blocks of one page run in one namespace, in order (an example may build on
  the one before), in a temporary folder;
* ``bash`` blocks run line by line in a temporary folder per page (their settings are
  kept small on purpose; a ``cat > FILE <<'EOF'`` heredoc, how a page writes a file such
  as a bot module, writes FILE there);
* a block that is not run says so on the page, where readers see it: an HTML comment
  ``<!-- not run: REASON -->`` just before it (the README's Quick start installs the
  project, which ``.ci/run`` exercises instead; a measurement takes minutes);
  docs/integrations.md's recipes run in tests/test_integrations.py;
* the environment card in docs/api.md is the one ``python -m startups_env.tools.docs`` prints,
  and the action table of docs/rules.md names the ids as the code does.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md"] + sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))
TEXT = {page: (ROOT / page).read_text() for page in PAGES}
README = TEXT["README.md"]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
MAX_README_LINES = 250


# The marker of a block that is not run, just before its fence (other comments may follow it).
NOT_RUN = re.compile(r"<!-- not run: ([^>]*?) -->\s*(?:<!--[^>]*-->\s*)*\Z")


def _sections(text: str) -> list[tuple[str, str, str, str | None]]:
    """(section title, language, code, why it is not run or None) of every fenced block."""
    out, title = [], ""
    pos = 0
    for match in BLOCK.finditer(text):
        before = text[pos:match.start()]
        heads = re.findall(r"^## (.+)$", before, re.M)
        if heads:
            title = heads[-1]
        pos = match.end()
        marker = NOT_RUN.search(before)
        out.append((title, match.group(1), match.group(2), marker.group(1).strip() if marker else None))
    return out


BLOCKS = {page: _sections(TEXT[page]) for page in PAGES}
# (docs/integrations.md's recipes need other RL libraries, two of them in venvs of their own:
# tests/test_integrations.py and scripts/check_integrations.sh run them.)
PYTHON_PAGES = [page for page in PAGES if page != "docs/integrations.md"
                and any(lang == "python" for _, lang, _, _ in BLOCKS[page])]
HEREDOC = re.compile(r"cat > (\S+) <<'(\w+)'\n(.*?)^\2$", re.S | re.M)


def _commands(code: str) -> list[str]:
    """The commands of a bash block: one a line, but a heredoc is one command, up to its end."""
    out, pos = [], 0
    for match in HEREDOC.finditer(code):
        out += code[pos:match.start()].splitlines() + [match.group(0)]
        pos = match.end()
    out += code[pos:].splitlines()
    return [line.strip() for line in out if line.strip() and not line.strip().startswith("#")]


SHELL_LINES = [
    (page, line)
    for page in PAGES
    for title, lang, code, not_run in BLOCKS[page]
    if lang == "bash" and not_run is None
    for line in _commands(code)
]


def test_every_code_block_is_one_the_tests_run():
    """A block in another language (or none) would be shown to readers but never run."""
    for page in PAGES:
        for title, lang, _, _ in BLOCKS[page]:
            assert lang in ("python", "bash"), f"{page}, section {title!r}: a ```{lang} block is not run by any test"


def test_every_block_runs_or_says_why_not():
    """Every block is run here (or, for docs/integrations.md's recipes, by
    tests/test_integrations.py) unless the page says why not, just before it; the README's
    Quick start installs the project (``.ci/run`` runs it), so it is one that says so."""
    from test_integrations import CHEAP, RECIPES

    recipes = {code for name, code in RECIPES.items() if name in CHEAP}
    marked = [(page, title) for page in PAGES for title, _, _, not_run in BLOCKS[page] if not_run is not None]
    for page in PAGES:
        for title, lang, code, not_run in BLOCKS[page]:
            assert not_run is None or len(not_run) > 10, f"{page}, {title!r}: say why the block is not run"
            if page == "docs/integrations.md" and lang == "python":
                assert (code in recipes) != (not_run is not None), f"{page}, {title!r}: a recipe no test runs"
    assert ("README.md", "Quick start") in marked
    for page, _, lang, code, not_run in [(p, *block) for p in PAGES for block in BLOCKS[p]]:
        if not_run and "the same run as the first command of docs/training.md" in not_run:  # (as the page says)
            first = next(c for _, kind, c, _ in BLOCKS["docs/training.md"] if kind == "bash").splitlines()[0]
            assert code.strip() == first, f"{page}: the block is not the first command of docs/training.md"


def test_readme_has_the_two_quick_start_commands():
    quick = [code for title, _, code, _ in BLOCKS["README.md"] if title == "Quick start"]
    assert quick, "README needs a code block under '## Quick start'"
    lines = [line for line in quick[0].splitlines() if line.strip()]
    assert len(lines) == 2
    assert "train/selfplay.py" in lines[0] and "pytest" in lines[1]
    assert all(line.startswith("pip install torch==2.13.0 && pip install -e ") for line in lines)


def test_readme_is_a_short_guide():
    assert len(README.splitlines()) <= MAX_README_LINES, "keep the README a guide; details go into docs/"


def test_relative_links_point_at_files_that_exist():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", TEXT[page]):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (ROOT / page).parent / target.split("#")[0]
            assert path.exists(), f"{page} links to {target}, which does not exist"


def test_api_page_environment_card_matches_the_code():
    from startups_env.tools.docs import environment_card

    assert environment_card() in TEXT["docs/api.md"], "regenerate with: python -m startups_env.tools.docs"


def test_the_environment_card_names_every_reward_scheme():
    """The card listed win, rank and score, but not margin."""
    from startups_env.startups.rules import REWARD_SCHEMES

    card = next(line for line in TEXT["docs/api.md"].splitlines() if line.startswith("| Rewards |"))
    for scheme in REWARD_SCHEMES:
        assert f"`{scheme}`" in card, scheme


def test_rules_page_names_every_action_id_as_the_code_does():
    from startups_env.startups.rules import NUM_ACTIONS, action_to_string

    rules = TEXT["docs/rules.md"]
    for action in range(NUM_ACTIONS):
        assert f"| {action} | `{action_to_string(action)}` |" in rules, f"docs/rules.md: action {action}"


def test_command_outputs_go_under_runs():
    """Examples must not leave result files in the repository root (runs/ is git-ignored)."""
    for page, line in SHELL_LINES:
        if HEREDOC.fullmatch(line):
            continue  # a file's text, not a command's arguments
        argv = shlex.split(line)
        for flag, value in zip(argv, argv[1:]):
            if flag in ("--json", "--csv", "--plot", "--out", "--save"):
                assert value.startswith("runs/"), f"{page}: {flag} {value} should write under runs/"


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_python_blocks_run(page, tmp_path, monkeypatch):
    """Each page's examples run, and leave no SB3 log folder in the temporary folder (the SB3
    example left an empty SB3-<date> folder there)."""
    monkeypatch.chdir(tmp_path)
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    namespace: dict = {"__name__": "__docs__"}
    for _, lang, code, not_run in BLOCKS[page]:
        if lang == "python" and not_run is None:
            exec(compile(code, page, "exec"), namespace)
    assert not list(temporary.glob("SB3-*")), f"{page}'s examples left SB3 log folders in the temporary folder"


@pytest.fixture(scope="module")
def shell_dirs(tmp_path_factory):
    """One folder per page for its commands: a later command may read what an earlier wrote."""
    folders: dict[str, Path] = {}

    def folder(page: str) -> Path:
        if page not in folders:
            folders[page] = tmp_path_factory.mktemp(Path(page).stem)
        return folders[page]

    return folder


@pytest.mark.parametrize(("page", "line"), SHELL_LINES)
def test_shell_commands_run(page, line, shell_dirs):
    heredoc = HEREDOC.fullmatch(line)
    if heredoc:  # written as the shell would, for the commands after it
        (shell_dirs(page) / heredoc.group(1)).write_text(heredoc.group(3))
        return
    argv = shlex.split(line)
    assert argv[0] == "python", f"{page}: shell examples should be python commands: {line}"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, *argv[1:]], cwd=shell_dirs(page), env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
