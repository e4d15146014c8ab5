"""Agents by name: the one place that turns a name or a command-line spec into an agent.

    make_agent("greedy", seed=1)                      # a built-in bot by name
    build_agent("search[determinizations=8]", seed=1) # a spec as typed on a command line
    build_agent("mybot:make_bot", seed=1)             # an outside bot (see below)

No bot module imports this one (it imports them, each only when asked for it), so the
bots form no import circle with their factory. A bot that is built from another, such as
the search bot's ``rollout_policy``, is given the built agent: this module builds it from
its name.

**Specs.** A spec is a name, optionally followed by constructor arguments in brackets,
separated by ``;`` or ``,``: ``search[determinizations=8;opponent_model=random]``. In a
command-line list of agents a comma outside brackets separates the agents. Values are
read as int, float, true/false, else kept as strings. The names:

* ``random``, ``greedy``, ``banker``, ``hoarder``, ``spoiler``, ``noisy``, ``search``,
  ``ppo`` (the shipped policy), ``exit`` (the shipped network of expert iteration; the
  search guided by it is ``search[prior=exit]``): the built-in bots (:data:`AGENT_NAMES`);
* ``ppo:PATH``: a checkpoint of ``startups_env.train.selfplay``;
* ``openspiel:ismcts[...]``, ``openspiel:random``, ``openspiel:MODULE:CALLABLE[...]``:
  OpenSpiel's IS-MCTS, its uniform random bot, or any ``pyspiel.Bot`` an outside factory
  builds, playing the game of :mod:`startups_env.envs.openspiel` (needs the ``openspiel``
  extra; :mod:`startups_env.agents.openspiel_bots`);
* ``sb3:PATH``: a ``sb3_contrib.MaskablePPO`` ``.zip`` trained on
  :class:`~startups_env.envs.vector.StartupsVecEnv` (needs the ``train`` extra); it plays its
  most likely legal action (``deterministic=True``: SB3 would sample from torch's global
  generator). A model trained behind ``VecNormalize`` needs its statistics too: build a
  :class:`~startups_env.agents.sb3.SB3Agent` with them in an outside bot's factory;
* ``module:callable``, an *outside bot*: ``module`` a dotted Python module name that
  ``import`` finds (on ``PYTHONPATH``; ``python -m`` also looks in the current folder)
  and ``callable`` an identifier in it, e.g. ``mybot:make_bot`` or
  ``lab.bots:Strong``. The prefixes ``ppo:``, ``sb3:`` and ``openspiel:`` are read
  first, so a module named ``ppo``, ``sb3`` or ``openspiel`` cannot be an outside bot. The callable is a factory: it is
  called with ``seed=`` (an int, or None) and the spec's bracketed arguments, and
  returns a policy (:mod:`startups_env.table.policy`): a plain batched ``f(obs, mask) ->
  actions`` (obs float32[B, OBS_DIM], mask bool[B, 19], actions int[B], one legal action
  per row), or an object with that ``act`` method, such as an
  :class:`~startups_env.agents.base.Agent`. It is wrapped in an :class:`OutsideAgent`,
  which turns what the bot raises into a ValueError naming it; the drivers
  (:mod:`startups_env.table.driver`) check the actions' type, shape and legality.

A PettingZoo-style per-agent policy ``policy(observation) -> action``, taking the AEC
env's observation dict (``{"observation": float32[OBS_DIM], "action_mask": int8[19]}``),
becomes a batched one with :func:`startups_env.table.policy.pettingzoo_policy` (a loop over the
rows)::

    from startups_env.table.policy import pettingzoo_policy

    def make_bot(seed=None):
        return pettingzoo_policy(MyPolicy(seed))      # your per-agent policy

:func:`build_agent` with ``check_players`` (the arena and ``startups_env.agents.play`` pass
their table size) first plays a throwaway copy of an outside bot on a few positions of
trial games, so that a bot that fails, or returns illegal, mistyped or mis-shaped actions,
is reported before a tournament starts rather than in the middle of one.
"""

from __future__ import annotations

import importlib
import os
import re
import traceback

from startups_env.table.driver import Table
from startups_env.table.games import DEFAULT_GAME, game_by_name
from startups_env.table.policy import as_policy, needs_of

from .base import Agent

#: The built-in bots :func:`make_agent` knows by name (besides ``ppo:PATH``, ``sb3:PATH``
#: and outside bots, ``module:callable``).
AGENT_NAMES = ("random", "greedy", "banker", "hoarder", "spoiler", "noisy", "search", "ppo", "exit")
# The bots built from their name alone: name -> (module of this package, class).
_RULE_BASED = {"random": ("random_agent", "RandomAgent"), "greedy": ("greedy", "GreedyAgent"),
               "banker": ("banker", "BankerAgent"), "hoarder": ("hoarder", "HoarderAgent"),
               "spoiler": ("spoiler", "SpoilerAgent"), "noisy": ("noisy", "NoisyAgent")}
#: The built-in bots of the other games (:mod:`startups_env.table.games`), as above: game ->
#: {name: (module of this package, class)}. Their outside bots and ``ppo:PATH`` work as in
#: *Startups*; the search, ``sb3:`` and OpenSpiel's bots are *Startups*' only.
GAME_BOTS: dict[str, dict[str, tuple[str, str]]] = {
    "startap": {"random": ("startap_bots", "StartapRandomAgent"), "builder": ("startap_bots", "BuilderAgent"),
                "outsourcer": ("startap_bots", "OutsourcerAgent"), "freerider": ("startap_bots", "FreeriderAgent")},
}

#: ``module:callable``: a dotted module name, a colon, an identifier (``ppo:`` and
#: ``sb3:`` are read first).
OUTSIDE_SPEC = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")

#: The prefix of OpenSpiel's bots (``openspiel:ismcts``...).
OPENSPIEL_PREFIX = "openspiel:"

#: Decisions a trial game of :func:`check_agent` asks for, in batches of each size: enough
#: for every seat of a 7-player table to take and put down twice.
TRIAL_STEPS = 28
TRIAL_BATCHES = (1, 3)


class UnknownAgentError(ValueError):
    """:func:`make_agent` was given a name no agent has (the message names it and lists the
    known ones)."""


class BotError(ValueError):
    """An outside bot's own code raised: the message names the bot, the exception and the
    line it came from; the exception itself is the cause (the arena's and the ladder's
    ``--traceback`` print it whole)."""


def raised_at(exc: BaseException) -> str:
    """Where ``exc`` was raised, as Python's tracebacks name it (``file, line N, in f``), or
    "" without a traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    return f"{frames[-1].filename}, line {frames[-1].lineno}, in {frames[-1].name}" if frames else ""


def bot_raised(exc: BaseException | None) -> bool:
    """Whether ``exc``, or an exception it was raised from, is a :class:`BotError`."""
    while exc is not None:
        if isinstance(exc, BotError):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def split_names(text: str) -> list[str]:
    """The agent specs of a comma-separated command-line list
    (``"greedy, search[determinizations=8,horizon=0]"``), stripped, blanks dropped. A comma
    inside brackets belongs to its spec's arguments."""
    names, start, depth = [], 0, 0
    text = str(text)
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            names.append(text[start:i])
            start = i + 1
    names.append(text[start:])
    return [name.strip() for name in names if name.strip()]


def parse_agent_spec(spec: str) -> tuple[str, dict]:
    """``"search[determinizations=8;rollout_epsilon=0.1]"`` -> ("search", {...}); the
    arguments are separated by ``;`` or ``,``. Values are parsed as int, float, true/false,
    else kept as strings."""
    spec = spec.strip()
    if not spec:
        raise ValueError("empty agent name")
    if "[" not in spec:
        return spec, {}
    if not spec.endswith("]"):
        raise ValueError(f"bad agent spec {spec!r}: arguments go in brackets, e.g. search[determinizations=8]")
    name, _, body = spec[:-1].partition("[")
    kwargs: dict = {}
    for item in filter(None, (p.strip() for p in re.split("[;,]", body))):
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"bad agent argument {item!r} in {spec!r}: expected key=value")
        kwargs[key.strip()] = _parse_value(raw.strip())
    return name.strip(), kwargs


def _parse_value(raw: str):
    low = raw.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw


def is_outside_spec(name: str) -> bool:
    """Whether ``name`` (a spec without its brackets) names a bot from outside the package:
    ``sb3:PATH``, ``module:callable`` or ``openspiel:module:callable``."""
    key = name.strip()
    if key.startswith(OPENSPIEL_PREFIX):
        return OUTSIDE_SPEC.fullmatch(key[len(OPENSPIEL_PREFIX):]) is not None
    return key.startswith("sb3:") or (not key.startswith("ppo:") and OUTSIDE_SPEC.fullmatch(key) is not None)


def make_agent(name: str, *, seed: int | None = None, game: str = DEFAULT_GAME, **kwargs) -> Agent:
    """An agent by name (see the module docstring): ``"random"``, ``"greedy"``,
    ``"banker"``, ``"hoarder"``, ``"spoiler"``, ``"noisy"``, ``"search"``, ``"ppo"`` (the
    shipped policy), ``"ppo:PATH"`` (a checkpoint), ``"sb3:PATH"`` (a MaskablePPO zip),
    ``"openspiel:ismcts"``, ``"openspiel:random"``, ``"openspiel:module:callable"``
    (OpenSpiel's bots) or ``"module:callable"`` (an outside bot's factory). kwargs go to the agent's constructor or factory (e.g.
    ``make_agent("search", determinizations=8)``); the search bot's ``rollout_policy`` may
    be a name, built here. ``game``: the game it plays, by name (the bots of another game:
    :data:`GAME_BOTS`)."""
    if not isinstance(name, str):
        raise ValueError(f"agent name must be a string, got {name!r}")
    key = name.strip()
    game = game_by_name(game).name
    if game != DEFAULT_GAME:
        return _other_game_agent(game, key, seed, kwargs)
    if key in _RULE_BASED:  # (each module imported when its bot is first asked for)
        module, cls = _RULE_BASED[key]
        return getattr(importlib.import_module(f".{module}", __package__), cls)(seed=seed, **kwargs)
    if key == "search":
        from .search import SearchAgent

        if "rollout_policy" in kwargs:
            kwargs["rollout_policy"] = _rollout_policy(kwargs["rollout_policy"])
        if isinstance(kwargs.get("prior"), str):  # a network by name (ppo:PATH); "greedy" is the default
            kwargs["prior"] = None if kwargs["prior"].strip() == "greedy" else make_agent(kwargs["prior"])
        return SearchAgent(seed=seed, **kwargs)
    if key in ("ppo", "exit") or key.startswith("ppo:"):
        path = key[4:] if key.startswith("ppo:") else None
        if path is not None and not path:
            raise ValueError("agent 'ppo:' needs a checkpoint path after the colon, e.g. 'ppo:runs/x/model.pt'")
        # Imported here so that every other agent works without torch.
        try:
            from .ppo import load_ppo_agent
        except ImportError as exc:
            raise ValueError(f"agent {name!r} needs PyTorch, which is not importable here ({exc}); "
                             "install the project's 'train' extra") from exc

        if key == "exit":
            from .ppo import EXIT_WEIGHTS

            kwargs.setdefault("name", "exit")
            path = EXIT_WEIGHTS
        return load_ppo_agent(path, seed=seed, **kwargs)
    if key.startswith(OPENSPIEL_PREFIX):
        return _openspiel_agent(key, seed, kwargs)
    if key.startswith("sb3:"):
        if not key[4:]:
            raise ValueError("agent 'sb3:' needs a MaskablePPO .zip after the colon, e.g. 'sb3:runs/sb3/model.zip'")
        from .sb3 import load_sb3_agent

        return load_sb3_agent(key[4:], seed=seed, **kwargs)
    if OUTSIDE_SPEC.fullmatch(key):
        return _outside_agent(key, seed, kwargs)
    raise UnknownAgentError(f"unknown agent {name!r}; known agents: {', '.join(AGENT_NAMES)} "
                            "(or 'ppo:PATH', 'sb3:PATH', 'openspiel:ismcts', or an outside bot's 'module:callable')")


def build_agent(spec: str, seed: int | None = None, *, check_players: int | None = None,
                game: str = DEFAULT_GAME) -> Agent:
    """The agent of a spec such as ``"greedy"``, ``"ppo:PATH"``,
    ``"search[determinizations=8]"`` or ``"mybot:make_bot[level=2]"``
    (:func:`parse_agent_spec`, then :func:`make_agent`).

    Specs are typed by users, so an argument the agent does not take, or a value it
    refuses, is a ValueError naming the spec, like every other bad spec: in a line of
    several specs the user must see which one is wrong (a missing ``ppo:PATH`` or
    ``sb3:PATH`` file stays a FileNotFoundError).

    check_players: for an outside bot (``module:callable``, ``sb3:PATH``), a table size:
    a second copy, built alike, first plays trial games of that size (:func:`check_agent`)
    and is thrown away, so the agent returned has not played yet (its results are those of
    an unchecked one). ``game``: as in :func:`make_agent`."""
    name, kwargs = parse_agent_spec(spec)
    label = spec.strip()
    try:
        agent = make_agent(name, seed=seed, game=game, **kwargs)
        if check_players is not None and is_outside_spec(name):
            check_agent(make_agent(name, seed=seed, game=game, **kwargs), check_players, game=game)
    except UnknownAgentError:
        raise  # its message names the agent already
    except (TypeError, ValueError) as exc:
        raise ValueError(f"agent {label!r}: {exc}") from exc
    if isinstance(agent, OutsideAgent):
        agent.name = label
    return agent


def check_agent(agent: Agent, players: int, game: str = DEFAULT_GAME) -> None:
    """Play ``agent`` in every seat of trial games of ``players`` players (batches of 1
    and 3 games, :data:`TRIAL_STEPS` decisions each); a ValueError says what went wrong if it
    raises or returns an illegal, mistyped or mis-shaped action. The agent's generator and
    any state it keeps move on: check a copy of the agent you will use. ``game``: the game
    of the trial games, by name."""
    game = game_by_name(game)
    rules = game.make_rules(players)
    for games in TRIAL_BATCHES:
        table = Table(game.make_simulator(rules, games, games), [agent] * players, role="agent")
        for _ in range(TRIAL_STEPS):
            try:
                actions = table.act()
            except ValueError as exc:
                raise ValueError(f"failed on a trial game ({players} players, {games} game(s) at once) "
                                 f"before any real game: {exc}") from exc
            table.step(actions)


def _other_game_agent(game: str, key: str, seed: int | None, kwargs: dict) -> Agent:
    """A bot of ``game`` (not *Startups*): a built-in one of :data:`GAME_BOTS`, a network
    checkpoint (``ppo:PATH``) or an outside bot."""
    bots = GAME_BOTS.get(game, {})
    if key in bots:
        module, cls = bots[key]
        return getattr(importlib.import_module(f".{module}", __package__), cls)(seed=seed, **kwargs)
    if key == "ppo" or (key.startswith("ppo:") and key[4:]):
        from .ppo import load_ppo_agent

        return load_ppo_agent(key[4:] or None, seed=seed, game=game, **kwargs)
    if OUTSIDE_SPEC.fullmatch(key) and not key.startswith(("ppo:", "sb3:")):
        return _outside_agent(key, seed, kwargs)
    raise UnknownAgentError(f"unknown agent {key!r} for the game {game!r}; its agents: "
                            f"{', '.join([*bots, 'ppo'])} (or 'ppo:PATH', or an outside bot's 'module:callable')")


class OutsideAgent(Agent):
    """An outside bot in the :class:`~startups_env.agents.base.Agent` interface (so that it
    can be, e.g., the search bot's ``rollout_policy``): ``policy`` is any policy of
    :mod:`startups_env.table.policy` (an object with ``act``, or a plain batched callable
    ``f(obs, mask) -> actions``); it is given what its ``needs`` declare.

    Whatever the bot raises becomes a :class:`BotError` (a ValueError) naming it and the
    line it came from, so that a command line reports it like any other bad input; the
    drivers check what it returns (type, shape, legality), naming the games."""

    def __init__(self, policy, name: str, seed: int | None = None):
        super().__init__(seed)
        self.policy = as_policy(policy)
        self.name = name
        self.needs = needs_of(self.policy)

    def seed(self, seed) -> None:
        super().seed(seed)
        if isinstance(self.policy, Agent):
            self.policy.seed(seed)

    def act(self, obs, mask, **given):
        try:
            return self.policy.act(obs, mask, **given)
        except Exception as exc:  # any failure of someone else's code, told apart from ours
            raise BotError(f"agent {self.name!r} raised {type(exc).__name__}: {exc} ({raised_at(exc)})") from exc


def _outside_callable(key: str):
    """The factory an outside bot's ``module:callable`` names, imported; ValueError saying
    what is missing."""
    module_name, _, attr = key.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # ModuleNotFoundError, or whatever the module's own code raises
        raise ValueError(f"cannot import module {module_name!r} ({type(exc).__name__}: {exc}); an outside bot's "
                         f"module must be importable: put its folder on PYTHONPATH "
                         f"(now {os.environ.get('PYTHONPATH', 'unset')!r})") from exc
    factory = getattr(module, attr, None)
    if factory is None:
        raise ValueError(f"module {module_name!r} ({getattr(module, '__file__', '?')}) has no {attr!r}")
    if not callable(factory):
        raise ValueError(f"{key} is a {type(factory).__name__}, not a factory to call with seed=")
    return factory


def _outside_agent(key: str, seed: int | None, kwargs: dict) -> OutsideAgent:
    """The agent of an outside bot's ``module:callable``: its factory called with ``seed=``
    and ``kwargs``, wrapped in an :class:`OutsideAgent`."""
    factory = _outside_callable(key)
    call = f"{key}({', '.join([f'seed={seed!r}'] + [f'{k}={v!r}' for k, v in kwargs.items()])})"
    try:
        policy = factory(seed=seed, **kwargs)
    except Exception as exc:
        raise BotError(f"{call} raised {type(exc).__name__}: {exc} ({raised_at(exc)})") from exc
    if not (callable(getattr(policy, "act", None)) or callable(policy)):
        raise ValueError(f"{call} returned a {type(policy).__name__}; a factory returns a policy: an object "
                         "with act(obs, mask) (e.g. an Agent) or a callable f(obs, mask) -> actions")
    return OutsideAgent(policy, key, seed)


def _openspiel_agent(key: str, seed: int | None, kwargs: dict) -> Agent:
    """The agent of ``openspiel:KIND``: OpenSpiel's ``ismcts`` or ``random``, or an outside
    ``pyspiel.Bot`` factory (``openspiel:module:callable``, wrapped like an outside bot)."""
    kind = key[len(OPENSPIEL_PREFIX):]
    try:
        from .openspiel_bots import make_openspiel_agent
    except ImportError as exc:
        raise ValueError(f"agent {key!r} needs OpenSpiel, which is not importable here ({exc}); "
                         "install the project's 'openspiel' extra") from exc
    if OUTSIDE_SPEC.fullmatch(kind) is None:
        return make_openspiel_agent(kind, seed, **kwargs)
    # (the factory is called when the agent first meets a table size and seat: what it
    # raises then, the OutsideAgent reports as the bot's own error)
    agent = make_openspiel_agent(kind, seed, factory=_outside_callable(kind), **kwargs)
    return OutsideAgent(agent, key, seed)


def _rollout_policy(policy):
    """The search bot's ``rollout_policy`` from a name: None for ``"greedy"`` (its default);
    another name is built with no seed (the search reseeds it with its own generator);
    anything else is passed on for the search to check."""
    if not isinstance(policy, str):
        return policy
    if policy.strip() == "greedy":
        return None
    return make_agent(policy)
