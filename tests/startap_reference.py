"""A readable reference of *Стартап* (docs/startap.md): one game, plain Python, written
straight from the rules. The batch simulator (startups_env.startap.simulator) is proven
equal to it state for state (tests/test_startap_parity.py); the scenario tests
(tests/test_startap_rules.py) check each rule here.

Seats, phases, actions and card tables are those of startups_env.startap.rules / cards.
"""

from __future__ import annotations

from startups_env.startap import cards as C
from startups_env.startap import rules as R

S = C.NUM_SPECIALTIES


class Player:
    def __init__(self):
        self.coins = R.START_COINS
        self.hired = False  # has ever hired: no freelance salary any more
        self.failures = 0
        self.backup = 0
        self.employees = [0] * S
        self.free = [0] * S  # employees of each specialty still free this part of the turn
        self.self_free = 0  # units the player can still give this part of the turn
        self.projects = set()  # project cards in hand
        self.opportunities = set()  # opportunity cards in hand
        self.slots = [None] * R.SLOTS  # projects in progress: [card, work left per specialty, weeks left]
        self.feature = None  # [project card it is attached to, work left per specialty]


class Game:
    def __init__(self, num_players, project_deck, opportunity_deck, incident_deck):
        n = self.n = num_players
        self.players = [Player() for _ in range(n)]
        self.project_deck, self.opportunity_deck, self.incident_deck = ([int(c) for c in deck] for deck in (
            project_deck, opportunity_deck, incident_deck))
        for i, p in enumerate(self.players):
            p.projects = set(self.project_deck[R.START_PROJECTS * i:R.START_PROJECTS * (i + 1)])
            p.opportunities = set(self.opportunity_deck[R.START_OPPORTUNITIES * i:R.START_OPPORTUNITIES * (i + 1)])
        self.project_next, self.opportunity_next, self.incident_next = R.START_PROJECTS * n, R.START_OPPORTUNITIES * n, 0
        self.completed_owner = {}  # project card -> owner, for completed projects
        self.features = [0] * C.NUM_PROJECTS  # finished features per completed project
        self.long_work = [[0] * S for _ in C.LONG_KINDS]  # work left to close each long incident (all 0: none)
        self.turn = 0
        self.active = 0
        self.current = 0
        self.phase = R.MAIN
        self.main_seat = -1  # whose part 2 is running (-1: part 1)
        self.revealed, self.asked = -1, 0
        self.incident, self.commits, self.committed, self.pending = -1, [0] * n, 0, 0
        self.sold = self.played_project = self.played_opportunity = False
        self.offers = 0
        self.offer = None  # [owner, slot, specialty, price]
        self.situation = -1  # a situation waiting for its target
        self.terminated = self.truncated = False
        self.ranks = [-1] * n
        self.place = [-1] * n  # the best rank a seat shares (ties share a place)
        self.taken_by = [-1] * C.NUM_PROJECTS  # who took each revealed project
        self.project_discard = [False] * C.NUM_PROJECTS  # the project cards in the discard pile
        self.opportunity_open = [False] * C.NUM_OPPORTUNITIES  # opportunity cards played face up
        self.start_turn()

    @property
    def done(self):
        return self.terminated or self.truncated

    def alive(self, seat):
        return self.players[seat].failures < R.MAX_FAILURES

    def next_seat(self, origin, after, wanted=None):
        """The first seat still in (and ``wanted``) clockwise from ``origin``, more than
        ``after`` seats past it (-1: the origin may be it); -1 if none."""
        for d in range(after + 1, self.n):
            seat = (origin + d) % self.n
            if self.alive(seat) and (wanted is None or wanted(seat)):
                return seat
        return -1

    def past(self, origin, seat):
        return (seat - origin) % self.n

    def pool_origin(self):
        return self.active if self.main_seat < 0 else self.main_seat

    # ------------------------------------------------------------ the turn
    def start_turn(self):
        if self.turn > 0 and self.project_next < C.NUM_PROJECTS:  # part 1 (not on the first turn)
            self.revealed = self.project_deck[self.project_next]
            self.project_next += 1
            self.asked = 0
            self.phase, self.current = R.PROJECT_OFFER, self.active
            return
        self.rest_of_part_one()

    def rest_of_part_one(self):
        if self.turn > 0:
            if self.opportunity_next < C.NUM_OPPORTUNITIES:
                self.players[self.active].opportunities.add(self.opportunity_deck[self.opportunity_next])
                self.opportunity_next += 1
            if self.reveal_incident():
                return  # the pool decides first
        self.start_part_two()

    def reveal_incident(self):
        """Reveal the next incident (if any is left); True if its pool now needs decisions."""
        if self.incident_next >= C.NUM_INCIDENTS:
            return False
        card = self.incident_deck[self.incident_next]
        self.incident_next += 1
        kind = C.INCIDENTS[card].kind
        if kind in C.LONG_KINDS:
            self.long_work[C.LONG_KINDS.index(kind)] = list(C.INCIDENTS[card].work)
            return False
        self.incident, self.commits, self.committed = card, [0] * self.n, 0
        self.phase, self.current = R.COMMIT, self.next_seat(self.pool_origin(), -1)
        return True

    def start_part_two(self):
        self.main_seat = self.active
        self.begin_main(self.active)

    def begin_main(self, seat):
        p = self.players[seat]
        p.self_free, p.free = 1, list(p.employees)
        self.sold = self.played_project = self.played_opportunity = False
        self.offers = 0
        self.phase, self.current = R.MAIN, seat

    def end_main(self):
        seat = self.main_seat
        p = self.players[seat]
        for k, slot in enumerate(p.slots):  # a week passes on each own project
            if slot is not None:
                slot[2] -= 1
                if slot[2] == 0:  # failed: discarded
                    self.project_discard[slot[0]] = True
                    p.slots[k] = None
                    p.failures += 1
        if p.failures >= R.MAX_FAILURES:
            self.eliminate(seat)
            if sum(self.alive(s) for s in range(self.n)) == 1:
                self.finish()
                return
        self.after_main()

    def eliminate(self, seat):
        """Out: ranked below everyone still in; every card of theirs discarded face up."""
        p = self.players[seat]
        self.ranks[seat] = self.place[seat] = sum(self.alive(s) for s in range(self.n))
        for c in p.projects:
            self.project_discard[c] = True
        for j in p.opportunities:
            self.opportunity_open[j] = True
        for slot in p.slots:
            if slot is not None:
                self.project_discard[slot[0]] = True
        for c, owner in list(self.completed_owner.items()):
            if owner == seat:
                self.project_discard[c] = True
                del self.completed_owner[c]
                self.features[c] = 0
        p.projects, p.opportunities, p.slots, p.feature = set(), set(), [None] * R.SLOTS, None
        p.employees, p.free, p.self_free, p.backup = [0] * S, [0] * S, 0, 0

    def after_main(self):
        while self.pending > 0:
            self.pending -= 1
            if self.reveal_incident():
                return
        following = self.next_seat(self.active, self.past(self.active, self.main_seat))
        if following < 0:
            self.begin_payday()
        else:
            self.main_seat = following
            self.begin_main(following)

    def begin_payday(self):
        self.main_seat = -1
        self.next_payday(-1)

    def next_payday(self, after):
        """The next player with staff decides whom to fire before paying; none left: the costs."""
        seat = self.next_seat(self.active, after, lambda s: sum(self.players[s].employees) > 0)
        if seat < 0:
            self.end_turn()
        else:
            self.phase, self.current = R.PAYDAY, seat

    def end_turn(self):
        no_profit = any(self.long_work[C.LONG_KINDS.index(C.NO_PROFIT)])
        rent_hike = any(self.long_work[C.LONG_KINDS.index(C.RENT_HIKE)])
        for seat, p in enumerate(self.players):
            if not self.alive(seat):
                continue
            p.coins -= min(p.coins, R.rent(sum(p.employees) + 1) + rent_hike)
            for s in range(S):  # salaries, developers paid first; whoever is not paid leaves
                paid = min(p.employees[s], p.coins)
                p.coins -= paid
                p.employees[s] = paid
            if not p.hired:
                p.coins += 1  # the freelance salary
            if not no_profit:
                p.coins += sum(C.PROJECTS[c].income + self.features[c]
                               for c, owner in self.completed_owner.items() if owner == seat)
        if max(p.coins for seat, p in enumerate(self.players) if self.alive(seat)) >= R.WIN_COINS:
            self.finish()
            return
        self.turn += 1
        if self.turn >= R.TURN_CAP:
            self.finish(truncated=True)
            return
        self.active = self.next_seat(self.active, 0)
        self.start_turn()

    def finish(self, truncated=False):
        """The players still in, by coins, finished projects, fewer failures (equal on all
        three: one shared place), then the lot: the incident deck's last cards, seat by seat."""
        def tie(s):
            finished = sum(1 for owner in self.completed_owner.values() if owner == s)
            return (-self.players[s].coins, -finished, self.players[s].failures)
        inside = [s for s in range(self.n) if self.alive(s)]
        order = sorted(inside, key=lambda s: (tie(s), self.incident_deck[C.NUM_INCIDENTS - 1 - s]))
        for rank, seat in enumerate(order):
            self.ranks[seat] = rank
            self.place[seat] = sum(1 for other in inside if tie(other) < tie(seat))
        self.terminated, self.truncated = not truncated, truncated

    # ------------------------------------------------------------ the effects
    def data_loss(self, seat):
        p = self.players[seat]
        if p.backup == R.BACKUP_WORK:
            p.backup = 0
            return
        for slot in p.slots:
            if slot is not None:
                slot[1] = list(C.PROJECTS[slot[0]].work)

    def resolve_pool(self):
        card = C.INCIDENTS[self.incident]
        if sum(self.commits) >= card.avoid:
            for p, paid in zip(self.players, self.commits):
                p.coins -= paid
        else:
            for seat, p in enumerate(self.players):
                if not self.alive(seat):
                    continue
                if card.kind == C.FINES:
                    p.coins -= min(p.coins, card.loss)
                else:
                    self.data_loss(seat)
        self.incident, self.commits, self.committed = -1, [0] * self.n, 0
        if self.main_seat < 0:
            self.start_part_two()
        else:
            self.after_main()

    def complete(self, owner, k):
        card = self.players[owner].slots[k][0]
        self.players[owner].slots[k] = None
        self.players[owner].coins += C.PROJECTS[card].bonus
        self.completed_owner[card] = owner
        name = C.PROJECTS[card].name
        for seat, p in enumerate(self.players):  # competitors of the same name are pushed out
            if seat == owner:
                continue
            for j, slot in enumerate(p.slots):
                if slot is not None and C.PROJECTS[slot[0]].name == name:
                    self.project_discard[slot[0]] = True
                    p.slots[j] = None
            for other, holder in list(self.completed_owner.items()):
                if holder == seat and C.PROJECTS[other].name == name:
                    del self.completed_owner[other]
                    self.project_discard[other] = True
                    self.features[other] = 0
                    if p.feature is not None and p.feature[0] == other:
                        p.feature = None
        if C.PROJECTS[card].incident:
            self.pending += 1

    def use_unit(self, seat, s):
        p = self.players[seat]
        if p.free[s] > 0:
            p.free[s] -= 1
        else:
            p.self_free -= 1

    def work_on_slot(self, owner, k, s):
        slot = self.players[owner].slots[k]
        slot[1][s] -= 1
        if not any(slot[1]):
            self.complete(owner, k)

    # ------------------------------------------------------------ decisions
    def has_unit(self, seat, s):
        p = self.players[seat]
        return p.free[s] > 0 or p.self_free > 0

    def feature_homes(self, seat):
        """The player's finished projects with the feature icon, sorted (a feature's choices)."""
        return sorted(c for c, owner in self.completed_owner.items() if owner == seat and C.PROJECTS[c].feature_icon)

    def work_left(self, seat, t, s):
        p = self.players[seat]
        if t < R.SLOTS:
            return p.slots[t] is not None and p.slots[t][1][s] > 0
        if t == R.TARGET_FEATURE:
            return p.feature is not None and p.feature[1][s] > 0
        if t == R.TARGET_BACKUP:
            return p.backup < R.BACKUP_WORK
        return self.long_work[t - R.TARGET_LONG][s] > 0

    def legal(self):
        """The legal action ids, sorted."""
        if self.done:
            return []
        p = self.players[self.current]
        if self.phase == R.PROJECT_OFFER:
            return [R.PASS] + ([R.TAKE] if None in p.slots else [])
        if self.phase == R.COMMIT:
            return [R.COMMIT_BASE + k for k in range(min(R.MAX_COMMIT, p.coins) + 1)]
        if self.phase == R.PRICE:
            return [R.PRICE_BASE + k for k in range(R.MAX_PRICE)]
        if self.phase == R.ANSWER:
            return [R.PASS] + ([R.TAKE] if p.coins >= self.offer[3] else [])
        if self.phase == R.TARGET:
            return [R.TARGET_BASE + r - 1 for r in range(1, self.n) if self.alive((self.current + r) % self.n)]
        if self.phase == R.ATTACH:
            return [R.ATTACH_BASE + c for c in self.feature_homes(self.current)]
        if self.phase == R.PAYDAY:
            return [R.DONE] + [R.FIRE_BASE + s for s in range(S) if p.employees[s] > 0]
        return self.legal_main(self.current)

    def legal_main(self, seat):
        p = self.players[seat]
        legal = [R.DONE]
        if not self.sold:
            legal += [R.SELL_BASE + c for c in sorted(p.projects)]
        if not self.played_project and None in p.slots:
            legal += [R.PLAY_PROJECT_BASE + c for c in sorted(p.projects)]
        if not self.played_opportunity:
            if not any(self.long_work[C.LONG_KINDS.index(C.HIRING_FREEZE)]):
                legal += [R.HIRE_BASE + j for j in sorted(p.opportunities)]
            can_feature = p.feature is None and bool(self.feature_homes(seat))
            legal += [R.FRONT_BASE + j for j in sorted(p.opportunities)
                      if C.OPPORTUNITIES[j].situation >= 0 or can_feature]
        legal += [R.FIRE_BASE + s for s in range(S) if p.employees[s] > 0]
        legal += [R.WORK_BASE + t * S + s for t in range(R.NUM_TARGETS) for s in range(S)
                  if self.has_unit(seat, s) and self.work_left(seat, t, s)]
        if self.offers < R.MAX_OFFERS:
            for r in range(1, self.n):
                owner = self.players[(seat + r) % self.n]
                legal += [R.OFFER_BASE + ((r - 1) * R.SLOTS + k) * S + s for k in range(R.SLOTS) for s in range(S)
                          if self.has_unit(seat, s) and owner.slots[k] is not None and owner.slots[k][1][s] > 0]
        return sorted(legal)

    def step(self, a):
        if a not in self.legal():
            raise ValueError(f"illegal action {a} ({R.action_to_string(a)}) in the {R.PHASE_NAMES[self.phase]} phase")
        self.apply(a)

    def apply(self, a):
        """Play action ``a``, known to be legal."""
        seat = self.current
        if self.phase == R.PROJECT_OFFER:
            self.step_project_offer(a)
        elif self.phase == R.COMMIT:
            self.commits[seat] = a - R.COMMIT_BASE
            self.committed += 1
            following = self.next_seat(self.pool_origin(), self.past(self.pool_origin(), seat))
            if following < 0:
                self.resolve_pool()
            else:
                self.current = following
        elif self.phase == R.PRICE:
            self.offer[3] = a - R.PRICE_BASE + 1
            self.phase, self.current = R.ANSWER, self.offer[0]
        elif self.phase == R.ANSWER:
            self.step_answer(a)
        elif self.phase == R.TARGET:
            self.step_target(a)
        elif self.phase == R.ATTACH:
            p = self.players[seat]
            p.feature[0] = a - R.ATTACH_BASE
            self.phase = R.MAIN
        elif self.phase == R.PAYDAY:
            if a == R.DONE:
                self.next_payday(self.past(self.active, seat))
            else:
                self.fire(seat, a - R.FIRE_BASE)
        else:
            self.step_main(seat, a)

    def step_project_offer(self, a):
        if a == R.TAKE:  # straight into work
            self.taken_by[self.revealed] = self.current
            self.put_in_work(self.current, self.revealed)
        else:
            self.asked += 1
            following = self.next_seat(self.active, self.past(self.active, self.current))
            if following >= 0:
                self.current = following
                return
            self.project_discard[self.revealed] = True
        self.revealed = -1
        self.rest_of_part_one()

    def step_answer(self, a):
        owner, k, s, price = self.offer
        helper = self.main_seat
        if a == R.TAKE:
            self.use_unit(helper, s)
            self.players[owner].coins -= price
            self.players[helper].coins += price
            self.work_on_slot(owner, k, s)
        self.offers += 1
        self.offer = None
        self.phase, self.current = R.MAIN, helper

    def step_target(self, a):
        victim = (self.current + a - R.TARGET_BASE + 1) % self.n
        if self.situation == C.TAX_AUDIT:
            self.players[victim].coins -= min(self.players[victim].coins, C.TAX_AUDIT_COINS)
        else:
            self.data_loss(victim)
        self.situation = -1
        self.phase = R.MAIN

    def step_main(self, seat, a):
        p = self.players[seat]
        if a == R.DONE:
            self.end_main()
        elif a < R.PLAY_PROJECT_BASE:
            p.projects.remove(a - R.SELL_BASE)
            self.project_discard[a - R.SELL_BASE] = True
            p.coins += 1
            self.sold = True
        elif a < R.HIRE_BASE:
            card = a - R.PLAY_PROJECT_BASE
            p.projects.remove(card)
            self.put_in_work(seat, card)
            self.played_project = True
        elif a < R.FRONT_BASE:
            j = a - R.HIRE_BASE
            p.opportunities.remove(j)
            s = C.OPPORTUNITIES[j].specialty
            p.employees[s] += 1
            p.free[s] += 1
            p.hired = True
            self.played_opportunity = True
            self.opportunity_open[j] = True
        elif a < R.FIRE_BASE:
            self.play_front(seat, a - R.FRONT_BASE)
        elif a < R.WORK_BASE:
            self.fire(seat, a - R.FIRE_BASE)
        elif a < R.OFFER_BASE:
            t, s = divmod(a - R.WORK_BASE, S)
            self.work_own(seat, t, s)
        else:
            rk, s = divmod(a - R.OFFER_BASE, S)
            r, k = divmod(rk, R.SLOTS)
            self.offer = [(seat + r + 1) % self.n, k, s, 0]
            self.phase = R.PRICE

    def put_in_work(self, seat, card):
        p = self.players[seat]
        p.slots[p.slots.index(None)] = [card, list(C.PROJECTS[card].work), C.PROJECTS[card].deadline]

    def fire(self, seat, s):
        p = self.players[seat]
        p.employees[s] -= 1
        p.free[s] = min(p.free[s], p.employees[s])

    def play_front(self, seat, j):
        p = self.players[seat]
        p.opportunities.remove(j)
        self.played_opportunity = True
        self.opportunity_open[j] = True
        card = C.OPPORTUNITIES[j]
        if card.situation < 0:  # its project is chosen next
            p.feature = [-1, list(card.feature_work)]
            self.phase = R.ATTACH
        elif card.situation == C.CRUNCH:
            p.self_free += 1
        elif card.situation == C.INVESTOR:
            p.coins += C.INVESTOR_COINS
        elif card.situation == C.EXTENSION:
            for slot in p.slots:
                if slot is not None:
                    slot[2] += 1
        else:
            self.situation = card.situation
            self.phase = R.TARGET

    def work_own(self, seat, t, s):
        p = self.players[seat]
        self.use_unit(seat, s)
        if t < R.SLOTS:
            self.work_on_slot(seat, t, s)
        elif t == R.TARGET_FEATURE:
            p.feature[1][s] -= 1
            if not any(p.feature[1]):
                self.features[p.feature[0]] += 1
                p.feature = None
        elif t == R.TARGET_BACKUP:
            p.backup += 1
        else:
            self.long_work[t - R.TARGET_LONG][s] -= 1
