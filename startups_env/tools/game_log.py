"""Game logs of any game (:mod:`startups_env.table.games`): record one game as its deal and
its decisions, save it as JSON, replay it through the game's simulator, and render it as a
standalone HTML page of the table after every decision (the game's ``render_text``).
*Startups*' own logs, with pictures and GIFs, are :mod:`startups_env.tools.replay`.

    log = record(game_by_name("startap"), [builder, "random", "random"], seed=3)
    save(log, "game.json"); sim = replay(load("game.json")); write_html(log, "game.html")

Command line: ``python -m startups_env.tools.game_log game.json --html game.html``.

The JSON layout (version 1)::

    {"format": "startups-env-game-log", "version": 1, "game": "startap", "num_players": 3,
     "settings": {"turn_cap": 60, "reward": "win"}, "deal": <the deck(s): a list, or a dict of lists>,
     "actions": [0, 12, ...], "players": ["builder", "random", "random"],
     "result": {"ranks": [...], "scores": [...]}}
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections.abc import Sequence

import numpy as np

from startups_env.game import Game, deal_rows
from startups_env.table.driver import Table
from startups_env.table.games import game_by_name
from startups_env.table.policy import policy_name
from startups_env.tools.cli import prog
from startups_env.tools.files import atomic_write

FORMAT, VERSION = "startups-env-game-log", 1


def record(game: Game, policies: Sequence, seed: int = 0, *, rules=None, max_decisions: int = 10_000) -> dict:
    """Play one game of ``game`` with ``policies`` (one per seat, as the table driver seats
    them), dealt from ``seed``; its log (a dict, the JSON layout of the module doc)."""
    sim, deal = deal_one(game, len(policies), seed, rules)
    table, actions = Table(sim, list(policies)), []
    while not sim.done[0]:
        if len(actions) >= max_decisions:
            raise ValueError(f"the game did not end within {max_decisions} decisions")
        chosen = table.act()
        actions.append(int(chosen[0]))
        table.step(chosen)
    return log_of(game, sim, deal, actions, [policy_name(p) for p in policies])


def deal_one(game: Game, players: int, seed, rules=None):
    """(a simulator of one game of ``game`` dealt from ``seed``, that deal as a log keeps it)."""
    rules = game.make_rules(players) if rules is None else game.check_rules(rules)
    deal = deal_rows(game.shuffled_decks(np.random.default_rng(seed), 1, rules), 0)
    return game.make_simulator(rules, 1, seed, _batch(deal)), deal


def log_of(game: Game, sim, deal, actions: Sequence[int], players: Sequence[str]) -> dict:
    """The log of the game ``sim`` (one game, dealt ``deal``) after ``actions``; its result
    once it is over."""
    rules = sim.rules
    return {"format": FORMAT, "version": VERSION, "game": game.name, "num_players": int(sim.state.num_players[0]),
            "settings": {"turn_cap": int(rules.turn_cap), "reward": str(rules.reward)},
            "deal": _plain(deal), "actions": [int(a) for a in actions], "players": list(players),
            "result": _result(game, sim) if sim.done[0] else None}


def _plain(deal):
    return {name: np.asarray(rows).tolist() for name, rows in deal.items()} if isinstance(deal, dict) \
        else np.asarray(deal).tolist()


def _batch(deal):
    """A deal of one game as the simulator takes a batch of them."""
    return {name: np.asarray(rows)[None] for name, rows in deal.items()} if isinstance(deal, dict) \
        else np.asarray(deal)[None]


def _result(game: Game, sim) -> dict:
    out = game.outcome(sim.state)
    n = int(sim.state.num_players[0])
    return {"ranks": np.asarray(out["ranks"])[0, :n].tolist(), "scores": np.asarray(out["scores"])[0, :n].tolist()}


def save(log: dict, path) -> None:
    """Write ``log`` as JSON (atomically)."""
    data = json.dumps(log, ensure_ascii=False).encode()
    atomic_write(path, lambda f: f.write(data))


def load(path) -> dict:
    """A log written by :func:`save`; ValueError if the file is not one."""
    with open(path, encoding="utf-8") as f:
        log = json.load(f)
    if not isinstance(log, dict) or log.get("format") != FORMAT or log.get("version") != VERSION:
        raise ValueError(f"{path} is not a {FORMAT} file of version {VERSION}")
    return log


def frames(log: dict):
    """(the decision that led here or None, the simulator) after the deal and after each
    decision of ``log``; ValueError naming the first decision the game refuses, or a
    result that differs from the log's."""
    game = game_by_name(log["game"])
    rules = game.make_rules(int(log["num_players"]), **log["settings"])
    sim = game.make_simulator(rules, 1, None, _batch(log["deal"]))
    yield None, sim
    for k, action in enumerate(log["actions"]):
        seat = int(sim.state.current[0])
        try:
            sim.step(np.array([action]))
        except ValueError as exc:
            raise ValueError(f"decision {k} of the log (player_{seat}: {action}) is refused: {exc}") from None
        yield (seat, int(action)), sim
    if log.get("result") is not None and _result(game, sim) != log["result"]:
        raise ValueError(f"the replayed result {_result(game, sim)} differs from the log's {log['result']}")


def replay(log: dict):
    """The game's simulator at the end of ``log`` (checked as :func:`frames` does)."""
    for _step, sim in frames(log):
        pass
    return sim


def html_page(log: dict, viewer: int | None = None) -> str:
    """A standalone HTML page: the table before the first decision and after each one."""
    game = game_by_name(log["game"])
    players = log.get("players") or [f"player_{i}" for i in range(log["num_players"])]
    parts = [f"<!doctype html><meta charset='utf-8'><title>{html.escape(game.title)}</title>",
             f"<h1>{html.escape(game.title)}: {html.escape(', '.join(players))}</h1>"]
    for k, (step, sim) in enumerate(frames(log)):
        head = "the deal" if step is None else \
            f"{k}. player_{step[0]} ({html.escape(players[step[0]])}): {html.escape(game.action_to_string(step[1]))}"
        text = game.render_text(sim.state, 0, viewer)
        parts.append(f"<details{' open' if step is None else ''}><summary>{head}</summary><pre>{html.escape(text)}</pre></details>")
    parts.append(f"<p>result: ranks {(log.get('result') or {}).get('ranks', 'none: the game was left')}</p>")
    return "\n".join(parts)


def write_html(log: dict, path, viewer: int | None = None) -> None:
    data = html_page(log, viewer).encode()
    atomic_write(path, lambda f: f.write(data))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog("startups_env.tools.game_log"), description=__doc__.split("\n\n")[0])
    parser.add_argument("log", help="a game log JSON (save)")
    parser.add_argument("--html", help="write a standalone HTML replay here")
    parser.add_argument("--viewer", type=int, default=None, help="show only this seat's hand (default: every hand)")
    args = parser.parse_args(argv)
    try:
        log = load(args.log)
        sim = replay(log)
        if args.html:
            write_html(log, args.html, args.viewer)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{log['game']}: {len(log['actions'])} decisions replayed, ranks {(log['result'] or {}).get('ranks')}"
          f"{', HTML in ' + args.html if args.html else ''}; done: {bool(sim.done[0])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
