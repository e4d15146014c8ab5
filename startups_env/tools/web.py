"""The web table: play any game of :mod:`startups_env.table.games` against bots in a
browser, or watch bots play, on the standard library's HTTP server.

    python -m startups_env.agents.play --web --game startap      # prints the URL to open

The page (``web_static/``: plain HTML, CSS and JavaScript, nothing fetched from elsewhere)
talks to JSON endpoints; each game is a :class:`~startups_env.tools.webgame.WebGame` held
here under a session id, so that closing the page and opening it again continues it:

* ``GET /api/games`` -- the games, their table sizes and bot names, the form's defaults;
* ``POST /api/new`` ``{"game", "players", "seat" (null: watch), "bots": [spec per other
  seat], "seed", "ruleset", "reasons"}`` -- a new game; answers its view and ``session``;
* ``GET /api/view?session=ID`` -- the game as the person's seat sees it;
* ``POST /api/act`` ``{"session", "action", "expect_moves"}`` -- the person's decision;
* ``POST /api/advance`` ``{"session", "steps", "expect_moves"}`` -- the bots' next decisions;
* ``GET /api/log?session=ID`` -- the game's log (:meth:`WebGame.record`), to save (a
  person's game gives it once over: a log holds every hand);
* ``POST /api/open`` ``{"log": {...}}`` -- a saved log reopened, to replay move by move.

Every refusal is ``{"error": message}`` with a 4xx status, and changes no game. The server
binds 127.0.0.1 unless told otherwise; bound to another address it requires the token it
prints (``?token=`` in the page's URL, which the page sends on as ``X-Token``).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import mimetypes
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, urlsplit

from startups_env.checks import is_int
from startups_env.table.games import GAMES, game_by_name
from startups_env.tools.webgame import WebError, WebGame, open_record

LOOPBACK = "127.0.0.1"
MAX_BODY = 1 << 20
MAX_SESSIONS = 64
STATIC = "web_static"
NEW_FIELDS = {"game", "players", "seat", "bots", "seed", "ruleset", "reasons"}


def static_files() -> dict[str, bytes]:
    """The page's files by name (package data of ``startups_env.tools``)."""
    folder = resources.files("startups_env.tools").joinpath(STATIC)
    return {entry.name: entry.read_bytes() for entry in folder.iterdir() if entry.is_file()}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) reaches this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class WebTable:
    """The server's games and what it needs to start one.

    Args:
        make_bot: ``make_bot(spec, seed, game_name, players)`` -> a policy (the registry's
            bots by name and spec, as the arena builds them; a ValueError names a bad spec).
        bot_names: ``bot_names(game_name)`` -> the names the page offers.
        defaults: the form's first values (``game``, ``players``, ``seat``, ``bots``, ``seed``).
        token: required on every request where not None.
    """

    make_bot: Callable
    bot_names: Callable[[str], list[str]]
    defaults: dict = field(default_factory=dict)
    token: str | None = None
    sessions: OrderedDict = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def games(self) -> dict:
        return {"games": [{"name": g.name, "title": g.title, "min_players": g.min_players,
                           "max_players": g.max_players, "rulesets": list(g.rulesets), "bots": self.bot_names(g.name)}
                          for g in GAMES.values()], "defaults": self.defaults}

    def new(self, body: dict) -> dict:
        """A new game from the form (see the module docstring); its view."""
        unknown = sorted(set(body) - NEW_FIELDS)
        if unknown:
            raise WebError(f"unknown fields {unknown}; a new game takes {sorted(NEW_FIELDS)}")
        game = game_by_name(body.get("game", self.defaults.get("game", "startups")))
        players = body.get("players", min(max(4, game.min_players), game.max_players))
        if not is_int(players) or not game.min_players <= players <= game.max_players:
            raise WebError(f"players must be an integer from {game.min_players} to {game.max_players} for "
                           f"{game.title}, got {players!r}")
        seat = body.get("seat", 0)
        if seat is not None and (not is_int(seat) or not 0 <= seat < players):
            raise WebError(f"seat must be null (watch) or an integer from 0 to {players - 1}, got {seat!r}")
        seed = body.get("seed")
        if seed is not None and (not is_int(seed) or seed < 0):
            raise WebError(f"seed must be null or a non-negative integer, got {seed!r}")
        ruleset = body.get("ruleset")
        if ruleset is not None and ruleset not in game.rulesets:
            raise WebError(f"ruleset must be one of {list(game.rulesets)} for {game.title}, got {ruleset!r}")
        bots, names = self._bots(game, players, seat, body.get("bots"), seed)
        web = WebGame(game, game.make_rules(players, ruleset), bots, names, seed=seed,
                      reasons=bool(body.get("reasons", False)))
        return self.keep(web)

    def _bots(self, game, players: int, seat, specs, seed):
        """The policies and names of the seats (None and "you" at the person's)."""
        others = players - (seat is not None)
        if specs is None:
            specs = [game.opponents[0]]
        if isinstance(specs, str):
            specs = [specs]
        if not isinstance(specs, list) or not all(isinstance(s, str) and s.strip() for s in specs) or \
                len(specs) not in (1, others):
            raise WebError(f"bots must be a list of 1 or {others} bot names or specs, got {specs!r}")
        specs = [s.strip() for s in specs] * (others if len(specs) == 1 else 1)
        rng_seeds = [None if seed is None else seed * 1000 + k + 1 for k in range(others)]
        try:
            built = [self.make_bot(spec, s, game.name, players) for spec, s in zip(specs, rng_seeds)]
        except (ValueError, TypeError, ImportError, OSError) as exc:
            raise WebError(f"bad bot: {exc}") from None
        bots, names = list(built), list(specs)
        if seat is not None:
            bots.insert(seat, None)
            names.insert(seat, "you")
        return bots, names

    def keep(self, web: WebGame) -> dict:
        """Hold ``web`` under a new session id (the oldest is let go past MAX_SESSIONS)."""
        session = secrets.token_urlsafe(12)
        with self.lock:
            self.sessions[session] = (web, threading.Lock())
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        return {**web.view(), "session": session}

    def game(self, session) -> tuple[str, WebGame, threading.Lock]:
        with self.lock:
            if not isinstance(session, str) or session not in self.sessions:
                raise WebError(f"no game with session {session!r} (the server may have been restarted)", 404)
            self.sessions.move_to_end(session)
            return (session, *self.sessions[session])

    def handle(self, method: str, path: str, query: dict, body) -> dict:
        """The answer to one API request (a WebError for a refusal)."""
        routes = {("GET", "/api/games"): lambda: self.games(),
                  ("POST", "/api/new"): lambda: self.new(_object(body)),
                  ("POST", "/api/open"): lambda: self._open(_object(body)),
                  ("GET", "/api/view"): lambda: self._with(query.get("session"), lambda web: None),
                  ("GET", "/api/log"): lambda: self._log(query.get("session")),
                  ("POST", "/api/act"): lambda: self._change(body, "action", WebGame.play),
                  ("POST", "/api/advance"): lambda: self._change(body, "steps", WebGame.advance)}
        if (method, path) not in routes:
            known = sorted({p for _m, p in routes})
            if any(p == path for _m, p in routes):
                raise WebError(f"{path} does not take {method}", 405)
            raise WebError(f"no endpoint {path}; the endpoints are {known}", 404)
        return routes[(method, path)]()

    def _with(self, session, change) -> dict:
        session, web, lock = self.game(session)
        with lock:
            change(web)
            return {**web.view(), "session": session}

    def _change(self, body, key: str, method) -> dict:
        body = _object(body)
        allowed = {"session", key, "expect_moves"}
        unknown = sorted(set(body) - allowed)
        if unknown:
            raise WebError(f"unknown fields {unknown}; this request takes {sorted(allowed)}")
        if key == "action" and key not in body:
            raise WebError("the request lacks 'action' (an action id)")
        return self._with(body.get("session"), lambda web: method(web, body.get(key, 1), body.get("expect_moves")))

    def _log(self, session) -> dict:
        _session, web, lock = self.game(session)
        with lock:
            return web.record()

    def _open(self, body: dict) -> dict:
        if set(body) != {"log"}:
            raise WebError("open takes {\"log\": a saved game log}")
        try:
            web = open_record(body["log"])
        except WebError:
            raise
        except ValueError as exc:
            raise WebError(str(exc)) from None
        return self.keep(web)


def _object(body) -> dict:
    if not isinstance(body, dict):
        raise WebError(f"the request body must be a JSON object, got {type(body).__name__}")
    return body


class _Handler(BaseHTTPRequestHandler):
    """One request: the token checked, then a static file or an API answer."""

    table: WebTable
    files: dict[str, bytes]
    server_version = "startups-web"
    quiet = True

    def log_message(self, format, *args):  # noqa: A002 - the standard library's name
        if not self.quiet:
            super().log_message(format, *args)

    def do_GET(self):  # noqa: N802 - the standard library's name
        self._serve("GET")

    def do_POST(self):  # noqa: N802
        self._serve("POST")

    def _serve(self, method: str) -> None:
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        try:
            self._check_origin(method)
            self._check_token(query)
            if url.path in ("/", "/index.html") or url.path.startswith("/static/"):
                return self._static(url.path)
            body = self._body() if method == "POST" else None
            answer = self.table.handle(method, url.path, query, body)
        except WebError as exc:
            return self._json({"error": str(exc)}, exc.status)
        except ValueError as exc:  # a bad name of a game, a ruleset or a setting
            return self._json({"error": str(exc)}, 400)
        except Exception as exc:  # a fault of the server: said, not a dropped connection
            return self._json({"error": f"the server failed: {type(exc).__name__}: {exc}"}, 500)
        self._json(answer, 200)

    def _check_origin(self, method: str) -> None:
        """Refuse what a page of another site could send: a POST that is not JSON (a
        cross-site page cannot send JSON without the browser asking this server first,
        which it does not allow) and, on the loopback without a token, a request for
        another host name (DNS rebinding)."""
        if method == "POST" and not (self.headers.get("Content-Type") or "").startswith("application/json"):
            raise WebError("a POST must be JSON (Content-Type: application/json)", 415)
        host = (self.headers.get("Host") or "").rpartition(":")[0] or self.headers.get("Host") or ""
        if self.table.token is None and host.strip("[]") not in ("127.0.0.1", "localhost", "::1"):
            raise WebError(f"this table answers only this machine's own addresses, not {host!r}", 403)

    def _check_token(self, query: dict) -> None:
        token = self.table.token
        if token is None:
            return
        given = self.headers.get("X-Token") or query.get("token") or ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise WebError("this table needs its token: open the URL the server printed (…?token=…)", 403)

    def _body(self):
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise WebError("a POST needs a Content-Length", 411)
        if int(length) > MAX_BODY:
            raise WebError(f"the request body is over {MAX_BODY} bytes", 413)
        raw = self.rfile.read(int(length))
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise WebError(f"the request body is not JSON: {exc}") from None

    def _static(self, path: str) -> None:
        name = "index.html" if path in ("/", "/index.html") else path[len("/static/"):]
        if name not in self.files:
            raise WebError(f"no file {path}", 404)
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        self._send(self.files[name], 200, kind + ("; charset=utf-8" if kind.startswith("text/") or
                                                  kind.endswith("javascript") else ""))

    def _json(self, payload, status: int) -> None:
        self._send(json.dumps(payload, ensure_ascii=False).encode("utf-8"), status, "application/json; charset=utf-8")

    def _send(self, data: bytes, status: int, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(data)


def make_server(table: WebTable, host: str = LOOPBACK, port: int = 0, *, token: str | None = None,
                quiet: bool = True) -> ThreadingHTTPServer:
    """A server of ``table`` bound to ``host``:``port`` (0: a free port), not yet serving.
    Bound to an address other than the loopback it requires a token: ``token``, or one
    made here (``table.token`` holds it)."""
    if not is_int(port) or not 0 <= port <= 65535:
        raise ValueError(f"port must be an integer from 0 to 65535, got {port!r}")
    if token is None and not is_loopback(host):
        token = secrets.token_urlsafe(16)
    table.token = token
    handler = type("Handler", (_Handler,), {"table": table, "files": static_files(), "quiet": quiet})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


def url_of(server: ThreadingHTTPServer, table: WebTable) -> str:
    """The address to open (with the token where one is needed)."""
    host, port = server.server_address[:2]
    shown = LOOPBACK if host in ("0.0.0.0", "::") else host
    shown = f"[{shown}]" if ":" in shown else shown
    return f"http://{shown}:{port}/" + (f"?token={table.token}" if table.token else "")
