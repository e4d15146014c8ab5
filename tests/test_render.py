"""The text and RGB pictures of a game (startups_env.startups.render)."""

import numpy as np
import pytest
from helpers import load_golden, make_deck, market_cards

from startups_env import Rules, Simulator
from startups_env.startups.render import RGB_HEIGHT, RGB_WIDTH, final_scoring, table_rgb, table_text
from startups_env.startups.rules import COMPANY_NAMES, NUM_COMPANIES, string_to_action

GOLDEN = load_golden()


def _random_sim(players: int, steps: int, seed: int) -> Simulator:
    sim = Simulator(Rules(num_players=players), 1, seed=seed)
    for _ in range(steps):
        if sim.done[0]:
            break
        sim.step(sim.random_actions())
    return sim


def _finished(g: dict) -> Simulator:
    sim = Simulator(Rules(num_players=g["players"]), 1, decks=[g["deck"]])
    for a in g["actions"]:
        sim.step(np.array([a]))
    assert sim.done[0]
    return sim


def _seat_row(text: str, label: str) -> list[str]:
    """The per-seat cells of the row called ``label`` (right of the last '|')."""
    line = next(ln for ln in text.splitlines() if ln.startswith(label))
    return line.rsplit("|", 1)[1].split()


# ------------------------------------------------------------------------- rgb
@pytest.mark.parametrize("players", [2, 4, 7])
def test_rgb_fixed_shape_and_dtype(players):
    for steps in (0, 7, 60, 400):
        sim = _random_sim(players, steps, seed=players)
        for viewer in (None, 0, players - 1):
            img = table_rgb(sim.state, viewer=viewer)
            assert img.shape == (RGB_HEIGHT, RGB_WIDTH, 3)
            assert img.dtype == np.uint8
    assert sim.done[0]  # the last picture was of a finished game


def test_rgb_changes_with_the_state_and_the_viewer():
    sim = _random_sim(4, 20, seed=1)
    before = table_rgb(sim.state, viewer=0)
    sim.step(sim.random_actions())
    after = table_rgb(sim.state, viewer=0)
    assert not np.array_equal(before, after)
    # Seat 0 and seat 1 see different hands.
    assert not np.array_equal(after, table_rgb(sim.state, viewer=1))
    # The same state draws the same picture.
    assert np.array_equal(after, table_rgb(sim.state.copy(), viewer=0))


def _with_hidden_card_swapped(state, seat: int):
    """A copy where one card of ``seat``'s hand (not publicly known) is another company."""
    other = state.copy()
    hand = other.hand[seat, :, 0]
    known = other.known[seat, :, 0]
    c = int(np.flatnonzero(hand > known)[0])
    d = (c + 1) % NUM_COMPANIES
    hand[c] -= 1
    hand[d] += 1
    return other


def test_pictures_do_not_leak_other_hands():
    sim = _random_sim(4, 9, seed=5)
    seat = (int(sim.state.current[0]) + 1) % 4
    viewer = (seat + 1) % 4
    other = _with_hidden_card_swapped(sim.state, seat)
    assert table_text(sim.state, viewer=viewer) == table_text(other, viewer=viewer)
    assert np.array_equal(table_rgb(sim.state, viewer=viewer), table_rgb(other, viewer=viewer))
    # ... but the owner and a spectator see the change.
    assert table_text(sim.state, viewer=seat) != table_text(other, viewer=seat)
    assert table_text(sim.state) != table_text(other)
    assert not np.array_equal(table_rgb(sim.state), table_rgb(other))


def test_game_index_selects_the_game():
    sim = Simulator(Rules(num_players=3), 3, seed=2)
    for _ in range(25):
        sim.step(sim.random_actions())
    for g in range(3):
        alone = sim.state.take([g])
        assert table_text(sim.state, game=g, viewer=1) == table_text(alone, viewer=1)
        assert np.array_equal(table_rgb(sim.state, game=g), table_rgb(alone))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"game": 1}, "game must be"),
        ({"game": -1}, "game must be"),
        ({"viewer": 4}, "viewer must be"),
        ({"viewer": -1}, "viewer must be"),
        ({"viewer": True}, "viewer must be"),
    ],
)
def test_bad_arguments(kwargs, message):
    sim = _random_sim(4, 3, seed=0)
    for draw in (table_text, table_rgb):
        with pytest.raises(ValueError, match=message):
            draw(sim, **kwargs)
    with pytest.raises(ValueError, match="State or Simulator"):
        table_text(np.zeros(3))


# ------------------------------------------------------------------------- text
def test_text_shows_the_table_as_the_viewer_sees_it():
    sim = _random_sim(5, 41, seed=3)
    s, viewer = sim.state, 2
    text = table_text(sim, viewer=viewer)
    cards = market_cards(s, 0)
    for c, name in enumerate(COMPANY_NAMES):
        line = next(ln for ln in text.splitlines() if ln.startswith(name))
        # market cards and the coins on each, richest first
        if cards[c]:
            assert f"{len(cards[c])}: [{' '.join(map(str, cards[c]))}] = {sum(cards[c])}c" in line
        holder = int(s.chip[c, 0])
        assert line.split("|")[0].split()[-1] == (f"P{holder}" if holder >= 0 else "-")
        portfolio = [int(x) if x != "." else 0 for x in line.rsplit("|", 1)[1].split()]
        assert portfolio == s.portfolio[:5, c, 0].tolist()
    assert _seat_row(text, "coins") == [str(x) for x in s.coins[:5, 0]]
    assert _seat_row(text, "hand size") == [str(x) for x in s.hand[:5, :, 0].sum(axis=1)]
    assert f"pile {45 - int(s.pile_pos[0])}" in text
    assert f"P{int(s.current[0])}" in text.splitlines()[0]
    assert "you are P2" in text
    hand_line = next(ln for ln in text.splitlines() if ln.startswith("your hand (P2):"))
    for c, name in enumerate(COMPANY_NAMES):
        k = int(s.hand[viewer, c, 0])
        assert (name in hand_line) == (k > 0)
        if k > 1:
            assert f"{name} x{k}" in hand_line
    assert "hand P0" not in text  # other hands are not listed
    spectator = table_text(sim)
    assert all(f"hand P{i}:" in spectator for i in range(5))


def test_text_names_the_phase_and_the_barred_company():
    # P0 holds octo x3; the pile starts with octo. Turn 1: P0 draws and markets octo;
    # P1 takes it, so P1 may not put octo back into the market.
    deck = make_deck(["octo octo octo", "hippo hippo hippo", "giraffe giraffe giraffe"], pile="octo octo")
    sim = Simulator(Rules(num_players=3), 1, decks=[deck])
    assert "P0 (you) to take" in table_text(sim, viewer=0)
    assert "P0 to take" in table_text(sim, viewer=1)
    sim.step(np.array([string_to_action("draw")]))
    assert "P0 (you) to put a card down" in table_text(sim, viewer=0)
    sim.step(np.array([string_to_action("market octo")]))
    sim.step(np.array([string_to_action("take octo")]))
    text = table_text(sim, viewer=0)
    assert "P1 to put a card down; may not market octo" in text
    assert "known in hands (taken from the market): P1 octo" in text


@pytest.mark.parametrize("index", range(0, 300, 7))
def test_final_scoring_matches_the_simulator(index):
    g = GOLDEN[index]
    sim = _finished(g)
    f = final_scoring(sim)
    n = g["players"]
    assert f["scores"] == g["scores"]
    assert f["threes"] == g["threes"]
    assert [f["ranks"].index(r) for r in range(n)] == g["ranking"]
    held = np.array(f["holdings"])
    for c in range(NUM_COMPANIES):
        top = held[:, c].max()
        sole = (held[:, c] == top).sum() == 1
        winner = f["majority"][c]
        assert (winner is not None) == bool(sole and top > 0 and held[:, c].sum() > top)
    text = table_text(sim, viewer=0)
    assert _seat_row(text, "score") == [str(x) for x in g["scores"]]
    assert f"Winner: P{g['ranking'][0]}" in text
    # Each payout line names the collector and what every other holder pays.
    for c, name in enumerate(COMPANY_NAMES):
        line = next(ln for ln in text.split("Final scoring")[1].splitlines() if ln.startswith(name))
        winner = f["majority"][c]
        if winner is not None:
            assert f"P{winner} collects {f['received'][winner][c]} (x3)" in line
            for i in range(n):
                assert (f"P{i} {held[i, c]}" in line) == (i != winner and held[i, c] > 0)
        else:
            assert "nobody" in line


def test_final_scoring_shows_ties_and_debt():
    tied = next(g for g in GOLDEN if "tied_majority" in g["tags"])
    assert "nobody pays" in table_text(_finished(tied))
    debt = next(g for g in GOLDEN if "debt" in g["tags"])
    text = table_text(_finished(debt))
    f = final_scoring(_finished(debt))
    debtors = [i for i, (c, p) in enumerate(zip(f["coins"], f["paid"])) if c - sum(p) < 0]
    assert debtors, "the golden 'debt' game has a player paying more than their coins"
    for i in debtors:  # pays on in debt: the full amount is charged
        assert _seat_row(text, "paid")[i] == str(-sum(f["paid"][i]))
        assert f["scores"][i] == f["coins"][i] - sum(f["paid"][i]) + 3 * f["threes"][i]


def test_public_copy_of_a_finished_game_shows_only_totals():
    from startups_env.startups.state import public_state

    g = GOLDEN[0]
    public = public_state(_finished(g).state, np.array([0]))
    text = table_text(public, viewer=0)
    assert _seat_row(text, "score") == [str(x) for x in g["scores"]]
    assert "Final scoring" not in text


def test_final_scoring_refuses_an_unfinished_game():
    with pytest.raises(ValueError, match="not over"):
        final_scoring(_random_sim(3, 5, seed=0))


def test_round_game_text_shows_round_points():
    sim = Simulator(Rules(num_players=3, rounds=4), 1, seed=4)
    while int(sim.state.round[0]) == 0:
        sim.step(sim.random_actions())
    text = table_text(sim, viewer=0)
    assert "round 2" in text.splitlines()[0]
    assert _seat_row(text, "round points") == [str(x) for x in sim.state.round_points[:3, 0]]
    while not sim.done[0]:
        sim.step(sim.random_actions())
    assert "final rank" in table_text(sim)


def test_round_game_picture_shows_round_points():
    # The round game is ranked by round points: a picture that leaves them out shows a
    # finished game's ranks beside last-round scores that contradict them.
    sim = Simulator(Rules(num_players=3, rounds=4), 1, seed=4)
    while int(sim.state.round[0]) == 0:
        sim.step(sim.random_actions())
    other = sim.state.copy()
    other.round_points[0, 0] += 1
    assert not np.array_equal(table_rgb(sim.state), table_rgb(other))
    while not sim.done[0]:
        sim.step(sim.random_actions())
    other = sim.state.copy()
    other.round_points[0, 0] += 1
    assert not np.array_equal(table_rgb(sim.state), table_rgb(other))


def test_text_table_has_a_key_to_its_marks():
    """The header marks the seat to act (>P3) and the viewer (P0*), and each company row
    shows the company's size: a key line says so."""
    sim = _random_sim(4, 30, seed=3)
    s = sim.state
    cur = int(s.current[0])
    viewer = (cur + 1) % 4
    text = table_text(s, viewer=viewer)
    header = text.splitlines()[1]
    assert f">P{cur}" in header and f"P{viewer}*" in header
    key = next(ln for ln in text.splitlines() if ln.startswith("key: "))
    assert f">P{cur} to act" in key and f"P{viewer}* you" in key
    assert f"'{COMPANY_NAMES[0]} 5' = 5 {COMPANY_NAMES[0]} cards in the game" in key
    spectator = next(ln for ln in table_text(s).splitlines() if ln.startswith("key: "))
    assert "*" not in spectator and f">P{cur} to act" in spectator
    while not sim.done[0]:
        sim.step(sim.random_actions())
    finished = next(ln for ln in table_text(sim.state, viewer=0).splitlines() if ln.startswith("key: "))
    assert "to act" not in finished and "P0* you" in finished
