"""Scenario tests of the options of play (docs/rules.md, "Other rulesets"), written from the
summary's ruleset: each difference from the rulebook is a :class:`Rules` option, played
move by move from a hand-built deck with the expected state beside each move, as in
tests/test_rules_scenarios.py (whose helpers these use).

Companies: giraffe 0, bowwow 1, flamingo 2, octo 3, hippo 4, elephant 5.
"""

import numpy as np
import pytest
from helpers import INSTALLED_BACKENDS, act, draw_keep_game, ranking
from test_rules_scenarios import DEBT_GAME, check, legal, new_game, play, play_all

from startups_env import Rules, Simulator
from startups_env.startups import simulator
from startups_env.startups.observe import SLICES, observe
from startups_env.startups.rules import OPTIONS, RULESETS, parse_ruleset


@pytest.fixture(autouse=True, params=INSTALLED_BACKENDS)
def backend(request, monkeypatch):
    """Every scenario on every installed backend (the simulators here take the default)."""
    original = simulator.backend_class
    monkeypatch.setattr(simulator, "backend_class", lambda name: original(request.param if name is None else name))
    return request.param


# ----------------------------------------------------------------- naming the rules
def test_the_rulebook_is_the_default_and_the_summary_turns_every_option_on():
    assert Rules() == Rules.preset("rulebook") and Rules().ruleset == "rulebook" and Rules().option_bits == 0
    summary = Rules.preset("summary", num_players=5)
    assert summary.num_players == 5 and all(getattr(summary, name) for name in OPTIONS)
    assert summary.ruleset == "summary" and summary.option_vector() == (1.0, 1.0, 1.0)
    assert summary.params.options == 7


@pytest.mark.parametrize("text", ["market_row", "chip_triples_coins,payout_in_points", " Market_Row , payout_in_points "])
def test_a_ruleset_names_its_options_and_reads_back(text):
    rules = Rules.preset(text)
    on = [name for name in OPTIONS if getattr(rules, name)]
    assert on == [w.strip().lower() for w in text.split(",")]
    assert Rules.preset(rules.ruleset) == rules


@pytest.mark.parametrize("text", ["", "summery", "market_row,free_lunch", ","])
def test_an_unknown_ruleset_is_a_value_error_naming_the_choices(text):
    with pytest.raises(ValueError, match="ruleset") as err:
        parse_ruleset(text)
    assert "summary" in str(err.value) and "market_row" in str(err.value)


def test_the_env_takes_a_ruleset_by_name():
    """docs/rules.md's ``startups_env.env(ruleset="summary")`` raised "unknown keyword arguments
    ['ruleset']": the keywords were copied before ``ruleset`` was taken out of them."""
    import startups_env

    env = startups_env.env(ruleset="summary", num_players=3, turn_cap=60)
    assert env.unwrapped.rules == Rules.preset("summary", num_players=3, turn_cap=60)
    assert startups_env.env(ruleset="market_row").unwrapped.rules == Rules(market_row=True)
    with pytest.raises(ValueError, match="market_row"):  # one option set two ways
        startups_env.env(ruleset="summary", market_row=False)


def test_options_must_be_bools():
    with pytest.raises(ValueError, match="market_row must be a bool"):
        Rules(market_row=1)
    assert set(RULESETS) == {"rulebook", "summary"}


# ----------------------------------------------------------------- the market as a row
def _row_game() -> Simulator:
    """Two players, market row: each turn draws (free) and markets a card."""
    sim = new_game(["octo octo hippo", "flamingo flamingo elephant"], pile="giraffe bowwow giraffe bowwow",
                   market_row=True)
    play(sim, "draw", coins=[10, 10], hands={0: "octo octo hippo giraffe"})
    play(sim, "market octo", market={"octo": [0]}, row=[3])
    # "drawing from the pile has no price": no coin on the market card.
    play(sim, "draw", coins=[10, 10], market={"octo": [0]})
    play(sim, "market flamingo", row=[3, 2])
    play(sim, "draw", coins=[10, 10])
    play(sim, "market octo", row=[3, 2, 3], market={"octo": [0, 0], "flamingo": [0]}, current=1)
    return sim


def test_drawing_is_free_and_a_take_pays_one_coin_per_card_skipped():
    """Seed summary: "you must pay one capital chip for each card you skip over in the
    marketplace before taking your desired card"."""
    sim = _row_game()
    assert legal(sim) == ["draw", "take flamingo", "take octo"]
    # The observation shows a take's price as negative take coins: octo is in front (0),
    # flamingo behind one card (-1).
    obs = observe(sim.state)[0]
    assert obs[SLICES["take_coins"]].tolist() == [0, 0, -1, 0, 0, 0]
    play(sim, "take flamingo", coins=[10, 9], row=[3, 3], market={"octo": [0, 0]}, barred="flamingo",
         hands={1: "bowwow flamingo flamingo elephant"})
    # The coin left the game: nobody and no card holds it.
    assert int(sim.state.coins[:2, 0].sum()) + int(sim.state.market_coins[:, 0].sum()) == 19


def test_take_company_takes_its_front_most_card_at_the_front_most_price():
    sim = _row_game()
    play(sim, "take octo", coins=[10, 10], row=[2, 3], market={"octo": [0], "flamingo": [0]})
    play(sim, "market elephant", row=[2, 3, 5], current=0)
    # The second octo is now behind the flamingo: it costs 1.
    play(sim, "take octo", coins=[9, 10], row=[2, 5])


def test_a_take_the_player_cannot_pay_for_is_illegal():
    """Eleven cards in front of the giraffe and ten coins: the giraffe may not be taken."""
    pile = "bowwow bowwow bowwow bowwow bowwow bowwow octo octo octo octo octo giraffe"
    sim = new_game(["octo octo hippo", "flamingo flamingo elephant"], pile=pile, market_row=True)
    for name in pile.split():  # each turn markets the card it drew
        play(sim, "draw")
        play(sim, f"market {name}")
    check(sim, coins=[10, 10], current=0, row=[1] * 6 + [3] * 5 + [0])
    assert legal(sim) == ["draw", "take bowwow", "take octo"]
    with pytest.raises(ValueError, match="illegal"):
        sim.step(np.array([act("take giraffe")]))
    play(sim, "take octo", coins=[4, 10])  # six bowwows skipped


def test_the_rulebook_restrictions_still_hold_on_a_row():
    """The summary is silent on them; docs/rules.md keeps them: no market put of the company
    just taken, and the chip holder may not take its company (but pays to skip it)."""
    sim = _row_game()
    play(sim, "take octo", barred="octo")
    assert "market octo" not in legal(sim)
    play(sim, "keep octo", chips={"octo": 1}, current=0)
    play(sim, "draw")
    play(sim, "market hippo", row=[2, 3, 4], current=1)
    assert legal(sim) == ["draw", "take flamingo", "take hippo"]  # no octo for its chip holder
    play(sim, "take hippo", coins=[10, 8])  # it pays for the octo it skips too


# ----------------------------------------------------------------- scoring options
def _debt_game(**options) -> Simulator:
    deck, actions = draw_keep_game(**DEBT_GAME)
    sim = Simulator(Rules(num_players=3, **options), 1, decks=[deck])
    assert play_all(sim, actions)[-1].terminated[0]
    # giraffe  2 2 0: tie, nobody pays.          bowwow   3 1 2: seat 1 pays 1, seat 2 pays 2.
    # flamingo 3 2 2: seats 1, 2 pay 2 each.      octo     4 1 3: seat 1 pays 1, seat 2 pays 3.
    # hippo    0 5 4: seat 2 pays 4 to seat 1.    elephant 2 2 2: three-way tie, nobody pays.
    # Seat 0 is paid 11 shares and pays none; seat 1 is paid 4 and pays 4; seat 2 pays 11.
    assert sim.state.threes[:3, 0].tolist() == [11, 4, 0]
    return sim


def test_a_majority_holder_s_coins_are_worth_three():
    """Seed summary: "if you own the anti-monopoly chip for a company, your capital chips
    become worth 3 points each" (the chip of the payout's majority holder, hands added)."""
    sim = _debt_game(chip_triples_coins=True)
    # Seat 0 (majorities in bowwow, flamingo, octo): 3 x 10 + 3 x 11 = 63. Seat 1 (hippo)
    # keeps 6 coins: 3 x 6 + 3 x 4 = 30. Seat 2 held the octo chip in play but no majority
    # at the end, and is in debt: -1, not tripled.
    assert int(sim.state.chip[3, 0]) == 2
    assert sim.state.scores[:3, 0].tolist() == [63, 30, -1]
    assert ranking(sim.state.ranks[:, 0]) == [0, 1, 2]


def test_payments_are_three_points_a_share():
    """Seed summary: "each other player who holds stock in that same company must pay you
    3 victory points for each of their stocks", and on a tie for majority nobody is paid."""
    sim = _debt_game(payout_in_points=True)
    # Coins stay 10 each. Seat 0: 10 + 33 = 43; seat 1: 10 + 12 - 12 = 10; seat 2: 10 - 33.
    assert sim.state.scores[:3, 0].tolist() == [43, 10, -23]


def test_the_env_s_threes_count_the_shares_paid_in_points():
    """docs/api.md: under payout_in_points no 3-point coin changes hands, and ``info["threes"]``
    counts the 3-point payments received (seat 0 is paid 11 shares, seat 1 is paid 4)."""
    from startups_env.envs.aec import raw_env

    deck, actions = draw_keep_game(**DEBT_GAME)
    game = raw_env(num_players=3, payout_in_points=True)
    game.reset(options={"deck": deck})
    for action in actions:
        game.step(int(action))
    infos = [game.infos[f"player_{seat}"] for seat in range(3)]
    assert [info["threes"] for info in infos] == [11, 4, 0] and [info["score"] for info in infos] == [43, 10, -23]


def test_the_summary_ruleset_scores_both_ways_at_once():
    sim = _debt_game(chip_triples_coins=True, payout_in_points=True)
    # Seat 0: 30 + 33; seat 1: 30 + 12 - 12; seat 2: 10 - 33 (no majority: not tripled).
    assert sim.state.scores[:3, 0].tolist() == [63, 30, -23]


# ----------------------------------------------------------------- the bots
@pytest.mark.parametrize("name", ["random", "greedy", "banker", "hoarder", "spoiler", "noisy", "search", "ppo", "exit"])
def test_every_registry_bot_plays_legal_moves_under_the_summary(name, backend):
    """A few games of the summary's ruleset with the bot in every seat: the table checks
    each move against the legal mask, and the games end."""
    from startups_env.agents import make_agent
    from startups_env.table.driver import Table

    if backend == "numpy" and name == "search":
        pytest.skip("the search picks its own backend")
    kwargs = {"determinizations": 2, "max_candidates": 2, "infer_hands": False} if name == "search" else {}
    bot = make_agent(name, seed=3, **kwargs)
    sim = Table(Simulator(Rules.preset("summary", num_players=4), 4, seed=5), [bot] * 4).play()
    assert sim.done.all() and not sim.state.truncated.any() and (sim.state.options == 7).all()


def test_greedy_reads_the_free_draw_from_the_table_s_rules():
    """On a market row a draw is free: the greedy bot (which needs the rules) values it so."""
    from startups_env.agents.features import features

    sim = _row_game()
    obs = observe(sim.state)
    assert features(obs, sim.rules).draw_cost().tolist() == [0]
    assert features(obs).draw_cost().tolist() == [3]  # as the rulebook would price it


def test_the_generalization_table_plays_each_hero_on_each_ruleset(capsys):
    from startups_env.agents import generalization

    table = generalization.generalization_table(["greedy", "random"], ["rulebook", "summary"], games=8, seed=1)
    assert set(table) == {"greedy", "random"} and all(set(row) == {"rulebook", "summary"} for row in table.values())
    assert all(cell["games"] == 8 and 0 <= cell["win_rate"] <= 1 for row in table.values() for cell in row.values())
    assert generalization.main(["--heroes", "greedy", "--rulesets", "summary", "market_row", "--games", "4"]) == 0
    out = capsys.readouterr().out
    assert "summary" in out and "market_row" in out and "greedy" in out
    with pytest.raises(SystemExit):
        generalization.main(["--rulesets", "summery"])


def test_a_simulator_continues_games_under_the_options_they_were_dealt_under():
    """Simulator.from_state keeps the games' options (State.options), as it keeps their
    table sizes; assigning a state of other options to a simulator is refused."""
    summary = Simulator(Rules.preset("summary"), 3, seed=2)
    summary.step(summary.random_actions())
    again = Simulator.from_state(summary.state.copy(), Rules(turn_cap=50))
    assert again.rules.ruleset == "summary" and again.rules.turn_cap == 50
    np.testing.assert_array_equal(again.legal_mask(), summary.legal_mask())
    with pytest.raises(ValueError, match="other options of play"):
        Simulator(Rules(), 3, seed=2).state = summary.state.copy()
    mixed = summary.state.copy()
    mixed.options[0] = 0
    with pytest.raises(ValueError, match="different options"):
        Simulator.from_state(mixed)


def test_the_table_explains_a_summary_scoring():
    """The renderer scores with the simulator's function under the game's options."""
    from startups_env.startups.render import final_scoring, table_text

    sim = _debt_game(chip_triples_coins=True, payout_in_points=True)
    assert final_scoring(sim.state)["scores"] == [63, 30, -23]
    text = table_text(sim.state)
    assert "Options of play: chip_triples_coins, payout_in_points" in text and "Winner: P0 with 63 points" in text
