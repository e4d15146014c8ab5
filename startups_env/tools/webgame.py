"""One game at the web table (:mod:`startups_env.tools.web`): a person's seat and bots, or
bots only, at any game of :mod:`startups_env.table.games`, written once against the
:class:`~startups_env.game.Game` record.

A :class:`WebGame` plays one game (a simulator of one game) through the one table driver
(:class:`~startups_env.table.driver.Table`): the bots are asked as everywhere else, the
person's decisions come from :meth:`WebGame.play`. What it sends the page is
:meth:`WebGame.view`, which holds only what the person's seat may know:

* the table as the game renders it for that seat (``Game.render_text(state, 0, seat)``);
* the legal actions (``Game.action_to_string``), only while it is that seat's turn;
* the moves played so far, each named as ``action_to_string`` names it unless the seat
  could not tell it from another choice the mover had, or might have had with other
  hidden cards (its next observation, ``Game.observe``, is the same after them: a sealed
  bid, a card sold from a hand; :meth:`WebGame.seen_as`), then by the words those
  choices share; a bot's reason (see :func:`reason_of`) only where the game was
  created with ``reasons=True`` or nobody plays (a bot's reasoning may reflect its hand);
* the result (``Game.outcome``) once the game is over.

In watch mode (no person) the page sees every hand, as a spectator of the whole table.

A game is saved as a log (:meth:`WebGame.record`): *Startups* as the project's game log
(:class:`startups_env.tools.replay.GameLog`, which ``startups-replay`` renders), any other
game as a web game record (its name, settings, the dealt decks, the seed, the actions and
the players, ``format: "startups-env-web-game"``). :func:`open_record` reopens either as
a game that replays its moves one by one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from startups_env.checks import is_int
from startups_env.game import Game
from startups_env.startups.simulator import Simulator as LoggedSimulator  # the game replay's GameLog records
from startups_env.table.driver import Table
from startups_env.table.games import game_by_name
from startups_env.table.policy import Policy
from startups_env.tools.replay import LOG_FORMAT, GameLog, Recorder

RECORD_FORMAT = "startups-env-web-game"
RECORD_VERSION = 1
#: The moves a view lists (the latest ones).
LOG_LINES = 40
#: The most bot decisions one request plays (a guard against a bot that never ends a game).
MAX_BOT_MOVES = 20000
HIDDEN_MOVE = "a decision the others do not see"
#: The other deals a move is weighed in (besides the game's own) before it is named to a seat.
WORLDS = 8


class WebError(ValueError):
    """A request the web table refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


class PersonSeat(Policy):
    """The person's seat at the table driver: never asked (the page plays it)."""

    name = "you"

    def act(self, obs, mask, *, public=None, history=None):  # pragma: no cover - never called
        raise RuntimeError("the person's seat is played from the page")


def reason_of(bot, action: int, labels: Sequence[str]) -> str | None:
    """What a bot gives as the reason of its last decision (of a batch of one game), or None.

    A bot gives one by keeping, after each ``act``, either ``last_reasons`` (one string per
    game) or ``last_values`` (float[B, num_actions], its value of each action it weighed,
    NaN elsewhere, as the search bot keeps): then the reason lists its best-valued moves."""
    reasons = getattr(bot, "last_reasons", None)
    if isinstance(reasons, (list, tuple)) and reasons and reasons[0] is not None:
        return str(reasons[0])[:300]
    values = getattr(bot, "last_values", None)
    if isinstance(values, np.ndarray) and values.ndim == 2 and values.shape[0] >= 1 and values.shape[1] == len(labels):
        row = values[0]
        weighed = [a for a in np.argsort(-np.nan_to_num(row, nan=-np.inf)) if not math.isnan(row[a])][:3]
        if weighed:
            return "values: " + ", ".join(f"{labels[a]} {row[a]:+.2f}" for a in weighed)
    return None


def load_state(sim, state) -> None:
    """Make ``state`` (as many games as ``sim`` plays) the games of ``sim``: the simulator's
    games are dealt afresh (which forgets what it cached of them), then replaced."""
    sim.reset_games(np.arange(sim.batch_size))
    sim.state = state


class WebGame:
    """One game of ``game`` at the web table.

    Args:
        game: a :class:`~startups_env.game.Game` or its name.
        rules: the game's settings (``game.make_rules(...)``).
        bots: one entry per seat: a policy, or None for the person's seat (at most one).
        names: who sits at each seat (shown on the page, written in the log).
        seed: the seed the decks were shuffled from (kept in the record).
        decks: the deal (``game.shuffled_decks`` of one game); default: shuffled from ``seed``.
        reasons: show the bots' reasons to the person (they may reflect a bot's hand).
        script: the actions to replay in order instead of asking the bots (a reopened log).
    """

    def __init__(self, game, rules, bots: Sequence, names: Sequence[str], *, seed=None, decks=None,
                 reasons: bool = False, script: Sequence[int] | None = None):
        self.game: Game = game_by_name(game)
        self.rules = self.game.check_rules(rules)
        players = int(getattr(rules, "num_players"))
        if len(bots) != players or len(names) != players:
            raise WebError(f"{players} seats need {players} bots and names, got {len(bots)} and {len(names)}")
        people = [seat for seat, bot in enumerate(bots) if bot is None]
        if len(people) > 1:
            raise WebError(f"one person plays at a table, got seats {people} without a bot")
        self.seat: int | None = people[0] if people else None
        self.names = [str(name) for name in names]
        self.seed = seed
        self.decks = self.game.shuffled_decks(np.random.default_rng(seed), 1, rules) if decks is None else decks
        self.sim = self.game.make_simulator(rules, 1, seed, self.decks)
        self.table = Table(self.sim, [PersonSeat() if bot is None else bot for bot in bots], role="seat")
        self.labels = [self.game.action_to_string(a) for a in range(self.game.num_actions)]
        self.reasons = bool(reasons) or self.seat is None
        self.script = None if script is None else [int(a) for a in script]
        self.actions: list[int] = []
        self.moves: list[dict] = []
        self._probes: dict[int, object] = {}
        if self.seat is not None:
            self._bots_to_the_person()

    # ---------------------------------------------------------------- the position
    @property
    def players(self) -> int:
        return int(self.sim.state.num_players[0])

    @property
    def done(self) -> bool:
        return bool(self.sim.done[0])

    @property
    def to_act(self) -> int | None:
        """The seat to decide, None once the game is over."""
        return None if self.done else int(self.sim.state.current[0])

    @property
    def mode(self) -> str:
        if self.script is not None:
            return "replay"
        return "watch" if self.seat is None else "play"

    def legal_actions(self) -> list[int]:
        return np.flatnonzero(self.sim.legal_mask()[0]).tolist()

    # ---------------------------------------------------------------- playing
    def play(self, action, expect_moves=None) -> None:
        """The person's decision ``action`` (an action id), then the bots' up to the person's
        next turn. ``expect_moves``: the moves the page has seen (a page that is behind is
        refused). A :class:`WebError` names what is wrong and changes nothing."""
        if self.seat is None:
            raise WebError("nobody plays at this table: it is watched (advance it instead)", 409)
        self._check_expected(expect_moves)
        if self.done:
            raise WebError("the game is over", 409)
        if self.to_act != self.seat:
            raise WebError(f"it is seat {self.to_act}'s turn, not yours (seat {self.seat})", 409)
        if not is_int(action):
            raise WebError(f"action must be an integer action id, got {action!r}")
        legal = self.legal_actions()
        if int(action) not in legal:
            known = 0 <= int(action) < len(self.labels)
            shown = f"{int(action)} ({self.labels[int(action)]})" if known else str(int(action))
            raise WebError(f"action {shown} is not legal now; legal: {legal}")
        self._apply(int(action), None)
        self._bots_to_the_person()

    def advance(self, steps: int = 1, expect_moves=None) -> int:
        """Play up to ``steps`` decisions of the bots (or of the replayed log), stopping at
        the person's turn and at the end; returns how many were played."""
        if not is_int(steps) or not 1 <= int(steps) <= MAX_BOT_MOVES:
            raise WebError(f"steps must be an integer from 1 to {MAX_BOT_MOVES}, got {steps!r}")
        self._check_expected(expect_moves)
        played = 0
        while played < int(steps) and not self.done and self.to_act != self.seat:
            self._bot_move()
            played += 1
        return played

    def _check_expected(self, expect_moves) -> None:
        if expect_moves is None:
            return
        if not is_int(expect_moves):
            raise WebError(f"expect_moves must be an integer, got {expect_moves!r}")
        if int(expect_moves) != len(self.actions):
            raise WebError(f"the page saw {int(expect_moves)} moves but {len(self.actions)} are played: "
                           "reload the table", 409)

    def _bots_to_the_person(self) -> None:
        self.advance(MAX_BOT_MOVES)

    def _bot_move(self) -> None:
        seat = self.to_act
        if self.script is not None:
            if len(self.actions) >= len(self.script):
                raise WebError("the log ends here, before the end of the game", 409)
            self._apply(self.script[len(self.actions)], None)
            return
        try:
            action = int(self.table.act()[0])
        except Exception as exc:  # a bot that fails is named; the game is unchanged
            raise WebError(f"the bot at seat {seat} ({self.names[seat]}) failed: {exc}", 500) from exc
        self._apply(action, reason_of(self.table.policies[seat], action, self.labels))

    def _apply(self, action: int, reason: str | None) -> None:
        seat = self.to_act
        shown = self.labels[action] if self.seat is None or seat == self.seat else self.seen_as(self.seat, action)
        self.table.step(np.array([action]))
        self.actions.append(action)
        self.moves.append({"n": len(self.actions), "seat": seat, "move": self.labels[action], "shown": shown,
                           "reason": reason})

    def seen_as(self, viewer: int, action: int) -> str:
        """``action`` of the seat to act as ``viewer`` sees it: its name where no other choice
        gives ``viewer`` the same observation after it (``Game.observe``), in this game or
        in :data:`WORLDS` others dealt as ``viewer`` cannot tell from it (``Game.deal_hidden``:
        a move that was the only one of its kind here but not in a world the viewer cannot
        rule out is not named); else the words that every choice it cannot be told from shares (``sell project …``),
        or :data:`HIDDEN_MOVE`."""
        state = self.sim.state
        worlds = [state]
        if self.game.deal_hidden is not None:
            rng = np.random.default_rng(len(self.actions))
            worlds += [self.game.deal_hidden(state, np.array([viewer]), rng) for _ in range(WORLDS)]
        mine = None
        alike: set[str] = set()
        for world in worlds:
            legal, obs = self._outcomes(world, viewer)
            if mine is None:
                mine = obs[legal.index(action)]
            alike |= {self.labels[a] for a, row in zip(legal, obs) if np.array_equal(row, mine)}
        if alike == {self.labels[action]}:
            return self.labels[action]
        common = []
        for words in zip(*(label.split() for label in sorted(alike))):
            if len(set(words)) > 1:
                break
            common.append(words[0])
        return " ".join(common) + " …" if common else HIDDEN_MOVE

    def _outcomes(self, world, viewer: int) -> tuple[list[int], np.ndarray]:
        """The legal actions of the seat to act in ``world`` (a state of one game) and the
        observation of ``viewer`` after each."""
        probe = self._probe(1)
        load_state(probe, world.take(np.zeros(1, np.intp)))
        legal = np.flatnonzero(probe.legal_mask()[0]).tolist()
        probe = self._probe(len(legal))
        load_state(probe, world.take(np.zeros(len(legal), np.intp)))
        probe.step(np.array(legal, np.int64))
        return legal, self.game.observe(probe.state, np.full(len(legal), viewer))

    def _probe(self, size: int):
        if size not in self._probes:
            self._probes[size] = self.game.make_simulator(self.rules, size, 0, None)
        return self._probes[size]

    # ---------------------------------------------------------------- what the page sees
    def view(self) -> dict:
        """What the page shows, as the person's seat may know it (everything when watched)."""
        viewer = self.seat
        your_turn = viewer is not None and self.to_act == viewer
        view = {
            "game": self.game.name, "title": self.game.title, "mode": self.mode, "players": self.names,
            "seat": viewer, "moves": len(self.actions), "to_act": self.to_act, "done": self.done,
            "your_turn": your_turn,
            "can_advance": not self.done and self.to_act != viewer and (
                self.script is None or len(self.actions) < len(self.script)),
            "table": self.game.render_text(self.sim.state, 0, viewer),
            "legal": [{"id": a, "label": self.labels[a]} for a in self.legal_actions()] if your_turn else [],
            "log": [self._move_line(move) for move in self.moves[-LOG_LINES:]],
            "result": self.result(),
        }
        return view

    def _move_line(self, move: dict) -> dict:
        line = {"n": move["n"], "seat": move["seat"], "player": self.names[move["seat"]],
                "move": move["move"] if self.seat is None else move["shown"]}
        if self.reasons and move["reason"]:
            line["reason"] = move["reason"]
        return line

    def result(self) -> dict | None:
        """The engine's result once the game is over (``Game.outcome``), by seat; else None."""
        if not self.done:
            return None
        out = self.game.outcome(self.sim.state)
        n = self.players
        ranks = [int(r) for r in out["ranks"][0, :n]]
        return {"ranks": ranks, "scores": [int(s) for s in out["scores"][0, :n]],
                "truncated": bool(out["truncated"][0]), "winners": [s for s in range(n) if ranks[s] == 0]}

    # ---------------------------------------------------------------- logs
    def record(self) -> dict:
        """The game so far as a log (JSON-ready; see the module docstring). A log holds the
        whole deal, so a person's game gives it only once it is over (a WebError before)."""
        if self.seat is not None and not self.done:
            raise WebError("a game log holds every hand: it is given once the game is over", 409)
        if self.game.simulator_type is LoggedSimulator:
            recorder = Recorder(self.rules, decks=np.asarray(self.decks)[0].tolist(), players=self.names)
            for action in self.actions:
                recorder.step(action)
            return recorder.log.to_dict()
        decks = {k: np.asarray(v)[0].tolist() for k, v in self.decks.items()} if isinstance(self.decks, dict) \
            else np.asarray(self.decks)[0].tolist()
        return {"format": RECORD_FORMAT, "version": RECORD_VERSION, "game": self.game.name,
                "num_players": self.players, "settings": _settings(self.rules), "seed": self.seed, "decks": decks,
                "actions": list(self.actions), "players": list(self.names), "result": self.result()}


def _settings(rules) -> dict:
    """The JSON-ready fields of a game's settings object (a dataclass of plain values)."""
    fields = getattr(rules, "__dataclass_fields__", {})
    return {name: getattr(rules, name) for name in fields
            if name != "num_players" and isinstance(getattr(rules, name), (int, float, str, bool))}


def open_record(data, *, names: Callable[[int], list[str]] | None = None) -> WebGame:
    """A :class:`WebGame` that replays the log ``data`` (a dict: the project's game log of
    *Startups*, or a web game record of any game) move by move, watched. A ValueError
    names what is wrong with it, before any move is played: every move is checked legal."""
    if not isinstance(data, dict):
        raise WebError(f"a game log must be a JSON object, got {type(data).__name__}")
    if data.get("format") == LOG_FORMAT or ("format" not in data and "deck" in data):
        log = GameLog.from_dict(data)
        game = game_by_name("startups")
        decks = np.asarray(log.decks, np.int8)[None]
        game_obj = WebGame(game, log.rules, [_Scripted()] * log.num_players,
                           log.players or [f"player {i}" for i in range(log.num_players)],
                           decks=decks[:, 0] if log.rounds == 1 else decks, script=log.actions)
    elif data.get("format") == RECORD_FORMAT:
        game_obj = _open_web_record(data)
    else:
        raise WebError(f"not a game log: format is {data.get('format')!r}, expected {LOG_FORMAT!r} or "
                       f"{RECORD_FORMAT!r}")
    _check_script(game_obj)
    return game_obj


class _Scripted(Policy):
    """A seat of a reopened log: its moves come from the log, it is never asked."""

    name = "log"

    def act(self, obs, mask, *, public=None, history=None):  # pragma: no cover - never called
        raise RuntimeError("a replayed seat plays its logged moves")


def _open_web_record(data: dict) -> WebGame:
    if data.get("version") != RECORD_VERSION:
        raise WebError(f"unsupported web game record version {data.get('version')!r} (this reader knows "
                       f"{RECORD_VERSION})")
    missing = [k for k in ("game", "num_players", "settings", "decks", "actions") if k not in data]
    if missing:
        raise WebError(f"the web game record lacks {', '.join(missing)}")
    game = game_by_name(data["game"])
    players, settings = data["num_players"], data["settings"]
    if not is_int(players) or not isinstance(settings, dict):
        raise WebError("num_players must be an integer and settings an object")
    rules = game.make_rules(int(players), **settings)
    decks = data["decks"]
    decks = {k: np.asarray([v]) for k, v in decks.items()} if isinstance(decks, dict) else np.asarray([decks])
    actions = data["actions"]
    if not isinstance(actions, list) or not all(is_int(a) for a in actions):
        raise WebError("actions must be a list of integer action ids")
    names = data.get("players") or [f"player {i}" for i in range(int(players))]
    if not isinstance(names, list) or len(names) != int(players):
        raise WebError(f"players must be a list of {int(players)} names")
    return WebGame(game, rules, [_Scripted()] * int(players), names, seed=data.get("seed"), decks=decks,
                   script=actions)


def _check_script(web: WebGame) -> None:
    """Every logged move is legal where it is played (in a scratch copy of the game)."""
    sim = web.game.make_simulator(web.rules, 1, None, web.decks)
    for k, action in enumerate(web.script):
        if sim.done[0]:
            raise WebError(f"the log goes on after the game's end, at move {k}")
        if not 0 <= action < web.game.num_actions or not sim.legal_mask()[0, action]:
            raise WebError(f"move {k} of the log ({action}) is not legal there")
        sim.step(np.array([action]))
