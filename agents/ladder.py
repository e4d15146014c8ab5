"""The baseline ladder: every bot against every style, at a few table sizes.

    python -m startups_env.agents.ladder --players 3,4,6 --games 2000 --search-games 400 --seed 1 [--json ladder.json] [--csv ladder.csv]
    python -m startups_env.agents.ladder --heroes greedy,noisy --styles random,hoarder --players 4 --games 1000 --seed 1
    python -m startups_env.agents.ladder --hero ppo --players 3,4,6 --games 2000 --seed 1

A *pairing* is a hero against N-1 copies of one opponent *style*. The ladder plays every
hero of ``--heroes`` (default :data:`HEROES`: every rule-based bot and the search) against
every style of ``--styles`` (default :data:`STYLES`: every rule-based bot), the hero
against its own style included (self-play, where stalling would show), at each table size
of ``--players``. ``--hero`` and ``--opponents`` are the same options under their older
names (one hero, e.g. an outside bot or the shipped PPO policy, against every style).

Each pairing is one :func:`startups_env.agents.arena.run_arena` tournament (seat-rotated
duplicate deals). Reported per pairing: the hero's win rate with its 95% CI (the fair
share is 1/N), mean rank, its rating relative to the opponent's copies (below), the share
of games that hit the turn cap, and for a searching bot (ours, or OpenSpiel's IS-MCTS,
``openspiel:ismcts[...]``) its time per decision (arena wall time / its decisions, the
figure that counts on a shared machine, and CPU time inside ``act``). After the pairings of a table size it prints the **matrix**: the hero's win rate
[95% CI] per hero (rows) and opponent style (columns), which ``--json`` holds too (key
``"matrix"``, one entry per table size) and ``--csv`` writes (a row per table size and
hero). Pairings with a searching bot, the slow ones, play ``--search-games`` games (0 skips
them: their cells stay empty); the others ``--games``.

Ratings (:mod:`startups_env.agents.ratings`: Plackett-Luce maximum likelihood over all
games, Elo-like points, 95% bootstrap intervals over whole deals): a pairing's rating is
the hero's rating minus that of the opponent, whose N-1 copies share one strength (0 for
an even match, as in self-play). After the pairings of a table size, one fit of all their
games rates each bot by name (copies pooled, mean bot 0): the ladder's ranking at that
table size.

``--workers N`` / ``--ray-address ADDR`` play each arena run's shards on Ray workers (one
Ray instance for the whole ladder); the same seed gives the same ladder for every count of
workers (:mod:`startups_env.tools.distributed`, docs/distributed.md).

``--resume DIR`` makes a long ladder survive its process: each pairing's arena result is
saved in DIR (JSON, written atomically) as soon as it is played, and a later run with the
same DIR loads the pairings saved there instead of playing them, so it prints and writes
what an uninterrupted run would (the loaded pairings' wall and decision times are the
stored ones). A file is found by everything that decides its result (table size, hero,
opponent, games, seed, rounds, turn cap, shard size); one that cannot be read or holds
another pairing is an error before any game is played. The files do not record the bots'
code: use a new DIR after changing a bot.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import io
import json
import os
import re
import sys

import numpy as np

from startups_env.table.games import DEFAULT_GAME, game_by_name
from startups_env.tools.cli import PLAYERS_FORMS, add_game_argument, add_rules_argument, players_arg, prog
from startups_env.tools.distributed import Workers, add_worker_arguments, workers_from_args
from startups_env.tools.files import atomic_write

from .arena import SHARD_GAMES, ArenaResult, add_traceback_argument, check_output_path, command_line_error, run_arena
from .ratings import format_rating, rate
from .registry import parse_agent_spec, split_names

#: The heroes of the default ladder: every rule-based bot, then the search bot.
HEROES = ("random", "greedy", "banker", "hoarder", "spoiler", "noisy", "search")
#: The opponent styles of the default ladder (each plays N-1 copies of itself).
STYLES = ("random", "greedy", "banker", "hoarder", "spoiler", "noisy")


def matrix_pairings(heroes, styles) -> tuple[tuple[str, str], ...]:
    """(hero, opponent) pairings of every hero against every style, hero by hero."""
    return tuple((hero, style) for hero in heroes for style in styles)


#: (hero, opponent) pairings of the default ladder; "search" games are the expensive ones.
PAIRINGS = matrix_pairings(HEROES, STYLES)
#: The default heroes and styles of each game's ladder.
LADDER_BOTS = {"startups": (HEROES, STYLES),
               "startap": (("random", "builder", "outsourcer", "freerider"),
                           ("random", "builder", "outsourcer", "freerider"))}


def default_pairings(game: str = DEFAULT_GAME) -> tuple[tuple[str, str], ...]:
    """The pairings of ``game``'s default ladder (:data:`LADDER_BOTS`)."""
    heroes, styles = LADDER_BOTS[game_by_name(game).name]
    return matrix_pairings(heroes, styles)


def run_ladder(players: list[int], games: int, search_games: int, seed: int, progress: bool = False,
               pairings=PAIRINGS, workers: int | Workers | None = None, ray_address: str | None = None,
               resume: str | None = None, ruleset: str = "rulebook", game: str = DEFAULT_GAME) -> dict:
    """Play the pairings at each table size. Returns ``{"pairings": [row, ...], "ratings":
    [row, ...], "matrix": [table, ...]}``: one row per pairing played, one per bot and table
    size (the joint fit of that size's games), and one :func:`ladder_matrix` table per
    table size; each is also printed as it is done.

    workers, ray_address: where each arena run's shards are played (see
    :func:`startups_env.agents.arena.run_arena`); one Ray instance serves every pairing.
    resume: a folder (made if missing) where each pairing's ArenaResult is saved as soon
        as it is played (:func:`save_pairing`); pairings already saved there are loaded
        instead, with their stored wall and decision times, so the returned ladder is
        that of an uninterrupted run. Every file needed is checked before any game: one
        that cannot be read or holds another pairing is a ValueError.
    ruleset: the options of play (``Rules.preset``): a preset name or a list of options.
    game: the game played, by name (:mod:`startups_env.table.games`); the default pairings
    are *Startups*' (:func:`default_pairings` gives another game's)."""
    game = game_by_name(game).name
    rules = game_by_name(game).make_rules(min(players), ruleset=ruleset)  # (checked before any game)
    ruleset = getattr(rules, "ruleset", ruleset)  # (named as Rules names it)
    if resume is not None:
        problem = check_output_path(os.path.join(resume, "pairing.json"))
        if problem:
            raise ValueError(f"resume folder {resume}: {problem}")
    pool = workers if isinstance(workers, Workers) else Workers(workers, ray_address)
    with pool if pool is not workers else contextlib.nullcontext():
        return _run_ladder(players, games, search_games, seed, progress, pairings, pool, resume, ruleset, game)


def _run_ladder(players, games, search_games, seed, progress, pairings, pool: Workers, resume, ruleset, game) -> dict:
    keys = {n: pairing_keys(n, pairings, games, search_games, seed, pool.sharded, ruleset, game) for n in players}
    saved = _load_saved(resume, [key for n in keys for key in keys[n]]) if resume is not None else {}
    rows, ladder, matrices = [], [], []
    widths = (max([7] + [len(hero) for hero, _ in pairings]), max([7] + [len(opponent) for _, opponent in pairings]))
    for n in players:
        played = []  # (names of the entries, arena result) of this table size
        for key in keys[n]:
            result = _pairing_result(key, saved, resume, progress, pool)
            played.append(([key["hero"]] + [key["opponent"]] * (n - 1), result))
            row = _pairing_row(key["hero"], key["opponent"], result, seed)
            rows.append(row)
            print(_format(row, *widths), flush=True)
        if played:
            table = ladder_ratings(played, seed)
            ladder.extend(table)
            print(_format_ladder(n, table), flush=True)
            matrix = ladder_matrix([row for row in rows if row["players"] == n], pairings, n)
            matrices.append(matrix)
            print(format_matrix(matrix), flush=True)
    return {"pairings": rows, "ratings": ladder, "matrix": matrices}


def pairing_keys(players: int, pairings, games: int, search_games: int, seed: int, sharded: bool,
                 ruleset: str = "rulebook", game: str = DEFAULT_GAME) -> list[dict]:
    """The pairings played at one table size, in order, each as the dict of everything that
    decides its ArenaResult (its key in a resume folder); those sized 0 games are left out.
    sharded: workers were asked for, so each arena run plays shards of SHARD_GAMES games.
    ruleset: the options of play, recorded in the key unless they are the rulebook's; game:
    recorded unless it is *Startups* (so that older keys read as before)."""
    rules = game_by_name(game).make_rules(players, ruleset=ruleset)
    keys = []
    for hero, opponent in pairings:
        count = search_games if _is_search(hero) or _is_search(opponent) else games
        if count > 0:
            keys.append({"players": players, "hero": hero, "opponent": opponent, "games": count, "seed": seed,
                         "rounds": getattr(rules, "rounds", 1), "turn_cap": rules.turn_cap,
                         "shard_games": SHARD_GAMES if sharded else None})  # None: one shard of every game
        if count > 0 and getattr(rules, "option_bits", 0):  # (a rulebook key reads as before the options existed)
            keys[-1]["rules"] = rules.ruleset
        if count > 0 and game != DEFAULT_GAME:
            keys[-1]["game"] = game
    return keys


def _pairing_result(key: dict, saved: dict, resume: str | None, progress: bool, pool: Workers) -> ArenaResult:
    """The pairing's result: loaded from ``saved`` if there, else played (and saved in ``resume``)."""
    path = None if resume is None else pairing_path(resume, key)
    if path in saved:
        return saved[path]
    n = key["players"]
    game = game_by_name(key.get("game", DEFAULT_GAME))
    settings = {"turn_cap": key["turn_cap"], **({"rounds": key["rounds"]} if key["rounds"] != 1 else {})}
    rules = game.make_rules(n, ruleset=key.get("rules"), **settings)
    result = run_arena([key["hero"]] + [key["opponent"]] * (n - 1), n, key["games"], seed=key["seed"],
                       progress=progress, rate=False, workers=pool, rules=rules, game=game)
    if path is not None:
        save_pairing(path, key, result)
    return result


def _pairing_row(hero: str, opponent: str, result: ArenaResult, seed: int) -> dict:
    n = result.players
    stats = result.entry_stats()[0]
    # Entry 0 is the hero (role 0), the N-1 copies of the opponent share role 1.
    ratings = rate(result.ranks, entries=[0] + [1] * (n - 1), groups=result.deals,
                   seed=np.random.SeedSequence(seed, spawn_key=(n + 1,)))
    points, lo, hi = ratings.difference(0, 1)
    row = {
        "players": n,
        "hero": hero,
        "opponent": opponent,
        "games": result.games,
        "win_rate": stats["win_rate"],
        "win_ci": stats["win_ci"],
        "mean_rank": stats["mean_rank"],
        "rating": points,
        "rating_ci": [lo, hi],
        "truncated_share": result.truncated_games / result.games,
        "wall_seconds": result.wall_seconds,
    }
    if _is_search(hero):
        row["wall_per_decision"] = result.wall_seconds / max(stats["decisions"], 1)
        row["act_per_decision"] = stats["seconds_per_decision"]
        row["batch_games"] = result.batch_games  # what the time per decision depends on (0: not recorded)
    return row


def pairing_path(folder: str, key: dict) -> str:
    """The file of a pairing in a resume folder: a readable stem (specs may hold ``[]=;:/``,
    so only letters and digits are kept) and a hash of the whole key, which tells apart
    pairings whose stems are alike."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    stem = re.sub(r"[^A-Za-z0-9]+", "-", f"{key['players']}p {key['hero']} vs {key['opponent']}").strip("-")
    return os.path.join(folder, f"{stem[:60]}-{digest}.json")


def save_pairing(path: str, key: dict, result: ArenaResult) -> None:
    """Write a pairing's key and ArenaResult as JSON, atomically and flushed to disk (a
    crash right after must leave the file whole: the next run trusts it)."""
    atomic_write(path, lambda f: json.dump({"key": key, "result": result.to_record()}, f), binary=False,
                 durable=True, make_folders=True)


def load_pairing(path: str, key: dict) -> ArenaResult:
    """The ArenaResult saved by :func:`save_pairing` at ``path``. A ValueError naming the
    file if it cannot be read or holds a pairing other than ``key``: replaying it quietly
    would hide a broken folder, using it would mix another pairing into the ladder."""
    try:
        with open(path, encoding="utf-8") as f:
            saved = json.load(f)
        stored, result = saved["key"], ArenaResult.from_record(saved["result"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"resume file {path} cannot be read ({type(exc).__name__}: {exc}); "
                         "delete it to play that pairing again") from exc
    if stored != key:
        raise ValueError(f"resume file {path} holds the pairing {stored}, not {key}")
    return result


def _load_saved(folder: str, keys: list[dict]) -> dict[str, ArenaResult]:
    """The results of ``keys`` already saved in ``folder``, by path; all checked up front,
    so that a bad file stops the ladder before any game rather than after hours of them."""
    paths = [pairing_path(folder, key) for key in keys]
    saved = {path: load_pairing(path, key) for path, key in zip(paths, keys) if os.path.exists(path)}
    print(f"resume {folder}: {len(saved)} of {len(set(paths))} pairings loaded, the rest to play",
          file=sys.stderr, flush=True)
    return saved


def ladder_matrix(rows: list[dict], pairings, players: int) -> dict:
    """The win rates of one table size's pairing ``rows`` as a matrix: heroes (rows) by
    opponent styles (columns), each in the order it first appears in ``pairings``. Returns
    ``{"players", "heroes", "styles", "win_rate", "win_ci", "games"}``, the last three
    lists of rows, one entry per style: None where the pairing was not played (a search
    pairing with ``search_games`` 0, or one not in ``pairings``)."""
    heroes = list(dict.fromkeys(hero for hero, _ in pairings))
    styles = list(dict.fromkeys(style for _, style in pairings))
    cell = {(row["hero"], row["opponent"]): row for row in rows if row["players"] == players}

    def grid(key):
        return [[cell[hero, style][key] if (hero, style) in cell else None for style in styles] for hero in heroes]

    return {"players": players, "heroes": heroes, "styles": styles, "win_rate": grid("win_rate"),
            "win_ci": grid("win_ci"), "games": grid("games")}


def format_matrix(matrix: dict) -> str:
    """The matrix as text: one line per hero, a ``win rate [95% CI]`` column per style."""
    n = matrix["players"]
    width = max(7, *(len(hero) for hero in matrix["heroes"]))
    cells = 21
    lines = [f"{n}p  win rate of each hero (rows) against {n - 1} copies of each style (columns), "
             f"95% Wilson CI; fair share {1 / n:.3f}",
             f"{n}p  {'':>{width}}  " + "  ".join(f"{style:>{cells}}" for style in matrix["styles"]) + "  games"]
    for i, hero in enumerate(matrix["heroes"]):
        texts = []
        for share, ci in zip(matrix["win_rate"][i], matrix["win_ci"][i]):
            texts.append("-" if share is None else f"{share:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]")
        counts = sorted({g for g in matrix["games"][i] if g is not None})
        lines.append(f"{n}p  {hero:>{width}}  " + "  ".join(f"{t:>{cells}}" for t in texts) + "  "
                     + ("/".join(str(g) for g in counts) or "-"))
    return "\n".join(lines)


def matrix_csv(matrices: list[dict]) -> str:
    """The matrices as CSV: one row per table size and hero; for each style its win rate,
    the 95% CI's bounds and the games played (empty where the pairing was not played)."""
    styles = list(dict.fromkeys(style for m in matrices for style in m["styles"]))
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["players", "hero"] + [f"{style} {key}" for style in styles
                                           for key in ("win_rate", "win_ci_lo", "win_ci_hi", "games")])
    for m in matrices:
        for i, hero in enumerate(m["heroes"]):
            row = [m["players"], hero]
            for style in styles:
                j = m["styles"].index(style) if style in m["styles"] else None
                share = None if j is None else m["win_rate"][i][j]
                if share is None:
                    row += ["", "", "", ""]
                else:
                    row += [share, m["win_ci"][i][j][0], m["win_ci"][i][j][1], m["games"][i][j]]
            writer.writerow(row)
    return buf.getvalue()


#: The bots whose pairings are the slow ones, sized by ``search_games`` and timed.
SLOW_BOTS = ("search", "openspiel:ismcts")


def _is_search(spec: str) -> bool:
    """Whether a spec is one of the searching bots (:data:`SLOW_BOTS`: our search,
    OpenSpiel's IS-MCTS), with or without settings (``search[determinizations=8]``): its
    pairings are the slow ones, sized by ``search_games``, and its time per decision is
    reported."""
    return parse_agent_spec(spec)[0] in SLOW_BOTS


def ladder_ratings(played, seed: int) -> list[dict]:
    """One Plackett-Luce fit of the games of several arena runs at one table size, each
    bot rated by name (copies of a bot in a game share its strength); bootstrap over the
    deals of every run. ``played``: (the runs' entry names, their ArenaResult) pairs.
    Rows sorted by rating, best first."""
    names = sorted({name for entry_names, _ in played for name in entry_names})
    index = {name: i for i, name in enumerate(names)}
    ranks = np.concatenate([result.ranks for _, result in played])
    entries = np.concatenate([np.broadcast_to([index[name] for name in entry_names], result.ranks.shape)
                              for entry_names, result in played])
    # Deal labels run on from one arena run to the next: the runs' deals are different deals.
    first_deal = np.cumsum([0] + [result.games // result.players for _, result in played])
    groups = np.concatenate([first_deal[k] + result.deals for k, (_, result) in enumerate(played)])
    players = played[0][1].players
    ratings = rate(ranks, entries=entries, num_entries=len(names), groups=groups,
                   seed=np.random.SeedSequence(seed, spawn_key=(players + 2,)))
    intervals = ratings.intervals
    rows = [{"players": players, "name": name, "rating": float(ratings.points[i]),
             "rating_ci": [float(x) for x in intervals[i]], "games": int((entries == i).any(axis=1).sum())}
            for i, name in enumerate(names)]
    return sorted(rows, key=lambda row: -row["rating"])


def _format_ladder(players: int, rows: list[dict]) -> str:
    """The ladder's ratings at one table size, one aligned row per bot, whatever the names' lengths."""
    lines = [f"{players}p  ladder ratings (one fit of the games above; Elo-like points, mean bot 0, "
             "95% bootstrap CI over deals):"]
    ratings = [format_rating(row["rating"], row["rating_ci"]) for row in rows]
    name_width = max(7, *(len(row["name"]) for row in rows))
    rating_width = max(len(text) for text in ratings)
    for row, rating in zip(rows, ratings):
        lines.append(f"{players}p  {row['name']:>{name_width}}  {rating:>{rating_width}}  games {row['games']}")
    return "\n".join(lines)


def _format(row: dict, hero_width: int = 7, opponent_width: int = 7) -> str:
    """A pairing's line; the widths (the longest hero's and opponent's names) align the lines."""
    lo, hi = row["win_ci"]
    text = (f"{row['players']}p  {row['hero']:>{hero_width}} vs {row['players'] - 1} x "
            f"{row['opponent']:<{opponent_width}} "
            f"win {row['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] (fair {1 / row['players']:.3f})  "
            f"rank {row['mean_rank']:.2f}  rating {format_rating(row['rating'], row['rating_ci'])}  "
            f"capped {100 * row['truncated_share']:.2f}%  "
            f"games {row['games']}  wall {row['wall_seconds']:.1f}s")
    if "wall_per_decision" in row:
        batch = f", {row['batch_games']} games at once" if row.get("batch_games") else ""
        kind = parse_agent_spec(row["hero"])[0].removeprefix("openspiel:")
        text += f"  {kind} {1000 * row['wall_per_decision']:.1f} ms/decision (wall{batch})"
    return text


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog=prog("startups_env.agents.ladder"), description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=players_arg, default="3,4,6", help=f"table sizes: {PLAYERS_FORMS}")
    p.add_argument("--games", type=int, default=2000, help="games per pairing of rule-based bots")
    p.add_argument("--search-games", type=int, default=400,
                   help="games per pairing with a searching bot, search or openspiel:ismcts (0: skip)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="write the pairings, ratings and matrices as JSON here")
    p.add_argument("--csv", help="write the matrices as CSV here (a row per table size and hero)")
    p.add_argument("--heroes", "--hero", dest="heroes", default=None,
                   help="comma-separated heroes, any agent specs (e.g. ppo, ppo:PATH or an outside bot's "
                        f"mybot:make_bot); default {','.join(HEROES)} (Стартап: its bots)")
    p.add_argument("--styles", "--opponents", dest="styles", default=None,
                   help=f"comma-separated opponent styles; default {','.join(STYLES)} (Стартап: its bots)")
    add_game_argument(p)
    p.add_argument("--progress", action="store_true")
    p.add_argument("--resume", metavar="DIR",
                   help="save each pairing's result in DIR as soon as it is played, and load those already "
                        "there instead of playing them (same table size, specs, games, seed, rules and shard "
                        "size), so an interrupted ladder picks up where it stopped; a loaded pairing keeps the "
                        "wall and decision times it was played in. Use a new DIR after changing a bot")
    add_rules_argument(p)
    add_traceback_argument(p)
    add_worker_arguments(p)
    args = p.parse_args(argv)
    default_heroes, default_styles = LADDER_BOTS[args.game]
    heroes = split_names(args.heroes) if args.heroes is not None else list(default_heroes)
    styles = split_names(args.styles) if args.styles is not None else list(default_styles)
    if not heroes:
        p.error("--hero must name at least one agent (--heroes is its other name)")
    if not styles:
        p.error("--opponents must name at least one agent (--styles is its other name)")
    pairings = matrix_pairings(heroes, styles)
    for flag, path in (("--json", args.json), ("--csv", args.csv)):
        problem = check_output_path(path) if path else None
        if problem:
            p.error(f"{flag} {path}: {problem}")
    try:
        with workers_from_args(args) as pool:
            ladder = run_ladder(list(args.players), args.games, args.search_games, args.seed, progress=args.progress,
                                pairings=pairings, workers=pool, resume=args.resume, ruleset=args.rules,
                                game=args.game)
    except (ValueError, FileNotFoundError, ConnectionError) as exc:
        command_line_error(p, exc, args.traceback)
    if args.json:
        atomic_write(args.json, lambda f: json.dump(ladder, f, indent=2), binary=False, make_folders=True)
    if args.csv:
        atomic_write(args.csv, lambda f: f.write(matrix_csv(ladder["matrix"])), binary=False, make_folders=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
