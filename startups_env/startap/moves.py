"""The decisions of *Стартап* on numpy: which are legal (:func:`legal_mask`) and what each
does (:func:`apply`), for many games at once. The automatic parts of the turn that follow a
decision are in :mod:`startups_env.startap.engine`."""

from __future__ import annotations

import numpy as np

from startups_env.startap import cards as C
from startups_env.startap import engine as E
from startups_env.startap import rules as R
from startups_env.startap.state import P, S, State

_FREEZE = C.LONG_KINDS.index(C.HIRING_FREEZE)
_IS_SITUATION = C.OPP_SITUATION >= 0


def legal_mask(s: State) -> np.ndarray:
    """bool[B, NUM_ACTIONS]: the legal decisions of the player to act (all False once over)."""
    b = s.batch_size
    mask = np.zeros((b, R.NUM_ACTIONS), bool)
    running = ~s.done
    phase = s.phase
    g = np.flatnonzero(running & ((phase == R.PROJECT_OFFER) | (phase == R.ANSWER)))
    c = s.current[g]
    mask[g, R.PASS] = True
    room = (s.slot_card[g, c] < 0).any(axis=1)
    mask[g, R.TAKE] = np.where(phase[g] == R.PROJECT_OFFER, room, s.coins[g, c] >= s.offer_price[g])
    g = np.flatnonzero(running & (phase == R.COMMIT))
    most = np.minimum(s.coins[g, s.current[g]], R.MAX_COMMIT)
    mask[g, R.COMMIT_BASE:R.PRICE_BASE] = np.arange(R.MAX_COMMIT + 1)[None, :] <= most[:, None]
    mask[np.flatnonzero(running & (phase == R.PRICE)), R.PRICE_BASE:R.TARGET_BASE] = True
    g = np.flatnonzero(running & (phase == R.TARGET))
    victim = (s.current[g, None] + np.arange(1, P)[None, :]) % s.num_players[g, None]
    mask[g, R.TARGET_BASE:R.DONE] = (np.arange(1, P)[None, :] < s.num_players[g, None]) & s.alive[g[:, None], victim]
    g = np.flatnonzero(running & (phase == R.ATTACH))
    mask[g, R.ATTACH_BASE:] = E.feature_homes(s, g, s.current[g])
    g = np.flatnonzero(running & (phase == R.PAYDAY))
    mask[g, R.DONE] = True
    mask[g, R.FIRE_BASE:R.WORK_BASE] = s.employees[g, s.current[g]] > 0
    g = np.flatnonzero(running & (phase == R.MAIN))
    if g.size:
        mask[g, R.DONE:R.ATTACH_BASE] = main_mask(s, g)
    return mask


def units(s: State, g: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """bool[k, S]: the player can still give a unit of each specialty."""
    return (s.free[g, seats] > 0) | (s.self_free[g, seats] > 0)[:, None]


def main_mask(s: State, g: np.ndarray) -> np.ndarray:
    """bool[k, ATTACH_BASE - DONE]: the legal decisions of a player's part 2."""
    c = s.current[g]
    out = np.zeros((g.size, R.NUM_ACTIONS), bool)
    out[:, R.DONE] = True
    hand = s.project_hand[g, c]
    out[:, R.SELL_BASE:R.PLAY_PROJECT_BASE] = hand & ~s.sold[g, None]
    room = (s.slot_card[g, c] < 0).any(axis=1)
    out[:, R.PLAY_PROJECT_BASE:R.HIRE_BASE] = hand & (room & ~s.played_project[g])[:, None]
    opportunities = s.opportunity_hand[g, c] & ~s.played_opportunity[g, None]
    out[:, R.HIRE_BASE:R.FRONT_BASE] = opportunities & ~s.long_work[g, _FREEZE].any(axis=1)[:, None]
    can_feature = (s.feature_card[g, c] < 0) & E.feature_homes(s, g, c).any(axis=1)
    out[:, R.FRONT_BASE:R.FIRE_BASE] = opportunities & (_IS_SITUATION[None, :] | can_feature[:, None])
    out[:, R.FIRE_BASE:R.WORK_BASE] = s.employees[g, c] > 0
    unit = units(s, g, c)
    targets = np.zeros((g.size, R.NUM_TARGETS, S), bool)
    targets[:, :R.SLOTS] = (s.slot_work[g, c] > 0) & (s.slot_card[g, c] >= 0)[..., None]
    targets[:, R.TARGET_FEATURE] = (s.feature_work[g, c] > 0) & (s.feature_card[g, c] >= 0)[:, None]
    targets[:, R.TARGET_BACKUP] = (s.backup[g, c] < R.BACKUP_WORK)[:, None]
    targets[:, R.TARGET_LONG:] = s.long_work[g] > 0
    out[:, R.WORK_BASE:R.OFFER_BASE] = (targets & unit[:, None, :]).reshape(g.size, -1)
    r = np.arange(1, P)
    owner = (c[:, None] + r[None, :]) % s.num_players[g, None]  # [k, P-1]
    open_work = (s.slot_work[g[:, None], owner] > 0) & (s.slot_card[g[:, None], owner] >= 0)[..., None]
    allowed = (r[None, :] < s.num_players[g, None]) & (s.offers[g] < R.MAX_OFFERS)[:, None]
    offers = open_work & allowed[:, :, None, None] & unit[:, None, None, :]
    out[:, R.OFFER_BASE:R.ATTACH_BASE] = offers.reshape(g.size, -1)
    return out[:, R.DONE:R.ATTACH_BASE]


def apply(s: State, g: np.ndarray, a: np.ndarray) -> None:
    """Play the legal decisions ``a`` (int[k]) in the running games ``g``."""
    phase = s.phase[g]
    for ph, handler in ((R.PROJECT_OFFER, project_offer), (R.COMMIT, commit), (R.PRICE, price),
                        (R.ANSWER, answer), (R.TARGET, target), (R.ATTACH, attach), (R.PAYDAY, payday),
                        (R.MAIN, main)):
        here = phase == ph
        if here.any():
            handler(s, g[here], a[here])


def project_offer(s: State, g: np.ndarray, a: np.ndarray) -> None:
    """A taker puts the revealed project straight into work; a pass offers it to the next
    player still in, clockwise; nobody left, it is discarded."""
    took = a == R.TAKE
    t = g[took]
    s.taken_by[t, s.revealed[t]] = s.current[t]
    put_in_work(s, t, s.current[t], s.revealed[t])
    p = g[~took]
    s.asked[p] += 1
    following = E.next_seat(s, p, s.active[p], E.seats_past(s, p, s.active[p], s.current[p]), s.alive[p])
    more = following >= 0
    m = p[more]
    s.current[m] = following[more]
    nobody = p[~more]
    s.project_discard[nobody, s.revealed[nobody]] = True
    over = np.concatenate([t, nobody])
    s.revealed[over] = -1
    E.rest_of_part_one(s, over)


def put_in_work(s: State, g: np.ndarray, c: np.ndarray, card: np.ndarray) -> None:
    """Project ``card`` becomes a project in progress of ``c`` in the lowest free slot."""
    k = (s.slot_card[g, c] < 0).argmax(axis=1)
    s.slot_card[g, c, k] = card
    s.slot_work[g, c, k] = C.PROJECT_WORK[card]
    s.slot_deadline[g, c, k] = C.PROJECT_DEADLINE[card]


def commit(s: State, g: np.ndarray, a: np.ndarray) -> None:
    s.commits[g, s.current[g]] = a - R.COMMIT_BASE
    s.committed[g] += 1
    origin = E.pool_origin(s, g)
    following = E.next_seat(s, g, origin, E.seats_past(s, g, origin, s.current[g]), s.alive[g])
    more = following >= 0
    s.current[g[more]] = following[more]
    E.resolve_pool(s, g[~more])


def price(s: State, g: np.ndarray, a: np.ndarray) -> None:
    s.offer_price[g] = a - R.PRICE_BASE + 1
    s.phase[g] = R.ANSWER
    s.current[g] = s.offer_owner[g]


def answer(s: State, g: np.ndarray, a: np.ndarray) -> None:
    """The owner accepts (the unit works on the project, the owner pays the price) or refuses."""
    helper = s.main_seat[g]
    yes = a == R.TAKE
    y, hy = g[yes], helper[yes]
    owner, paid = s.offer_owner[y], s.offer_price[y]
    E.use_unit(s, y, hy, s.offer_specialty[y])
    s.coins[y, owner] -= paid
    s.coins[y, hy] += paid
    E.work_on_slot(s, y, owner, s.offer_slot[y], s.offer_specialty[y])
    s.offers[g] += 1
    s.offer_owner[g] = s.offer_slot[g] = s.offer_specialty[g] = -1
    s.offer_price[g] = 0
    s.phase[g] = R.MAIN
    s.current[g] = helper


def target(s: State, g: np.ndarray, a: np.ndarray) -> None:
    victim = (s.current[g] + a - R.TARGET_BASE + 1) % s.num_players[g]
    tax = s.situation[g] == C.TAX_AUDIT
    t, vt = g[tax], victim[tax]
    s.coins[t, vt] -= np.minimum(s.coins[t, vt], C.TAX_AUDIT_COINS)
    E.data_loss(s, g[~tax], victim[~tax])
    s.situation[g] = -1
    s.phase[g] = R.MAIN


def attach(s: State, g: np.ndarray, card: np.ndarray) -> None:
    """The feature just played goes on the player's chosen finished project."""
    s.feature_card[g, s.current[g]] = card - R.ATTACH_BASE
    s.phase[g] = R.MAIN


def payday(s: State, g: np.ndarray, a: np.ndarray) -> None:
    """Part 3, before paying: fire an employee (one at a time), or done."""
    firing = a != R.DONE
    fire(s, g[firing], a[firing] - R.FIRE_BASE)
    d = g[~firing]
    E.next_payday(s, d, E.seats_past(s, d, s.active[d], s.current[d]))


def main(s: State, g: np.ndarray, a: np.ndarray) -> None:
    for lo, hi, handler in ((R.DONE, R.SELL_BASE, done), (R.SELL_BASE, R.PLAY_PROJECT_BASE, sell),
                            (R.PLAY_PROJECT_BASE, R.HIRE_BASE, start_project), (R.HIRE_BASE, R.FRONT_BASE, hire),
                            (R.FRONT_BASE, R.FIRE_BASE, play_front), (R.FIRE_BASE, R.WORK_BASE, fire),
                            (R.WORK_BASE, R.OFFER_BASE, work), (R.OFFER_BASE, R.ATTACH_BASE, offer)):
        here = (a >= lo) & (a < hi)
        if here.any():
            handler(s, g[here], a[here] - lo)


def done(s: State, g: np.ndarray, _zero: np.ndarray) -> None:
    E.end_main(s, g)


def sell(s: State, g: np.ndarray, card: np.ndarray) -> None:
    c = s.current[g]
    s.project_hand[g, c, card] = False
    s.project_discard[g, card] = True
    s.coins[g, c] += 1
    s.sold[g] = True


def start_project(s: State, g: np.ndarray, card: np.ndarray) -> None:
    c = s.current[g]
    s.project_hand[g, c, card] = False
    put_in_work(s, g, c, card)
    s.played_project[g] = True


def hire(s: State, g: np.ndarray, j: np.ndarray) -> None:
    c = s.current[g]
    s.opportunity_hand[g, c, j] = False
    sp = C.OPP_SPECIALTY[j]
    s.employees[g, c, sp] += 1
    s.free[g, c, sp] += 1
    s.hired[g, c] = True
    s.played_opportunity[g] = True
    s.opportunity_open[g, j] = True


def play_front(s: State, g: np.ndarray, j: np.ndarray) -> None:
    """A feature (its project chosen next) or a situation."""
    c = s.current[g]
    s.opportunity_hand[g, c, j] = False
    s.played_opportunity[g] = True
    s.opportunity_open[g, j] = True
    kind = C.OPP_SITUATION[j]
    f = kind < 0
    s.feature_work[g[f], c[f]] = C.OPP_FEATURE_WORK[j[f]]
    s.phase[g[f]] = R.ATTACH
    crunch = kind == C.CRUNCH
    s.self_free[g[crunch], c[crunch]] += 1
    rich = kind == C.INVESTOR
    s.coins[g[rich], c[rich]] += C.INVESTOR_COINS
    ext = kind == C.EXTENSION
    s.slot_deadline[g[ext], c[ext]] += s.slot_card[g[ext], c[ext]] >= 0
    aimed = (kind == C.TAX_AUDIT) | (kind == C.LOST_BACKUP)
    s.situation[g[aimed]] = kind[aimed]
    s.phase[g[aimed]] = R.TARGET


def fire(s: State, g: np.ndarray, sp: np.ndarray) -> None:
    c = s.current[g]
    s.employees[g, c, sp] -= 1
    s.free[g, c, sp] = np.minimum(s.free[g, c, sp], s.employees[g, c, sp])


def work(s: State, g: np.ndarray, code: np.ndarray) -> None:
    """One unit on an own target: a project slot, the feature, the backup or a long incident."""
    c = s.current[g]
    t, sp = np.divmod(code, S)
    E.use_unit(s, g, c, sp)
    on_slot = t < R.SLOTS
    E.work_on_slot(s, g[on_slot], c[on_slot], t[on_slot], sp[on_slot])
    f = t == R.TARGET_FEATURE
    gf, cf = g[f], c[f]
    s.feature_work[gf, cf, sp[f]] -= 1
    finished = s.feature_work[gf, cf].sum(axis=1) == 0
    s.features[gf[finished], s.feature_card[gf[finished], cf[finished]]] += 1
    s.feature_card[gf[finished], cf[finished]] = -1
    b = t == R.TARGET_BACKUP
    s.backup[g[b], c[b]] += 1
    lw = t >= R.TARGET_LONG
    s.long_work[g[lw], t[lw] - R.TARGET_LONG, sp[lw]] -= 1


def offer(s: State, g: np.ndarray, code: np.ndarray) -> None:
    c = s.current[g]
    rk, sp = np.divmod(code, S)
    r, k = np.divmod(rk, R.SLOTS)
    s.offer_owner[g] = (c + r + 1) % s.num_players[g]
    s.offer_slot[g] = k
    s.offer_specialty[g] = sp
    s.phase[g] = R.PRICE
