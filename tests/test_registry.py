"""The agent registry: no import circle between the bots and their factory, outside bots by
``module:callable`` and ``sb3:PATH``, and a clear error (before any game, and before any
file is written) for a bot that cannot be built or plays badly."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from startups_env.agents import Agent, make_agent
from startups_env.agents.arena import main as arena_main
from startups_env.agents.arena import run_arena
from startups_env.agents.ladder import main as ladder_main
from startups_env.agents.registry import (
    TRIAL_BATCHES,
    TRIAL_STEPS,
    OutsideAgent,
    UnknownAgentError,
    agent_settings,
    build_agent,
    check_agent,
    is_outside_spec,
)
from startups_env.agents.search import SearchAgent

from startups_env import Rules, Simulator
from startups_env.startups.backend import numba_available
from startups_env.startups.observe import observe

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ROOT / "agents"


def _module_paths() -> dict[str, Path]:
    """Every module of agents/ by its name under ``startups_env.agents`` (``greedy``,
    ``search`` for the package's ``__init__``, ``search.worlds``); the package itself is
    ``__init__``."""
    paths = {}
    for path in AGENTS.rglob("*.py"):
        parts = path.relative_to(AGENTS).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        paths[".".join(parts) or "__init__"] = path
    return paths


PATHS = _module_paths()
MODULES = sorted(name for name in PATHS if name != "__init__")
#: The modules that build agents by name; every other module of agents/ is a bot or a bot's part.
REGISTRY_USERS = {"__init__", "registry", "arena", "ladder", "play", "table_play", "bench", "generalization"}


# ----------------------------------------------------------------------------- import graph

def _agents_imports(module: str) -> set[str]:
    """The modules of agents/ that ``module`` (a name of :data:`PATHS`) imports when it runs
    (anywhere in the file, lazy imports included; not those for type annotations only):
    ``from .x import``, ``from . import x``, ``from ..x import`` (in a subpackage),
    ``startups_env.agents.x``."""
    path = PATHS[module]
    package = [] if module == "__init__" else module.split(".")
    if path.name != "__init__.py":
        package = package[:-1]  # a plain module's relative imports start from its package
    tree = ast.parse(path.read_text(), str(path))
    # (imports for type annotations only, under `if TYPE_CHECKING:`, never run)
    typing_only = {id(inner) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
                   for inner in ast.walk(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level - 1 > len(package):
                    continue  # above agents/
                base = ".".join(["startups_env", "agents", *package[:len(package) - node.level + 1]])
                base += f".{node.module}" if node.module else ""
            else:
                base = node.module
            # from x import y: y is a module of x, or a name in it
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}"[len("startups_env.agents."):] in PATHS
                       else base for alias in node.names]
        else:
            continue
        for target in targets:
            if target == "startups_env.agents":
                found.add("__init__")
            elif target.startswith("startups_env.agents."):
                name = target[len("startups_env.agents."):]
                while name and name not in PATHS:  # (a name inside a module: the module)
                    name = name.rpartition(".")[0]
                if name:
                    found.add(name)
    return found


def test_the_import_graph_of_agents_has_no_cycle():
    graph = {name: _agents_imports(name) - {name} for name in PATHS}
    assert graph["arena"] >= {"base", "registry"} and "search" in graph["registry"]  # the parser sees imports
    assert graph["search.rollout_kernel"] >= {"greedy", "greedy_kernel"}  # (from .. inside a subpackage)
    assert graph["search.backends"] >= {"search.worlds_kernel", "search.inference"}  # (from . import x)
    importers = {name for name, targets in graph.items() if "registry" in targets}
    assert importers <= REGISTRY_USERS, f"bot modules import the registry: {sorted(importers - REGISTRY_USERS)}"
    state: dict[str, str] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = "open"  # on the path being followed (trail)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                pytest.fail(f"import cycle in agents/: {' -> '.join(trail[trail.index(nxt):] + [nxt])}")
            if nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])


def _needs_numba(module: str) -> bool:
    """The module imports numba (the optional ``fast`` extra) when it is imported."""
    tree = ast.parse(PATHS[module].read_text())
    return any(isinstance(node, ast.Import) and any(alias.name == "numba" for alias in node.names)
               for node in tree.body)


def test_the_compiled_modules_are_recognised():
    assert _needs_numba("greedy_kernel") and not _needs_numba("greedy")
    assert _needs_numba("search.rollout_kernel") and _needs_numba("search.worlds_kernel")
    assert not _needs_numba("search")


@pytest.mark.parametrize("module", MODULES)
def test_each_agents_module_imports_on_its_own(module):
    """A fresh interpreter imports the module first: an import circle would fail here
    whichever module of the circle comes first. (A compiled module needs numba.)"""
    if _needs_numba(module) and not numba_available():
        pytest.skip("numba is not installed (the fast extra)")
    done = subprocess.run([sys.executable, "-c", f"import startups_env.agents.{module}"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


# ----------------------------------------------------------------------------- outside bots

BOT = textwrap.dedent('''
    """An outside bot for the tests: legal random moves, or one way of failing."""
    import numpy as np

    from startups_env.agents import Agent

    calls = []


    def make_bot(seed=None, mode="ok", after=0):
        rng = np.random.default_rng(seed)
        made = []

        def act(obs, mask):
            made.append(1)
            if len(made) > after:
                if mode == "raise":
                    raise RuntimeError("boom")
                if mode == "float":
                    return mask.argmax(axis=1).astype(float)
                if mode == "shape":
                    return mask.argmax(axis=1)[:, None]
                if mode == "illegal":
                    return (~mask).argmax(axis=1)
            keys = np.where(mask, rng.random(mask.shape), -1.0)
            return keys.argmax(axis=1)

        return act


    class FirstLegal(Agent):
        name = "first"

        def act(self, obs, mask, public=None):
            return np.asarray(mask).argmax(axis=1)


    def make_agent_bot(seed=None):
        return FirstLegal(seed=seed)


    def make_pettingzoo_bot(seed=None, mode="ok"):
        """A one-game policy, PettingZoo style, seated with pettingzoo_policy."""
        from startups_env.table.policy import pettingzoo_policy

        def policy(observation):
            legal = np.flatnonzero(observation["action_mask"])
            return float(legal[0]) if mode == "float" else int(legal[-1])

        return pettingzoo_policy(policy)


    def broken_factory(seed=None):
        raise RuntimeError("no weights here")


    def not_a_policy(seed=None):
        return 42


    NOT_CALLABLE = 3
''')


@pytest.fixture
def bot_module(tmp_path, monkeypatch, request):
    """A bot module with a name of its own (imported modules are cached) on sys.path."""
    name = "outside_bot_" + "".join(c if c.isalnum() else "_" for c in request.node.name)
    (tmp_path / f"{name}.py").write_text(BOT)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_outside_spec_rule():
    for spec in ("mybot:make_bot", "lab.bots:Strong", "_x.y_2:f", "sb3:model.zip", "sb3:runs/a b/m.zip",
                 "openspiel:mybot:make_bot"):
        assert is_outside_spec(spec), spec
    for spec in ("ppo", "ppo:runs/x/policy.pt", "ppo:model", "greedy", "mybot", "my-bot:make", "mybot:make.more",
                 "mybot:", ":make", "1bot:make", "C:/bots/x.py", "openspiel:ismcts", "openspiel:random"):
        assert not is_outside_spec(spec), spec


def test_outside_callable_plays_in_the_arena_with_its_seed(bot_module):
    spec = f"{bot_module}:make_bot"
    one = run_arena([spec, "greedy", "random"], 3, 6, seed=2, rate=False)
    assert one.names[0] == spec and one.decisions[0] > 0
    assert np.array_equal(one.ranks, run_arena([spec, "greedy", "random"], 3, 6, seed=2, rate=False).ranks)
    # The checked copy is thrown away: the entry plays as if it had never been checked.
    seed = int(np.random.SeedSequence(2).spawn(4)[1].generate_state(1)[0])
    unchecked = make_agent(spec, seed=seed)
    assert isinstance(unchecked, OutsideAgent) and unchecked.name == spec
    again = run_arena([unchecked, "greedy", "random"], 3, 6, seed=2, rate=False)
    assert np.array_equal(one.ranks, again.ranks) and np.array_equal(one.scores, again.scores)


def test_outside_agent_and_bracketed_arguments(bot_module):
    agent = build_agent(f"{bot_module}:make_agent_bot", seed=1, check_players=4)
    assert isinstance(agent, OutsideAgent) and isinstance(agent.policy, Agent)
    assert agent.name == f"{bot_module}:make_agent_bot"
    assert build_agent(f"{bot_module}:make_bot[mode=ok;after=3]").name == f"{bot_module}:make_bot[mode=ok;after=3]"
    result = run_arena([f"{bot_module}:make_agent_bot", "random"], 2, 4, seed=0, rate=False)
    assert result.games == 4


def test_run_arena_takes_a_plain_callable():
    def first_legal(obs, mask):
        return mask.argmax(axis=1)

    result = run_arena([first_legal, "random", "random"], 3, 3, seed=1, rate=False)
    assert result.names[0] == "first_legal" and result.decisions[0] > 0


@pytest.mark.parametrize("suffix, message", [
    (":make_bot[mode=raise]", r"raised RuntimeError: boom"),
    (":make_bot[mode=float]", r"returned float64 \[\d+\] for games .* one integer action id per game"),
    (":make_bot[mode=shape]", r"returned int64 \[\d+, 1\] for games"),
    (":make_bot[mode=illegal]", r"chose illegal actions"),
    (":broken_factory", r"broken_factory\(seed=\d+\) raised RuntimeError: no weights here"),
    (":not_a_policy", r"returned a int; a factory returns a policy"),
    (":make_pettingzoo_bot[mode=float]", r"must return one integer action id"),
    (":NOT_CALLABLE", r"is a int, not a factory"),
    (":nothing_here", r"has no 'nothing_here'"),
    (":make_bot[colour=red]", r"unknown setting 'colour'; the settings of '\w+:make_bot' are mode, after"),
])
def test_a_bad_outside_bot_fails_before_the_tournament_and_writes_nothing(bot_module, tmp_path, capsys, suffix,
                                                                          message):
    out = tmp_path / "out"
    spec = bot_module + suffix
    with pytest.raises(SystemExit) as exc:
        arena_main(["--players", "3", "--agents", f"greedy,{spec},random", "--games", "30", "--json",
                    str(out / "r.json"), "--csv", str(out / "r.csv"), "--no-progress"])
    assert exc.value.code == 2
    err = capsys.readouterr()
    assert f"agent {spec!r}: " in err.err and "Traceback" not in err.err
    assert re.search(message, err.err), err.err
    if "mode=" in suffix:
        assert "on a trial game (3 players" in err.err and "before any real game" in err.err
    assert "win rate" not in err.out and not out.exists()


def test_a_bot_that_raises_is_reported_with_its_line_and_a_traceback_on_request(bot_module, tmp_path, capsys):
    """An outside bot that raised was reported only as "raised RuntimeError: boom": now the
    message names the bot's file and line, and --traceback prints Python's whole traceback."""
    argv = ["--players", "3", "--agents", f"greedy,{bot_module}:make_bot[mode=raise],random", "--games", "6",
            "--no-progress"]
    line = next(i for i, text in enumerate(BOT.splitlines(), 1) if 'raise RuntimeError("boom")' in text)
    where = f"{tmp_path / bot_module}.py, line {line}, in act"
    with pytest.raises(SystemExit):
        arena_main(argv)
    err = capsys.readouterr().err
    assert f"raised RuntimeError: boom ({where}) (--traceback prints the whole traceback)" in err, err
    assert "Traceback" not in err
    with pytest.raises(SystemExit):
        arena_main(argv + ["--traceback"])
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and 'raise RuntimeError("boom")' in err
    assert err.rstrip().endswith(f"raised RuntimeError: boom ({where})"), err[-500:]
    with pytest.raises(SystemExit):
        ladder_main(["--hero", f"{bot_module}:make_bot[mode=raise]", "--opponents", "random", "--players", "3",
                     "--games", "3"])
    assert f"({where}) (--traceback prints the whole traceback)" in capsys.readouterr().err


def test_a_module_that_does_not_import_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"^agent 'no_such_bot_module:make': cannot import module "
                                         r"'no_such_bot_module' \(ModuleNotFoundError.*PYTHONPATH"):
        build_agent("no_such_bot_module:make")
    (tmp_path / "bot_with_a_bug.py").write_text("import numpy as np\n1 / 0\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ValueError, match=r"cannot import module 'bot_with_a_bug' \(ZeroDivisionError"):
            build_agent("bot_with_a_bug:make")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("bot_with_a_bug", None)
    with pytest.raises(UnknownAgentError, match=r"unknown agent 'my-bot:make'.*'module:callable'"):
        build_agent("my-bot:make")


def test_a_bot_that_fails_mid_tournament_names_the_games(bot_module, tmp_path, capsys):
    """Past its trial positions the bot turns illegal: the error names the games, and no
    output file is written."""
    out = tmp_path / "r.json"
    after = 2 * TRIAL_STEPS * len(TRIAL_BATCHES)  # more calls than the trial makes
    with pytest.raises(SystemExit) as exc:
        arena_main(["--players", "2", "--agents", f"{bot_module}:make_bot[mode=illegal;after={after}],random",
                    "--games", "40", "--json", str(out), "--no-progress"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "chose illegal actions" in err and "in games [" in err and not out.exists()


def test_check_agent_plays_every_seat_of_trial_games(bot_module):
    seen = []

    def first_legal(obs, mask):
        seen.append(len(obs))
        return mask.argmax(axis=1)

    check_agent(OutsideAgent(first_legal, "first"), 5)
    assert sorted(set(seen)) == sorted(TRIAL_BATCHES) and len(seen) == TRIAL_STEPS * len(TRIAL_BATCHES)


def test_outside_bot_from_pythonpath_in_a_subprocess_arena(tmp_path):
    """The README's recipe: a bot module in a folder on PYTHONPATH, run by name."""
    bots, work = tmp_path / "bots", tmp_path / "work"
    bots.mkdir()
    work.mkdir()
    (bots / "mybot.py").write_text(BOT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(bots), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "startups_env.agents.arena", "--players", "3", "--agents",
                           "mybot:make_bot,greedy,random", "--games", "6", "--seed", "1", "--json", "out.json",
                           "--no-progress"], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((work / "out.json").read_text())
    assert [a["name"] for a in result["agents"]] == ["mybot:make_bot", "greedy", "random"]
    assert result["games"] == 6
    done = subprocess.run([sys.executable, "-m", "startups_env.agents.ladder", "--hero", "mybot:make_bot",
                           "--opponents", "random", "--players", "3", "--games", "6", "--seed", "1"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "mybot:make_bot vs 2 x random" in done.stdout


def test_play_takes_outside_opponents_and_checks_them_first(bot_module):
    from startups_env.agents.play import main as play_main

    lines = []
    assert play_main(["--players", "3", "--opponents", f"{bot_module}:make_bot", "--seed", "1"],
                     input_fn=lambda prompt: "quit", output=_Lines(lines)) == 0
    lines.clear()
    assert play_main(["--players", "3", "--opponents", f"{bot_module}:make_bot[mode=float]", "--seed", "1"],
                     input_fn=lambda prompt: "quit", output=_Lines(lines)) == 2
    assert "before any real game" in "".join(lines) and "float64" in "".join(lines)


class _Lines:
    def __init__(self, lines):
        self.lines = lines

    def write(self, text):
        self.lines.append(text)

    def flush(self):
        pass


def test_selfplay_baselines_take_outside_bots(bot_module):
    pytest.importorskip("torch")
    from startups_env.train.selfplay import Args, check_args

    check_args(Args(baselines=f"greedy,{bot_module}:make_bot"))
    with pytest.raises(ValueError, match=r"--baselines: agent 'nowhere_module:make': cannot import"):
        check_args(Args(baselines="nowhere_module:make"))


def test_an_outside_bot_is_a_training_opponent(bot_module):
    """What --baselines does with one: an opponent of the learner's batch."""
    from startups_env.envs.vector import SeatBatch

    batch = SeatBatch(4, [build_agent(f"{bot_module}:make_bot", seed=1)], players=3, seed=0)
    batch.reset()
    for _ in range(30):
        batch.step(batch.action_masks().argmax(axis=1))
    assert batch.decisions > 30
    bad = SeatBatch(2, [build_agent(f"{bot_module}:make_bot[mode=float]", seed=1)], players=3, seed=0)
    with pytest.raises(ValueError, match="returned float64"):  # in reset() or a step()
        bad.reset()
        for _ in range(4):
            bad.step(bad.action_masks().argmax(axis=1))


def test_a_pettingzoo_style_policy_by_name(bot_module):
    """The docstring's recipe: a factory returns pettingzoo_policy(a one-game policy)."""
    spec = f"{bot_module}:make_pettingzoo_bot"
    agent = build_agent(spec, seed=0, check_players=4)
    assert isinstance(agent, OutsideAgent) and agent.needs == frozenset()
    result = run_arena([spec, "random"], 2, 4, seed=0, rate=False)
    assert result.names[0] == spec and result.decisions[0] > 0


# ----------------------------------------------------------------------------- rollout policy by name

def test_search_rollout_policy_by_name_equals_the_built_policy():
    sim = Simulator(Rules(num_players=3), 4, seed=5)
    from startups_env.startups.history import History
    from startups_env.startups.state import public_state

    state = sim.state
    args = dict(obs=observe(state), mask=sim.legal_mask(), public=public_state(state, state.current),
                history=History(4))
    by_name = make_agent("search", seed=3, determinizations=2, rollout_policy="random")
    by_object = SearchAgent(seed=3, determinizations=2, rollout_policy=make_agent("random"))
    assert by_name.rollout_policy.rng is by_name.rng
    assert np.array_equal(by_name.act(**args), by_object.act(**args))
    spec = build_agent("search[determinizations=2;rollout_policy=random]", seed=3)
    assert np.array_equal(spec.act(**args), SearchAgent(seed=3, determinizations=2,
                                                        rollout_policy=make_agent("random")).act(**args))


# ----------------------------------------------------------------------------- sb3:PATH

@pytest.fixture(scope="module")
def sb3_zip(tmp_path_factory):
    sb3 = pytest.importorskip("sb3_contrib")
    from startups_env.envs.vector import StartupsVecEnv

    env = StartupsVecEnv(num_envs=2, players=3, seed=0)
    model = sb3.MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16, n_epochs=1, seed=0, device="cpu",
                            policy_kwargs={"net_arch": [8]})
    model.learn(total_timesteps=16)
    path = tmp_path_factory.mktemp("sb3") / "model.zip"
    model.save(path)
    return path


def test_sb3_model_plays_in_the_arena(sb3_zip, tmp_path):
    out = tmp_path / "r.json"
    assert arena_main(["--players", "3", "--agents", f"sb3:{sb3_zip},greedy,random", "--games", "3", "--seed",
                       "1", "--json", str(out), "--no-progress"]) == 0
    assert json.loads(out.read_text())["agents"][0]["name"] == f"sb3:{sb3_zip}"
    agent = make_agent(f"sb3:{sb3_zip}")
    sim = Simulator(Rules(num_players=3), 5, seed=1)
    obs, mask = observe(sim.state), sim.legal_mask()
    expected, _ = agent.model.predict(obs, action_masks=mask, deterministic=True)
    assert np.array_equal(agent.act(obs, mask), expected)


def test_sb3_errors(tmp_path, monkeypatch):
    pytest.importorskip("sb3_contrib")
    with pytest.raises(FileNotFoundError, match="MaskablePPO model not found"):
        build_agent(f"sb3:{tmp_path / 'missing.zip'}")
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"^agent 'sb3:.*junk.zip': .* is not a MaskablePPO model"):
        build_agent(f"sb3:{junk}")
    with pytest.raises(ValueError, match="needs a MaskablePPO .zip after the colon"):
        build_agent("sb3:")
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)  # as if it were not installed
    with pytest.raises(ValueError, match=r"needs sb3-contrib.*'train' extra"):
        build_agent(f"sb3:{junk}")


@pytest.mark.parametrize("spec, nearest, valid", [
    ("search[max_candidate=4]", "max_candidates", "determinizations"),
    ("greedy[spred=1]", "spread", "draw_bonus"),
    ("banker[min_coin=1]", "min_coins", "useful_bonus"),
    ("noisy[epsilom=0.1]", "epsilon", "epsilon"),
    ("ppo[determinstic=false]", "deterministic", "deterministic"),
    ("exit[determinstic=false]", "deterministic", "deterministic"),
    ("openspiel:ismcts[max_simulation=12]", "max_simulations", "uct_c"),
    ("openspiel:random[turncap=50]", "turn_cap", "rounds"),
])
def test_a_mistyped_setting_names_the_nearest_and_the_valid_ones(spec, nearest, valid):
    """``search[max_candidate=4]`` answered with SearchConfig.__init__()'s TypeError, and
    ``openspiel:ismcts[max_simulation=12]`` with make_ismcts()'s: neither said what is valid."""
    if spec.startswith("openspiel:"):
        pytest.importorskip("pyspiel")
    with pytest.raises(ValueError) as err:
        build_agent(spec, seed=0)
    message = str(err.value)
    assert message.startswith(f"agent {spec!r}: unknown setting ") and f"(did you mean {nearest!r}?)" in message
    assert re.search(rf"the settings of '[\w:]+' are .*\b{valid}\b", message), message
    assert "__init__" not in message and "unexpected keyword" not in message


def test_settings_of_outside_and_other_game_bots(bot_module):
    """An outside factory's own keywords are its settings; a factory taking **kwargs takes
    any; the other game's bots are checked alike."""
    with pytest.raises(ValueError, match=r"unknown setting 'mod' \(did you mean 'mode'\?\)"):
        build_agent(f"{bot_module}:make_bot[mod=ok]")
    assert agent_settings(f"{bot_module}:make_bot") == ("mode", "after")
    assert agent_settings("nobody") is None
    assert agent_settings("search", "startap") == ("worlds", "max_candidates")  # Стартап's own search
    with pytest.raises(ValueError, match=r"unknown setting 'world' \(did you mean 'worlds'\?\)"):
        build_agent("search[world=4]", game="startap")
    with pytest.raises(ValueError, match="unknown setting 'speed'; the settings of 'builder' are none"):
        build_agent("builder[speed=2]", game="startap")
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):  # the name is checked as before
        build_agent("nobody[speed=2]")
