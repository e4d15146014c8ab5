"""Game logs: record a game as its deck(s) and actions, save it as JSON, replay it through
the simulator, and render it as a standalone HTML page or an animated GIF.

A log holds everything needed to reproduce a game exactly: the table settings (players,
rounds, turn cap, reward scheme), the deck of every round in canonical order
(``docs/rules.md``; the round game needs one per round), and the canonical action ids in
order. A finished game's log also stores the result (scores, 3-point coins, ranks), which
:func:`replay` checks.

    log = record_game(None, Rules(num_players=4), seed=0)       # uniform random play
    log.save("game.json")
    sim = replay(GameLog.load("game.json"))                     # Simulator at the end
    write_html(log, "game.html"); write_gif(log, "game.gif")

Command line: ``python -m startups_env.tools.replay game.json --html game.html --gif game.gif``.

The JSON layout (version 1)::

    {"format": "startups-game-log", "version": 1, "num_players": 4,
     "rules": {"rounds": 1, "turn_cap": 400, "reward": "win"},
     "decks": [[45 company ids]], "actions": [0, 9, 3, 16, ...],
     "players": ["greedy", "you", ...] or null, "result": {...} or null}

:meth:`GameLog.from_dict` also reads the lines of the reference games
(``tests/data/reference_games.jsonl``, described in ``docs/rules.md``: ``players``,
``deck``, ``actions``).
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from startups_env.checks import check_seed, is_int
from startups_env.startups.rules import (
    COMPANY_NAMES,
    COMPANY_SIZES,
    DECK_SIZE,
    NUM_ACTIONS,
    PHASE_NAMES,
    Action,
    Rules,
    action_to_string,
)
from startups_env.startups.simulator import Simulator
from startups_env.startups.state import State, shuffled_decks
from startups_env.table.driver import Table
from startups_env.table.policy import as_policy, policy_name
from startups_env.tools.cli import add_traceback_argument, prog, report_error
from startups_env.tools.files import atomic_write

LOG_FORMAT = "startups-game-log"
LOG_VERSION = 1


def _int_list(values, what: str) -> list[int]:
    if not isinstance(values, (list, tuple, np.ndarray)):
        raise ValueError(f"{what} must be a list of integers, got {type(values).__name__}")
    out = []
    for i, v in enumerate(values):
        if not is_int(v):
            raise ValueError(f"{what}[{i}] must be an integer, got {v!r}")
        out.append(int(v))
    return out


def check_deck(deck, what: str = "deck") -> list[int]:
    """A deck as a list of 45 company ids in canonical order; ValueError naming the problem."""
    cards = _int_list(deck, what)
    if len(cards) != DECK_SIZE:
        raise ValueError(f"{what} must hold {DECK_SIZE} cards, got {len(cards)}")
    bad = [(i, c) for i, c in enumerate(cards) if not 0 <= c < len(COMPANY_SIZES)]
    if bad:
        raise ValueError(f"{what}[{bad[0][0]}] = {bad[0][1]} is not a company id 0-{len(COMPANY_SIZES) - 1}")
    for c, size in enumerate(COMPANY_SIZES):
        if cards.count(c) != size:
            raise ValueError(f"{what} has {cards.count(c)} {COMPANY_NAMES[c]} cards, expected {size}")
    return cards


@dataclass
class GameLog:
    """One game: settings, deck(s) in canonical order, actions; validated on construction.

    Attributes:
        num_players: 2-7.
        decks: one canonical deck (45 company ids) per round: 1, or 4 for the round game.
        actions: canonical action ids (0-18), in the order played.
        rounds, turn_cap, reward: the remaining :class:`~startups_env.startups.rules.Rules` fields.
        ruleset: the options of play, as ``Rules.ruleset`` names them (stored in the
            file's ``rules`` only where they are not the rulebook's).
        players: optional names of who played each seat (metadata only).
        result: for a finished game, ``{"scores", "threes", "ranks": per seat,
            "terminated", "truncated"}``; :func:`replay` checks it. None for an unfinished game.
    """

    num_players: int
    decks: list
    actions: list = field(default_factory=list)
    rounds: int = 1
    turn_cap: int = Rules.turn_cap
    reward: str = Rules.reward
    ruleset: str = "rulebook"
    players: list | None = None
    result: dict | None = None

    def __post_init__(self) -> None:
        _ = self.rules  # validates num_players, rounds, turn_cap, reward (ValueError)
        if not isinstance(self.decks, (list, tuple)) or len(self.decks) != self.rounds:
            raise ValueError(
                f"decks must be a list of {self.rounds} deck(s), one per round, got "
                f"{len(self.decks) if isinstance(self.decks, (list, tuple)) else type(self.decks).__name__}"
            )
        self.decks = [check_deck(d, f"decks[{i}]") for i, d in enumerate(self.decks)]
        self.actions = _int_list(self.actions, "actions")
        bad = [(k, a) for k, a in enumerate(self.actions) if not 0 <= a < NUM_ACTIONS]
        if bad:
            raise ValueError(f"action at index {bad[0][0]} is {bad[0][1]}, not an action id 0-{NUM_ACTIONS - 1}")
        if self.players is not None:
            if not isinstance(self.players, (list, tuple)) or len(self.players) != self.num_players:
                raise ValueError(f"players must be None or a list of {self.num_players} names")
            self.players = [str(p) for p in self.players]
        if self.result is not None:
            if not isinstance(self.result, dict):
                raise ValueError(f"result must be a dict or None, got {type(self.result).__name__}")
            # Stored as checked (a copy of plain ints and bools): arrays or numpy scalars
            # read off a State would not serialise to JSON.
            result = dict(self.result)
            for key in ("scores", "threes", "ranks"):
                if key not in result:
                    raise ValueError(f"result lacks {key!r}")
                result[key] = _int_list(result[key], f"result[{key!r}]")
                if len(result[key]) != self.num_players:
                    raise ValueError(f"result[{key!r}] must have one entry per seat ({self.num_players})")
            for key in ("terminated", "truncated"):
                if key in result:
                    if not isinstance(result[key], (bool, np.bool_)):
                        raise ValueError(f"result[{key!r}] must be true or false, got {result[key]!r}")
                    result[key] = bool(result[key])
            self.result = result

    @property
    def rules(self) -> Rules:
        if isinstance(self.num_players, bool) or not isinstance(self.num_players, int):
            raise ValueError(f"num_players must be an int, got {self.num_players!r}")
        return Rules.preset(self.ruleset, num_players=self.num_players, rounds=self.rounds, turn_cap=self.turn_cap,
                            reward=self.reward)

    @property
    def deck(self) -> list[int]:
        """The first (in the standard game, the only) deck."""
        return self.decks[0]

    # ---------------------------------------------------------------- (de)serialise
    def to_dict(self) -> dict:
        return {
            "format": LOG_FORMAT,
            "version": LOG_VERSION,
            "num_players": self.num_players,
            "rules": {"rounds": self.rounds, "turn_cap": self.turn_cap, "reward": self.reward,
                      **({"ruleset": self.rules.ruleset} if self.rules.option_bits else {})},
            "decks": self.decks,
            "actions": self.actions,
            "players": self.players,
            "result": self.result,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data) -> GameLog:
        """From :meth:`to_dict` output, or from a golden-game line (``players``, ``deck``,
        ``actions``)."""
        if not isinstance(data, dict):
            raise ValueError(f"a game log must be a JSON object, got {type(data).__name__}")
        if "format" not in data and "deck" in data and "players" in data:  # golden-game line
            result = None
            if all(k in data for k in ("scores", "threes", "ranking")):
                ranking = _int_list(data["ranking"], "ranking")
                ranks = [ranking.index(s) if s in ranking else -1 for s in range(len(ranking))]
                result = {
                    "scores": data["scores"],
                    "threes": data["threes"],
                    "ranks": ranks,
                    "terminated": True,
                    "truncated": False,
                }
            if "actions" not in data:
                raise ValueError("golden-game line has players and deck but lacks 'actions'")
            return cls(num_players=data["players"], decks=[data["deck"]], actions=data["actions"], result=result)
        if data.get("format") != LOG_FORMAT:
            raise ValueError(f"not a game log: format is {data.get('format')!r}, expected {LOG_FORMAT!r}")
        if data.get("version") != LOG_VERSION:
            raise ValueError(f"unsupported game log version {data.get('version')!r} (this reader knows {LOG_VERSION})")
        missing = [k for k in ("num_players", "rules", "decks", "actions") if k not in data]
        if missing:
            raise ValueError(f"game log lacks {', '.join(missing)}")
        rules = data["rules"]
        if not isinstance(rules, dict):
            raise ValueError("game log 'rules' must be an object")
        unknown = set(rules) - {"rounds", "turn_cap", "reward", "ruleset"}
        if unknown:
            raise ValueError(f"unknown rules fields in game log: {sorted(unknown)}")
        return cls(
            num_players=data["num_players"],
            decks=data["decks"],
            actions=data["actions"],
            players=data.get("players"),
            result=data.get("result"),
            **rules,
        )

    @classmethod
    def from_json(cls, text: str) -> GameLog:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"game log is not valid JSON: {e}") from None
        return cls.from_dict(data)

    def save(self, path) -> None:
        """Write the log as JSON (atomically: a temporary file renamed into place)."""
        atomic_write(path, lambda f: f.write(self.to_json()), binary=False)

    @classmethod
    def load(cls, path) -> GameLog:
        """Read a log written by :meth:`save` (or a file holding one golden-game line);
        ValueError naming the file if it holds neither."""
        with open(path, "rb") as f:
            data = f.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            # (not text at all, e.g. a GIF or HTML-replay path passed by mistake)
            line = data.count(b"\n", 0, e.start) + 1
            raise ValueError(f"{os.fspath(path)}: line {line} is not UTF-8 text (byte {data[e.start]:#04x}); "
                             "a game log is a JSON text file") from None
        try:
            return cls.from_json(text)
        except ValueError as e:
            raise ValueError(f"{os.fspath(path)}: {e}") from None


# ---------------------------------------------------------------------------- recording
class Recorder:
    """Plays one game (a Simulator with a batch of one) and records its actions.

    ``step(action)`` applies one decision (ValueError for an illegal one, state
    unchanged); ``log`` is the :class:`GameLog` so far (with the result once it ends).
    """

    def __init__(self, rules: Rules | None = None, *, seed=None, decks=None, players: Sequence[str] | None = None):
        self.rules = Rules() if rules is None else rules
        if not isinstance(self.rules, Rules):
            raise ValueError(f"rules must be a startups_env.Rules, got {type(self.rules).__name__}")
        seed = check_seed(seed, generator_ok=True)
        if decks is None:
            # Every round's deck is fixed up front, so the log holds the whole game.
            decks = shuffled_decks(np.random.default_rng(seed), self.rules.rounds).tolist()
        elif np.ndim(decks) == 1:
            decks = [decks]
        self._log = GameLog(
            num_players=self.rules.num_players,
            decks=[list(d) for d in decks],
            rounds=self.rules.rounds,
            turn_cap=self.rules.turn_cap,
            reward=self.rules.reward,
            ruleset=self.rules.ruleset,
            players=list(players) if players is not None else None,
        )
        self.sim = _simulator(self._log)

    @property
    def state(self) -> State:
        return self.sim.state

    @property
    def done(self) -> bool:
        return bool(self.sim.done[0])

    def legal_actions(self) -> list[int]:
        return np.flatnonzero(self.sim.legal_mask()[0]).tolist()

    def step(self, action: int):
        if self.done:
            raise ValueError("the game is over")
        if not is_int(action):
            raise ValueError(f"action must be an int, got {action!r}")
        result = self.sim.step(np.array([int(action)]))
        self._log.actions.append(int(action))
        if self.done:
            self._log.result = _result_of(self.sim)
        return result

    @property
    def log(self) -> GameLog:
        return GameLog(**{**self._log.__dict__, "actions": list(self._log.actions)})


def _simulator(log: GameLog) -> Simulator:
    decks = np.array([log.decks], dtype=np.int8)  # [1, rounds, 45]
    return Simulator(log.rules, 1, decks=decks if log.rounds > 1 else decks[:, 0])


def _result_of(sim: Simulator) -> dict:
    s, n = sim.state, int(sim.state.num_players[0])
    return {
        "scores": s.scores[:n, 0].tolist(),
        "threes": s.threes[:n, 0].tolist(),
        "ranks": s.ranks[:n, 0].tolist(),
        "terminated": bool(s.terminated[0]),
        "truncated": bool(s.truncated[0]),
    }


def _one_action(value, who: str) -> int:
    """The one action id a ``policy(sim)`` returned for the one game being recorded: an
    int, or an integer array of one element. Anything else is refused rather than
    converted: ``int()`` would truncate a float, and taking element 0 would hide a policy
    that decides for a batch of several games."""
    if is_int(value):
        return int(value)
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu" or arr.ndim > 1 or arr.size != 1:
        given = (f"{type(value).__name__} {value!r}" if arr.ndim == 0
                 else f"{arr.dtype} array of shape {list(arr.shape)}")
        raise ValueError(f"{who} must return one integer action id (an int, or int[1]), got {given}")
    return int(arr.reshape(-1)[0])


def record_game(
    policy=None, rules: Rules | None = None, *, seed=None, decks=None, players=None, max_decisions: int | None = None
) -> GameLog:
    """Play one game and return its log.

    policy: None (uniform random legal moves from ``seed``); a sequence of per-seat
        policies (:mod:`startups_env.table.policy`: e.g. agents from
        ``startups_env.agents.make_agent``, or callables ``f(obs, mask)``), seated by a
        :class:`startups_env.table.driver.Table` that keeps the game's history for those that
        read it; or a callable ``policy(sim) -> action`` given the one-game Simulator.
    seed: shuffles the deck(s) (and drives the random policy); decks: explicit deck(s).
    players: names stored in the log (default: the agents' ``name`` attributes).
    max_decisions: stop early (an unfinished log) after this many decisions.
    """
    rules = Rules() if rules is None else rules
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a startups_env.Rules, got {type(rules).__name__}")
    if max_decisions is not None and (not is_int(max_decisions) or max_decisions < 0):
        raise ValueError(f"max_decisions must be None or a non-negative int, got {max_decisions!r}")
    rng = np.random.default_rng(check_seed(seed, generator_ok=True))
    play, agents = _record_policies(policy, rules, rng)
    if agents is not None and players is None:
        players = [policy_name(a) for a in agents]
    recorder = Recorder(rules, seed=rng if decks is None else None, decks=decks, players=players)
    # Per-seat policies are seated as everywhere else (startups_env.table.driver), the game's
    # history kept for those that read it.
    table = None if agents is None else Table(recorder.sim, agents, role="agent of seat")
    while not recorder.done and (max_decisions is None or len(recorder._log.actions) < max_decisions):
        sim = recorder.sim
        if table is not None:
            actions = table.act()
            table.record(actions)
            recorder.step(int(actions[0]))
            continue
        who = f"policy (decision {len(recorder._log.actions)}, seat {int(sim.state.current[0])} to act)"
        recorder.step(_one_action(play(sim), who))
    return recorder.log


def _record_policies(policy, rules: Rules, rng: np.random.Generator):
    """record_game's ``policy`` checked before the game starts: (play, None) for a callable
    ``play(sim) -> action`` (uniform random legal moves from ``rng`` for None), or
    (None, agents) for a list of per-seat policies."""
    if policy is None:
        return (lambda sim: int(sim.random_actions(rng=rng)[0])), None
    if callable(policy) and not hasattr(policy, "act"):
        return policy, None
    try:
        agents = [] if isinstance(policy, str) else list(policy)
    except TypeError:
        agents = []
    if not agents:
        raise ValueError(f"policy must be None, a callable policy(sim) or a list of per-seat policies, got {policy!r}")
    if len(agents) != rules.num_players:
        raise ValueError(f"{len(agents)} agents for {rules.num_players} seats")
    # Names are not resolved here (as_policy says how to build a bot from one): agents live
    # in the separate ``agents`` package, which this module does not depend on.
    for seat, agent in enumerate(agents):
        try:
            as_policy(agent)
        except ValueError as err:
            raise ValueError(f"policy[{seat}]: {err}") from None
    return None, agents


# ---------------------------------------------------------------------------- replay
def _describe_illegal(sim: Simulator, k: int, action: int) -> str:
    s = sim.state
    legal = ", ".join(action_to_string(a) for a in np.flatnonzero(sim.legal_mask()[0]))
    return (
        f"illegal action at index {k}: {action_to_string(action)} ({action}) by P{int(s.current[0])} "
        f"in the {PHASE_NAMES[int(s.phase[0])]} phase; legal: {legal}"
    )


def iter_replay(log: GameLog):
    """Yield ``(k, action, sim)`` before each decision k (sim is live: copy its state to
    keep it), then ``(len(actions), None, sim)`` at the end. Raises ValueError on an
    illegal action, on actions after the end, or a result that does not match."""
    sim = _simulator(log)
    for k, action in enumerate(log.actions):
        if sim.done[0]:
            raise ValueError(f"the game ended after {k} actions but the log holds {len(log.actions)}")
        if not sim.legal_mask()[0, action]:
            raise ValueError(_describe_illegal(sim, k, action))
        yield k, action, sim
        sim.step(np.array([action]))
    if log.result is not None:
        if not sim.done[0]:
            raise ValueError(f"the log has a result but the game is not over after its {len(log.actions)} actions")
        got = _result_of(sim)
        for key in ("scores", "threes", "ranks", "terminated", "truncated"):
            if key in log.result and list(np.atleast_1d(log.result[key])) != list(np.atleast_1d(got[key])):
                raise ValueError(f"replay does not match the log's result: {key} {got[key]} != {log.result[key]}")
    yield len(log.actions), None, sim


def replay(log: GameLog) -> Simulator:
    """The one-game Simulator after every action of ``log`` (checked as in :func:`iter_replay`)."""
    sim = None
    for _, _, sim in iter_replay(log):
        pass
    return sim


def replay_states(log: GameLog) -> list[State]:
    """The state before every decision and the final one (len(actions) + 1 states)."""
    return [sim.state.copy() for _, _, sim in iter_replay(log)]


def describe_action(state: State, action: int, viewer: int | None = None, *, seat_prefix: bool = True) -> str:
    """``P2: draw (octo)``-style caption of ``action`` played from ``state`` (game 0). A
    drawn card is named only to a spectator (viewer None) or to the drawer; a take names
    the coins gained. seat_prefix=False leaves out the ``P2: ``."""
    seat = int(state.current[0])
    text = (f"P{seat}: " if seat_prefix else "") + action_to_string(action)
    if action == Action.DRAW and (viewer is None or viewer == seat):
        text += f" ({COMPANY_NAMES[int(state.deck[int(state.pile_pos[0]), 0])]})"
    elif Action.TAKE <= action < Action.KEEP:
        coins = int(state.market_take_coins()[action - Action.TAKE, 0])
        text += f" (+{coins} coin{'s' if coins != 1 else ''})"
    return text


def _check_viewer(log: GameLog, viewer) -> None:
    if viewer is not None and not (is_int(viewer) and 0 <= viewer < log.num_players):
        raise ValueError(f"viewer must be None or a seat in [0, {log.num_players}), got {viewer!r}")


def _frames(log: GameLog, viewer: int | None, render: Callable):
    """Yield (caption, picture) for every frame of a replay, the HTML page's and the GIF's
    alike: the deal (caption ``"the deal"``), then the table after each decision, captioned
    with the move just played (``"3/92  P1: take octo (+2 coins)  [greedy]"``, as
    :func:`describe_action` words it for ``viewer``); the last caption also says whether the
    game is over or the log stops before its end."""
    _check_viewer(log, viewer)
    names = log.players or [None] * log.num_players
    caption = "the deal"
    for k, action, sim in iter_replay(log):
        s = sim.state
        if action is None:  # the last table
            caption += "  (game over)" if s.done[0] else "  (game unfinished)"
        yield caption, render(s, 0, viewer)
        if action is not None:  # the move played from this table names the next frame
            who = names[int(s.current[0])]
            caption = (
                f"{k + 1}/{len(log.actions)}  " + describe_action(s, action, viewer) + (f"  [{who}]" if who else "")
            )


def write_html(
    log: GameLog, path, *, viewer: int | None = None, images: bool = False, title: str = "Startups replay"
) -> None:
    """A standalone HTML page of the frames of :func:`gif_frames`: the deal, then the table
    after each decision, captioned with the move just played; buttons, a slider and the
    arrow keys step through it. images=True embeds PNG pictures
    (:func:`~startups_env.startups.render.table_rgb`) beside the text tables."""
    from startups_env.startups.render import table_rgb, table_text

    texts = list(_frames(log, viewer, table_text))
    pictures = []
    if images:
        from PIL import Image

        for _, array in _frames(log, viewer, table_rgb):
            buf = io.BytesIO()
            Image.fromarray(array).save(buf, format="PNG", compress_level=1)  # fast; flat colours compress well anyway
            pictures.append("data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii"))
    frames = [{"caption": c, "text": t, "image": pictures[i] if images else None} for i, (c, t) in enumerate(texts)]
    # "</" inside a <script> block would end it early; JSON lets us escape the slash.
    payload = json.dumps(frames).replace("</", "<\\/")
    page = _HTML_TEMPLATE.replace("__TITLE__", html.escape(title)).replace("__FRAMES__", payload)
    atomic_write(path, lambda f: f.write(page), binary=False)


def gif_frames(log: GameLog, viewer: int | None = None):
    """Yield ``(caption, picture)`` for each frame of :func:`write_gif`: the deal, then the
    table after each decision, captioned with that decision (``"3/92  P1: take octo (+2
    coins)  [greedy]"``, as :func:`describe_action` words it for ``viewer``), as on the
    HTML page of :func:`write_html`. The picture is :func:`~startups_env.startups.render.table_rgb`
    with the caption in a band beneath it (:func:`~startups_env.startups.render.with_caption`)."""
    from startups_env.startups.render import table_rgb, with_caption

    for caption, picture in _frames(log, viewer, table_rgb):
        yield caption, with_caption(picture, caption)


def write_gif(log: GameLog, path, *, viewer: int | None = None, frame_ms: int = 500, end_ms: int = 4000) -> None:
    """An animated GIF of the game (:func:`gif_frames`): the deal, then one frame per
    decision showing the table after it with the move as caption, the last one held for
    ``end_ms``."""
    from PIL import Image

    from startups_env.startups.render import table_rgb, with_caption

    # Checked before the frames are drawn: Pillow would fail on them only when saving.
    for name, ms in (("frame_ms", frame_ms), ("end_ms", end_ms)):
        if not is_int(ms) or not 1 <= ms <= 655350:
            raise ValueError(f"{name} must be an int number of milliseconds in [1, 655350] "
                             f"(a GIF frame lasts at most 655.35 s), got {ms!r}")

    _check_viewer(log, viewer)
    # One shared palette (from the final, busiest table, under a sample caption so that the
    # band's antialiased text tones are in it) keeps colours stable and saves time. Each frame is reduced to it as soon as it is drawn: a game that runs to the turn cap
    # has ~800 frames, 1.2 GB as RGB pictures, a third of that as palette images.
    final = Image.fromarray(with_caption(table_rgb(replay(log).state, 0, viewer), "P0: market elephant"))
    palette = final.quantize(colors=128, method=Image.Quantize.MEDIANCUT)
    quantized = [Image.fromarray(a).quantize(palette=palette, dither=Image.Dither.NONE)
                 for _, a in gif_frames(log, viewer)]
    durations = [frame_ms] * (len(quantized) - 1) + [end_ms]
    buf = io.BytesIO()
    quantized[0].save(buf, format="GIF", save_all=True, append_images=quantized[1:], duration=durations, loop=0)
    atomic_write(path, lambda f: f.write(buf.getvalue()))


_HTML_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
 body { font-family: sans-serif; margin: 1em; background: #f6f4ee; }
 pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px; background: #fff;
       padding: .6em; border: 1px solid #ccc; display: inline-block; vertical-align: top; margin: 0 1em 0 0; }
 #caption { font-weight: bold; margin: .5em 0; min-height: 1.2em; }
 #bar { display: flex; gap: .5em; align-items: center; }
 #slider { width: 30em; }
 img { border: 1px solid #ccc; vertical-align: top; }
</style></head>
<body>
<h2>__TITLE__</h2>
<div id="bar"><button id="first">|&lt;</button><button id="prev">&lt;</button><button id="play">play</button>
<button id="next">&gt;</button><button id="last">&gt;|</button><input id="slider" type="range" min="0" value="0">
<span id="pos"></span></div>
<div id="caption"></div>
<div><pre id="table"></pre><img id="picture" alt="" style="display:none"></div>
<script>
const frames = __FRAMES__;
let i = 0, timer = null;
const slider = document.getElementById("slider");
slider.max = frames.length - 1;
function show(k) {
  i = Math.max(0, Math.min(frames.length - 1, k));
  const f = frames[i];
  document.getElementById("caption").textContent = f.caption;
  document.getElementById("table").textContent = f.text;
  const img = document.getElementById("picture");
  if (f.image) { img.src = f.image; img.style.display = ""; } else { img.style.display = "none"; }
  document.getElementById("pos").textContent = "frame " + (i + 1) + " / " + frames.length;
  slider.value = i;
}
function play() {
  if (timer) { clearInterval(timer); timer = null; document.getElementById("play").textContent = "play"; return; }
  document.getElementById("play").textContent = "pause";
  timer = setInterval(() => { if (i >= frames.length - 1) { play(); } else { show(i + 1); } }, 600);
}
document.getElementById("first").onclick = () => show(0);
document.getElementById("prev").onclick = () => show(i - 1);
document.getElementById("next").onclick = () => show(i + 1);
document.getElementById("last").onclick = () => show(frames.length - 1);
document.getElementById("play").onclick = play;
slider.oninput = () => show(parseInt(slider.value));
document.addEventListener("keydown", e => {
  if (e.key === "ArrowRight") show(i + 1);
  if (e.key === "ArrowLeft") show(i - 1);
});
show(0);
</script>
</body></html>
"""


# ---------------------------------------------------------------------------- CLI
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("startups_env.tools.replay"),
        description="Replay a Startups game log; print the final table, write HTML/GIF.",
    )
    parser.add_argument("log", help="game log JSON (GameLog.save), or a golden-game JSON line")
    parser.add_argument("--html", help="write a standalone HTML replay here")
    parser.add_argument("--images", action="store_true", help="embed PNG pictures in the HTML replay")
    parser.add_argument("--gif", help="write an animated GIF here")
    parser.add_argument("--viewer", type=int, default=None, help="show only this seat's hand (default: every hand)")
    add_traceback_argument(parser)
    args = parser.parse_args(argv)
    from startups_env.startups.render import table_text

    try:
        log = GameLog.load(args.log)
        final_table = table_text(replay(log), viewer=args.viewer)  # (checks --viewer before writing files)
        if args.html:
            write_html(log, args.html, viewer=args.viewer, images=args.images)
        if args.gif:
            write_gif(log, args.gif, viewer=args.viewer)
    except (ValueError, OSError) as e:
        return report_error(parser.prog, e, args.traceback)
    print(final_table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
