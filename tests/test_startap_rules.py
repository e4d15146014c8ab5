"""Scenario tests of the rules of Стартап (docs/startap.md), one or more for each rule, on
the readable reference; every scenario is played on the batch simulator too, loaded with
the same position, and the two must agree after each decision."""

from __future__ import annotations


import numpy as np
import pytest

from startups_env.startap import cards as C
from startups_env.startap import rules as R
from startups_env.startap.simulator import Simulator
from startups_env.startap.state import LAYOUT, State

from startap_reference import Game
from test_startap_parity import write_reference

DEV, DES, CON, MGT = range(4)
LICENCE = next(i for i, inc in enumerate(C.INCIDENTS) if inc.title == "Licence?")  # lose 5, avoid with 3


def new_game(n=2) -> Game:
    """A game in canonical deck order: seat i holds projects and opportunities 3i..3i+2."""
    return Game(n, range(C.NUM_PROJECTS), range(C.NUM_OPPORTUNITIES), range(C.NUM_INCIDENTS))


def play(game: Game, *actions) -> Game:
    """Step the reference through ``actions`` and a simulator loaded with the same position;
    they must agree after every decision (state and legal actions)."""
    sim = Simulator(1, num_players=game.n, seed=0)
    loaded = State.empty(1)
    write_reference(loaded, 0, game)
    sim.state = loaded
    for a in actions:
        game.step(a)
        sim.step(np.array([a]))
        expected = State.empty(1)
        write_reference(expected, 0, game)
        for name in LAYOUT:
            assert np.array_equal(getattr(sim.state, name), getattr(expected, name)), (name, R.action_to_string(a))
        assert np.flatnonzero(sim.legal_mask()[0]).tolist() == game.legal()
    return game


def at_main(game: Game, seat: int) -> Game:
    """Finish the parts of the turn before ``seat``'s part 2 (everyone says done, passes,
    puts nothing in pools)."""
    while not (game.phase == R.MAIN and game.current == seat):
        play(game, R.COMMIT_BASE if game.phase == R.COMMIT else R.PASS if game.phase == R.PROJECT_OFFER else R.DONE)
    return game


def work(t, s):
    return R.WORK_BASE + t * C.NUM_SPECIALTIES + s


def slot(game, seat, k):
    return game.players[seat].slots[k]


# ---------------------------------------------------------------- setup and the turn
def test_setup_deals_three_projects_three_opportunities_and_ten_coins():
    g = new_game(3)
    for i, p in enumerate(g.players):
        assert p.projects == {3 * i, 3 * i + 1, 3 * i + 2} and p.opportunities == {3 * i, 3 * i + 1, 3 * i + 2}
        assert p.coins == 10
    # the first turn skips part 1: no project offered, no draw, no incident
    assert (g.phase, g.current, g.revealed, g.incident_next) == (R.MAIN, 0, -1, 0)


def test_each_player_has_a_part_two_in_turn_then_costs_and_the_next_active_player():
    g = new_game(3)
    play(g, R.DONE)
    assert (g.phase, g.current) == (R.MAIN, 1)
    play(g, R.DONE, R.DONE)
    # turn 2: the active marker moved on; part 1 reveals the next project to seat 1
    assert (g.turn, g.active, g.phase, g.current, g.revealed) == (1, 1, R.PROJECT_OFFER, 1, 9)
    assert [p.coins for p in g.players] == [11, 11, 11]  # the freelance salary


def test_a_revealed_project_is_offered_clockwise_and_the_taker_puts_it_into_work():
    # seed: "Reveals a project card and decides whether to take it into work. If not, the
    # same decision is made by the other players clockwise."
    g = at_main(new_game(3), 2)
    play(g, R.DONE)
    assert (g.phase, g.current) == (R.PROJECT_OFFER, 1)
    play(g, R.PASS)
    assert g.current == 2
    play(g, R.TAKE)
    assert g.revealed == -1 and g.taken_by[9] == 2
    assert 9 not in g.players[2].projects  # the hand keeps the dealt projects only
    assert slot(g, 2, 0) == [9, list(C.PROJECTS[9].work), C.PROJECTS[9].deadline]  # in work, deadline running
    at_main(g, 2)
    assert R.PLAY_PROJECT_BASE + 6 in g.legal()  # taking it was not the part's one project
    play(g, R.DONE)
    assert slot(g, 2, 0)[2] == C.PROJECTS[9].deadline - 1


def test_a_player_with_three_projects_in_progress_cannot_take_a_revealed_one():
    g = at_main(new_game(2), 1)
    g.players[0].slots = [[c, list(C.PROJECTS[c].work), 4] for c in (0, 1, 2)]
    play(g, R.DONE)
    assert (g.phase, g.current) == (R.PROJECT_OFFER, 1)
    play(g, R.PASS)
    assert g.current == 0 and g.legal() == [R.PASS]
    play(g, R.PASS)
    assert g.project_discard[6] and g.revealed == -1


def test_a_project_nobody_takes_is_discarded():
    g = at_main(new_game(2), 1)
    play(g, R.DONE, R.PASS, R.PASS)
    assert all(6 not in p.projects for p in g.players) and g.project_next == 7


def test_the_active_player_draws_one_hidden_opportunity_then_an_incident_is_revealed():
    g = at_main(new_game(2), 1)
    play(g, R.DONE, R.PASS, R.PASS)
    assert g.players[1].opportunities == {3, 4, 5, 6}
    # incident 0 is immediate (fines): the pool opens at the active player
    assert (g.phase, g.current, g.incident) == (R.COMMIT, 1, 0)


# ---------------------------------------------------------------- incidents
def pool_open(n=2, card=0) -> Game:
    g = at_main(new_game(n), n - 1)
    g.incident_deck[0] = card
    g.incident_deck[card] = 0
    play(g, R.DONE, *[R.PASS] * n)
    assert g.phase == R.COMMIT
    return g


def test_a_pool_that_reaches_the_avoid_amount_cancels_the_incident_and_is_paid():
    g = pool_open(2, card=LICENCE)
    assert (C.INCIDENTS[LICENCE].loss, C.INCIDENTS[LICENCE].avoid) == (5, 3)
    before = [p.coins for p in g.players]
    play(g, R.COMMIT_BASE + 2, R.COMMIT_BASE + 1)
    assert [p.coins for p in g.players] == [before[0] - 1, before[1] - 2]  # seat 1 committed first
    assert g.phase == R.MAIN and g.incident == -1


def test_a_pool_that_falls_short_is_handed_back_and_the_incident_strikes_everyone():
    g = pool_open(2, card=LICENCE)
    before = [p.coins for p in g.players]
    play(g, R.COMMIT_BASE + 1, R.COMMIT_BASE + 1)
    assert [p.coins for p in g.players] == [c - 5 for c in before]


def test_a_player_commits_at_most_their_coins_and_a_fine_takes_no_more_than_they_have():
    g = pool_open(2, card=LICENCE)
    g.players[1].coins = 2
    assert g.legal() == [R.COMMIT_BASE + k for k in range(3)]
    g.players[0].coins = 4
    play(g, R.COMMIT_BASE, R.COMMIT_BASE)
    assert [p.coins for p in g.players] == [0, 0]


def test_a_long_incident_acts_until_closed_by_work():
    g = pool_open(2, card=0)
    play(g, R.COMMIT_BASE + 2, R.COMMIT_BASE)  # avoided
    no_profit = next(i for i, inc in enumerate(C.INCIDENTS) if inc.kind == C.NO_PROFIT)
    assert C.INCIDENTS[no_profit].work == (0, 0, 0, 3)
    g.incident_deck[g.incident_next] = no_profit
    g.incident_deck[no_profit] = 1
    g.completed_owner[10] = 0  # seat 0 owns a finished project earning... (income 0)
    g.completed_owner[2] = 0  # ...and one earning 1
    play(g, R.DONE, R.DONE, R.PASS, R.PASS)  # next turn: seat 0 active, the long incident goes on the table
    assert g.long_work[0] == [0, 0, 0, 3] and g.phase == R.MAIN
    coins = g.players[0].coins
    play(g, work(R.TARGET_LONG, MGT))  # the player, a generalist, gives a management unit
    assert g.long_work[0] == [0, 0, 0, 2]
    play(g, R.DONE, R.DONE)
    assert g.players[0].coins == coins + 1  # the freelance salary, but no profit while it lasts
    g.long_work[0] = [0, 0, 0, 0]
    coins = g.players[0].coins
    g.incident_next = C.NUM_INCIDENTS  # (no more incidents)
    at_main(g, 0)  # (seat 1 is active this turn: seat 0 plays last)
    play(g, R.DONE)
    assert g.players[0].coins == coins + 1 + 1  # closed: the project earns again


def test_rent_hike_and_hiring_freeze_long_incidents():
    g = new_game(2)
    g.long_work[1] = [2, 0, 0, 0]  # rent hike: 1 more coin each turn
    g.long_work[2] = [0, 0, 2, 0]  # hiring freeze
    assert not any(R.HIRE_BASE <= a < R.FRONT_BASE for a in g.legal())
    play(g, R.DONE, R.DONE)
    assert [p.coins for p in g.players] == [10, 10]  # +1 freelance, -1 rent hike


# ---------------------------------------------------------------- playing cards
def test_one_project_and_one_opportunity_a_part():
    g = new_game(2)
    play(g, R.PLAY_PROJECT_BASE + 0)
    assert slot(g, 0, 0) == [0, [0, 1, 1, 0], 2]
    assert not any(R.PLAY_PROJECT_BASE <= a < R.HIRE_BASE for a in g.legal())
    play(g, R.HIRE_BASE + 0)
    assert g.players[0].employees == [1, 0, 0, 0] and 0 not in g.players[0].opportunities
    assert not any(R.HIRE_BASE <= a < R.FIRE_BASE for a in g.legal())


def test_at_most_three_projects_in_progress():
    g = new_game(2)
    p = g.players[0]
    p.slots = [[3, [1, 0, 0, 0], 3], [4, [1, 0, 0, 0], 3], [5, [1, 0, 0, 0], 3]]
    assert not any(R.PLAY_PROJECT_BASE <= a < R.HIRE_BASE for a in g.legal())


def test_selling_one_idea_a_turn_for_one_coin():
    g = new_game(2)
    play(g, R.SELL_BASE + 1)
    assert g.players[0].coins == 11 and 1 not in g.players[0].projects
    assert not any(R.SELL_BASE <= a < R.PLAY_PROJECT_BASE for a in g.legal())


# ---------------------------------------------------------------- staff, costs and income
def test_an_employee_works_for_one_coin_a_turn_and_ends_the_freelance_salary():
    g = new_game(2)
    play(g, R.HIRE_BASE + 0, R.DONE, R.DONE)
    assert (g.phase, g.current) == (R.PAYDAY, 0) and g.legal() == [R.DONE, R.FIRE_BASE + DEV]
    play(g, R.DONE)
    assert g.players[0].coins == 10 - 1  # salary paid, no freelance salary any more
    assert g.players[1].coins == 11


def test_the_freelance_salary_stops_for_good_after_the_first_hire_even_with_no_staff():
    g = new_game(2)
    play(g, R.HIRE_BASE + 0, R.FIRE_BASE + DEV, R.DONE, R.DONE)
    assert g.players[0].employees == [0, 0, 0, 0] and g.players[0].coins == 10


@pytest.mark.parametrize("staff, rent", [(1, 0), (2, 1), (3, 1), (4, 2), (5, 2), (6, 3), (8, 3)])
def test_office_rent_by_headcount_the_player_included(staff, rent):
    g = new_game(2)
    p = g.players[0]
    p.employees, p.hired, p.coins = [staff, 0, 0, 0], True, 20
    play(g, R.DONE, R.DONE, R.DONE)
    assert p.coins == 20 - rent - staff


def test_unpaid_employees_leave_developers_paid_first():
    g = new_game(2)
    p = g.players[0]
    p.employees, p.hired, p.coins = [1, 1, 0, 1], True, 3  # rent 1 (4 people), then 2 coins for 3 salaries
    play(g, R.DONE, R.DONE, R.DONE)
    assert (p.employees, p.coins) == ([1, 1, 0, 0], 0)


def test_at_the_end_of_the_turn_a_player_may_fire_staff_instead_of_paying_them():
    # seed: "each player pays the office rent, pays 1 coin for each employee regardless of
    # whether that employee was busy in this turn (or fires them)"
    g = new_game(3)
    g.players[0].employees, g.players[0].hired, g.players[0].coins = [1, 1, 0, 0], True, 10
    g.players[2].employees, g.players[2].hired = [0, 0, 1, 0], True
    play(g, R.DONE, R.DONE, R.DONE)
    assert (g.phase, g.current) == (R.PAYDAY, 0)  # in turn from the active player, staff only
    play(g, R.FIRE_BASE + DES)
    assert g.legal() == [R.DONE, R.FIRE_BASE + DEV]
    play(g, R.DONE)
    assert (g.phase, g.current) == (R.PAYDAY, 2)
    play(g, R.DONE)
    assert g.players[0].employees == [1, 0, 0, 0] and g.players[0].coins == 10 - 1  # 2 people: no rent
    assert g.players[2].coins == 10 - 1


def test_project_income_and_feature_income_each_turn():
    g = new_game(2)
    g.completed_owner[2] = 0  # Online shop: 1 a turn, feature icon
    g.features[2] = 2
    play(g, R.DONE, R.DONE)
    assert g.players[0].coins == 10 + 1 + 1 + 2


# ---------------------------------------------------------------- work
def test_employees_work_only_in_their_specialty_the_player_in_any():
    g = new_game(2)
    p = g.players[0]
    p.employees = [1, 0, 0, 0]
    g.begin_main(0)
    play(g, R.PLAY_PROJECT_BASE + 0)  # Home page: 1 design, 1 content
    legal = g.legal()
    assert work(0, DES) in legal and work(0, CON) in legal and work(0, DEV) not in legal
    play(g, work(0, DES))  # the player designs (the developer cannot)
    assert p.self_free == 0 and p.free == [1, 0, 0, 0]
    assert work(0, CON) not in g.legal()  # nobody left who writes content


def test_a_unit_of_work_is_given_by_a_free_employee_before_the_player():
    g = new_game(2)
    p = g.players[0]
    p.employees = [1, 0, 0, 0]
    g.begin_main(0)
    play(g, R.PLAY_PROJECT_BASE + 2)  # Online shop: 2 dev, 1 design
    play(g, work(0, DEV))
    assert (p.free, p.self_free) == ([0, 0, 0, 0], 1)
    play(g, work(0, DEV))
    assert p.self_free == 0 and slot(g, 0, 0)[1] == [0, 1, 0, 0]


def test_a_project_finished_in_time_pays_its_bonus_and_then_its_income():
    g = new_game(2)
    g.players[0].slots[0] = [10, [1, 0, 0, 0], 1]  # Utility: bonus 2
    play(g, work(0, DEV))
    assert g.completed_owner == {10: 0} and g.players[0].coins == 12 and slot(g, 0, 0) is None


def test_deadlines_count_down_at_the_end_of_the_owners_part_and_a_late_project_fails():
    g = new_game(2)
    play(g, R.PLAY_PROJECT_BASE + 0)  # deadline 2
    play(g, R.DONE)
    assert slot(g, 0, 0)[2] == 1
    at_main(g, 0)
    play(g, R.DONE)
    assert slot(g, 0, 0) is None and g.players[0].failures == 1


def fail_third(g: Game, seat: int) -> Game:
    """Give ``seat`` two failures and a project due at the end of its next part."""
    g.players[seat].failures = 2
    g.players[seat].slots[0] = [0, [0, 1, 1, 0], 1]
    return g


def test_a_third_failure_puts_that_player_out_and_the_game_goes_on():
    # seed: "Three failed projects (projects not completed by their deadline) mean an
    # immediate loss." -- a loss for that player; the others play on to 27.
    g = fail_third(new_game(4), 1)
    g.players[1].coins = 50
    g.players[1].projects.add(20)
    g.completed_owner[2] = 1
    g.features[2] = 1
    g.players[1].employees = [1, 0, 0, 0]
    play(g, R.DONE, R.DONE)
    assert not g.done and g.ranks[1] == 3 and g.place[1] == 3  # ranked last, at once
    p = g.players[1]
    assert (p.projects, p.opportunities, p.slots, p.employees) == (set(), set(), [None] * 3, [0] * 4)
    assert 2 not in g.completed_owner and g.features[2] == 0  # its name is free for push-out again
    assert all(g.project_discard[c] for c in (0, 2, 3, 4, 5, 20)) and all(g.opportunity_open[j] for j in (3, 4, 5))
    assert (g.phase, g.current) == (R.MAIN, 2)


def test_an_eliminated_player_takes_no_part_in_turns_offers_pools_or_targets():
    g = fail_third(new_game(3), 1)
    play(g, R.DONE, R.DONE, R.DONE)  # seat 1 is out; seat 2's part, then the turn ends
    assert g.active == 2 and (g.phase, g.current) == (R.PROJECT_OFFER, 2)  # seat 1 is skipped as active
    play(g, R.PASS)
    assert g.current == 0  # the offer skips seat 1
    g.incident_deck[g.incident_next] = LICENCE
    play(g, R.PASS)
    assert (g.phase, g.current) == (R.COMMIT, 2)
    play(g, R.COMMIT_BASE)
    assert g.current == 0  # the pool skips seat 1
    play(g, R.COMMIT_BASE)
    assert g.players[1].coins == 10 and g.players[0].coins == 11 - 5  # the fine passes the eliminated by
    audit = next(j for j, o in enumerate(C.OPPORTUNITIES) if o.situation == C.TAX_AUDIT)
    g.players[2].opportunities.add(audit)
    play(g, R.FRONT_BASE + audit)
    assert g.legal() == [R.TARGET_BASE]  # seat 0, one on; seat 1 (two on) cannot be aimed at


def test_the_last_player_left_wins_and_the_eliminated_rank_by_order_of_elimination():
    g = fail_third(new_game(3), 1)
    play(g, R.DONE, R.DONE)
    fail_third(g, 2)
    g.players[2].coins = 40
    play(g, R.DONE)
    assert g.terminated and g.ranks == [0, 2, 1] and g.place == [0, 2, 1]


def test_with_two_players_a_third_failure_is_an_immediate_loss():
    g = fail_third(new_game(2), 0)
    g.players[0].coins = 26
    play(g, R.DONE)
    assert g.terminated and g.ranks == [1, 0] and g.legal() == []


def test_backup_takes_two_units_of_any_specialty_and_absorbs_a_data_loss():
    g = new_game(2)
    g.players[0].employees = [0, 1, 0, 0]
    g.begin_main(0)
    play(g, work(R.TARGET_BACKUP, DES), work(R.TARGET_BACKUP, CON))
    assert g.players[0].backup == 2 and work(R.TARGET_BACKUP, DEV) not in g.legal()
    g.players[0].slots[0] = [0, [0, 0, 1, 0], 2]
    g.data_loss(0)
    assert g.players[0].backup == 0 and slot(g, 0, 0)[1] == [0, 0, 1, 0]
    g.data_loss(0)
    assert slot(g, 0, 0)[1] == [0, 1, 1, 0]  # without a backup the progress is lost


def test_features_only_on_completed_own_projects_with_the_icon_and_earn_one_a_turn():
    g = new_game(2)
    g.players[0].opportunities = {0, 1}  # features: Ad banners (1 design), Premium accounts (1 dev)
    assert R.FRONT_BASE + 0 not in g.legal()  # no completed project
    g.completed_owner[10] = 0  # Utility: no icon
    assert R.FRONT_BASE + 0 not in g.legal()
    g.completed_owner[12] = 0  # Blog: icon
    g.completed_owner[8] = 0  # News portal: icon
    # seed: "It is an addition to one of your already completed projects" -- the player's choice
    play(g, R.FRONT_BASE + 0)
    assert g.phase == R.ATTACH and g.legal() == [R.ATTACH_BASE + 8, R.ATTACH_BASE + 12]
    play(g, R.ATTACH_BASE + 12)
    assert g.players[0].feature == [12, [0, 1, 0, 0]] and g.phase == R.MAIN
    play(g, work(R.TARGET_FEATURE, DES))
    assert g.features[12] == 1 and g.players[0].feature is None
    play(g, R.DONE, R.DONE)
    assert g.players[0].coins == 10 + 1 + 1 + 1  # freelance + the feature (the blog earns 0) + the portal


def test_finishing_a_project_pushes_out_a_rivals_project_of_the_same_name_with_its_features():
    g = new_game(3)
    g.completed_owner[3] = 1  # seat 1's finished Online shop, with two features and one in progress
    g.features[3] = 2
    g.players[1].feature = [3, [1, 0, 0, 0]]
    g.players[2].slots[0] = [4, [1, 0, 0, 0], 3]  # a Social network: another name, untouched
    g.players[0].slots[0] = [2, [1, 0, 0, 0], 3]  # seat 0's Online shop, one unit from done
    play(g, work(0, DEV))
    assert g.completed_owner == {2: 0} and g.features[3] == 0 and g.players[1].feature is None
    assert slot(g, 2, 0) == [4, [1, 0, 0, 0], 3]


def test_a_rivals_project_in_progress_of_the_same_name_is_pushed_out_too():
    g = new_game(2)
    g.players[0].slots[0] = [0, [0, 0, 1, 0], 2]  # Home page
    g.players[1].slots[0] = [1, [1, 1, 0, 0], 2]  # Home page
    play(g, work(0, CON))
    assert slot(g, 1, 0) is None and g.players[1].failures == 0


def test_a_project_with_the_incident_trigger_reveals_an_incident_after_the_part():
    g = new_game(2)
    g.players[0].slots[0] = [4, [1, 0, 0, 0], 3]  # Social network: incident on completion
    play(g, work(0, DEV))
    assert g.pending == 1 and g.phase == R.MAIN
    play(g, R.DONE)
    assert (g.phase, g.current, g.incident) == (R.COMMIT, 0, 0)


# ---------------------------------------------------------------- situations
def situation_card(kind):
    return next(j for j, o in enumerate(C.OPPORTUNITIES) if o.situation == kind)


def test_a_crunch_week_gives_the_player_a_second_unit():
    g = new_game(2)
    g.players[0].opportunities = {situation_card(C.CRUNCH)}
    play(g, R.FRONT_BASE + situation_card(C.CRUNCH))
    assert g.players[0].self_free == 2


def test_an_angel_investor_gives_three_coins():
    g = new_game(2)
    g.players[0].opportunities = {situation_card(C.INVESTOR)}
    play(g, R.FRONT_BASE + situation_card(C.INVESTOR))
    assert g.players[0].coins == 13


def test_a_deadline_extension_adds_a_week_to_each_own_project():
    g = new_game(2)
    g.players[0].opportunities = {situation_card(C.EXTENSION)}
    g.players[0].slots[0] = [0, [0, 1, 1, 0], 2]
    play(g, R.FRONT_BASE + situation_card(C.EXTENSION))
    assert slot(g, 0, 0)[2] == 3


def test_a_lost_backup_hits_the_chosen_player():
    g = new_game(2)
    g.players[0].opportunities = {situation_card(C.LOST_BACKUP)}
    g.players[1].slots[0] = [1, [0, 1, 0, 0], 2]
    play(g, R.FRONT_BASE + situation_card(C.LOST_BACKUP), R.TARGET_BASE)
    assert slot(g, 1, 0)[1] == [1, 1, 0, 0]


def test_a_tax_audit_targets_a_chosen_player():
    g = new_game(3)
    audit = next(j for j, o in enumerate(C.OPPORTUNITIES) if o.situation == C.TAX_AUDIT)
    g.players[0].opportunities = {audit}
    play(g, R.FRONT_BASE + audit)
    assert g.phase == R.TARGET and g.legal() == [R.TARGET_BASE, R.TARGET_BASE + 1]
    play(g, R.TARGET_BASE + 1)
    assert [p.coins for p in g.players] == [10, 10, 8] and g.phase == R.MAIN


# ---------------------------------------------------------------- diplomacy
def test_an_accepted_work_offer_is_binding_the_unit_works_and_the_owner_pays():
    g = new_game(3)
    g.players[2].slots[0] = [6, [2, 2, 0, 0], 2]  # Mobile game: one person alone cannot finish it
    offer = R.OFFER_BASE + ((2 - 1) * R.SLOTS + 0) * C.NUM_SPECIALTIES + DES
    play(g, offer)
    assert g.phase == R.PRICE and g.current == 0
    play(g, R.PRICE_BASE + 1)  # two coins
    assert (g.phase, g.current) == (R.ANSWER, 2)
    play(g, R.TAKE)
    assert [p.coins for p in g.players] == [12, 10, 8] and slot(g, 2, 0)[1] == [2, 1, 0, 0]
    assert (g.phase, g.current, g.players[0].self_free) == (R.MAIN, 0, 0)


def test_a_refused_offer_changes_nothing_and_offers_are_limited():
    g = new_game(2)
    g.players[1].slots[0] = [6, [2, 2, 0, 0], 2]
    offer = R.OFFER_BASE + DEV
    play(g, offer, R.PRICE_BASE, R.PASS)
    assert [p.coins for p in g.players] == [10, 10] and g.players[0].self_free == 1 and g.offers == 1
    play(g, offer, R.PRICE_BASE, R.PASS)
    assert offer not in g.legal()


def test_an_owner_cannot_accept_a_price_they_cannot_pay():
    g = new_game(2)
    g.players[1].slots[0] = [6, [2, 2, 0, 0], 2]
    g.players[1].coins = 1
    play(g, R.OFFER_BASE + DEV, R.PRICE_BASE + 2)
    assert g.legal() == [R.PASS]


# ---------------------------------------------------------------- the end
def test_the_first_to_27_at_the_end_of_a_turn_wins():
    g = new_game(3)
    g.players[2].coins = 26
    g.players[1].coins = 30
    play(g, R.SELL_BASE + 0)
    assert g.players[0].coins == 11 and not g.done  # only checked at the end of the turn
    play(g, R.DONE, R.DONE, R.DONE)
    assert g.terminated and g.ranks == [2, 0, 1]


def test_a_tie_on_coins_goes_to_finished_projects_then_fewer_failures_never_to_the_seat():
    # seed: "The player who reaches 27 coins of capital first wins." (silent on ties)
    g = new_game(3)
    for p in g.players:
        p.coins = 27
    g.completed_owner[10] = 2  # seat 2 has finished a project
    g.players[0].failures = 1
    play(g, R.DONE, R.DONE, R.DONE)
    assert g.terminated and g.ranks == [2, 1, 0] and g.place == [2, 1, 0]


def test_players_equal_on_the_tie_break_share_the_win_and_the_lot_orders_them():
    g = new_game(3)
    g.players[0].coins, g.players[1].coins = 27, 27
    play(g, R.DONE, R.DONE, R.DONE)
    lot = [g.incident_deck[C.NUM_INCIDENTS - 1 - s] for s in range(2)]
    assert g.place == [0, 0, 2] and sorted(g.ranks[:2]) == [0, 1] and g.ranks[0] == int(lot[0] > lot[1])
    sim = Simulator(1, num_players=3, seed=0)
    write_reference(sim.state, 0, g)
    assert sim.rewards([0])[:3, 0].tolist() == pytest.approx([0.25, 0.25, -0.5])  # (1 - 1/2) / 2 each


def test_the_turn_cap_truncates_and_ranks_by_coins():
    g = new_game(2)
    g.turn = R.TURN_CAP - 1
    g.players[1].coins = 12
    play(g, R.DONE, R.DONE)
    assert g.truncated and not g.terminated and g.ranks == [1, 0]


def test_an_illegal_action_raises_and_changes_nothing():
    g = new_game(2)
    before, after = State.empty(1), State.empty(1)
    write_reference(before, 0, g)
    with pytest.raises(ValueError, match="illegal action"):
        g.step(R.TAKE)
    write_reference(after, 0, g)
    assert all(np.array_equal(getattr(before, name), getattr(after, name)) for name in LAYOUT)
