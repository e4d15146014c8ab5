"""The terminal game (startups_env.agents.play), driven by scripted input."""

import io
import itertools
import os
import subprocess
import sys

import pytest
from startups_env.agents.play import main, parse_move

from startups_env.startups.rules import NUM_ACTIONS, action_to_string
from startups_env.tools.replay import GameLog, replay

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Bad entries first, then every move name: each decision is answered by the first legal one.
SCRIPT = ["", "bogus", "99", "take", "-3", "help", "table"] + [action_to_string(a) for a in range(NUM_ACTIONS)]


def _play(argv, script=SCRIPT):
    feed = itertools.cycle(script)
    prompts = []

    def input_fn(prompt):
        prompts.append(prompt)
        return next(feed)

    out = io.StringIO()
    rc = main(argv, input_fn=input_fn, output=out)
    return rc, out.getvalue(), prompts


def test_parse_move():
    legal = [0, 4, 5]
    assert parse_move("0", legal) == 0
    assert parse_move(" Take Octo ", legal) == 4
    assert parse_move("t oc", legal) == 4
    assert parse_move("t h", legal) == 5
    assert parse_move("d", legal) == 0
    for text, message in [
        ("", "type a move"),
        ("7", r"7 \(keep giraffe\) is not legal now; legal: 0 draw, 4 take octo, 5 take hippo"),
        ("42", "there is no move 42"),
        ("take giraffe", "take giraffe is not legal now"),
        ("fly", "unknown move 'fly'"),
        ("take", "unknown move"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_move(text, legal)


def test_scripted_full_game_with_bad_input(tmp_path):
    save = tmp_path / "game.json"
    rc, out, prompts = _play(
        ["--players", "4", "--opponents", "random,greedy,random", "--seat", "1", "--seed", "7", "--save", str(save)]
    )
    assert rc == 0
    assert "=== Game over ===" in out and "Final scoring" in out
    for message in ("! type a move", "! unknown move 'bogus'", "! there is no move 99", "is not legal now"):
        assert message in out
    assert out.count("Enter a move by number or name") > 1  # 'help' shows the help again
    assert prompts and all(p == "your move> " for p in prompts)
    # The human's view never lists another seat's hand.
    assert "your hand (P1)" in out and "hand P0:" not in out
    # The table explains its marks: the seat to act, the human's seat, the company sizes.
    assert "key: " in out and "P1* you" in out and "cards in the game" in out
    # Opponents are announced by seat and name; the result names the human's place.
    assert "P0 (random): " in out and "P2 (greedy): " in out
    log = GameLog.load(save)
    assert log.players == ["random", "you", "greedy", "random"]
    sim = replay(log)
    s = sim.state
    place = {0: "1st", 1: "2nd", 2: "3rd", 3: "4th"}[int(s.ranks[1, 0])]
    assert f"You (P1) finished {place} of 4 with {int(s.scores[1, 0])} points." in out
    # Same seed, same script: the same game.
    assert _play(["--players", "4", "--opponents", "random,greedy,random", "--seat", "1", "--seed", "7"])[1] == (
        out.replace(f"game log saved to {save} (replay: python -m startups_env.tools.replay {save})\n", "")
    )


def test_a_search_opponent_reads_your_moves_as_in_any_other_driver(tmp_path):
    """The search bot at the terminal table is given the table's history, your moves
    included: re-recorded with the same seeds and your moves, it plays the same game."""
    import numpy as np
    from startups_env.agents import make_agent

    from startups_env.tools.replay import iter_replay, record_game

    search = "search[determinizations=2;max_candidates=2;halving_rounds=1]"
    save = tmp_path / "game.json"
    rc, out, _ = _play(["--players", "3", "--opponents", f"{search},random", "--seed", "5", "--save", str(save)])
    assert rc == 0 and "=== Game over ===" in out
    log = GameLog.load(save)
    yours = iter([action for _, action, sim in iter_replay(log) if action is not None and sim.state.current[0] == 0])
    # The bots' seeds, as the terminal game derives them from --seed.
    seeds = [int(child.generate_state(1)[0]) for child in np.random.SeedSequence(5).spawn(3)[1:]]
    bots = [make_agent("search", seed=seeds[0], determinizations=2, max_candidates=2, halving_rounds=1),
            make_agent("random", seed=seeds[1])]
    again = record_game([lambda obs, mask: np.array([next(yours)])] + bots, log.rules, decks=log.decks)
    assert again.actions == log.actions and again.result == log.result


def test_numbers_are_canonical_ids():
    # Answer every decision with the ids 0..18 in turn: the first legal one is played.
    rc, out, _ = _play(["--players", "2", "--opponents", "random", "--seed", "1"], [str(a) for a in range(NUM_ACTIONS)])
    assert rc == 0 and "=== Game over ===" in out
    assert "you: draw (" in out  # the human sees the card they drew


def test_quit_and_end_of_input_leave_cleanly(tmp_path):
    rc, out, _ = _play(
        ["--players", "3", "--opponents", "random", "--seed", "2", "--save", str(tmp_path / "q.json")], ["draw", "quit"]
    )
    assert rc == 0 and "You left the game." in out and "Game over" not in out
    partial = GameLog.load(tmp_path / "q.json")
    assert partial.result is None and partial.actions[0] == 0
    assert not replay(partial).state.done[0]

    def eof(prompt):
        raise EOFError

    out = io.StringIO()
    assert main(["--players", "3", "--opponents", "random", "--seed", "2"], input_fn=eof, output=out) == 0
    assert "You left the game." in out.getvalue()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--players", "4", "--opponents", "random,random"], "needs 1 or 3 names"),
        (["--players", "3", "--opponents", "nobody"], "unknown agent 'nobody'"),
        (["--players", "3", "--seat", "3"], "--seat must be in 0..2"),
        (["--players", "8"], "argument --players: players must be between 2 and 7, got [8]"),
        (["--players", "3-4"], "argument --players: this tool plays one table size at a time, got '3-4'"),
        (["--players", "3", "--opponents", "random[speed=3]"], "unknown setting 'speed'; the settings of 'random' are none"),
        # argparse's own checks: reported the same way, not by exiting the caller's process
        (["--players", "x"], "argument --players: players must look like '4', '3-7' or '3,4,6', got 'x'"),
        (["--rounds", "2"], "argument --rounds: invalid choice: 2"),
        (["--speed", "3"], "unrecognized arguments: --speed 3"),
    ],
)
def test_bad_arguments(argv, message):
    out = io.StringIO()
    assert main(argv, input_fn=lambda p: "quit", output=out) == 2
    assert message in out.getvalue()


def test_command_line_with_stdin():
    lines = "\n".join(SCRIPT * 60) + "\n"
    proc = subprocess.run(
        [sys.executable, "-m", "startups_env.agents.play", "--players", "3", "--opponents", "random", "--seed", "3", "--seat", "2"],
        check=False,
        input=lines,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "=== Game over ===" in proc.stdout and "You (P2) finished" in proc.stdout
    # Input that ends mid-game exits cleanly too.
    proc = subprocess.run(
        [sys.executable, "-m", "startups_env.agents.play", "--players", "3", "--opponents", "random"],
        check=False,
        input="draw\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0 and "You left the game." in proc.stdout and not proc.stderr


def test_save_path_is_checked_before_the_game(tmp_path):
    # A log that cannot be written must be refused up front, not after a whole game.
    for path, message in [(tmp_path / "missing" / "g.json", "no such folder"), (tmp_path, "is a folder")]:
        out = io.StringIO()
        assert main(["--players", "3", "--opponents", "random", "--save", str(path)],
                    input_fn=lambda p: "quit", output=out) == 2
        assert f"--save {path}: {message}" in out.getvalue()
        assert "Startups: 3 players" not in out.getvalue()


def test_round_game_result_names_round_points():
    rc, out, _ = _play(["--players", "3", "--opponents", "random", "--seed", "1", "--rounds", "4"],
                       [str(a) for a in range(NUM_ACTIONS)])
    assert rc == 0 and "=== Game over ===" in out
    final = out.split("=== Game over ===")[1].splitlines()
    points = next(ln for ln in final if ln.startswith("round points")).rsplit("|", 1)[1].split()
    ranks = next(ln for ln in final if ln.startswith("final rank")).rsplit("|", 1)[1].split()
    # The round game is ranked by round points, not by the last round's score.
    assert f"You (P0) finished {ranks[0]} of 3 with {points[0]} round points" in out
