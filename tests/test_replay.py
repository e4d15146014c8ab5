"""Game logs (startups_env.tools.replay): record, save/load, replay to the same end, HTML/GIF,
and clear errors for corrupt logs."""

import json
import os

import numpy as np
import pytest
from helpers import assert_states_equal, load_golden

from startups_env import Rules, Simulator
from startups_env.startups.render import CAPTION_HEIGHT, RGB_HEIGHT, RGB_WIDTH, table_rgb
from startups_env.startups.rules import Action
from startups_env.tools.replay import (
    GameLog,
    Recorder,
    describe_action,
    gif_frames,
    main,
    record_game,
    replay,
    replay_states,
    write_gif,
    write_html,
)

GOLDEN = load_golden()


def _html_frames(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start = text.index("const frames = ") + len("const frames = ")
    end = text.index(";\nlet i = 0")
    return json.loads(text[start:end].replace("<\\/", "</"))


@pytest.mark.parametrize("players, rounds", [(2, 1), (4, 1), (7, 1), (3, 4)])
def test_record_save_load_replay(tmp_path, players, rounds):
    log = record_game(None, Rules(num_players=players, rounds=rounds), seed=players)
    assert log.result is not None and log.result["terminated"]
    assert sorted(log.result["ranks"]) == list(range(players))
    path = tmp_path / "game.json"
    log.save(path)
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]  # no temporary left behind
    loaded = GameLog.load(path)
    assert loaded == log
    sim = replay(loaded)
    s = sim.state
    assert s.done[0]
    assert s.scores[:players, 0].tolist() == log.result["scores"]
    assert s.ranks[:players, 0].tolist() == log.result["ranks"]
    # Same seed, same game; the log is plain JSON.
    assert record_game(None, Rules(num_players=players, rounds=rounds), seed=players) == log
    assert json.loads(path.read_text())["actions"] == log.actions


def test_replay_reaches_the_recorded_state():
    rules = Rules(num_players=5)
    recorder = Recorder(rules, seed=11)
    rng = np.random.default_rng(0)
    while not recorder.done:
        recorder.step(int(recorder.sim.random_actions(rng=rng)[0]))
    assert_states_equal(replay(recorder.log).state, recorder.state)
    states = replay_states(recorder.log)
    assert len(states) == len(recorder.log.actions) + 1
    assert_states_equal(states[-1], recorder.state)
    fresh = Simulator(rules, 1, decks=[recorder.log.deck]).state
    assert_states_equal(states[0], fresh)


@pytest.mark.parametrize("index", range(0, 300, 3))
def test_golden_games_replay_from_logs(index):
    g = GOLDEN[index]
    log = GameLog.from_dict(g)  # the golden line format
    sim = replay(log)  # checks the stored result: scores, threes, exact ranks
    n = g["players"]
    assert sim.state.scores[:n, 0].tolist() == g["scores"]
    assert [int(r) for r in np.argsort(sim.state.ranks[:n, 0])] == g["ranking"]
    assert GameLog.from_json(log.to_json()) == log


def test_record_with_agents_and_callables():
    from startups_env.agents import act_for_seats, make_agent

    agents = [make_agent("random", seed=i) for i in range(3)]
    log = record_game(agents, Rules(num_players=3), seed=5)
    assert log.players == ["random"] * 3
    assert replay(log).state.done[0]
    # The same agents driven through a callable (startups_env.agents.base.act_for_seats) play the same game.
    fresh = [make_agent("random", seed=i) for i in range(3)]
    again = record_game(lambda sim: act_for_seats(sim, fresh)[0], Rules(num_players=3), seed=5)
    assert again.actions == log.actions and again.result == log.result
    with pytest.raises(ValueError, match="2 agents for 3 seats"):
        record_game(agents[:2], Rules(num_players=3), seed=5)


def test_unfinished_logs_replay_to_the_middle():
    log = record_game(None, Rules(num_players=4), seed=3, max_decisions=9)
    assert len(log.actions) == 9 and log.result is None
    sim = replay(GameLog.from_json(log.to_json()))
    assert not sim.done[0] and int(sim.state.turn[0]) == 4 and int(sim.state.phase[0]) == 1


# ------------------------------------------------------------------------- corrupt logs
def _good() -> GameLog:
    return record_game(None, Rules(num_players=3), seed=1)


def test_corrupt_json_and_fields(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "startups-game-log", "version": 1, "num_pla')
    with pytest.raises(ValueError, match="bad.json: game log is not valid JSON"):
        GameLog.load(path)
    data = _good().to_dict()
    for key, message in [("actions", "lacks actions"), ("decks", "lacks decks")]:
        broken = dict(data)
        del broken[key]
        with pytest.raises(ValueError, match=message):
            GameLog.from_dict(broken)
    with pytest.raises(ValueError, match="format"):
        GameLog.from_dict({**data, "format": "chess"})
    with pytest.raises(ValueError, match="version"):
        GameLog.from_dict({**data, "version": 99})
    with pytest.raises(ValueError, match="num_players must be between"):
        GameLog.from_dict({**data, "num_players": 9})
    with pytest.raises(ValueError, match="unknown rules fields"):
        GameLog.from_dict({**data, "rules": {"rounds": 1, "speed": 3}})
    with pytest.raises(ValueError, match="must be a JSON object"):
        GameLog.from_json("[1, 2]")
    with pytest.raises(ValueError, match=r"actions\[2\] must be an integer"):
        GameLog.from_dict({**data, "actions": [0, 7, "x"]})
    with pytest.raises(ValueError, match="action at index 1 is 19"):
        GameLog.from_dict({**data, "actions": [0, 19]})


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d[:-1], "must hold 45 cards, got 44"),
        (lambda d: [7] + d[1:], r"decks\[0\]\[0\] = 7 is not a company id"),
        (lambda d: [d[1]] + d[1:] if d[0] != d[1] else [(d[0] + 1) % 6] + d[1:], "cards, expected"),
    ],
)
def test_bad_deck(edit, message):
    data = _good().to_dict()
    data["decks"] = [edit(data["decks"][0])]
    with pytest.raises(ValueError, match=message):
        GameLog.from_dict(data)


def test_illegal_action_names_its_index():
    log = _good()
    bad = list(log.actions)
    k = 4  # a take-phase decision (turns are take, put)
    bad[k] = Action.KEEP  # a put-down id in the take phase
    with pytest.raises(ValueError, match=f"illegal action at index {k}: keep giraffe .* take phase; legal: "):
        replay(GameLog(**{**log.__dict__, "actions": bad, "result": None}))


def test_actions_after_the_end_and_wrong_results():
    log = _good()
    with pytest.raises(ValueError, match=f"ended after {len(log.actions)} actions"):
        replay(GameLog(**{**log.__dict__, "actions": log.actions + [0]}))
    scores = list(log.result["scores"])
    scores[0] += 1
    with pytest.raises(ValueError, match="does not match the log's result: scores"):
        replay(GameLog(**{**log.__dict__, "result": {**log.result, "scores": scores}}))
    with pytest.raises(ValueError, match="not over"):
        replay(GameLog(**{**log.__dict__, "actions": log.actions[:-2]}))


# ------------------------------------------------------------------------- pictures
def test_html_has_one_frame_per_decision(tmp_path):
    log = _good()
    log.players = ["random", "</script><b>x", "you"]  # must not break out of the script block
    path = tmp_path / "game.html"
    write_html(log, path, viewer=2)
    text = path.read_text()
    assert text.count("</script>") == 1
    frames = _html_frames(path)
    assert len(frames) == len(log.actions) + 1
    assert frames[0]["caption"] == "the deal" and frames[1]["caption"].startswith(f"1/{len(log.actions)}  P0: ")
    assert "Final scoring" in frames[-1]["text"] and frames[-1]["caption"].endswith("(game over)")
    assert all("your hand (P2)" in f["text"] for f in frames)
    assert all(f["image"] is None for f in frames)
    # With images: a PNG per frame (short game to keep the test quick).
    short = record_game(None, Rules(num_players=3), seed=2, max_decisions=5)
    write_html(short, tmp_path / "short.html", images=True)
    frames = _html_frames(tmp_path / "short.html")
    assert len(frames) == 6 and all(f["image"].startswith("data:image/png;base64,") for f in frames)


def test_draws_are_named_only_to_the_drawer(tmp_path):
    log = record_game(None, Rules(num_players=3), seed=4, max_decisions=12)
    write_html(log, tmp_path / "spectator.html")
    write_html(log, tmp_path / "p1.html", viewer=1)
    spectator = [f["caption"] for f in _html_frames(tmp_path / "spectator.html")]
    seat1 = [f["caption"] for f in _html_frames(tmp_path / "p1.html")]
    draws = [(a, b) for a, b in zip(spectator, seat1) if ": draw" in a]
    assert draws
    for a, b in draws:
        assert "(" in a  # the spectator sees the card
        assert ("(" in b) == ("P1: draw" in b)


def test_gif_frames(tmp_path):
    from PIL import Image

    log = record_game(None, Rules(num_players=4), seed=6, max_decisions=10)
    path = tmp_path / "game.gif"
    write_gif(log, path, frame_ms=100)
    with Image.open(path) as im:
        assert im.format == "GIF" and im.size == (RGB_WIDTH, RGB_HEIGHT + CAPTION_HEIGHT)
        assert im.n_frames == 11
        bands = []
        for k in (1, 2):
            im.seek(k)
            bands.append(np.asarray(im.convert("RGB"))[RGB_HEIGHT:])
    assert not np.array_equal(bands[0], bands[1]), "frames 1 and 2 should carry different captions"


def test_the_html_page_and_the_gif_caption_each_frame_alike(tmp_path):
    """The HTML page named the move about to be played (21/76 P2: take octo) and the GIF
    the move just played (20/76 P1: market octo): both now show the table after a move,
    under that move."""
    from startups_env.agents import make_agent

    from startups_env.startups.render import table_text

    log = record_game([make_agent("greedy", seed=0), make_agent("random", seed=1), make_agent("banker", seed=2)],
                      Rules(num_players=3), seed=3, max_decisions=9)
    write_html(log, tmp_path / "game.html")
    assert [f["caption"] for f in _html_frames(tmp_path / "game.html")] == [c for c, _ in gif_frames(log)]
    states = replay_states(log)
    html = _html_frames(tmp_path / "game.html")
    assert html[4]["caption"].startswith("4/9  " + describe_action(states[3], log.actions[3]))
    assert html[4]["text"] == table_text(states[4]), "the table after the move"


def test_gif_frames_are_captioned_with_the_move_just_played():
    """Frame 0 is the deal; frame k shows the table after decision k, under its caption."""
    log = record_game(None, Rules(num_players=4), seed=6, max_decisions=6)
    frames = list(gif_frames(log))
    states = replay_states(log)  # the state before each decision, then the last one
    assert len(frames) == len(log.actions) + 1
    assert frames[0][0] == "the deal"
    for k, action in enumerate(log.actions):
        caption, picture = frames[k + 1]
        end = "  (game unfinished)" if k + 1 == len(log.actions) else ""
        assert caption == f"{k + 1}/{len(log.actions)}  " + describe_action(states[k], action) + end
        assert np.array_equal(picture[:RGB_HEIGHT], table_rgb(states[k + 1])), "the table after the move"
        band = picture[RGB_HEIGHT:]
        assert (band == 255).all(axis=-1).any(), "the caption is written in the band"


def test_with_caption_refuses_what_is_not_a_picture():
    from startups_env.startups.render import with_caption

    with pytest.raises(ValueError, match="uint8"):
        with_caption(np.zeros((4, 4), np.uint8), "x")
    with pytest.raises(ValueError, match="caption"):
        with_caption(np.zeros((4, 4, 3), np.uint8), 3)


def test_cli(tmp_path, capsys):
    log = _good()
    log.save(tmp_path / "g.json")
    assert main([str(tmp_path / "g.json"), "--html", str(tmp_path / "g.html"), "--viewer", "0"]) == 0
    out = capsys.readouterr().out
    assert "Final scoring" in out and os.path.exists(tmp_path / "g.html")
    (tmp_path / "bad.json").write_text("{not json")
    assert main([str(tmp_path / "bad.json")]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_written_files_are_readable_like_any_new_file(tmp_path):
    # A log or replay is made to be shared (served, mailed): it must get the umask's
    # permissions like a plain open(path, "w"), not a temporary file's private 0600.
    old = os.umask(0o022)
    try:
        log = record_game(None, Rules(num_players=3), seed=2, max_decisions=4)
        log.save(tmp_path / "g.json")
        write_html(log, tmp_path / "g.html")
    finally:
        os.umask(old)
    for name in ("g.json", "g.html"):
        assert oct(os.stat(tmp_path / name).st_mode & 0o777) == oct(0o644), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.html", "g.json"]


def test_cli_bad_viewer_is_a_clear_error(tmp_path, capsys):
    _good().save(tmp_path / "g.json")
    assert main([str(tmp_path / "g.json"), "--viewer", "9"]) == 2
    assert "viewer must be None or a seat in [0, 3), got 9" in capsys.readouterr().err


def test_viewer_may_be_a_numpy_int(tmp_path):
    log = record_game(None, Rules(num_players=3), seed=4, max_decisions=6)
    write_html(log, tmp_path / "int.html", viewer=1)
    write_html(log, tmp_path / "np.html", viewer=np.int64(1))  # e.g. a seat read from a State
    assert _html_frames(tmp_path / "np.html") == _html_frames(tmp_path / "int.html")
    with pytest.raises(ValueError, match="viewer must be"):
        write_html(log, tmp_path / "bool.html", viewer=True)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"seed": True}, "seed must be"),
        ({"seed": 1.5}, "seed must be"),
        ({"seed": -1}, "seed must be"),
        ({"max_decisions": -1}, "max_decisions must be"),
        ({"max_decisions": 2.5}, "max_decisions must be"),
        ({"max_decisions": "5"}, "max_decisions must be"),
        ({"max_decisions": True}, "max_decisions must be"),
    ],
)
def test_record_game_refuses_bad_seed_and_max_decisions(kwargs, message):
    with pytest.raises(ValueError, match=message):
        record_game(None, Rules(num_players=3), **{"seed": 1, **kwargs})
    if "seed" in kwargs:
        with pytest.raises(ValueError, match=message):
            Recorder(Rules(num_players=3), seed=kwargs["seed"])


def test_result_given_as_arrays_is_saved(tmp_path):
    # GameLog accepts numpy arrays for the result (e.g. read off a State), so save() must
    # write them.
    log = _good()
    sim = replay(log)
    s, n = sim.state, log.num_players
    result = {"scores": s.scores[:n, 0], "threes": s.threes[:n, 0], "ranks": s.ranks[:n, 0],
              "terminated": s.terminated[0], "truncated": s.truncated[0]}
    from_arrays = GameLog(**{**log.__dict__, "result": result})
    from_arrays.save(tmp_path / "a.json")
    assert GameLog.load(tmp_path / "a.json") == log


@pytest.mark.parametrize("kwargs", [{"frame_ms": -100}, {"frame_ms": "a"}, {"frame_ms": None}, {"end_ms": 10**6},
                                    {"frame_ms": True}, {"end_ms": 0}])
def test_gif_refuses_bad_durations_up_front(tmp_path, kwargs):
    log = record_game(None, Rules(num_players=3), seed=1, max_decisions=3)
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=f"{name} must be an int number of milliseconds in \\[1, 655350\\]"):
        write_gif(log, tmp_path / "g.gif", **kwargs)
    assert not list(tmp_path.iterdir())
