"""One scripted scenario per rule of docs/rules.md (Pgx style): a game from a hand-built deck,
played move by move, with the expected state written beside each move.

Decks are built with ``helpers.make_deck`` (hands, pile front and removed cards named;
the rest filled in) or ``helpers.draw_keep_game`` (a whole game in which every turn draws
and keeps the drawn card, designed so that each seat ends with given holdings). Expected
values were worked out by hand from docs/rules.md (the final payouts are spelled out in the
comments).

Companies: giraffe 0 (5 cards), bowwow 1 (6), flamingo 2 (7), octo 3 (8), hippo 4 (9),
elephant 5 (10). Actions: draw 0, take c 1+c, keep c 7+c, market c 13+c.
"""

import numpy as np
import pytest
from helpers import act, assert_states_equal, counts, draw_keep_game, make_deck, ranking, snapshot

from startups_env import Rules, Simulator
from startups_env.startups.rules import COMPANY_NAMES, NUM_ACTIONS


# ----------------------------------------------------------------- scripting helpers
def new_game(hands, pile=(), removed=(), **rules) -> Simulator:
    return Simulator(Rules(num_players=len(hands), **rules), 1, decks=[make_deck(hands, pile, removed)])


def legal(sim) -> list[str]:
    return [act_name for act_name, ok in zip(ACTION_NAMES, sim.legal_mask()[0]) if ok]


ACTION_NAMES = (
    ["draw"] + [f"take {c}" for c in COMPANY_NAMES] + [f"keep {c}" for c in COMPANY_NAMES]
    + [f"market {c}" for c in COMPANY_NAMES]
)


def check(sim, **expected) -> None:
    """Compare game 0 with the expected entries. Besides the ``snapshot`` keys:
    hands / portfolios / known (hand cards known to all): {seat: "company names"} (the
    seats named), market: {company:
    [coins per card, oldest first]} (companies not named are empty), chips: {company:
    seat} (companies not named have no holder)."""
    snap = snapshot(sim.state, 0, sim.rules.rounds)
    snap["known"] = sim.state.known[:, :, 0].tolist()
    for key, want in expected.items():
        if key in ("hands", "portfolios", "known"):
            for seat, text in want.items():
                assert snap[key][seat] == counts(text), f"{key}[{seat}]: {snap[key][seat]} != {text!r}"
        elif key == "market":
            full = [want.get(c, []) for c in COMPANY_NAMES]
            assert snap["market"] == full, f"market: {snap['market']} != {full}"
            assert sim.state.market_coins[:, 0].tolist() == [sum(m) for m in full], "market_coins"
        elif key == "chips":
            full = [want.get(c, -1) for c in COMPANY_NAMES]
            assert snap["chips"] == full, f"chips: {snap['chips']} != {full}"
        elif key == "barred":
            assert snap["barred"] == (-1 if want is None else COMPANY_NAMES.index(want)), f"barred: {snap['barred']}"
        else:
            assert snap[key] == want, f"{key}: {snap[key]} != {want}"


def play(sim, name: str, **expected):
    """One decision in game 0 (by name, e.g. 'take octo'), then check ``expected``."""
    assert name in legal(sim), f"{name!r} not legal; legal: {legal(sim)}"
    result = sim.step(np.array([act(name)]))
    check(sim, **expected)
    return result


def play_all(sim, actions) -> list:
    return [sim.step(np.array([a])) for a in actions]


def assert_illegal(sim, name: str, *words) -> None:
    """Stepping ``name`` raises a ValueError (naming the action) and changes nothing."""
    assert name not in legal(sim)
    before = sim.state.copy()
    with pytest.raises(ValueError, match="illegal") as err:
        sim.step(np.array([act(name)]))
    for word in (name, *words):
        assert word in str(err.value)
    assert_states_equal(before, sim.state, f"after illegal {name!r}")


# ----------------------------------------------------------------- the take
def test_draw_pays_one_coin_per_market_card_except_chip_companies():
    sim = new_game(
        ["giraffe giraffe bowwow", "octo octo hippo", "flamingo flamingo elephant"],
        pile="hippo elephant octo bowwow flamingo hippo hippo",
    )
    check(sim, coins=[10, 10, 10], market={}, pile=31, current=0, phase=0)
    assert legal(sim) == ["draw"]  # empty market: drawing is free and compulsory
    play(sim, "draw", coins=[10, 10, 10], hands={0: "giraffe giraffe bowwow hippo"}, pile=30, phase=1)
    play(sim, "keep giraffe", portfolios={0: "giraffe"}, chips={"giraffe": 0}, current=1, phase=0, turn=1)
    play(sim, "draw", coins=[10, 10, 10], hands={1: "octo octo hippo elephant"})
    play(sim, "market octo", market={"octo": [0]}, current=2)
    # One market card: the drawer lays 1 coin on it.
    play(sim, "draw", coins=[10, 10, 9], market={"octo": [1]}, hands={2: "flamingo flamingo elephant octo"})
    play(sim, "market flamingo", market={"octo": [1], "flamingo": [0]})
    play(sim, "draw", coins=[8, 10, 9], market={"octo": [2], "flamingo": [1]})
    play(sim, "market giraffe", market={"giraffe": [0], "octo": [2], "flamingo": [1]})  # no ban after a draw
    play(sim, "draw", coins=[8, 7, 9], market={"giraffe": [1], "octo": [3], "flamingo": [2]})
    play(sim, "market octo", market={"giraffe": [1], "octo": [3, 0], "flamingo": [2]})
    # 1 coin per card, not per company: 4 cards.
    play(sim, "draw", coins=[8, 7, 5], market={"giraffe": [2], "octo": [4, 1], "flamingo": [3]})
    play(sim, "keep hippo", chips={"giraffe": 0, "hippo": 2})
    # Seat 0 holds the giraffe chip: pays on the 3 other cards, not on the giraffe.
    play(sim, "draw", coins=[5, 7, 5], market={"giraffe": [2], "octo": [5, 2], "flamingo": [4]},
         hands={0: "bowwow bowwow hippo hippo"})


def _market_game() -> Simulator:
    """Two players who put every card into the market: the draw gets dearer each turn."""
    sim = new_game(["octo octo hippo", "flamingo flamingo elephant"],
                   pile="giraffe bowwow giraffe bowwow giraffe bowwow")
    play(sim, "draw", coins=[10, 10], hands={0: "octo octo hippo giraffe"})
    play(sim, "market octo", market={"octo": [0]})
    play(sim, "draw", coins=[10, 9], market={"octo": [1]})
    play(sim, "market flamingo", market={"octo": [1], "flamingo": [0]})
    play(sim, "draw", coins=[8, 9], market={"octo": [2], "flamingo": [1]})
    play(sim, "market octo", market={"octo": [2, 0], "flamingo": [1]})
    play(sim, "draw", coins=[8, 6], market={"octo": [3, 1], "flamingo": [2]})
    play(sim, "market flamingo", market={"octo": [3, 1], "flamingo": [2, 0]})
    play(sim, "draw", coins=[4, 6], market={"octo": [4, 2], "flamingo": [3, 1]})
    play(sim, "market hippo", market={"octo": [4, 2], "flamingo": [3, 1], "hippo": [0]})
    play(sim, "draw", coins=[4, 1], market={"octo": [5, 3], "flamingo": [4, 2], "hippo": [1]})
    play(sim, "market elephant", market={"octo": [5, 3], "flamingo": [4, 2], "hippo": [1], "elephant": [0]},
         current=0, phase=0, turn=6, hands={0: "giraffe giraffe giraffe", 1: "bowwow bowwow bowwow"})
    return sim


def test_unaffordable_draw_is_forbidden():
    sim = _market_game()
    # Drawing would cost 6 coins (6 market cards); seat 0 has 4.
    check(sim, coins=[4, 1])
    assert legal(sim) == ["take flamingo", "take octo", "take hippo", "take elephant"]
    assert_illegal(sim, "draw", "game 0")


def test_draw_with_exactly_enough_coins_is_allowed():
    """docs/rules.md, the take: "A player who cannot pay every one of those coins is not
    allowed to draw" -- a player who can pay for all of them, with nothing left over, may draw."""
    sim = new_game(["octo octo hippo", "flamingo flamingo elephant"],
                   pile="giraffe bowwow giraffe bowwow giraffe bowwow")
    # The first five turns of _market_game.
    for put in ("octo", "flamingo", "octo", "flamingo", "hippo"):
        play(sim, "draw")
        play(sim, f"market {put}")
    check(sim, coins=[4, 6], market={"octo": [4, 2], "flamingo": [3, 1], "hippo": [0]}, current=1)
    play(sim, "take hippo", coins=[4, 6], market={"octo": [4, 2], "flamingo": [3, 1]})
    play(sim, "keep hippo", chips={"hippo": 1}, current=0)
    # Four market cards, four coins: the draw is legal and empties seat 0's purse.
    assert legal(sim) == ["draw", "take flamingo", "take octo"]
    play(sim, "draw", coins=[0, 6], market={"octo": [5, 3], "flamingo": [4, 2]}, phase=1,
         hands={0: "giraffe giraffe giraffe bowwow"})
    play(sim, "market bowwow", current=1)
    # With no coins left and a non-empty market, seat 0 may no longer draw.
    play(sim, "draw", coins=[0, 1])
    play(sim, "keep elephant", current=0)
    assert "draw" not in legal(sim)


def test_market_take_gets_the_richest_card_and_its_coins():
    sim = _market_game()
    # Octo cards carry 5 and 3 coins: the take gets the oldest, richest one.
    play(sim, "take octo", coins=[9, 1], market={"octo": [3], "flamingo": [4, 2], "hippo": [1], "elephant": [0]},
         hands={0: "giraffe giraffe giraffe octo"}, phase=1, barred="octo", pile=28)
    # The known octo left the hand (the only octo there): nothing is known any more.
    play(sim, "keep octo", portfolios={0: "octo"}, chips={"octo": 0}, current=1, phase=0, barred=None,
         known={0: ""})
    # Seat 1 (1 coin, 5 cards to pay on) must take too.
    assert legal(sim) == ["take flamingo", "take octo", "take hippo", "take elephant"]
    play(sim, "take flamingo", coins=[9, 5], market={"octo": [3], "flamingo": [2], "hippo": [1], "elephant": [0]})
    # The market holds coins as well: coins are conserved.
    assert sum(snapshot(sim.state)["coins"]) + 3 + 2 + 1 == 20


def test_no_market_put_of_the_company_just_taken():
    sim = _market_game()
    # Everyone saw seat 0 take the octo: it is publicly known to be in seat 0's hand.
    play(sim, "take octo", barred="octo", hands={0: "giraffe giraffe giraffe octo"}, known={0: "octo", 1: ""})
    assert legal(sim) == ["keep giraffe", "keep octo", "market giraffe"]
    assert_illegal(sim, "market octo", "put-down")
    play(sim, "market giraffe", market={"giraffe": [0], "octo": [3], "flamingo": [4, 2], "hippo": [1],
                                        "elephant": [0]}, barred=None, known={0: "octo"})
    # The ban lasts one turn: seat 1 takes flamingo and may put the other company it
    # holds into the market, but not flamingo.
    play(sim, "take flamingo", barred="flamingo", hands={1: "bowwow bowwow bowwow flamingo"})
    assert "market flamingo" not in legal(sim) and "market bowwow" in legal(sim)
    play(sim, "market bowwow", barred=None)


def test_chip_holder_may_not_take_that_company():
    sim = _market_game()
    play(sim, "take octo")
    play(sim, "keep octo", chips={"octo": 0})
    play(sim, "take flamingo")
    play(sim, "market bowwow", market={"bowwow": [0], "octo": [3], "flamingo": [2], "hippo": [1], "elephant": [0]})
    # Seat 0 holds the octo chip: no octo take, and the octo card costs nothing to draw.
    assert legal(sim) == ["draw", "take bowwow", "take flamingo", "take hippo", "take elephant"]
    assert_illegal(sim, "take octo")
    play(sim, "draw", coins=[5, 5], market={"bowwow": [1], "octo": [3], "flamingo": [3], "hippo": [2],
                                             "elephant": [1]})


# ----------------------------------------------------------------- the anti-monopoly chip
def test_chip_first_owner_tie_keeps_strict_overtake_moves():
    sim = new_game(["hippo hippo octo", "hippo hippo flamingo", "elephant elephant elephant"],
                   pile="bowwow bowwow bowwow bowwow bowwow bowwow giraffe")
    play(sim, "draw")
    play(sim, "keep hippo", chips={"hippo": 0}, portfolios={0: "hippo"})  # first owner
    play(sim, "draw")
    play(sim, "keep hippo", chips={"hippo": 0}, portfolios={1: "hippo"})  # 1 vs 1: a tie keeps it
    play(sim, "draw")
    play(sim, "keep elephant", chips={"hippo": 0, "elephant": 2})
    play(sim, "draw")
    play(sim, "keep octo", chips={"hippo": 0, "elephant": 2, "octo": 0})
    # Seat 1 reaches 2 hippos against seat 0's 1 in portfolio (seat 0's hand hippo does
    # not count): the chip moves.
    check(sim, hands={0: "hippo bowwow bowwow"})
    play(sim, "draw")
    play(sim, "keep hippo", chips={"hippo": 1, "elephant": 2, "octo": 0}, portfolios={1: "hippo hippo"})
    play(sim, "draw")
    play(sim, "keep elephant", chips={"hippo": 1, "elephant": 2, "octo": 0})
    # Seat 0 draws level at 2 hippos: a tie leaves the chip with seat 1.
    play(sim, "draw")
    play(sim, "keep hippo", chips={"hippo": 1, "elephant": 2, "octo": 0}, portfolios={0: "hippo hippo octo"})


# ----------------------------------------------------------------- the end of the game
def _seven_player_game(**rules) -> Simulator:
    """7 players, 19 pile cards, the first card into the market; nobody keeps a giraffe."""
    hands = ["giraffe octo octo"] + ["bowwow flamingo hippo"] * 6
    return new_game(hands, **rules)


def test_game_ends_after_the_turn_that_drew_the_last_card():
    sim = _seven_player_game()
    pile = sim.state.deck[26:, 0].tolist()
    assert len(pile) == 19 and 0 not in pile
    play(sim, "draw")
    play(sim, "market giraffe", market={"giraffe": [0]})
    for k in range(1, 18):  # turns 2..18: draw (paying 1 on the giraffe) and keep the card
        play(sim, "draw", done=False)
        play(sim, f"keep {COMPANY_NAMES[pile[k]]}")
    check(sim, pile=1, turn=18, current=4, market={"giraffe": [17]})
    # Seat 4 draws the last card: the game is not over, seat 4 still puts a card down.
    result = play(sim, "draw", pile=0, phase=1, done=False, current=4)
    assert not result.terminated[0] and not result.truncated[0]
    assert legal(sim) and all(name.startswith(("keep", "market")) for name in legal(sim))
    result = play(sim, f"keep {COMPANY_NAMES[pile[18]]}", done=True, turn=19, current=4)
    assert result.terminated[0] and not result.truncated[0]
    assert sim.state.terminated[0] and not sim.state.truncated[0]
    assert legal(sim) == []
    # A finished game ignores further actions.
    before = sim.state.copy()
    sim.step(np.array([NUM_ACTIONS - 1]))
    assert_states_equal(before, sim.state, "finished game")


def test_taking_from_the_market_with_one_pile_card_left_does_not_end_the_game():
    sim = _seven_player_game()
    pile = sim.state.deck[26:, 0].tolist()
    play(sim, "draw")
    play(sim, "market giraffe")
    for k in range(1, 18):
        play(sim, "draw")
        play(sim, f"keep {COMPANY_NAMES[pile[k]]}")
    play(sim, "take giraffe", pile=1, market={})
    coins = snapshot(sim.state)["coins"]
    assert coins[4] == 10 - 2 + 17  # paid on two draws, took the 17 coins
    play(sim, "keep giraffe", done=False, pile=1, current=5, turn=19)
    play(sim, "draw", done=False, pile=0)
    result = play(sim, "market bowwow", done=True, turn=20, current=5, market={"bowwow": [0]})
    assert result.terminated[0]


# ----------------------------------------------------------------- scoring
# Final holdings (hand + portfolio) per seat and company [giraffe .. elephant].
DEBT_GAME = dict(
    holdings=[[2, 3, 3, 4, 0, 2], [2, 1, 2, 1, 5, 2], [0, 2, 2, 3, 4, 2]],
    hands=["octo octo octo", "hippo hippo hippo", "bowwow flamingo elephant"],
    removed="giraffe elephant elephant elephant elephant",
)


def test_hands_count_and_majority_payout_with_ties_and_debt():
    deck, actions = draw_keep_game(**DEBT_GAME)
    sim = Simulator(Rules(num_players=3), 1, decks=[deck])
    results = play_all(sim, actions[:-1])
    assert not any(r.terminated[0] for r in results)
    check(sim, pile=0, phase=1, done=False, turn=30)
    result = play_all(sim, actions[-1:])[0]
    assert result.terminated[0]
    s = sim.state
    # The dealt hands stayed in hand: octo portfolios are 1 / 1 / 3, so seat 2 holds the
    # octo chip, but with its 3 hand cards seat 0 holds 4 octos and is paid for them.
    check(sim, hands={0: "octo octo octo", 1: "hippo hippo hippo", 2: "bowwow flamingo elephant"},
          turn=31, current=0, done=True)
    assert snapshot(sim.state)["portfolios"][0][3] == 1 and s.chip[3, 0] == 2
    assert (s.hand[:3, :, 0] + s.portfolio[:3, :, 0]).tolist() == DEBT_GAME["holdings"]
    # giraffe  2 2 0: tie, nobody pays.          bowwow   3 1 2: seat 1 pays 1, seat 2 pays 2.
    # flamingo 3 2 2: seats 1, 2 pay 2 each.      octo     4 1 3: seat 1 pays 1, seat 2 pays 3.
    # hippo    0 5 4: seat 2 pays 4 to seat 1.    elephant 2 2 2: three-way tie, nobody pays.
    # Seat 0: 10 + 3 x 11 = 43. Seat 1 pays 4 in 1-point coins (not with its new 3-point
    # coins): 6 + 3 x 4 = 18. Seat 2 pays 11 with 10 coins: -1, in debt.
    assert s.threes[:3, 0].tolist() == [11, 4, 0]
    assert s.scores[:3, 0].tolist() == [43, 18, -1]
    assert ranking(s.ranks[:, 0]) == [0, 1, 2]
    assert result.scores[0, :3].tolist() == [43, 18, -1]


def test_debtor_may_not_pay_with_three_point_coins_received_in_the_same_scoring():
    """docs/rules.md, decision 6 (debt): "A player who runs out of one-point coins during the
    payout keeps paying and goes below zero. The three-point coins they receive in the same
    payout can never be used to pay." Seat 2 is paid for one company and
    owes more than its 10 coins for the others: it keeps its 3-point coin and ends at -1."""
    holdings = [[2, 1, 0, 2, 3, 6], [1, 0, 4, 4, 4, 0], [0, 2, 3, 2, 2, 4]]
    deck, actions = draw_keep_game(holdings, removed="bowwow bowwow bowwow giraffe giraffe")
    sim = Simulator(Rules(num_players=3), 1, decks=[deck])
    result = play_all(sim, actions)[-1]
    assert result.terminated[0]
    s = sim.state
    assert (s.hand[:3, :, 0] + s.portfolio[:3, :, 0]).tolist() == holdings
    # giraffe  2 1 0: seat 1 pays 1 to seat 0.   bowwow   1 0 2: seat 0 pays 1 to seat 2.
    # flamingo 0 4 3: seat 2 pays 3 to seat 1.   octo     2 4 2: seats 0, 2 pay 2 each to seat 1.
    # hippo    3 4 2: seat 0 pays 3, seat 2 pays 2 to seat 1.
    # elephant 6 0 4: seat 2 pays 4 to seat 0.
    # Seat 0: 10 - 6 + 3 x 5 = 19. Seat 1: 10 - 1 + 3 x 12 = 45. Seat 2 owes 3 + 2 + 2 + 4 =
    # 11 with 10 coins: -1, and its bowwow coin stays a 3-point coin: -1 + 3 x 1 = 2 (paying
    # the debt with it would give 0 + 3 x 0 = 0).
    assert s.threes[:3, 0].tolist() == [5, 12, 1]
    assert s.scores[:3, 0].tolist() == [19, 45, 2]
    assert result.scores[0, :3].tolist() == [19, 45, 2]
    assert ranking(s.ranks[:, 0]) == [1, 0, 2]


def test_cards_and_coins_left_in_the_market_count_for_nobody():
    """docs/rules.md, the end: "Whatever lies in the market, cards and coins alike, belongs to
    nobody."
    Seat 2 puts its last card, an elephant, into the market; seat 0 lays a coin on it when
    it draws the last pile card. Both stay in the market through the scoring."""
    holdings = [[0, 3, 1, 3, 3, 4], [0, 1, 4, 2, 2, 4], [0, 2, 2, 3, 4, 2]]  # seat 2's 2nd elephant: the market
    deck, actions = draw_keep_game(holdings, removed="giraffe " * 5)
    assert actions[-3] == act("keep elephant")  # seat 2's put-down in turn 30 of 31
    actions[-3] = act("market elephant")
    sim = Simulator(Rules(num_players=3), 1, decks=[deck])
    play_all(sim, actions[:-2])
    # Seat 1 has held the elephant chip since its first elephant: seat 0 pays on the card.
    check(sim, market={"elephant": [0]}, chips={"flamingo": 1, "octo": 0, "hippo": 2, "elephant": 1},
          current=0, coins=[10, 10, 10])
    play(sim, "draw", market={"elephant": [1]}, coins=[9, 10, 10])
    result = play(sim, "keep elephant", done=True, market={"elephant": [1]}, coins=[9, 10, 10])
    assert result.terminated[0]
    s = sim.state
    assert (s.hand[:3, :, 0] + s.portfolio[:3, :, 0]).tolist() == [[0, 3, 1, 3, 3, 4], [0, 1, 4, 2, 2, 4],
                                                                  [0, 2, 2, 3, 4, 1]]
    # bowwow 3 1 2: seat 0 gets 3.   flamingo 1 4 2: seat 1 gets 3.   octo 3 2 3: tie.
    # hippo 3 2 4: seat 2 gets 5.    elephant 4 4 1: tie (the market card would break it).
    # Seat 0: 9 - 4 + 3 x 3 = 14 (the market coin is not its own again); seat 1: 10 - 3 +
    # 3 x 3 = 16; seat 2: 10 - 4 + 3 x 5 = 21.
    assert s.threes[:3, 0].tolist() == [3, 3, 5]
    assert s.scores[:3, 0].tolist() == [14, 16, 21]
    assert ranking(s.ranks[:, 0]) == [2, 1, 0]


def test_tie_break_more_three_point_coins():
    holdings = [[0, 1, 4, 1, 1, 7], [0, 3, 2, 4, 2, 2], [0, 2, 1, 3, 6, 1]]
    deck, actions = draw_keep_game(holdings, removed="giraffe " * 5)
    sim = Simulator(Rules(num_players=3), 1, decks=[deck])
    play_all(sim, actions)
    s = sim.state
    # bowwow 1 3 2 -> seat 1 gets 3; flamingo 4 2 1 -> seat 0 gets 3; octo 1 4 3 -> seat 1
    # gets 4; hippo 1 2 6 -> seat 2 gets 3; elephant 7 2 1 -> seat 0 gets 3.
    # Seat 0: 10 - 3 + 3 x 6 = 25; seat 1: 10 - 6 + 3 x 7 = 25; seat 2: 10 - 7 + 3 x 3 = 12.
    assert s.terminated[0] and s.current[0] == 0  # seat 0 took the final turn
    assert s.scores[:3, 0].tolist() == [25, 25, 12]
    assert s.threes[:3, 0].tolist() == [6, 7, 3]
    # Tied at 25: seat 1 has more 3-point coins and wins, although seat 0 played last.
    assert ranking(s.ranks[:, 0]) == [1, 0, 2]


def test_tie_break_recency_counts_back_from_the_final_turn():
    holdings = [[0, 3, 1, 3, 3, 4], [0, 3, 3, 2, 3, 2], [0, 0, 3, 3, 3, 4]]
    deck, actions = draw_keep_game(holdings, removed="giraffe " * 5)
    sim = Simulator(Rules(num_players=3), 1, decks=[deck])
    play_all(sim, actions)
    s = sim.state
    # Every company is tied at the top: nobody pays, all score 10 with no 3-point coins.
    assert s.scores[:3, 0].tolist() == [10, 10, 10] and s.threes[:3, 0].tolist() == [0, 0, 0]
    # Seat 0 took the final turn (31st); counting back: seat 2, then seat 1.
    assert int(s.current[0]) == 0 and int(s.turn[0]) == 31
    assert ranking(s.ranks[:, 0]) == [0, 2, 1]


def test_tie_break_recency_when_the_final_turn_is_not_seat_0():
    # Truncated after two turns (scored as it stands): seat 1 took the final turn.
    sim = new_game(["giraffe bowwow flamingo", "giraffe bowwow flamingo", "octo hippo elephant",
                    "octo hippo elephant"], pile="elephant elephant", turn_cap=2)
    play(sim, "draw")
    play(sim, "keep elephant")
    play(sim, "draw")
    result = play(sim, "keep elephant", done=True, current=1)
    # Every company tied at the top: all 10. Counting back from seat 1: 1, 0, 3, 2.
    assert result.truncated[0]
    assert sim.state.scores[:4, 0].tolist() == [10] * 4
    assert ranking(sim.state.ranks[:, 0]) == [1, 0, 3, 2]


# ----------------------------------------------------------------- rewards
@pytest.mark.parametrize(
    "scheme, expected",
    [
        ("win", [1.0, -0.5, -0.5]),
        ("rank", [1.0, 0.0, -1.0]),
        ("score", [(43 - 20) / 10, (18 - 20) / 10, (-1 - 20) / 10]),  # mean score 20
        # Margin over the best other score (the winner's is over the runner-up): 43 - 18,
        # 18 - 43, -1 - 43.
        ("margin", [np.tanh(25.5 / 8), np.tanh(-24.5 / 8), np.tanh(-43.5 / 8)]),
    ],
)
def test_reward_schemes(scheme, expected):
    deck, actions = draw_keep_game(**DEBT_GAME)
    sim = Simulator(Rules(num_players=3, reward=scheme), 1, decks=[deck])
    results = play_all(sim, actions)
    assert all((r.rewards == 0).all() for r in results[:-1]), "rewards only on the ending step"
    rewards = results[-1].rewards[0]
    np.testing.assert_allclose(rewards[:3], expected, atol=1e-6)
    assert (rewards[3:] == 0).all()
    if scheme != "margin":  # margin is not zero-sum
        assert abs(float(rewards.sum())) < 1e-5


def test_margin_reward_gives_players_tied_on_top_the_same_reward():
    """All three seats tie on 10 and the tie-break makes one of them the winner, but every
    score margin is 0: the margin reward does not look at tie-breaks."""
    holdings = [[0, 3, 1, 3, 3, 4], [0, 3, 3, 2, 3, 2], [0, 0, 3, 3, 3, 4]]
    deck, actions = draw_keep_game(holdings, removed="giraffe " * 5)
    sim = Simulator(Rules(num_players=3, reward="margin"), 1, decks=[deck])
    rewards = play_all(sim, actions)[-1].rewards[0]
    assert sim.state.scores[:3, 0].tolist() == [10, 10, 10]
    np.testing.assert_allclose(rewards[:3], [np.tanh(0.5 / 8)] * 3, atol=1e-6)


# ----------------------------------------------------------------- the turn cap
def test_turn_cap_scores_the_game_as_it_stands():
    sim = new_game(["giraffe giraffe giraffe", "bowwow bowwow giraffe", "flamingo flamingo flamingo"],
                   pile="octo hippo elephant octo", turn_cap=4)
    for card in ("octo", "hippo", "elephant"):
        play(sim, "draw")
        result = play(sim, f"keep {card}", done=False)
        assert not result.truncated[0] and (result.rewards == 0).all()
    play(sim, "draw", done=False)
    result = play(sim, "keep octo", done=True, turn=4, pile=27, current=0)
    # Holdings: seat 0 giraffe 3 + octo 2; seat 1 bowwow 2, giraffe 1, hippo 1 (hands
    # count); seat 2 flamingo 3, elephant 1. Giraffe 3 vs 1: seat 1 pays 1 to seat 0.
    assert result.truncated[0] and not result.terminated[0]
    assert sim.state.truncated[0] and not sim.state.terminated[0]
    assert sim.state.scores[:3, 0].tolist() == [13, 9, 10]
    assert sim.state.threes[:3, 0].tolist() == [1, 0, 0]
    assert ranking(result.ranks[0]) == [0, 2, 1]
    np.testing.assert_allclose(result.rewards[0, :3], [1.0, -0.5, -0.5])
    assert legal(sim) == []


# ----------------------------------------------------------------- the round game
# Each round is a draw-and-keep game designed (holdings per seat) for the given ranking;
# the starter of a round is the last-placed of the round before.
ROUND_GAMES = {
    # 3 players. Points after the rounds: [2, 1, -1], [1, 2, 1], [3, 1, 2], [2, 3, 3].
    # Seats 1 and 2 tie on 3 points, one +2 and two +1 chips each: seat 1 won the last round.
    "last_round_decides": dict(
        rounds=[
            dict(starter=0, holdings=[[0, 3, 4, 3, 0, 4], [0, 1, 0, 3, 5, 4], [0, 2, 3, 2, 4, 2]],
                 scores=[28, 21, 1], ranking=[0, 1, 2], points=[2, 1, -1]),
            dict(starter=2, holdings=[[0, 1, 1, 5, 3, 3], [0, 2, 3, 2, 2, 4], [0, 3, 3, 1, 4, 3]],
                 scores=[12, 22, 30], ranking=[2, 1, 0], points=[1, 2, 1]),
            dict(starter=0, holdings=[[0, 0, 4, 3, 3, 4], [0, 3, 3, 2, 2, 3], [0, 3, 0, 3, 4, 3]],
                 scores=[34, 2, 22], ranking=[0, 2, 1], points=[3, 1, 2]),
            dict(starter=1, holdings=[[0, 1, 1, 5, 3, 3], [0, 3, 3, 2, 2, 4], [0, 2, 3, 1, 4, 3]],
                 scores=[12, 33, 19], ranking=[1, 2, 0], points=[2, 3, 3]),
        ],
        plus2=[2, 1, 1], plus1=[0, 2, 2], final=[1, 2, 0],
        score_rewards=[2 - 8 / 3, 3 - 8 / 3, 3 - 8 / 3],
    ),
    # 4 players (2nd gets +1, 3rd nothing). Seats 0 and 2 tie on 3 points: seat 0 has two
    # +2 chips against one, and wins although seat 2 has more +1 chips and won round 4.
    "plus2_decides": dict(
        rounds=[
            dict(starter=0, holdings=[[0, 1, 1, 1, 2, 5], [0, 1, 1, 4, 3, 1], [0, 1, 5, 1, 1, 2], [0, 3, 0, 2, 3, 2]],
                 scores=[22, 19, 12, 15], ranking=[0, 1, 3, 2], points=[2, 1, -1, 0]),
            dict(starter=2, holdings=[[0, 3, 0, 3, 3, 1], [0, 0, 4, 2, 2, 2], [0, 1, 0, 2, 2, 5], [0, 2, 3, 1, 2, 2]],
                 scores=[51, 13, 20, 0], ranking=[0, 2, 1, 3], points=[4, 1, 0, -1]),
            dict(starter=3, holdings=[[0, 2, 2, 1, 2, 3], [0, 2, 2, 2, 2, 2], [0, 0, 2, 4, 1, 3], [0, 2, 1, 1, 4, 2]],
                 scores=[7, 6, 21, 24], ranking=[3, 2, 0, 1], points=[4, 0, 1, 1]),
            dict(starter=1, holdings=[[0, 1, 2, 2, 3, 2], [0, 2, 2, 2, 1, 3], [0, 0, 1, 2, 4, 3], [0, 3, 2, 2, 1, 2]],
                 scores=[6, 7, 25, 18], ranking=[2, 3, 1, 0], points=[3, 0, 3, 2]),
        ],
        plus2=[2, 0, 1, 1], plus1=[0, 1, 2, 1], final=[0, 2, 3, 1],
        score_rewards=[1.0, -2.0, 1.0, 0.0],
    ),
}


def placed(order, places) -> list[list[int]]:
    """Holdings of a round in which seat ``order[k]`` gets ``places[k]`` (the holdings that
    finish k-th): the scores of a draw-and-keep round depend on the holdings only."""
    holdings = [None] * len(order)
    for k, seat in enumerate(order):
        holdings[seat] = places[k]
    return holdings


# 4 players: holdings that score 31, 18, 14, 13.
# bowwow 3 1 1 1: 1st gets 3.   flamingo 1 1 1 4: last gets 3.   octo 1 1 5 1: 3rd gets 3.
# hippo 4 1 2 2: 1st gets 5.    elephant 1 6 1 2: 2nd gets 4.
# 1st: 10 - 3 + 3 x 8 = 31; 2nd: 10 - 4 + 3 x 4 = 18; 3rd: 10 - 5 + 3 x 3 = 14; last: 10 - 6 + 3 x 3 = 13.
FOUR_PLACES = [[0, 3, 1, 1, 4, 1], [0, 1, 1, 1, 1, 6], [0, 1, 1, 5, 2, 1], [0, 1, 4, 1, 2, 2]]
FOUR_SCORES = [31, 18, 14, 13]
# 2 players: bowwow 4 2, flamingo 4 3, octo 5 3: the winner gets 8; hippo 4 5, elephant 3 7:
# the runner-up gets 7. Winner: 10 - 7 + 3 x 8 = 27; runner-up: 10 - 8 + 3 x 7 = 23.
TWO_PLACES = [[0, 4, 4, 5, 4, 3], [0, 2, 3, 3, 5, 7]]
TWO_SCORES = [27, 23]


def placed_round(starter, order, places, scores, points) -> dict:
    """A round of ``ROUND_GAMES``' form, finished in ``order`` (seats, best first)."""
    return dict(starter=starter, holdings=placed(order, places), ranking=order, points=points,
                scores=[scores[order.index(p)] for p in range(len(order))])


# 4 players. Points after the rounds: [2, 0, 1, -1], [3, 0, 0, 1], [2, 0, 2, 2], [2, 2, 1, 3].
# Seats 0 and 1 tie on 2 points with one +2 chip each; seat 0 has a +1 chip (round 2), seat 1
# none, so seat 0 ranks above seat 1, although seat 1 won the last round.
PLUS1_GAME = dict(
    rounds=[
        placed_round(0, [0, 2, 1, 3], FOUR_PLACES, FOUR_SCORES, [2, 0, 1, -1]),
        placed_round(3, [3, 0, 1, 2], FOUR_PLACES, FOUR_SCORES, [3, 0, 0, 1]),
        placed_round(2, [2, 3, 1, 0], FOUR_PLACES, FOUR_SCORES, [2, 0, 2, 2]),
        placed_round(0, [1, 3, 0, 2], FOUR_PLACES, FOUR_SCORES, [2, 2, 1, 3]),
    ],
    plus2=[1, 1, 1, 1], plus1=[1, 0, 1, 2], final=[3, 0, 1, 2],
    score_rewards=[0.0, 0.0, -1.0, 1.0],  # points minus their mean, 2
)
# 2 players: every round, the winner +2 and the runner-up (the last) -1. Points after the
# rounds: [2, -1], [1, 1], [3, 0], [5, -1].
TWO_PLAYER_GAME = dict(
    rounds=[
        placed_round(0, [0, 1], TWO_PLACES, TWO_SCORES, [2, -1]),
        placed_round(1, [1, 0], TWO_PLACES, TWO_SCORES, [1, 1]),
        placed_round(0, [0, 1], TWO_PLACES, TWO_SCORES, [3, 0]),
        placed_round(1, [0, 1], TWO_PLACES, TWO_SCORES, [5, -1]),
    ],
    plus2=[3, 1], plus1=[0, 0], final=[0, 1],
    score_rewards=[3.0, -3.0],  # points minus their mean, 2
)


@pytest.mark.parametrize("name", sorted(ROUND_GAMES))
@pytest.mark.parametrize("scheme", ["win", "score"])
def test_round_game(name, scheme):
    play_round_game(ROUND_GAMES[name], scheme)


@pytest.mark.parametrize("scheme", ["win", "score"])
def test_round_game_tie_on_points_and_plus2_chips_goes_to_more_plus1_chips(scheme):
    """docs/rules.md, decision 8: "The final ranking of a round game goes by chip points, then
    the number of +2 chips, then the number of +1 chips, then the placing in the last round." Seats 0 and 1 tie on points and on
    +2 chips; seat 0's +1 chip puts it above seat 1, the winner of the last round."""
    play_round_game(PLUS1_GAME, scheme)


@pytest.mark.parametrize("scheme", ["win", "score"])
def test_two_player_round_game_runner_up_gets_only_minus_one(scheme):
    """docs/rules.md, decision 8: "With two players the runner-up is also the last, so it
    receives only the -1 chip" -- no +1 chip, ever, and the runner-up starts the next round."""
    sim = play_round_game(TWO_PLAYER_GAME, scheme)
    assert sim.state.plus1[:2, 0].tolist() == [0, 0]


def play_round_game(game: dict, scheme: str) -> Simulator:
    """Play a round game of ``ROUND_GAMES``' form and check it round by round."""
    n = len(game["rounds"][0]["holdings"])
    decks, scripts = [], []
    for rnd in game["rounds"]:
        deck, actions = draw_keep_game(rnd["holdings"], removed="giraffe " * 5, starter=rnd["starter"])
        decks.append(deck)
        scripts.append(actions)
    sim = Simulator(Rules(num_players=n, rounds=4, reward=scheme), 1, decks=np.array([decks]))
    s = sim.state
    for r, (rnd, actions) in enumerate(zip(game["rounds"], scripts)):
        # A fresh round: coins back to 10, chips and market cleared, dealt from its deck,
        # the last-placed of the round before starts.
        check(sim, round=r, turn=0, current=rnd["starter"], phase=0, coins=[10] * n, chips={}, market={},
              portfolios={p: "" for p in range(n)}, pile=45 - 5 - 3 * n, done=False)
        assert s.deck[:, 0].tolist() == decks[r]
        results = play_all(sim, actions)
        assert all((x.rewards == 0).all() and not x.terminated[0] for x in results[:-1])
        assert s.scores[:n, 0].tolist() == rnd["scores"], f"round {r} scores"
        assert s.round_points[:n, 0].tolist() == rnd["points"], f"round {r} points"
        if r < 3:
            # No reward and no end before round 4.
            assert (results[-1].rewards == 0).all() and not results[-1].terminated[0]
            assert ranking(s.ranks[:, 0]) == rnd["ranking"], f"round {r} ranking"
    result = results[-1]
    assert result.terminated[0] and not result.truncated[0]
    assert s.plus2[:n, 0].tolist() == game["plus2"] and s.plus1[:n, 0].tolist() == game["plus1"]
    assert ranking(s.ranks[:, 0]) == game["final"]
    assert ranking(result.ranks[0]) == game["final"]
    if scheme == "win":
        expected = [1.0 if p == game["final"][0] else -1.0 / (n - 1) for p in range(n)]
    else:  # round points minus their mean, unscaled
        expected = game["score_rewards"]
    np.testing.assert_allclose(result.rewards[0, :n], expected, atol=1e-6)
    assert abs(float(result.rewards[0].sum())) < 1e-5
    assert legal(sim) == []
    return sim


def test_round_game_with_a_truncated_round_continues_and_ends_truncated():
    """A capped round is scored and the round game goes on; the game ends truncated."""
    rng = np.random.default_rng(3)
    sim = Simulator(Rules(num_players=3, rounds=4, turn_cap=5), 1, seed=rng)
    for r in range(4):
        check(sim, round=r, turn=0, done=False)
        for _ in range(10):  # 5 turns of two decisions
            result = sim.step(sim.random_actions())
        assert int(sim.state.turn[0]) == (5 if r == 3 else 0)
        assert result.truncated[0] == (r == 3) and not result.terminated[0]
    assert sim.state.truncated[0] and sum(sim.state.round_points[:3, 0]) == 4 * (2 + 1 - 1)


def test_round_game_is_truncated_when_only_an_early_round_is_capped():
    """docs/rules.md, decision 1: "A round that reaches `Rules.turn_cap` completed turns [...]
    ends there and is scored as if the pile had just run out, hands added, and the game is
    reported as *truncated*"; "the whole game counts as truncated if any round was capped".
    A round game has one ending to report: one capped round (here only round 2) makes the
    whole game truncated, even though its last round ran out its pile."""
    sim = Simulator(Rules(num_players=3, rounds=4, turn_cap=40), 1, seed=7)
    for r in range(4):
        check(sim, round=r, turn=0, done=False, market={})
        turns = draws = 0
        while int(sim.state.round[0]) == r and not sim.done[0]:
            takes = [name for name in legal(sim) if name.startswith("take")]
            if r == 1 and takes:  # round 2 cycles cards: take one back and keep it
                company = takes[0].split()[1]
                play(sim, f"take {company}")
                result = play(sim, f"keep {company}")
            elif r == 1:  # ... or draws and puts a card straight into the market
                play(sim, "draw")
                result = play(sim, next(name for name in legal(sim) if name.startswith("market")))
                draws += 1
            else:  # the other rounds draw and keep: the 31 pile cards end them before the cap
                play(sim, "draw")
                result = play(sim, legal(sim)[0])
                draws += 1
            turns += 1
        if r == 1:  # the cap ended round 2, with cards left in the pile
            assert turns == 40 and draws < 31 and sim.state.capped[0]
        else:
            assert turns == draws == 31
        assert not result.terminated[0] and result.truncated[0] == (r == 3)
    assert sim.state.truncated[0] and not sim.state.terminated[0]
    assert (result.rewards[0, :3] != 0).any()

