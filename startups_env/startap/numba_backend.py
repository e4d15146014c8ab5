"""The compiled engine of *Стартап*: its rules game by game, in numba, over the arrays of
:class:`~startups_env.startap.state.State`.

:mod:`startups_env.startap.engine` and :mod:`startups_env.startap.moves` are the reference:
numpy, every rule applied to the whole batch at once. The functions here apply the same
rules (docs/startap.md) to one game at a time, in scalar code, one function per rule; the
batch step loops over the games (on numba's threads from ``PARALLEL_FROM`` games on, with
the first game's helpers of :mod:`startups_env.startups.numba_backend`). The tests prove the
two equal state for state (tests/test_startap_numba.py). The decks are shuffled by the
simulator's generator (numpy), the same for both engines; dealing them out is
:func:`deal_rows` here, :func:`startups_env.startap.engine.deal` on numpy.

Every function takes ``s``, the :data:`StateArrays` named tuple of the State's arrays
(:func:`arrays`), and ``g``, the game; it changes the arrays in place.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import fields

import numba
import numpy as np

from startups_env.startap import cards as C
from startups_env.startap import observe as O
from startups_env.startap import rules as R
from startups_env.startap.observe import OBS_DIM, PER_PROJECT, PER_SEAT, PIECES
from startups_env.startap.state import LAYOUT, P, S, State
from startups_env.startups import numba_runtime
from startups_env.startups.numba_backend import forget_stale_cache, prefetch, serial_and_parallel

forget_stale_cache(__file__, C.__file__, R.__file__, O.__file__)
numba_runtime.describe_kernels(__name__, "Стартап's compiled rules", 240)

#: The State's int8 arrays whose last axis is the four specialties: a kernel also reads each
#: of their rows as one uint32 word (``<name>_words``), four counts at a time.
WORD_ROWS = ("employees", "free", "slot_work", "feature_work", "long_work")
#: The State's arrays, by their State names, and the :data:`WORD_ROWS` as uint32 words (views
#: of the same memory, last axis 1), as one record a kernel takes.
StateArrays = namedtuple("StateArrays", [f.name for f in fields(State)] + [f"{name}_words" for name in WORD_ROWS])


def arrays(state: State) -> StateArrays:
    """The arrays of ``state`` (not copies) as a :data:`StateArrays`."""
    return StateArrays(*(getattr(state, f.name) for f in fields(State)),
                       *(getattr(state, name).view(np.uint32) for name in WORD_ROWS))


def _jit(function):
    """A kernel called from Python (or a loop body called from a ``prange`` loop): compiled
    without reference counting, as it allocates nothing."""
    return numba.njit(cache=True, nogil=True, _nrt=False)(function)


def _inline(function):
    """A per-game piece, inlined into each kernel that calls it: a compiled call would pass
    the state's 51 arrays as several words each, which costs more than the rule it applies."""
    return numba.njit(cache=True, nogil=True, inline="always")(function)


# The card tables and constants the rules read (frozen into the kernels).
WORK, DEADLINE, BONUS = C.PROJECT_WORK, C.PROJECT_DEADLINE, C.PROJECT_BONUS
INCOME, ICON, BRINGS_INCIDENT, NAME = C.PROJECT_INCOME, C.PROJECT_ICON, C.PROJECT_INCIDENT, C.PROJECT_NAME
OPP_SPECIALTY, OPP_SITUATION, OPP_FEATURE_WORK = C.OPP_SPECIALTY, C.OPP_SITUATION, C.OPP_FEATURE_WORK
INCIDENT_KIND, INCIDENT_LOSS, INCIDENT_AVOID, INCIDENT_WORK = (C.INCIDENT_KIND, C.INCIDENT_LOSS, C.INCIDENT_AVOID,
                                                              C.INCIDENT_WORK)
LONG_INDEX = np.array([C.LONG_KINDS.index(k) if k in C.LONG_KINDS else -1 for k in range(len(C.INCIDENT_KINDS))],
                      np.int64)
NO_PROFIT, RENT_HIKE, FREEZE = (C.LONG_KINDS.index(k) for k in (C.NO_PROFIT, C.RENT_HIKE, C.HIRING_FREEZE))
RENT_PEOPLE = np.array([people for people, _coins in R.RENT_STEPS], np.int64)
NP, NO, NI, SLOTS = C.NUM_PROJECTS, C.NUM_OPPORTUNITIES, C.NUM_INCIDENTS, R.SLOTS


# ---------------------------------------------------------------- seats
@_inline
def alive(s, g, p):
    """Seat p is at the table and not out."""
    return p < s.num_players[g] and s.failures[g, p] < R.MAX_FAILURES


@_inline
def alive_count(s, g):
    count = 0
    for p in range(P):
        count += alive(s, g, p)
    return count


@_inline
def staff(s, g, p):
    total = 0
    for sp in range(S):
        total += s.employees[g, p, sp]
    return total


@_inline
def next_seat(s, g, origin, after, staffed):
    """The first seat still in, clockwise from ``origin``, more than ``after`` seats past it
    (with staff if ``staffed``); -1 if none."""
    n = np.int64(s.num_players[g])
    best, best_d = -1, P + 1
    for p in range(n):
        if alive(s, g, p) and not (staffed and staff(s, g, p) == 0):
            d = (p - np.int64(origin)) % n
            if d > after and d < best_d:
                best, best_d = p, d
    return best


@_inline
def seats_past(s, g, origin, seat):
    return (np.int64(seat) - np.int64(origin)) % np.int64(s.num_players[g])


@_inline
def pool_origin(s, g):
    return s.active[g] if s.main_seat[g] < 0 else s.main_seat[g]


# ---------------------------------------------------------------- the turn
@_inline
def start_turn(s, g):
    """Part 1 (not on the first turn): reveal a project to offer round the table."""
    if s.turn[g] > 0 and s.project_next[g] < NP:
        s.revealed[g] = s.project_deck[g, s.project_next[g]]
        s.project_next[g] += 1
        s.asked[g] = 0
        s.phase[g] = R.PROJECT_OFFER
        s.current[g] = s.active[g]
    else:
        rest_of_part_one(s, g)


@_inline
def rest_of_part_one(s, g):
    """After the offer: the active player draws an opportunity, an incident is revealed."""
    if s.turn[g] > 0:
        if s.opportunity_next[g] < NO:
            s.opportunity_hand[g, s.active[g], s.opportunity_deck[g, s.opportunity_next[g]]] = True
            s.opportunity_next[g] += 1
        if reveal_incident(s, g):
            return
    start_part_two(s, g)


@_inline
def reveal_incident(s, g):
    """The next incident: a long one goes on the table, an immediate one opens the pool
    (returns True: the pool needs decisions)."""
    if s.incident_next[g] >= NI:
        return False
    card = s.incident_deck[g, s.incident_next[g]]
    s.incident_next[g] += 1
    long = LONG_INDEX[INCIDENT_KIND[card]]
    if long >= 0:
        for sp in range(S):
            s.long_work[g, long, sp] = INCIDENT_WORK[card, sp]
        return False
    s.incident[g] = card
    for p in range(P):
        s.commits[g, p] = 0
    s.committed[g] = 0
    s.phase[g] = R.COMMIT
    s.current[g] = next_seat(s, g, pool_origin(s, g), -1, False)
    return True


@_inline
def start_part_two(s, g):
    s.main_seat[g] = s.active[g]
    begin_main(s, g, s.active[g])


@_inline
def begin_main(s, g, seat):
    """A player's part 2: every member of the team is free for one unit of work."""
    s.self_free[g, seat] = 1
    for sp in range(S):
        s.free[g, seat, sp] = s.employees[g, seat, sp]
    s.sold[g] = s.played_project[g] = s.played_opportunity[g] = False
    s.offers[g] = 0
    s.phase[g] = R.MAIN
    s.current[g] = seat


@_inline
def end_main(s, g):
    """DONE: a week passes on each project of the player; one at its deadline fails; a third
    failure puts the player out; the last player left wins."""
    seat = s.main_seat[g]
    failed = 0
    for k in range(SLOTS):
        if s.slot_card[g, seat, k] >= 0:
            s.slot_deadline[g, seat, k] -= 1
            if s.slot_deadline[g, seat, k] == 0:
                discard_slot(s, g, seat, k)
                failed += 1
    s.failures[g, seat] += failed
    if s.failures[g, seat] >= R.MAX_FAILURES:
        eliminate(s, g, seat)
    if alive_count(s, g) == 1:
        finish(s, g, False)
    else:
        after_main(s, g)


@_inline
def after_main(s, g):
    """Incidents that finished projects brought are revealed, then the next player's part 2
    (or, after the last, part 3)."""
    while s.pending[g] > 0:
        s.pending[g] -= 1
        if reveal_incident(s, g):
            return
    following = next_seat(s, g, s.active[g], seats_past(s, g, s.active[g], s.main_seat[g]), False)
    if following < 0:
        s.main_seat[g] = -1
        next_payday(s, g, -1)
    else:
        s.main_seat[g] = following
        begin_main(s, g, following)


@_inline
def next_payday(s, g, after):
    """The next player with staff more than ``after`` seats past the active one decides whom
    to fire, or (none left) the costs and income."""
    seat = next_seat(s, g, s.active[g], after, True)
    if seat >= 0:
        s.phase[g] = R.PAYDAY
        s.current[g] = seat
    else:
        end_turn(s, g)


@_inline
def pay_seat(s, g, p, rent_hike, no_profit):
    """Part 3 for seat p: rent, salaries (developers first; unpaid employees leave), the
    freelance salary, profit. Returns the coins."""
    here = alive(s, g, p)
    coins = np.int64(s.coins[g, p])
    rent = 0
    if here:
        head = staff(s, g, p) + 1
        for people in RENT_PEOPLE:
            rent += head >= people
        rent += rent_hike
    coins -= min(coins, rent)
    for sp in range(S):
        paid = min(np.int64(s.employees[g, p, sp]), coins)
        coins -= paid
        s.employees[g, p, sp] = paid
    if here and not s.hired[g, p]:
        coins += 1
    if not no_profit:
        for c in range(NP):
            if s.completed_owner[g, c] == p:
                coins += INCOME[c] + s.features[g, c]
    s.coins[g, p] = coins
    return coins if here else 0


@_inline
def any_work(s, g, long):
    for sp in range(S):
        if s.long_work[g, long, sp] != 0:
            return True
    return False


@_inline
def end_turn(s, g):
    """Part 3, then the win at 27, the turn cap, and the next turn."""
    rent_hike, no_profit = any_work(s, g, RENT_HIKE), any_work(s, g, NO_PROFIT)
    best = 0
    for p in range(P):
        best = max(best, pay_seat(s, g, p, rent_hike, no_profit))
    if best >= R.WIN_COINS:
        finish(s, g, False)
        return
    s.turn[g] += 1
    if s.turn[g] >= R.TURN_CAP:
        finish(s, g, True)
        return
    s.active[g] = next_seat(s, g, s.active[g], 0, False)
    start_turn(s, g)


@_inline
def eliminate(s, g, seat):
    """A third failure: the player is out, ranked below everyone still in; their cards go to
    the discard pile face up."""
    s.ranks[g, seat] = s.place[g, seat] = alive_count(s, g)
    for c in range(NP):
        if s.project_hand[g, seat, c] or s.completed_owner[g, c] == seat:
            s.project_discard[g, c] = True
        s.project_hand[g, seat, c] = False
        if s.completed_owner[g, c] == seat:
            s.features[g, c] = 0
            s.completed_owner[g, c] = -1
    for j in range(NO):
        if s.opportunity_hand[g, seat, j]:
            s.opportunity_open[g, j] = True
        s.opportunity_hand[g, seat, j] = False
    for k in range(SLOTS):
        if s.slot_card[g, seat, k] >= 0:
            discard_slot(s, g, seat, k)
    s.feature_card[g, seat] = -1
    for sp in range(S):
        s.feature_work[g, seat, sp] = 0
        s.employees[g, seat, sp] = 0
        s.free[g, seat, sp] = 0
    s.self_free[g, seat] = 0
    s.backup[g, seat] = 0


@_inline
def tie_key(s, g, p):
    """The tie-break: more coins, then more finished projects, then fewer failures (lower is better)."""
    finished = 0
    for c in range(NP):
        finished += s.completed_owner[g, c] == p
    return ((10**4 - np.int64(s.coins[g, p])) * 64 + (NP - finished)) * 4 + s.failures[g, p]


@_inline
def finish(s, g, truncated):
    """The end: the players still in ranked by :func:`tie_key`, the lot (the incident deck's
    last cards) ordering those who share a place."""
    for p in range(P):
        if not alive(s, g, p):
            continue
        tie = tie_key(s, g, p)
        key = tie * 64 + s.incident_deck[g, NI - 1 - p]
        rank = place = 0
        for q in range(P):
            if q != p and alive(s, g, q):
                other = tie_key(s, g, q)
                rank += other * 64 + s.incident_deck[g, NI - 1 - q] < key
                place += other < tie
        s.ranks[g, p] = rank
        s.place[g, p] = place
    s.terminated[g] = not truncated
    s.truncated[g] = truncated


# ---------------------------------------------------------------- effects
@_inline
def clear_slot(s, g, p, k):
    s.slot_card[g, p, k] = -1
    s.slot_deadline[g, p, k] = 0
    for sp in range(S):
        s.slot_work[g, p, k, sp] = 0


@_inline
def discard_slot(s, g, p, k):
    s.project_discard[g, s.slot_card[g, p, k]] = True
    clear_slot(s, g, p, k)


@_inline
def data_loss(s, g, p):
    """A backup absorbs it (and is used up); without one, all progress on projects is lost."""
    if s.backup[g, p] == R.BACKUP_WORK:
        s.backup[g, p] = 0
        return
    for k in range(SLOTS):
        card = s.slot_card[g, p, k]
        for sp in range(S):
            s.slot_work[g, p, k, sp] = WORK[card, sp] if card >= 0 else 0


@_inline
def resolve_pool(s, g):
    """All have committed: enough coins cancel the incident (and are paid), too few are
    handed back and it strikes everyone still in."""
    card = s.incident[g]
    total = 0
    for p in range(P):
        total += s.commits[g, p]
    for p in range(P):
        if total >= INCIDENT_AVOID[card]:
            s.coins[g, p] -= s.commits[g, p]
        elif alive(s, g, p) and INCIDENT_KIND[card] == C.FINES:
            s.coins[g, p] -= min(s.coins[g, p], INCIDENT_LOSS[card])
        elif alive(s, g, p) and INCIDENT_KIND[card] == C.DATA_LOSS:
            data_loss(s, g, p)
        s.commits[g, p] = 0
    s.incident[g] = -1
    s.committed[g] = 0
    if s.main_seat[g] < 0:
        start_part_two(s, g)
    else:
        after_main(s, g)


@_inline
def complete(s, g, owner, k):
    """A project's last unit: its bonus, its income from now on, competitors of its name
    pushed out (with their features), and an incident if the card says so."""
    card = s.slot_card[g, owner, k]
    clear_slot(s, g, owner, k)
    s.coins[g, owner] += BONUS[card]
    s.completed_owner[g, card] = owner
    name = NAME[card]
    for p in range(P):
        for kk in range(SLOTS):
            other = s.slot_card[g, p, kk]
            if p != owner and other >= 0 and NAME[other] == name:
                discard_slot(s, g, p, kk)
    for c in range(NP):
        holder = s.completed_owner[g, c]
        if holder >= 0 and holder != owner and NAME[c] == name:
            if s.feature_card[g, holder] == c:
                s.feature_card[g, holder] = -1
                for sp in range(S):
                    s.feature_work[g, holder, sp] = 0
            s.completed_owner[g, c] = -1
            s.project_discard[g, c] = True
            s.features[g, c] = 0
    s.pending[g] += BRINGS_INCIDENT[card]


@_inline
def use_unit(s, g, p, sp):
    """One unit of specialty sp: a free employee of it if there is one, else the player."""
    if s.free[g, p, sp] > 0:
        s.free[g, p, sp] -= 1
    else:
        s.self_free[g, p] -= 1


@_inline
def work_on_slot(s, g, owner, k, sp):
    s.slot_work[g, owner, k, sp] -= 1
    left = 0
    for x in range(S):
        left += s.slot_work[g, owner, k, x]
    if left == 0:
        complete(s, g, owner, k)


@_inline
def put_in_work(s, g, p, card):
    """Project ``card`` becomes a project in progress of p in the lowest free slot."""
    k = 0
    while k < SLOTS - 1 and s.slot_card[g, p, k] >= 0:
        k += 1
    s.slot_card[g, p, k] = card
    s.slot_deadline[g, p, k] = DEADLINE[card]
    for sp in range(S):
        s.slot_work[g, p, k, sp] = WORK[card, sp]


# ---------------------------------------------------------------- the legal decisions
@_inline
def has_room(s, g, p):
    for k in range(SLOTS):
        if s.slot_card[g, p, k] < 0:
            return True
    return False


@_inline
def feature_home(s, g, p, c):
    """Project c is a finished project of p with the feature icon."""
    return s.completed_owner[g, c] == p and ICON[c]


@_inline
def legal_game(mask, g, s):
    """mask[g] = the legal decisions of the player to act (all False once over)."""
    for a in range(R.NUM_ACTIONS):
        mask[g, a] = False
    if s.terminated[g] or s.truncated[g]:
        return
    phase, c = s.phase[g], s.current[g]
    if phase == R.PROJECT_OFFER or phase == R.ANSWER:
        mask[g, R.PASS] = True
        mask[g, R.TAKE] = has_room(s, g, c) if phase == R.PROJECT_OFFER else s.coins[g, c] >= s.offer_price[g]
    elif phase == R.COMMIT:
        for k in range(min(np.int64(s.coins[g, c]), R.MAX_COMMIT) + 1):
            mask[g, R.COMMIT_BASE + k] = True
    elif phase == R.PRICE:
        for a in range(R.PRICE_BASE, R.TARGET_BASE):
            mask[g, a] = True
    elif phase == R.TARGET:
        n = np.int64(s.num_players[g])
        for r in range(1, n):
            mask[g, R.TARGET_BASE + r - 1] = alive(s, g, (c + r) % n)
    elif phase == R.ATTACH:
        for card in range(NP):
            mask[g, R.ATTACH_BASE + card] = feature_home(s, g, c, card)
    elif phase == R.PAYDAY:
        mask[g, R.DONE] = True
        legal_fire(mask, g, s, c)
    else:
        legal_main(mask, g, s, c)


@_inline
def legal_main(mask, g, s, c):
    """The legal decisions of a player's part 2. (Written without branches on the cards held,
    ``&`` rather than ``and``: the loops over the hands then run without mispredictions.)"""
    mask[g, R.DONE] = True
    can_sell = not s.sold[g]
    can_start = has_room(s, g, c) and not s.played_project[g]
    for card in range(NP):
        held = s.project_hand[g, c, card]
        mask[g, R.SELL_BASE + card] = held & can_sell
        mask[g, R.PLAY_PROJECT_BASE + card] = held & can_start
    if not s.played_opportunity[g]:
        can_hire = not any_work(s, g, FREEZE)
        can_feature = False
        if s.feature_card[g, c] < 0:
            for card in range(NP):
                can_feature |= (s.completed_owner[g, card] == c) & ICON[card]
        for j in range(NO):
            held = s.opportunity_hand[g, c, j]
            mask[g, R.HIRE_BASE + j] = held & can_hire
            mask[g, R.FRONT_BASE + j] = held & ((OPP_SITUATION[j] >= 0) | can_feature)
    legal_fire(mask, g, s, c)
    legal_work(mask, g, s, c)


# Work legality by words: a uint32 of a *_words view holds a row's four specialty counts,
# one a byte, and four bytes of a mask row say which specialties may go to one target (a
# specialty at a time read and wrote each byte apart, the slowest part of the mask).
ONES = np.uint32(0x01010101)
NONE = np.uint32(0)
assert S == 4, "a specialty row is read as one 4-byte word"


@_inline
def nonzero(word):
    """0x01 in each byte of ``word`` that is not 0 (each byte a count from 0 to 127), else 0."""
    return ((word + np.uint32(0x7F7F7F7F)) >> 7) & ONES


@_inline
def put_four(mask, g, at, word):
    """mask[g, at + sp] = byte sp of ``word`` (each 0 or 1), sp = 0..3."""
    for sp in range(S):
        mask[g, at + sp] = (word >> (8 * sp)) & 1 != 0


@_inline
def legal_fire(mask, g, s, c):
    """Firing an employee of a specialty is legal where the player has one (part 2, payday)."""
    put_four(mask, g, R.FIRE_BASE, nonzero(s.employees_words[g, c, 0]))


@_inline
def legal_work(mask, g, s, c):
    """Where a unit of each specialty may go (a free employee of it, or the player, does the
    work): own targets, and offers to the others' projects."""
    can = nonzero(s.free_words[g, c, 0]) | (ONES if s.self_free[g, c] > 0 else NONE)
    if can == NONE:
        return
    for k in range(SLOTS):
        put_four(mask, g, R.WORK_BASE + k * S, slot_needs(s, g, c, k) & can)
    feature = ONES * np.uint32(s.feature_card[g, c] >= 0)
    put_four(mask, g, R.WORK_BASE + R.TARGET_FEATURE * S, nonzero(s.feature_work_words[g, c, 0]) & feature & can)
    put_four(mask, g, R.WORK_BASE + R.TARGET_BACKUP * S, can if s.backup[g, c] < R.BACKUP_WORK else NONE)
    for long in range(C.NUM_LONG):
        put_four(mask, g, R.WORK_BASE + (R.TARGET_LONG + long) * S, nonzero(s.long_work_words[g, long, 0]) & can)
    if s.offers[g] >= R.MAX_OFFERS:
        return
    n = np.int64(s.num_players[g])
    for r in range(1, n):
        owner = (c + r) % n
        for k in range(SLOTS):
            put_four(mask, g, R.OFFER_BASE + ((r - 1) * SLOTS + k) * S, slot_needs(s, g, owner, k) & can)


@_inline
def slot_needs(s, g, p, k):
    """0x01 in byte sp where p's project in slot k (if started) still needs work of specialty sp."""
    return nonzero(s.slot_work_words[g, p, k, 0]) & (ONES * np.uint32(s.slot_card[g, p, k] >= 0))


# ---------------------------------------------------------------- the decisions
@_inline
def project_offer(s, g, a):
    """A taker puts the revealed project into work; a pass offers it to the next player
    still in; nobody left, it is discarded."""
    c = s.current[g]
    if a == R.TAKE:
        s.taken_by[g, s.revealed[g]] = c
        put_in_work(s, g, c, s.revealed[g])
    else:
        s.asked[g] += 1
        following = next_seat(s, g, s.active[g], seats_past(s, g, s.active[g], c), False)
        if following >= 0:
            s.current[g] = following
            return
        s.project_discard[g, s.revealed[g]] = True
    s.revealed[g] = -1
    rest_of_part_one(s, g)


@_inline
def commit(s, g, a):
    s.commits[g, s.current[g]] = a - R.COMMIT_BASE
    s.committed[g] += 1
    origin = pool_origin(s, g)
    following = next_seat(s, g, origin, seats_past(s, g, origin, s.current[g]), False)
    if following >= 0:
        s.current[g] = following
    else:
        resolve_pool(s, g)


@_inline
def answer(s, g, a):
    """The owner accepts (the unit works on the project, the owner pays) or refuses."""
    helper = s.main_seat[g]
    if a == R.TAKE:
        owner, paid, sp = s.offer_owner[g], s.offer_price[g], s.offer_specialty[g]
        use_unit(s, g, helper, sp)
        s.coins[g, owner] -= paid
        s.coins[g, helper] += paid
        work_on_slot(s, g, owner, s.offer_slot[g], sp)
    s.offers[g] += 1
    s.offer_owner[g] = s.offer_slot[g] = s.offer_specialty[g] = -1
    s.offer_price[g] = 0
    s.phase[g] = R.MAIN
    s.current[g] = helper


@_inline
def target(s, g, a):
    victim = (np.int64(s.current[g]) + a - R.TARGET_BASE + 1) % np.int64(s.num_players[g])
    if s.situation[g] == C.TAX_AUDIT:
        s.coins[g, victim] -= min(s.coins[g, victim], C.TAX_AUDIT_COINS)
    else:
        data_loss(s, g, victim)
    s.situation[g] = -1
    s.phase[g] = R.MAIN


@_inline
def fire(s, g, sp):
    c = s.current[g]
    s.employees[g, c, sp] -= 1
    s.free[g, c, sp] = min(s.free[g, c, sp], s.employees[g, c, sp])


@_inline
def step_game(g, a, s):
    """Play the legal decision ``a`` in the running game g."""
    phase = s.phase[g]
    if phase == R.PROJECT_OFFER:
        project_offer(s, g, a)
    elif phase == R.COMMIT:
        commit(s, g, a)
    elif phase == R.PRICE:
        s.offer_price[g] = a - R.PRICE_BASE + 1
        s.phase[g] = R.ANSWER
        s.current[g] = s.offer_owner[g]
    elif phase == R.ANSWER:
        answer(s, g, a)
    elif phase == R.TARGET:
        target(s, g, a)
    elif phase == R.ATTACH:
        s.feature_card[g, s.current[g]] = a - R.ATTACH_BASE
        s.phase[g] = R.MAIN
    elif phase == R.PAYDAY:
        if a != R.DONE:
            fire(s, g, a - R.FIRE_BASE)
        else:
            next_payday(s, g, seats_past(s, g, s.active[g], s.current[g]))
    else:
        main(s, g, a)


@_inline
def main(s, g, a):
    """A decision of a player's part 2."""
    c = s.current[g]
    if a == R.DONE:
        end_main(s, g)
    elif a < R.PLAY_PROJECT_BASE:  # sell
        s.project_hand[g, c, a - R.SELL_BASE] = False
        s.project_discard[g, a - R.SELL_BASE] = True
        s.coins[g, c] += 1
        s.sold[g] = True
    elif a < R.HIRE_BASE:  # start a project
        s.project_hand[g, c, a - R.PLAY_PROJECT_BASE] = False
        put_in_work(s, g, c, a - R.PLAY_PROJECT_BASE)
        s.played_project[g] = True
    elif a < R.FRONT_BASE:
        hire(s, g, c, a - R.HIRE_BASE)
    elif a < R.FIRE_BASE:
        play_front(s, g, c, a - R.FRONT_BASE)
    elif a < R.WORK_BASE:
        fire(s, g, a - R.FIRE_BASE)
    elif a < R.OFFER_BASE:
        work(s, g, c, (a - R.WORK_BASE) // S, (a - R.WORK_BASE) % S)
    else:
        code = a - R.OFFER_BASE
        rk, sp = code // S, code % S
        s.offer_owner[g] = (np.int64(c) + rk // SLOTS + 1) % np.int64(s.num_players[g])
        s.offer_slot[g] = rk % SLOTS
        s.offer_specialty[g] = sp
        s.phase[g] = R.PRICE


@_inline
def hire(s, g, c, j):
    s.opportunity_hand[g, c, j] = False
    sp = OPP_SPECIALTY[j]
    s.employees[g, c, sp] += 1
    s.free[g, c, sp] += 1
    s.hired[g, c] = True
    s.played_opportunity[g] = True
    s.opportunity_open[g, j] = True


@_inline
def play_front(s, g, c, j):
    """A feature (its project chosen next) or a situation."""
    s.opportunity_hand[g, c, j] = False
    s.played_opportunity[g] = True
    s.opportunity_open[g, j] = True
    kind = OPP_SITUATION[j]
    if kind < 0:
        for sp in range(S):
            s.feature_work[g, c, sp] = OPP_FEATURE_WORK[j, sp]
        s.phase[g] = R.ATTACH
    elif kind == C.CRUNCH:
        s.self_free[g, c] += 1
    elif kind == C.INVESTOR:
        s.coins[g, c] += C.INVESTOR_COINS
    elif kind == C.EXTENSION:
        for k in range(SLOTS):
            s.slot_deadline[g, c, k] += s.slot_card[g, c, k] >= 0
    else:
        s.situation[g] = kind
        s.phase[g] = R.TARGET


@_inline
def work(s, g, c, t, sp):
    """One unit on an own target: a project slot, the feature, the backup or a long incident."""
    use_unit(s, g, c, sp)
    if t < SLOTS:
        work_on_slot(s, g, c, t, sp)
    elif t == R.TARGET_FEATURE:
        s.feature_work[g, c, sp] -= 1
        left = 0
        for x in range(S):
            left += s.feature_work[g, c, x]
        if left == 0:
            s.features[g, s.feature_card[g, c]] += 1
            s.feature_card[g, c] = -1
    elif t == R.TARGET_BACKUP:
        s.backup[g, c] += 1
    else:
        s.long_work[g, t - R.TARGET_LONG, sp] -= 1


# ---------------------------------------------------------------- batch kernels
@_jit
def legal_rows(mask, games, s):
    """The legal masks of ``games`` (int[k]), written into ``mask``."""
    for i in range(games.shape[0]):
        legal_game(mask, games[i], s)


@_jit
def count_illegal(mask, actions, active, s):
    """How many active running games' actions are out of range or illegal."""
    bad = 0
    for g in range(actions.shape[0]):
        if active[g] and not (s.terminated[g] or s.truncated[g]):
            a = actions[g]
            bad += a < 0 or a >= R.NUM_ACTIONS or not mask[g, a]
    return bad


AHEAD = 4  # games: how far ahead of the step the rows of a game are prefetched


@_inline
def prefetch_game(mask, g, s):
    """Ask for the rows a step and a mask of game g read at a seat-dependent place: the
    player's hands, the projects in progress, the mask row."""
    c = s.current[g]
    prefetch(s.project_hand, (g, c, 0))
    prefetch(s.opportunity_hand, (g, c, 0))
    prefetch(s.opportunity_hand, (g, c, NO - 1))
    prefetch(s.slot_work, (g, 0, 0, 0))
    prefetch(s.slot_work, (g, P - 1, SLOTS - 1, S - 1))
    for at in range(0, R.NUM_ACTIONS, 64):
        prefetch(mask, (g, at))
    prefetch(mask, (g, R.NUM_ACTIONS - 1))


STEP_BLOCK = 256  # games per block of the batch step (a thread's unit of work)
PARALLEL_FROM = 16384  # games per batch from which the step runs on numba's threads (at 4096 on a busy
# 2-core machine the threaded step took 4x the CPU time of the serial one: threads spin waiting for a core)


def _step_games(actions, active, over, mask, s):
    """Apply ``actions`` in every active running game and return True; over[g]: the game
    ended now; each stepped game's mask is written afterwards. If an active running game's
    action is out of range or illegal, return False and change nothing."""
    if count_illegal(mask, actions, active, s):
        return False
    b = actions.shape[0]
    for block in numba.prange((b + STEP_BLOCK - 1) // STEP_BLOCK):
        lo = block * STEP_BLOCK
        step_block(lo, min(lo + STEP_BLOCK, b), actions, active, over, mask, s)
    return True


@_jit
def step_block(lo, hi, actions, active, over, mask, s):
    for g in range(lo, hi):
        if g + AHEAD < hi:
            prefetch_game(mask, g + AHEAD, s)
        over[g] = False
        if active[g] and not (s.terminated[g] or s.truncated[g]):
            step_game(g, actions[g], s)
            over[g] = s.terminated[g] or s.truncated[g]
            legal_game(mask, g, s)


step_games, step_games_parallel = serial_and_parallel(_step_games)


WORD = 8  # mask bytes the sampler reads at once
#: The columns of the compiled engine's mask rows: NUM_ACTIONS rounded up to whole words (the
#: columns past NUM_ACTIONS stay False), so that the sampler reads a row as uint64 words.
MASK_ROW = -(-R.NUM_ACTIONS // WORD) * WORD
BYTES = np.uint64(0x0101010101010101)
TOP_BYTE = np.uint64(56)


@_inline
def word_count(x):
    """How many of the 8 bools packed in ``x`` (a uint64 of 0 or 1 bytes) are True."""
    return np.int64((x * BYTES) >> TOP_BYTE)


@_inline
def pair_count(words, g, w):
    """The legal actions among words w and w + 1 of game g (w alone if it is the last)."""
    count = word_count(words[g, w])
    return count + word_count(words[g, w + 1]) if w + 1 < words.shape[1] else count


@_jit
def pick_legal(rows, words, u, out):
    """out[g] = the k-th legal action of game g for k = floor(u[g] * legal count) (as
    numpy's uniform_legal picks); 0 where none is legal. ``rows`` is bool[B, MASK_ROW] (the
    legal masks, False past NUM_ACTIONS) and ``words`` the same read as uint64[B, MASK_ROW //
    8], so that the count and the search step over eight actions at a time (the search over
    sixteen, then eight, then one by one without a branch: fewer mispredicted jumps than a
    step of eight to the end)."""
    for g in range(u.shape[0]):
        count = 0
        for w in range(words.shape[1]):
            count += word_count(words[g, w])
        out[g] = 0
        pick = np.int64(u[g] * count)
        if pick >= count:  # (none legal; or u * count rounded up to count: numpy's argmax gives 0 too)
            continue
        w, here = 0, pair_count(words, g, 0)
        while pick >= here:
            pick -= here
            w += 2
            here = pair_count(words, g, w)
        if pick >= word_count(words[g, w]):
            pick -= word_count(words[g, w])
            w += 1
        found = 0
        for a in range(w * WORD, w * WORD + WORD):
            legal = np.int64(rows[g, a])
            found += a * (legal & (pick == 0))
            pick -= legal
        out[g] = found


# ---------------------------------------------------------------- the rewards
@_inline
def seat_reward(s, g, p, by_rank):
    """The reward of the ranked seat p's own place: by rank, 1 - 2 * rank / (N - 1); by the
    win, 1 for the winner and -1 / (N - 1) for the others."""
    n = np.float64(s.num_players[g])
    rank = s.ranks[g, p]
    if by_rank:
        return 1.0 - 2.0 * rank / (n - 1)
    return 1.0 if rank == 0 else -1.0 / (n - 1)


@_jit
def rewards_rows(out, games, by_rank, s):
    """out[i, p] = the reward of seat p of game games[i], as numpy's
    :func:`startups_env.startap.engine.rewards`: seats that share a place share the mean
    of their ranks' rewards (summed in seat order, as numpy sums); 0 for unranked seats."""
    for i in range(games.shape[0]):
        g = games[i]
        for p in range(P):
            total, sharers = 0.0, 0
            if s.ranks[g, p] >= 0:
                for q in range(P):
                    if s.ranks[g, q] >= 0 and s.place[g, q] == s.place[g, p]:
                        total += seat_reward(s, g, q, by_rank)
                        sharers += 1
            out[i, p] = total / max(sharers, 1)


# ---------------------------------------------------------------- the deal
@_inline
def clear_fields(g, fields, fills):
    """fields[k][g, :] = fills[k] for each field (a State array seen as [B, -1])."""
    for k in range(len(fields)):
        field = fields[k]
        for x in range(field.shape[1]):
            field[g, x] = fills[k]


@_jit
def deal_rows(mask, games, players, project_deck, opportunity_deck, incident_deck, empty, s):
    """Deal ``games`` (int[k]) afresh at ``players`` (int[k]) seats from the three decks
    (int8[k, size] each, in dealing order), as :func:`startups_env.startap.engine.deal`
    does: the empty game (``empty``: the State's fields grouped by dtype as [B, -1] views,
    each group with its fills, :func:`empty_groups`), seat i's hand cards 3i..3i+2 of the
    project and of the opportunity deck, 10 coins a seat; then the first turn starts and
    the game's mask is written."""
    for i in range(games.shape[0]):
        g = games[i]
        clear_fields(g, empty[0], empty[1])
        clear_fields(g, empty[2], empty[3])
        clear_fields(g, empty[4], empty[5])
        n = players[i]
        s.num_players[g] = n
        for c in range(NP):
            s.project_deck[g, c] = project_deck[i, c]
        for j in range(NO):
            s.opportunity_deck[g, j] = opportunity_deck[i, j]
        for x in range(NI):
            s.incident_deck[g, x] = incident_deck[i, x]
        for p in range(n):
            for k in range(R.START_PROJECTS):
                s.project_hand[g, p, project_deck[i, R.START_PROJECTS * p + k]] = True
            for k in range(R.START_OPPORTUNITIES):
                s.opportunity_hand[g, p, opportunity_deck[i, R.START_OPPORTUNITIES * p + k]] = True
            s.coins[g, p] = R.START_COINS
        s.project_next[g] = R.START_PROJECTS * n
        s.opportunity_next[g] = R.START_OPPORTUNITIES * n
        start_turn(s, g)
        legal_game(mask, g, s)


#: The dtypes of the State's fields, in the order of :func:`empty_groups`' groups.
EMPTY_DTYPES = (np.dtype(np.int8), np.dtype(np.int16), np.dtype(bool))


def empty_groups(state: State) -> tuple:
    """The State's fields grouped by dtype for :func:`deal_rows`: (int8 fields, their fills,
    int16 fields, their fills, bool fields, their fills), each field a [B, -1] view of the
    State's array (not a copy) and each fills an array of the LAYOUT's empty values."""
    groups = []
    for dtype in EMPTY_DTYPES:
        views, fills = [], []
        for name, (kind, _shape, fill) in LAYOUT.items():
            if np.dtype(kind) != dtype:
                continue
            arr = getattr(state, name)
            view = arr.reshape(arr.shape[0], -1)
            if arr.dtype != dtype or not np.may_share_memory(view, arr) or not view.flags.c_contiguous:
                raise ValueError(f"state.{name} must be a C-contiguous {dtype} array, got {arr.dtype} "
                                 f"{'C-contiguous' if arr.flags.c_contiguous else 'strided'}")
            views.append(view)
            fills.append(fill)
        groups += [tuple(views), np.array(fills, dtype)]
    unknown = {np.dtype(kind) for kind, _shape, _fill in LAYOUT.values()} - set(EMPTY_DTYPES)
    if unknown:
        raise TypeError(f"the compiled deal clears int8, int16 and bool fields only, not {sorted(map(str, unknown))}")
    return tuple(groups)


@_jit
def step_one(mask, g, a, s):
    """The one-game path: play ``a`` in game g and write its mask."""
    step_game(g, a, s)
    legal_game(mask, g, s)


# ---------------------------------------------------------------- the observation
def _offsets() -> dict[str, int]:
    out, at = {}, 0
    for name, size in PIECES:
        out[name] = at
        at += size
    return out


_AT = _offsets()
AT_SEATS, AT_PROJECTS, AT_OWN_OPP, AT_OPEN_OPP = _AT["seats"], _AT["projects"], _AT["own_opportunities"], \
    _AT["opportunities_open"]
AT_LONG, AT_INCIDENT, AT_TAIL = _AT["long_work"], _AT["incident"], _AT["pending"]
AT_PHASE, AT_TURN, AT_ACTIVE, AT_CURRENT, AT_MAIN = (_AT[k] for k in ("phase", "turn", "active", "current", "main_seat"))
PER_SEAT_SIZE = sum(size for _n, size in PER_SEAT)
PER_PROJECT_SIZE = sum(size for _n, size in PER_PROJECT)
PJ_BASE = 2 + P + SLOTS  # the project piece's work_left column


@_inline
def one_hot_seat(out, row, at, seat, observer, n):
    """out[row, at + the seat relative to the observer] = 1 (nothing for seat -1)."""
    if seat >= 0:
        out[row, at + (np.int64(seat) - observer) % n] = 1.0


@_inline
def observe_into(out, row, g, observer, s):
    """out[row] (float32[OBS_DIM], zeroed here) = what ``observer`` sees of game g, as
    :func:`startups_env.startap.observe.observe` writes it."""
    for x in range(OBS_DIM):
        out[row, x] = 0.0
    n = np.int64(s.num_players[g])
    observer = np.int64(observer)
    out[row, n - R.MIN_PLAYERS] = 1.0
    out[row, AT_PHASE + s.phase[g]] = 1.0
    out[row, AT_TURN] = s.turn[g]
    one_hot_seat(out, row, AT_ACTIVE, s.active[g], observer, n)
    one_hot_seat(out, row, AT_CURRENT, s.current[g], observer, n)
    one_hot_seat(out, row, AT_MAIN, s.main_seat[g], observer, n)
    for r in range(n):
        observe_seat(out, row, AT_SEATS + r * PER_SEAT_SIZE, g, (observer + r) % n, s)
    observe_projects(out, row, g, observer, n, s)
    for j in range(NO):
        out[row, AT_OWN_OPP + j] = s.opportunity_hand[g, observer, j]
        out[row, AT_OPEN_OPP + j] = s.opportunity_open[g, j]
    for long in range(C.NUM_LONG):
        for sp in range(S):
            out[row, AT_LONG + long * S + sp] = s.long_work[g, long, sp]
    observe_tail(out, row, g, observer, n, s)


@_inline
def observe_seat(out, row, at, g, p, s):
    """The public numbers of seat p (PER_SEAT), from out[row, at]."""
    out[row, at] = s.coins[g, p]
    out[row, at + 1] = s.hired[g, p]
    out[row, at + 2] = s.failures[g, p]
    out[row, at + 3] = s.backup[g, p]
    for sp in range(S):
        out[row, at + 4 + sp] = s.employees[g, p, sp]
        out[row, at + 8 + sp] = s.free[g, p, sp]
        out[row, at + 15 + sp] = s.feature_work[g, p, sp]
    out[row, at + 12] = s.self_free[g, p]
    hand = 0
    for c in range(NP):
        hand += s.project_hand[g, p, c]
    out[row, at + 13] = hand
    hand = 0
    for j in range(NO):
        hand += s.opportunity_hand[g, p, j]
    out[row, at + 14] = hand
    if s.phase[g] == R.COMMIT and alive(s, g, p):
        origin = pool_origin(s, g)
        out[row, at + 19] = seats_past(s, g, origin, p) < seats_past(s, g, origin, s.current[g])


@_inline
def observe_projects(out, row, g, observer, n, s):
    """Where each project card is and how far along (PER_PROJECT, card by card)."""
    for c in range(NP):
        at = AT_PROJECTS + c * PER_PROJECT_SIZE
        out[row, at] = s.project_hand[g, observer, c]
        out[row, at + 1] = s.revealed[g] == c
        one_hot_seat(out, row, at + PJ_BASE + S + 1, s.completed_owner[g, c], observer, n)
        out[row, at + PJ_BASE + S + 1 + P] = s.features[g, c]
        one_hot_seat(out, row, at + PJ_BASE + S + 3 + P, s.taken_by[g, c], observer, n)
        out[row, at + PER_PROJECT_SIZE - 1] = s.project_discard[g, c]
    for p in range(P):
        if s.feature_card[g, p] >= 0:
            out[row, AT_PROJECTS + s.feature_card[g, p] * PER_PROJECT_SIZE + PJ_BASE + S + 2 + P] = 1.0
        for k in range(SLOTS):
            c = s.slot_card[g, p, k]
            if c < 0:
                continue
            at = AT_PROJECTS + c * PER_PROJECT_SIZE
            one_hot_seat(out, row, at + 2, p, observer, n)
            out[row, at + 2 + P + k] = 1.0
            for sp in range(S):
                out[row, at + PJ_BASE + sp] = s.slot_work[g, p, k, sp]
            out[row, at + PJ_BASE + S] = s.slot_deadline[g, p, k]


@_inline
def observe_tail(out, row, g, observer, n, s):
    """The incident, the counters, the turn's flags, the situation and the work offer."""
    card = s.incident[g]
    if card >= 0:
        if INCIDENT_KIND[card] < 2:
            out[row, AT_INCIDENT + INCIDENT_KIND[card]] = 1.0
        out[row, AT_INCIDENT + 2] = INCIDENT_LOSS[card]
        out[row, AT_INCIDENT + 3] = INCIDENT_AVOID[card]
    at = AT_TAIL
    out[row, at] = s.pending[g]
    out[row, at + 1] = NP - s.project_next[g]
    out[row, at + 2] = NO - s.opportunity_next[g]
    out[row, at + 3] = NI - s.incident_next[g]
    out[row, at + 4] = s.sold[g]
    out[row, at + 5] = s.played_project[g]
    out[row, at + 6] = s.played_opportunity[g]
    out[row, at + 7] = s.offers[g]
    out[row, at + 8] = s.situation[g] == C.TAX_AUDIT
    out[row, at + 9] = s.situation[g] == C.LOST_BACKUP
    one_hot_seat(out, row, at + 10, s.offer_owner[g], observer, n)
    if s.offer_slot[g] >= 0:
        out[row, at + 10 + P + s.offer_slot[g]] = 1.0
    if s.offer_specialty[g] >= 0:
        out[row, at + 10 + P + SLOTS + s.offer_specialty[g]] = 1.0
    out[row, at + 10 + P + SLOTS + S] = s.offer_price[g]


@_jit
def observe_rows(out, games, seats, s):
    """out[i] = the observation of seats[i] in games[i]."""
    for i in range(games.shape[0]):
        observe_into(out, i, games[i], seats[i], s)
