"""The web table's server alone, over HTTP (no browser): what the page receives never holds
another seat's hidden cards (the hidden-information re-deal, on every response of whole
games), bad requests are refused with a clear error and change nothing, the server binds
the loopback unless told otherwise and then needs its token, a game continues under its
session id, and a finished game's log reopens. Written once for every game, the test-only
one included (tests/games/)."""

from __future__ import annotations

import io
import json
import threading
import urllib.error
import urllib.request

import numpy as np
import pytest

from startups_env.agents.play import main as play_main
from startups_env.agents.play import web_bot_names
from startups_env.agents.registry import make_agent
from startups_env.table.games import GAMES
from startups_env.tools.replay import GameLog, replay
from startups_env.tools.web import MAX_BODY, WebTable, is_loopback, make_server, url_of
from startups_env.tools.webgame import HIDDEN_MOVE, WebGame, load_state

#: The fastest bots of each game (a whole game per test).
FAST_BOT = {"startups": "greedy", "startap": "random"}


def _bot(spec, seed, game, players):
    return make_agent(spec, seed=seed, game=game)


class Client:
    """A running server and requests to it: ``(status, JSON answer)``."""

    def __init__(self, host="127.0.0.1", **kwargs):
        self.table = WebTable(make_bot=_bot, bot_names=web_bot_names)
        self.server = make_server(self.table, host, 0, **kwargs)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def request(self, method, path, body=None, *, raw=None, headers=None):
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=60) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def get(self, path, **kwargs):
        return self.request("GET", path, **kwargs)

    def post(self, path, body=None, **kwargs):
        return self.request("POST", path, body, **kwargs)


@pytest.fixture
def client():
    c = Client()
    yield c
    c.close()


def _bots(game):
    return [FAST_BOT[game.name] if game.name in FAST_BOT else next(iter(game.bots))]


def _new(client, game, seat=1, seed=3, **extra):
    players = min(max(3, game.min_players), game.max_players)
    status, view = client.post("/api/new", {"game": game.name, "players": players, "seat": seat,
                                            "bots": _bots(game), "seed": seed, **extra})
    assert status == 200, view
    return view


def _pick(view, rng):
    """A legal action as a person might click it: 'done' or 'pass' half the time (short games)."""
    ids = [a["id"] for a in view["legal"]]
    quick = [a["id"] for a in view["legal"] if a["label"] in ("done", "pass / refuse")]
    return int(quick[0]) if quick and rng.random() < 0.5 else int(rng.choice(ids))


def _redealt_views(client, view, game, rngs):
    """The views the page would receive were the hidden cards dealt again (one per rng), and
    whether any re-deal changed the whole table."""
    web: WebGame = client.table.sessions[view["session"]][0]
    saved = web.sim.state.copy()
    seat = np.array([web.seat])
    views, changed = [], False
    try:
        for rng in rngs:
            world = game.deal_hidden(saved, seat, rng)
            load_state(web.sim, world)
            changed |= game.render_text(world, 0, None) != game.render_text(saved, 0, None)
            views.append(client.get(f"/api/view?session={view['session']}")[1])
    finally:
        load_state(web.sim, saved)
    return views, changed


def test_no_response_changes_when_the_hidden_cards_are_dealt_again(client, game):
    """The re-deal leak test on every response of a whole game the person plays."""
    if game.deal_hidden is None:
        pytest.skip(f"{game.title} hides nothing from a seat")
    rng = np.random.default_rng(0)
    view = _new(client, game)
    changed = False
    while True:
        if not view["done"]:
            assert view["your_turn"] and view["legal"], view
            redealt, moved = _redealt_views(client, view, game, [np.random.default_rng(k) for k in range(2)])
            changed |= moved
            for other in redealt:
                assert other == view, f"the response changed with the hidden cards at move {view['moves']}"
            got, answer = client.get(f"/api/log?session={view['session']}")  # the log holds the deal
            assert got == 409 and "once the game is over" in answer["error"]
        else:
            break
        status, view = client.post("/api/act", {"session": view["session"], "action": _pick(view, rng),
                                                "expect_moves": view["moves"]})
        assert status == 200, view
    assert changed, "no re-deal changed the table: the test would not see a leak"
    assert view["result"] is not None and view["legal"] == []


def test_a_whole_game_plays_watches_saves_and_reopens(client, game):
    """Play a game to its end; its log reopens and replays to the same result; a watched
    game steps; the session continues the game (a page opened again)."""
    rng = np.random.default_rng(1)
    view = _new(client, game, seat=0, seed=5)
    while not view["done"]:
        view = client.post("/api/act", {"session": view["session"], "action": _pick(view, rng)})[1]
    assert client.get(f"/api/view?session={view['session']}")[1] == view
    status, log = client.get(f"/api/log?session={view['session']}")
    assert status == 200
    if game.name == "startups":  # the project's game log: the replay reads it
        assert replay(GameLog.from_dict(log)).state.scores[:3, 0].tolist() == view["result"]["scores"]
    status, reopened = client.post("/api/open", {"log": json.loads(json.dumps(log))})
    assert status == 200 and reopened["mode"] == "replay" and reopened["moves"] == 0, reopened
    status, end = client.post("/api/advance", {"session": reopened["session"], "steps": 20000})
    assert status == 200 and end["done"] and end["result"] == view["result"], end
    watched = _new(client, game, seat=None)
    assert watched["moves"] == 0 and watched["can_advance"]
    status, stepped = client.post("/api/advance", {"session": watched["session"], "steps": 3, "expect_moves": 0})
    assert status == 200 and stepped["moves"] == 3 and len(stepped["log"]) == 3


def test_bad_requests_get_a_clear_error_and_change_nothing(client):
    game = GAMES["startups"]
    view = _new(client, game, seat=0)
    session = view["session"]
    legal = {a["id"] for a in view["legal"]}
    illegal = next(a for a in range(game.num_actions) if a not in legal)
    cases = [
        ("POST", "/api/act", {"session": session, "action": illegal}, 400, "is not legal now"),
        ("POST", "/api/act", {"session": session, "action": 999}, 400, "is not legal now"),
        ("POST", "/api/act", {"session": session, "action": "draw"}, 400, "integer action id"),
        ("POST", "/api/act", {"session": session, "action": True}, 400, "integer action id"),
        ("POST", "/api/act", {"session": session, "action": 1.0}, 400, "integer action id"),
        ("POST", "/api/act", {"session": session}, 400, "lacks 'action'"),
        ("POST", "/api/act", {"session": session, "action": 0, "cheat": 1}, 400, "unknown fields ['cheat']"),
        ("POST", "/api/act", {"session": session, "action": min(legal), "expect_moves": 99}, 409, "reload"),
        ("POST", "/api/act", {"session": "nobody", "action": 0}, 404, "no game with session"),
        ("POST", "/api/act", [session, 0], 400, "must be a JSON object"),
        ("POST", "/api/advance", {"session": session, "steps": 0}, 400, "steps must be"),
        ("GET", "/api/act", None, 405, "does not take GET"),
        ("GET", "/api/nothing", None, 404, "no endpoint /api/nothing"),
        ("GET", "/static/../web.py", None, 404, "no file"),
        ("POST", "/api/new", {"game": "chess"}, 400, "unknown game 'chess'"),
        ("POST", "/api/new", {"game": "startups", "players": 9}, 400, "players must be an integer from 2 to 7"),
        ("POST", "/api/new", {"game": "startups", "players": 3, "seat": 3}, 400, "seat must be null"),
        ("POST", "/api/new", {"game": "startups", "bots": ["nobody"]}, 400, "unknown agent 'nobody'"),
        ("POST", "/api/new", {"game": "startups", "bots": ["random", "random"]}, 400, "1 or 3 bot names"),
        ("POST", "/api/new", {"game": "startups", "ruleset": "poker"}, 400, "ruleset must be one of"),
        ("POST", "/api/new", {"game": "startups", "turns": 3}, 400, "unknown fields ['turns']"),
        ("POST", "/api/open", {"log": {"format": "a shopping list"}}, 400, "not a game log"),
        ("POST", "/api/open", {"log": {**GameLog(3, [_deck()]).to_dict(), "actions": [5]}},
         400, "not legal"),
    ]
    for method, path, body, status, message in cases:
        got, answer = client.request(method, path, body)
        assert (got, message in answer.get("error", "")) == (status, True), (path, body, answer)
        assert client.get(f"/api/view?session={session}")[1] == view, (path, body)
    for raw, message in ((b"{not json", "not JSON"), (b"\xff\xfe", "not JSON")):
        got, answer = client.post("/api/act", raw=raw)
        assert got == 400 and message in answer["error"]
    got, answer = client.post("/api/act", raw=b"{}", headers={"Content-Length": str(MAX_BODY + 1)})
    assert got == 413 and "over" in answer["error"]
    # what a page of another site could send: a form's POST, a rebound host name
    got, answer = client.post("/api/act", {"session": session, "action": min(legal)},
                              headers={"Content-Type": "text/plain"})
    assert got == 415 and "must be JSON" in answer["error"]
    got, answer = client.get(f"/api/view?session={session}", headers={"Host": "evil.example:8000"})
    assert got == 403 and "evil.example" in answer["error"]
    assert client.get(f"/api/view?session={session}")[1] == view


def _deck():
    from startups_env.startups.state import shuffled_decks

    return shuffled_decks(np.random.default_rng(0), 1)[0].tolist()


def test_a_watched_table_takes_no_decision_and_a_finished_game_no_more(client):
    game = GAMES["startap"]
    watched = _new(client, game, seat=None)
    got, answer = client.post("/api/act", {"session": watched["session"], "action": 0})
    assert got == 409 and "watched" in answer["error"]
    view = _new(client, game, seat=0)
    web = client.table.sessions[view["session"]][0]
    web.play(next(a["id"] for a in view["legal"] if a["label"] == "done"))
    while not web.done:
        web.play(web.legal_actions()[0])
    before = client.get(f"/api/view?session={view['session']}")[1]
    got, answer = client.post("/api/act", {"session": view["session"], "action": 0})
    assert got == 409 and "over" in answer["error"]
    assert client.get(f"/api/view?session={view['session']}")[1] == before


def test_the_loopback_by_default_and_a_token_elsewhere():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    local = Client()
    try:
        assert local.server.server_address[0] == "127.0.0.1" and local.table.token is None
        assert local.get("/api/games")[0] == 200
    finally:
        local.close()
    wide = Client(host="0.0.0.0")
    try:
        token = wide.table.token
        assert token and len(token) >= 16 and url_of(wide.server, wide.table).endswith(f"?token={token}")
        for path, headers in (("/api/games", {}), ("/api/games?token=wrong", {}), ("/", {}),
                              ("/api/games", {"X-Token": token[:-1]})):
            got, answer = wide.get(path, headers=headers)
            assert got == 403 and "token" in answer["error"], path
        assert wide.get(f"/api/games?token={token}")[0] == 200
        assert wide.get("/api/games", headers={"X-Token": token})[0] == 200
    finally:
        wide.close()


def test_the_command_line_prints_where_to_open_it():
    out = io.StringIO()
    assert play_main(["--web", "--game", "startap", "--port", "0"], output=out, serve=lambda server: None) == 0
    assert "open http://127.0.0.1:" in out.getvalue() and "token" not in out.getvalue()
    out = io.StringIO()
    assert play_main(["--web", "--host", "0.0.0.0", "--port", "0"], output=out, serve=lambda server: None) == 0
    assert "?token=" in out.getvalue()
    out = io.StringIO()
    assert play_main(["--web", "--port", "-5"], output=out, serve=lambda server: None) == 2
    assert "error:" in out.getvalue()
    out = io.StringIO()
    assert play_main(["--game", "startap"], input_fn=lambda prompt: "quit", output=out) == 0  # the terminal game
    assert "You left the game." in out.getvalue()


class _Explaining:
    """A bot that gives a reason, as a bot may (docs/agents.md)."""

    name = "explaining"

    def act(self, obs, mask):
        action = mask.argmax(axis=1)
        self.last_reasons = [f"the first legal move, {int(action[0])}"]
        return action


def test_reasons_are_shown_where_asked_and_sealed_moves_stay_sealed():
    game = GAMES["startap"]
    rules = game.make_rules(3)
    shown = WebGame(game, rules, [None, _Explaining(), make_agent("random", seed=1, game="startap")],
                    ["you", "explaining", "random"], seed=2, reasons=True)
    hidden = WebGame(game, rules, [None, _Explaining(), make_agent("random", seed=1, game="startap")],
                     ["you", "explaining", "random"], seed=2)
    sealed = 0
    for web in (shown, hidden):
        while not web.done:
            web.play(web.legal_actions()[-1])
    for line, move in zip(shown.view()["log"], shown.moves[-len(shown.view()["log"]):]):
        assert ("reason" in line) == (move["seat"] == 1), line
    assert not any("reason" in line for line in hidden.view()["log"])
    for move in shown.moves:
        if move["seat"] != 0 and move["move"].startswith("put "):  # a sealed commitment to the pool
            sealed += 1
            assert move["shown"] in ("put …", HIDDEN_MOVE), move
    assert sealed, "no bot committed to a pool in this game: choose another seed"


def test_a_sale_is_named_because_the_sold_card_is_public_after_it():
    """A project card sold from the hand goes to the discard pile face up (docs/startap.md,
    decision 23), so every seat learns which card it was: the move is named to another seat
    even where the seller held several, since each choice leaves another observation."""
    game = GAMES["startap"]
    seen = 0
    for seed in range(3):
        web = WebGame(game, game.make_rules(3), [make_agent("random", seed=seed * 3 + k, game="startap")
                                                 for k in range(3)], ["a", "b", "c"], seed=seed)
        while not web.done:
            for sale in [a for a in web.legal_actions() if web.labels[a].startswith("sell project")]:
                seen += 1
                viewer = (web.to_act + 1) % web.players
                assert web.seen_as(viewer, sale) == web.labels[sale], (seed, web.moves[-3:])
            web.advance(1)
            if seen > 20:
                break
    assert seen, "no bot could sell a project card in these games: choose other seeds"
