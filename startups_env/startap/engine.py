"""The rules of *Стартап* on numpy, for the games ``g`` (an intp index array) of a
:class:`~startups_env.startap.state.State` at once. Each function applies one rule of
docs/startap.md to every game it is given; the automatic parts of the turn (reveals,
draws, the end of a part, costs and income) follow the decisions here, so that each game
stops at its next decision. :func:`legal_mask` says which decisions are legal.
"""

from __future__ import annotations

import numpy as np

from startups_env.startap import cards as C
from startups_env.startap import rules as R
from startups_env.startap.state import P, S, State

_SEATS = np.arange(P)
_LONG_OF_KIND = {kind: k for k, kind in enumerate(C.LONG_KINDS)}
_NO_PROFIT, _RENT_HIKE, _FREEZE = (_LONG_OF_KIND[k] for k in (C.NO_PROFIT, C.RENT_HIKE, C.HIRING_FREEZE))
_IS_LONG = np.isin(np.arange(len(C.INCIDENT_KINDS)), C.LONG_KINDS)
_LONG_INDEX = np.array([_LONG_OF_KIND.get(k, -1) for k in range(len(C.INCIDENT_KINDS))], np.int8)
_CARD_VALUE = (C.PROJECT_INCOME).astype(np.int16)


def seated(s: State, g: np.ndarray) -> np.ndarray:
    """bool[k, P]: the seats at each table."""
    return _SEATS[None, :] < s.num_players[g, None]


def next_seat(s: State, g: np.ndarray, origin: np.ndarray, after: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """int[k]: the first seat clockwise from ``origin`` that is more than ``after`` seats
    past it (``after`` -1: the origin itself may be it) and ``wanted`` (bool[k, P]); -1 if none."""
    d = (_SEATS[None, :] - origin[:, None]) % s.num_players[g, None]
    ok = wanted & seated(s, g) & (d > after[:, None])
    best = np.where(ok, d, P + 1).argmin(axis=1)
    return np.where(ok.any(axis=1), best, -1)


def seats_past(s: State, g: np.ndarray, origin: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """int[k]: how many seats clockwise ``seat`` is past ``origin``."""
    return (seat - origin) % s.num_players[g]


def pool_origin(s: State, g: np.ndarray) -> np.ndarray:
    """int[k]: the seat a pool starts from: the active player in part 1, else the player
    whose part triggered it."""
    return np.where(s.main_seat[g] < 0, s.active[g], s.main_seat[g])


# ---------------------------------------------------------------- the deal
def deal(s: State, g: np.ndarray, players: np.ndarray, decks: dict[str, np.ndarray]) -> None:
    """Deal the games ``g`` afresh at ``players`` (int[k]) seats from ``decks`` (the three
    decks in dealing order, int8[k, size] each): the empty game, then seat i's hand is cards
    3i..3i+2 of the project and of the opportunity deck, every seat has 10 coins, and the
    first turn starts (:func:`start_turn`)."""
    s.clear(g)
    s.num_players[g] = players
    for name, arr in decks.items():
        getattr(s, name)[g] = arr
    hands = ((decks["project_deck"], s.project_hand, s.project_next, R.START_PROJECTS),
             (decks["opportunity_deck"], s.opportunity_hand, s.opportunity_next, R.START_OPPORTUNITIES))
    for deck, hand, following, per_seat in hands:
        for seat in range(P):
            at = np.flatnonzero(players > seat)
            hand[g[at, None], seat, deck[at, per_seat * seat:per_seat * (seat + 1)]] = True
        following[g] = per_seat * players
    s.coins[g] = np.where(_SEATS[None, :] < players[:, None], R.START_COINS, 0)
    start_turn(s, g)


# ---------------------------------------------------------------- the turn
def start_turn(s: State, g: np.ndarray) -> None:
    """Part 1 of the turn (not on the first): reveal a project to offer round the table."""
    reveal = (s.turn[g] > 0) & (s.project_next[g] < C.NUM_PROJECTS)
    r = g[reveal]
    s.revealed[r] = s.project_deck[r, s.project_next[r]]
    s.project_next[r] += 1
    s.asked[r] = 0
    s.phase[r] = R.PROJECT_OFFER
    s.current[r] = s.active[r]
    rest_of_part_one(s, g[~reveal])


def rest_of_part_one(s: State, g: np.ndarray) -> None:
    """After the project offer: the active player draws an opportunity, an incident is revealed."""
    later = s.turn[g] > 0
    h = g[later]
    draw = h[s.opportunity_next[h] < C.NUM_OPPORTUNITIES]
    s.opportunity_hand[draw, s.active[draw], s.opportunity_deck[draw, s.opportunity_next[draw]]] = True
    s.opportunity_next[draw] += 1
    pooled = reveal_incident(s, h)
    start_part_two(s, np.concatenate([g[~later], h[~pooled]]))


def reveal_incident(s: State, g: np.ndarray) -> np.ndarray:
    """Reveal the next incident where one is left: a long one goes on the table, an immediate
    one opens the pool (:func:`pool_origin`). Returns bool[k]: the pool now needs decisions."""
    pooled = np.zeros(g.size, bool)
    left = s.incident_next[g] < C.NUM_INCIDENTS
    h = g[left]
    card = s.incident_deck[h, s.incident_next[h]]
    s.incident_next[h] += 1
    kind = C.INCIDENT_KIND[card]
    long = _IS_LONG[kind]
    hl = h[long]
    s.long_work[hl, _LONG_INDEX[kind[long]]] = C.INCIDENT_WORK[card[long]]
    hi = h[~long]
    s.incident[hi] = card[~long]
    s.commits[hi] = 0
    s.committed[hi] = 0
    s.phase[hi] = R.COMMIT
    s.current[hi] = next_seat(s, hi, pool_origin(s, hi), np.full(hi.size, -1), s.alive[hi])
    pooled[np.flatnonzero(left)[~long]] = True
    return pooled


def start_part_two(s: State, g: np.ndarray) -> None:
    s.main_seat[g] = s.active[g]
    begin_main(s, g, s.active[g])


def begin_main(s: State, g: np.ndarray, seats: np.ndarray) -> None:
    """A player's part 2: every member of the team is free for one unit of work."""
    s.self_free[g, seats] = 1
    s.free[g, seats] = s.employees[g, seats]
    s.sold[g] = s.played_project[g] = s.played_opportunity[g] = False
    s.offers[g] = 0
    s.phase[g] = R.MAIN
    s.current[g] = seats


def end_main(s: State, g: np.ndarray) -> None:
    """DONE: a week passes on each of the player's projects; one at its deadline fails (and
    is discarded); a player's third failure puts them out."""
    seat = s.main_seat[g]
    cards = s.slot_card[g, seat]
    present = cards >= 0
    weeks = s.slot_deadline[g, seat] - present
    failing = present & (weeks == 0)
    s.slot_deadline[g, seat] = weeks
    rows, slots = np.nonzero(failing)
    discard_slots(s, g[rows], seat[rows], slots)
    s.failures[g, seat] += failing.sum(axis=1).astype(np.int8)
    out = s.failures[g, seat] >= R.MAX_FAILURES
    eliminate(s, g[out], seat[out])
    over = s.alive[g].sum(axis=1) == 1
    finish(s, g[over])
    after_main(s, g[~over])


def after_main(s: State, g: np.ndarray) -> None:
    """Incidents that completed projects triggered are revealed, then the next player's part 2
    (or, after the last, part 3)."""
    while g.size:
        waiting = s.pending[g] > 0
        w = g[waiting]
        s.pending[w] -= 1
        pooled = reveal_incident(s, w)
        ready = g[~waiting]
        a = s.active[ready]
        following = next_seat(s, ready, a, seats_past(s, ready, a, s.main_seat[ready]), s.alive[ready])
        last = following < 0
        begin_payday(s, ready[last])
        on = ready[~last]
        s.main_seat[on] = following[~last]
        begin_main(s, on, following[~last])
        g = w[~pooled]


def begin_payday(s: State, g: np.ndarray) -> None:
    """Part 3 starts: each player with staff, in turn from the active player, may fire some
    before paying; then :func:`end_turn`."""
    s.main_seat[g] = -1
    next_payday(s, g, np.full(g.size, -1))


def next_payday(s: State, g: np.ndarray, after: np.ndarray) -> None:
    """The next player with staff more than ``after`` seats past the active one decides, or
    (none left) the costs and income."""
    staffed = s.alive[g] & (s.employees[g].sum(axis=2) > 0)
    seat = next_seat(s, g, s.active[g], after, staffed)
    some = seat >= 0
    h = g[some]
    s.phase[h] = R.PAYDAY
    s.current[h] = seat[some]
    end_turn(s, g[~some])


def end_turn(s: State, g: np.ndarray) -> None:
    """Part 3: rent, salaries (unpaid employees leave), the freelance salary, profit; then the
    win at 27, the turn cap, and the next turn."""
    here = s.alive[g]
    coins = s.coins[g].astype(np.int32)
    employees = s.employees[g].astype(np.int32)
    headcount = employees.sum(axis=2) + 1
    rent = sum((headcount >= people).astype(np.int32) for people, _coins in R.RENT_STEPS)
    rent = (rent + s.long_work[g, _RENT_HIKE].any(axis=1)[:, None]) * here
    coins -= np.minimum(coins, rent)
    for sp in range(S):  # developers are paid first
        paid = np.minimum(employees[:, :, sp], coins)
        coins -= paid
        employees[:, :, sp] = paid
    coins += here & ~s.hired[g]
    owner = s.completed_owner[g]
    value = (_CARD_VALUE[None, :] + s.features[g]) * (owner >= 0)
    profit = ((owner[:, None, :] == _SEATS[None, :, None]) * value[:, None, :]).sum(axis=2)
    coins += profit * ~s.long_work[g, _NO_PROFIT].any(axis=1)[:, None]
    s.coins[g] = coins
    s.employees[g] = employees
    won = (np.where(here, coins, 0)).max(axis=1) >= R.WIN_COINS
    finish(s, g[won])
    g = g[~won]
    s.turn[g] += 1
    capped = s.turn[g] >= R.TURN_CAP
    finish(s, g[capped], truncated=True)
    g = g[~capped]
    a = s.active[g]
    s.active[g] = next_seat(s, g, a, np.zeros(g.size, np.intp), s.alive[g])
    start_turn(s, g)


def eliminate(s: State, g: np.ndarray, seats: np.ndarray) -> None:
    """A third failure: the player is out, ranked below everyone still in; their cards (hand,
    projects in progress and finished, feature, staff) go to the discard pile face up."""
    s.ranks[g, seats] = s.place[g, seats] = s.alive[g].sum(axis=1)
    s.project_discard[g] |= s.project_hand[g, seats] | (s.completed_owner[g] == seats[:, None])
    s.opportunity_open[g] |= s.opportunity_hand[g, seats]
    s.project_hand[g, seats] = False
    s.opportunity_hand[g, seats] = False
    for k in range(R.SLOTS):
        s.project_discard[g, np.maximum(s.slot_card[g, seats, k], 0)] |= s.slot_card[g, seats, k] >= 0
        clear_slots(s, g, seats, np.full(g.size, k))
    mine = s.completed_owner[g] == seats[:, None]
    s.features[g] = np.where(mine, 0, s.features[g])
    s.completed_owner[g] = np.where(mine, -1, s.completed_owner[g])
    s.feature_card[g, seats] = -1
    s.feature_work[g, seats] = 0
    s.employees[g, seats] = 0
    s.free[g, seats] = 0
    s.self_free[g, seats] = 0
    s.backup[g, seats] = 0


def finish(s: State, g: np.ndarray, truncated: bool = False) -> None:
    """The end: the players still in are ranked by coins, then finished projects, then fewer
    failures; players equal on all three share a place (and the reward), the lot (the order
    of the incident deck's last cards) orders them in ``ranks``. The eliminated keep their ranks."""
    if not g.size:
        return
    here = s.alive[g]
    finished = (s.completed_owner[g][:, None, :] == _SEATS[None, :, None]).sum(axis=2)
    tie = ((10**4 - s.coins[g].astype(np.int64)) * 64 + (C.NUM_PROJECTS - finished)) * 4 + s.failures[g]
    lot = s.incident_deck[g[:, None], C.NUM_INCIDENTS - 1 - _SEATS[None, :]].astype(np.int64)
    order = np.argsort(np.where(here, tie * 64 + lot, 10**12), axis=1)
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.broadcast_to(_SEATS, order.shape), axis=1)
    better = (tie[:, None, :] < tie[:, :, None]) & here[:, None, :]
    s.ranks[g] = np.where(here, ranks, s.ranks[g])
    s.place[g] = np.where(here, better.sum(axis=2), s.place[g])
    s.terminated[g] = not truncated
    s.truncated[g] = truncated


# ---------------------------------------------------------------- effects
def clear_slots(s: State, g: np.ndarray, seats: np.ndarray, slots: np.ndarray) -> None:
    s.slot_card[g, seats, slots] = -1
    s.slot_work[g, seats, slots] = 0
    s.slot_deadline[g, seats, slots] = 0


def discard_slots(s: State, g: np.ndarray, seats: np.ndarray, slots: np.ndarray) -> None:
    """Projects in progress go to the discard pile (failed, pushed out)."""
    s.project_discard[g, s.slot_card[g, seats, slots]] = True
    clear_slots(s, g, seats, slots)


def data_loss(s: State, g: np.ndarray, seats: np.ndarray) -> None:
    """A backup absorbs it (and is used up); without one, all progress on projects is lost."""
    backed = s.backup[g, seats] == R.BACKUP_WORK
    s.backup[g[backed], seats[backed]] = 0
    h, hs = g[~backed], seats[~backed]
    cards = s.slot_card[h, hs]
    s.slot_work[h, hs] = np.where((cards >= 0)[..., None], C.PROJECT_WORK[cards], 0)


def resolve_pool(s: State, g: np.ndarray) -> None:
    """All have committed: enough coins cancel the incident (and are paid), too few are
    handed back and the incident strikes everyone."""
    card = s.incident[g]
    avoided = s.commits[g].sum(axis=1) >= C.INCIDENT_AVOID[card]
    a = g[avoided]
    s.coins[a] -= s.commits[a]
    struck, kind = g[~avoided], C.INCIDENT_KIND[card[~avoided]]
    f = struck[kind == C.FINES]
    s.coins[f] -= np.minimum(s.coins[f], C.INCIDENT_LOSS[s.incident[f]][:, None] * s.alive[f])
    d = struck[kind == C.DATA_LOSS]
    for seat in range(P):
        at = d[s.alive[d, seat]]
        data_loss(s, at, np.full(at.size, seat))
    s.incident[g] = -1
    s.commits[g] = 0
    s.committed[g] = 0
    in_part_one = s.main_seat[g] < 0
    start_part_two(s, g[in_part_one])
    after_main(s, g[~in_part_one])


def complete(s: State, g: np.ndarray, owner: np.ndarray, k: np.ndarray) -> None:
    """A project's last unit: its bonus, its income from now on, competitors of its name
    pushed out (with their features), and an incident if the card says so."""
    card = s.slot_card[g, owner, k]
    clear_slots(s, g, owner, k)
    s.coins[g, owner] += C.PROJECT_BONUS[card]
    s.completed_owner[g, card] = owner
    name = C.PROJECT_NAME[card]
    rival = (_SEATS[None, :] != owner[:, None])  # [k, P]
    slot_card = s.slot_card[g]
    same = (slot_card >= 0) & (C.PROJECT_NAME[slot_card] == name[:, None, None]) & rival[:, :, None]
    rows, seats, slots = np.nonzero(same)
    discard_slots(s, g[rows], seats, slots)
    holder = s.completed_owner[g]
    gone = (holder >= 0) & (holder != owner[:, None]) & (C.PROJECT_NAME[None, :] == name[:, None])
    rows, gone_cards = np.nonzero(gone)
    lost_feature = s.feature_card[g[rows], holder[rows, gone_cards]] == gone_cards
    fr = rows[lost_feature]
    s.feature_card[g[fr], holder[fr, gone_cards[lost_feature]]] = -1
    s.feature_work[g[fr], holder[fr, gone_cards[lost_feature]]] = 0
    s.completed_owner[g[rows], gone_cards] = -1
    s.project_discard[g[rows], gone_cards] = True
    s.features[g[rows], gone_cards] = 0
    s.pending[g] += C.PROJECT_INCIDENT[card]


def use_unit(s: State, g: np.ndarray, seats: np.ndarray, sp: np.ndarray) -> None:
    """One unit of specialty ``sp``: a free employee of it if there is one, else the player."""
    employee = s.free[g, seats, sp] > 0
    s.free[g[employee], seats[employee], sp[employee]] -= 1
    s.self_free[g[~employee], seats[~employee]] -= 1


def work_on_slot(s: State, g: np.ndarray, owner: np.ndarray, k: np.ndarray, sp: np.ndarray) -> None:
    s.slot_work[g, owner, k, sp] -= 1
    finished = s.slot_work[g, owner, k].sum(axis=1) == 0
    complete(s, g[finished], owner[finished], k[finished])


def feature_homes(s: State, g: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """bool[k, 29]: the player's finished projects with the feature icon (a feature's choices)."""
    return (s.completed_owner[g] == seats[:, None]) & C.PROJECT_ICON[None, :]


def rewards(s: State, games: np.ndarray, by_rank: bool) -> np.ndarray:
    """float64[n, P]: the rewards of the ranked seats of ``games`` (see
    :meth:`startups_env.startap.simulator.Simulator.rewards`); 0 for the others."""
    ranks, place = s.ranks[games], s.place[games]
    n = s.num_players[games].astype(np.float64)[:, None]
    if by_rank:
        base = 1.0 - 2.0 * ranks / (n - 1)
    else:
        base = np.where(ranks == 0, 1.0, -1.0 / (n - 1))
    known = ranks >= 0
    share = (place[:, :, None] == place[:, None, :]) & known[:, :, None] & known[:, None, :]
    reward = (share * base[:, None, :]).sum(axis=2) / np.maximum(share.sum(axis=2), 1)
    return np.where(known, reward, 0.0)
