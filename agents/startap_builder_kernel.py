"""Стартап's ``builder`` compiled with numba: its decision game by game, in scalar code, for
compiled callers (the search's rollouts, :mod:`startups_env.agents.startap_search`).

:class:`startups_env.agents.startap_bots.BuilderAgent` is the reference: it reads a seat's
observation and chooses with the helpers of ``startap_bots.Position``. Here the same rule
reads the State's arrays (:func:`startups_env.startap.numba_backend.arrays`) for the player
to act, helper for helper, in the reference's order of preference and of ties:

* the own projects in progress in order of weeks left, then of card id (the reference
  sorts its card list, stably, by weeks left); within one, the specialty with the most
  work left, the lowest on a tie;
* projects in hand, opportunities in hand and specialties in id order; the first of the
  best (value per unit of work, as float64) where the reference takes a ``max``;
* an action the rule picks that is not legal gives way to the lowest legal one.

**Equal, not close.** The tests prove its actions equal to the reference's on many
thousand positions of random and builder games at every table size
(tests/test_startap_builder_kernel.py).

**What the player may see.** It reads of the seat to act only what its observation holds:
its own hand, opportunities, staff, coins and projects, the table's coins, the revealed
project, the incident of the pool, the price of an offer; never another hand or a deck.

numba is an optional dependency: importing this module without it raises ImportError, and
the reference builder works without it. Kernels compile on first use and are cached on
disk (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np

from startups_env.startap import cards as C
from startups_env.startap import numba_backend as K
from startups_env.startap import rules as R
from startups_env.startups import numba_runtime
from startups_env.startups.numba_backend import forget_stale_cache

forget_stale_cache(__file__, C.__file__, K.__file__, R.__file__)  # (it inlines the engine's staff count)
numba_runtime.describe_kernels(__name__, "Стартап's compiled builder", 30)

S, NP, NO, SLOTS = C.NUM_SPECIALTIES, C.NUM_PROJECTS, C.NUM_OPPORTUNITIES, R.SLOTS
WORK, DEADLINE = C.PROJECT_WORK.astype(np.int64), C.PROJECT_DEADLINE.astype(np.int64)
INCOME = C.PROJECT_INCOME.astype(np.int64)
#: A project's value per unit of work, as the reference computes it (float64).
VALUE_PER_UNIT = (C.PROJECT_INCOME.astype(float) * 6 + C.PROJECT_BONUS) / C.PROJECT_WORK.sum(axis=1)
OPP_SPECIALTY, OPP_SITUATION = C.OPP_SPECIALTY.astype(np.int64), C.OPP_SITUATION.astype(np.int64)
INCIDENT_AVOID = C.INCIDENT_AVOID.astype(np.int64)
#: The slot of a work action on own target t in specialty sp: WORK_BASE + t * S + sp.
OTHER_TARGETS = np.array([R.TARGET_FEATURE, *range(R.TARGET_LONG, R.NUM_TARGETS), R.TARGET_BACKUP], np.int64)


def _inline(function):
    return numba.njit(cache=True, nogil=True, inline="always")(function)


@_inline
def legal(mask, g, a):
    return a >= 0 and mask[g, a]


@_inline
def team(s, g, c):
    """The player and the staff."""
    return 1 + K.staff(s, g, c)


@_inline
def in_progress(s, g, c):
    count = 0
    for k in range(SLOTS):
        count += s.slot_card[g, c, k] >= 0
    return count


@_inline
def busy(s, g, c):
    """Units the player must still give the projects in progress themselves, the staff doing
    what they can of their specialties in the weeks left."""
    total = 0
    for k in range(SLOTS):
        if s.slot_card[g, c, k] >= 0:
            weeks = np.int64(s.slot_deadline[g, c, k])
            for sp in range(S):
                total += max(np.int64(s.slot_work[g, c, k, sp]) - np.int64(s.employees[g, c, sp]) * weeks, 0)
    return total


@_inline
def feasible(s, g, c, card, extra_team):
    """The player and the staff can finish project ``card`` in time next to the projects in
    progress (``extra_team``: generalists to be hired); the reference's ``Position.feasible``."""
    own = 0
    for sp in range(S):
        own += max(WORK[card, sp] - np.int64(s.employees[g, c, sp]) * DEADLINE[card], 0)
    spent = 1 - min(np.int64(s.self_free[g, c]), 1) if s.phase[g] == R.MAIN else 0
    return own + busy(s, g, c) <= (1 + extra_team) * DEADLINE[card] - spent


@_inline
def urgent_work(mask, g, s, c):
    """A legal unit on the own project with the fewest weeks left (then the lowest card id),
    in the specialty with the most work left (then the lowest); -1 if none."""
    done_weeks, done_card = -1, -1  # the last project tried, in (weeks, card) order
    for _ in range(SLOTS):
        k_best, weeks_best, card_best = -1, 1 << 30, 1 << 30
        for k in range(SLOTS):
            card, weeks = np.int64(s.slot_card[g, c, k]), np.int64(s.slot_deadline[g, c, k])
            later = weeks > done_weeks or (weeks == done_weeks and card > done_card)
            if card >= 0 and later and (weeks < weeks_best or (weeks == weeks_best and card < card_best)):
                k_best, weeks_best, card_best = k, weeks, card
        if k_best < 0:
            return -1
        best, most = -1, -1
        for sp in range(S):
            a = R.WORK_BASE + k_best * S + sp
            if mask[g, a] and s.slot_work[g, c, k_best, sp] > most:
                best, most = a, s.slot_work[g, c, k_best, sp]
        if best >= 0:
            return best
        done_weeks, done_card = weeks_best, card_best
    return -1


@_inline
def other_work(mask, g):
    """A legal unit on the feature, a long incident, then the backup; -1 if none."""
    for t in OTHER_TARGETS:
        for sp in range(S):
            if mask[g, R.WORK_BASE + t * S + sp]:
                return R.WORK_BASE + t * S + sp
    return -1


@_inline
def best_start(mask, g, s, c):
    """The legal start of the feasible project in hand with the most value per unit; -1 if none."""
    best, value = -1, 0.0
    for card in range(NP):
        a = R.PLAY_PROJECT_BASE + card
        if s.project_hand[g, c, card] and mask[g, a] and feasible(s, g, c, card, 0):
            if best < 0 or VALUE_PER_UNIT[card] > value:
                best, value = a, VALUE_PER_UNIT[card]
    return best


@_inline
def sell_hopeless(mask, g, s, c):
    """Sell a project in hand that even two more generalists could not finish in time; -1 if none."""
    for card in range(NP):
        a = R.SELL_BASE + card
        if s.project_hand[g, c, card] and not feasible(s, g, c, card, 2) and mask[g, a]:
            return a
    return -1


@_inline
def need(s, g, c, sp, with_hand):
    """Units of specialty sp the projects in progress still need (and those in hand, whole)."""
    total = 0
    for k in range(SLOTS):
        if s.slot_card[g, c, k] >= 0:
            total += s.slot_work[g, c, k, sp]
    if with_hand:
        for card in range(NP):
            if s.project_hand[g, c, card]:
                total += WORK[card, sp]
    return total


@_inline
def idle_staff(mask, g, s, c):
    """Fire an employee of a specialty that no project in progress or in hand needs; -1 if none."""
    for sp in range(S):
        a = R.FIRE_BASE + sp
        if s.employees[g, c, sp] > 0 and need(s, g, c, sp, True) == 0 and mask[g, a]:
            return a
    return -1


@_inline
def needed_specialty(s, g, c):
    """The specialty the projects in progress lack most (the first of the most); -1 if they need nothing."""
    best, most, any_need = -1, 0, False
    for sp in range(S):
        units = need(s, g, c, sp, False)
        any_need = any_need or units != 0
        lack = units - np.int64(s.employees[g, c, sp])
        if best < 0 or lack > most:
            best, most = sp, lack
    return best if any_need else -1


@_inline
def hire_for(mask, g, s, c, specialty):
    """Hire the first opportunity in hand of ``specialty`` (any, for -1); -1 if none is legal."""
    for j in range(NO):
        a = R.HIRE_BASE + j
        if s.opportunity_hand[g, c, j] and mask[g, a] and (specialty < 0 or OPP_SPECIALTY[j] == specialty):
            return a
    return -1


@_inline
def good_front(mask, g, s, c):
    """An investor, a feature, or an extension when a project is short of time; -1 if none."""
    people, short = team(s, g, c), False
    for k in range(SLOTS):
        if s.slot_card[g, c, k] >= 0:
            left = 0
            for sp in range(S):
                left += s.slot_work[g, c, k, sp]
            short = short or np.int64(s.slot_deadline[g, c, k]) * people < left
    for j in range(NO):
        a, kind = R.FRONT_BASE + j, OPP_SITUATION[j]
        if s.opportunity_hand[g, c, j] and mask[g, a] and (
                kind == C.INVESTOR or kind == -1 or (kind == C.EXTENSION and short)):
            return a
    return -1


@_inline
def main_action(mask, g, s, c):
    """Part 2: start, hire, the urgent work, a good opportunity, other work, fire when broke,
    sell a hopeless idea, else done (the first of these that applies)."""
    coins = np.int64(s.coins[g, c])
    a = best_start(mask, g, s, c) if in_progress(s, g, c) < 2 else -1
    if a < 0 and coins >= 6:
        a = hire_for(mask, g, s, c, needed_specialty(s, g, c))
    if a < 0:
        a = urgent_work(mask, g, s, c)
    if a < 0:
        a = good_front(mask, g, s, c)
    if a < 0:
        a = other_work(mask, g)
    if a < 0 and coins < 2:
        for sp in range(S):
            if a < 0 and s.employees[g, c, sp] > 0:
                a = R.FIRE_BASE + sp
    if a < 0:
        a = sell_hopeless(mask, g, s, c)
    return a if a >= 0 else R.DONE


@_inline
def pool_share(s, g, c):
    """The fair share of the pool's cost (over the seats at the table), as far as the coins go."""
    n = np.int64(s.num_players[g])
    share = (INCIDENT_AVOID[s.incident[g]] + n - 1) // n
    return R.COMMIT_BASE + min(share, np.int64(s.coins[g, c]), R.MAX_COMMIT)


@_inline
def richest_other(s, g, c):
    """Target the player with the most coins (the first of them clockwise)."""
    n = np.int64(s.num_players[g])
    best, most = 1, -1
    for r in range(1, n):
        coins = np.int64(s.coins[g, (np.int64(c) + r) % n])
        if coins > most:
            best, most = r, coins
    return R.TARGET_BASE + best - 1


@_inline
def richest_home(mask, g):
    """Put the feature on the legal project with the most income (the lowest card id of them)."""
    best = -1
    for card in range(NP):
        if mask[g, R.ATTACH_BASE + card] and (best < 0 or INCOME[card] > INCOME[best]):
            best = card
    return R.ATTACH_BASE + best


@numba.njit(cache=True, nogil=True, _nrt=False)
def builder_action(mask, g, s):
    """The builder's decision in game g of ``s`` (``mask[g]``: its legal actions, one at least)."""
    phase, c = s.phase[g], s.current[g]
    if phase == R.MAIN:
        a = main_action(mask, g, s, c)
    elif phase == R.PROJECT_OFFER:
        a = R.TAKE if mask[g, R.TAKE] and in_progress(s, g, c) < 2 and feasible(s, g, c, s.revealed[g], 0) else R.PASS
    elif phase == R.COMMIT:
        a = pool_share(s, g, c)
    elif phase == R.PRICE:
        a = R.PRICE_BASE
    elif phase == R.ANSWER:
        a = R.TAKE if mask[g, R.TAKE] and s.offer_price[g] <= 2 else R.PASS
    elif phase == R.TARGET:
        a = richest_other(s, g, c)
    elif phase == R.ATTACH:
        a = richest_home(mask, g)
    else:  # payday
        a = idle_staff(mask, g, s, c)
        a = a if a >= 0 else R.DONE
    if not legal(mask, g, a):
        a = 0
        while not mask[g, a]:
            a += 1
    return a


@numba.njit(cache=True, nogil=True, _nrt=False)
def builder_actions(mask, s, out):
    """out[g] = the builder's decision in every game g of ``s`` (``mask``: the legal masks)."""
    for g in range(out.shape[0]):
        out[g] = builder_action(mask, g, s)
