"""Slow, plain, pure-Python reference implementation of Startups (see docs/rules.md).

This module is the *test oracle* for the fast numpy simulator in ``startups_env``.
It deliberately does not import anything from ``startups_env`` and does not use
numpy: every rule is written out as directly as possible so that it can be checked
against docs/rules.md line by line. Speed is irrelevant here.

Canonical action encoding (docs/rules.md):
    0        draw from the pile                (take phase)
    1 + c    take company c from the market    (take phase)
    7 + c    put company c into own portfolio  (put-down phase)
    13 + c   put company c into the market     (put-down phase)

Canonical deck order: deck[0:5] removed, seat i dealt deck[5+3i : 8+3i],
pile = deck[5+3N:], drawn from its front.

Options (docs/rules.md, "Other rulesets"), each off by default (the rulebook's game):
    market_row          the market is a row in entry order; a take pays 1 coin (out of
                        the game) per card in front of the card taken; a draw is free
    chip_triples_coins  a majority holder's coins score 3 points each
    payout_in_points    each minority share costs 3 points and gives the majority 3
"""

OPTIONS = ("market_row", "chip_triples_coins", "payout_in_points")

NUM_COMPANIES = 6
COMPANY_SIZES = (5, 6, 7, 8, 9, 10)
NUM_CARDS = sum(COMPANY_SIZES)  # 45
NUM_REMOVED = 5
HAND_SIZE = 3
START_COINS = 10
NUM_ACTIONS = 19

DRAW = 0
TAKE_BASE = 1        # 1 + c
PORTFOLIO_BASE = 7   # 7 + c
MARKET_BASE = 13     # 13 + c

PHASE_TAKE = 0
PHASE_PUT = 1


def _check_deck(deck):
    """A deck must be a permutation of the 45 company cards."""
    if len(deck) != NUM_CARDS:
        raise ValueError("deck must hold %d cards, got %d" % (NUM_CARDS, len(deck)))
    for c in range(NUM_COMPANIES):
        if sum(1 for x in deck if x == c) != COMPANY_SIZES[c]:
            raise ValueError("deck must hold %d cards of company %d" % (COMPANY_SIZES[c], c))


class _Round:
    """State of one round (= one complete game of Startups)."""

    def __init__(self, num_players, deck, first_player, round_index, options=()):
        _check_deck(deck)
        self.options = set(options)
        n = num_players
        self.num_players = n
        self.round_index = round_index
        self.removed = list(deck[0:NUM_REMOVED])
        self.hands = [[0] * NUM_COMPANIES for _ in range(n)]
        for seat in range(n):
            start = NUM_REMOVED + HAND_SIZE * seat
            for c in deck[start:start + HAND_SIZE]:
                self.hands[seat][c] += 1
        # Pile as a list; we draw from the front.
        self.pile = list(deck[NUM_REMOVED + HAND_SIZE * n:])
        self.portfolios = [[0] * NUM_COMPANIES for _ in range(n)]
        self.coins = [START_COINS] * n
        self.chips = [-1] * NUM_COMPANIES
        # market[c] = coins on each market card of company c, oldest first.
        # Every draw pays the same 1 coin onto every card of a company, so the
        # oldest card always carries the most coins.
        self.market = [[] for _ in range(NUM_COMPANIES)]
        # market_row: the market's companies in the order the cards entered, front first.
        self.row = []
        self.current = first_player
        self.phase = PHASE_TAKE
        self.barred = -1
        self.turn = 0
        self.done = False
        self.truncated = False
        self.last_player = -1   # seat that took the final turn (for recency tie-break)
        # Results, filled by _score().
        self.scores = None
        self.threes = None
        self.final_counts = None
        self.ranking = None

    # ----- helpers -------------------------------------------------------------
    def draw_cost(self, seat):
        """Coins `seat` must pay to draw: 1 per market card, except on companies
        whose anti-monopoly chip `seat` holds."""
        cost = 0
        if "market_row" in self.options:
            return 0  # drawing is free
        for c in range(NUM_COMPANIES):
            if self.chips[c] != seat:
                cost += len(self.market[c])
        return cost

    def take_price(self, c):
        """market_row: a coin for each card in front of c's front-most card; else free."""
        if "market_row" not in self.options or c not in self.row:
            return 0
        return self.row.index(c)

    def legal_actions(self):
        if self.done:
            return []
        seat = self.current
        legal = []
        if self.phase == PHASE_TAKE:
            # The pile is never empty in a take phase: the round ends as soon as
            # the turn that drew the last card is completed.
            if len(self.pile) > 0 and self.coins[seat] >= self.draw_cost(seat):
                legal.append(DRAW)
            for c in range(NUM_COMPANIES):
                if len(self.market[c]) > 0 and self.chips[c] != seat and self.coins[seat] >= self.take_price(c):
                    legal.append(TAKE_BASE + c)
        else:
            hand = self.hands[seat]
            for c in range(NUM_COMPANIES):
                if hand[c] > 0:
                    legal.append(PORTFOLIO_BASE + c)
            for c in range(NUM_COMPANIES):
                if hand[c] > 0 and c != self.barred:
                    legal.append(MARKET_BASE + c)
        return sorted(legal)

    def step(self, action, turn_cap):
        if action not in self.legal_actions():
            raise ValueError("illegal action %r (legal: %r)" % (action, self.legal_actions()))
        seat = self.current
        if self.phase == PHASE_TAKE:
            if action == DRAW:
                # Pay 1 coin onto every market card the drawer must pay on (market_row: none).
                for c in range(NUM_COMPANIES):
                    if self.chips[c] != seat and "market_row" not in self.options:
                        for i in range(len(self.market[c])):
                            self.market[c][i] += 1
                            self.coins[seat] -= 1
                card = self.pile.pop(0)
                self.hands[seat][card] += 1
                self.barred = -1
            else:
                c = action - TAKE_BASE
                # Decision 2: take the card of c with the most coins = the oldest.
                gained = self.market[c].pop(0)
                self.coins[seat] += gained
                if "market_row" in self.options:
                    self.coins[seat] -= self.take_price(c)  # paid out of the game
                    self.row.remove(c)  # (removes the front-most card of c)
                self.hands[seat][c] += 1
                # May not put a card of this company back into the market this turn.
                self.barred = c
            self.phase = PHASE_PUT
            return

        # Put-down phase.
        if action < MARKET_BASE:
            c = action - PORTFOLIO_BASE
            self.hands[seat][c] -= 1
            self.portfolios[seat][c] += 1
            self._update_chip(seat, c)
        else:
            c = action - MARKET_BASE
            self.hands[seat][c] -= 1
            self.market[c].append(0)  # newest card, no coins on it
            if "market_row" in self.options:
                self.row.append(c)
        self._end_turn(turn_cap)

    def _update_chip(self, seat, c):
        """Only `seat`'s portfolio changed, so only `seat` can take the chip."""
        holder = self.chips[c]
        if holder == -1:
            self.chips[c] = seat
        elif holder != seat and self.portfolios[seat][c] > self.portfolios[holder][c]:
            # Strictly more than the holder; a tie leaves the chip where it is.
            self.chips[c] = seat

    def _end_turn(self, turn_cap):
        self.turn += 1
        self.last_player = self.current
        self.barred = -1
        self.phase = PHASE_TAKE
        if len(self.pile) == 0:
            # The turn that drew the last pile card is now complete.
            self._score()
        elif turn_cap is not None and self.turn >= turn_cap:
            # Decision 1: truncate, scored exactly like a normal end.
            self.truncated = True
            self._score()
        else:
            self.current = (self.current + 1) % self.num_players

    def _score(self):
        n = self.num_players
        self.done = True
        # Every player adds their hand to their portfolio; market counts for nobody.
        counts = [[self.hands[p][c] + self.portfolios[p][c] for c in range(NUM_COMPANIES)]
                  for p in range(n)]
        balance = list(self.coins)
        threes = [0] * n
        paid = [0] * n
        majority = [False] * n  # holds the most of some company alone
        for c in range(NUM_COMPANIES):
            best = max(counts[p][c] for p in range(n))
            leaders = [p for p in range(n) if counts[p][c] == best]
            if best == 0 or len(leaders) != 1:
                continue  # tie for most (or nobody holds any): nobody pays
            winner = leaders[0]
            majority[winner] = True
            for p in range(n):
                if p != winner:
                    paid[p] += counts[p][c]
                    threes[winner] += counts[p][c]
        points = "payout_in_points" in self.options
        for p in range(n):
            if not points:
                # Paid from 1-point coins only; may go into debt (negative).
                balance[p] -= paid[p]
        self.final_counts = counts
        self.coins_after_payout = balance
        self.threes = threes
        self.scores = []
        for p in range(n):
            capital = balance[p]
            if "chip_triples_coins" in self.options and majority[p] and capital > 0:
                capital *= 3  # the chip triples the coins; a debt is not tripled
            score = capital + 3 * threes[p]
            if points:
                score -= 3 * paid[p]  # 3 points a minority share
            self.scores.append(score)
        # Recency: 0 for the player who took the final turn, 1 for the one
        # before them in turn order, ...; lower is better.
        last = self.last_player

        def key(p):
            recency = (last - p) % n
            return (-self.scores[p], -threes[p], recency)

        self.ranking = sorted(range(n), key=key)

    def snapshot(self):
        return {
            "hands": [list(h) for h in self.hands],
            "portfolios": [list(p) for p in self.portfolios],
            "coins": list(self.coins),
            "chips": list(self.chips),
            "market": [list(m) for m in self.market],
            "row": list(self.row),
            "pile": len(self.pile),
            "current": self.current,
            "phase": self.phase,
            "barred": self.barred,
            "turn": self.turn,
            "round": self.round_index,
            "done": self.done,
        }


class ReferenceGame:
    """A whole game: one round (rounds=1) or the optional four-round game."""

    def __init__(self, num_players, decks, rounds=1, turn_cap=400, options=()):
        if rounds not in (1, 4):
            raise ValueError("rounds must be 1 or 4")
        if len(decks) != rounds:
            raise ValueError("need one deck per round")
        if not 2 <= num_players <= 7:
            raise ValueError("2..7 players")
        self.num_players = num_players
        self.decks = [list(d) for d in decks]
        self.rounds = rounds
        self.turn_cap = turn_cap
        unknown = set(options) - set(OPTIONS)
        if unknown:
            raise ValueError("unknown options %r" % sorted(unknown))
        self.options = tuple(options)
        self.done = False
        self.truncated = False
        # Round-game bookkeeping.
        self.round_points = [0] * num_players
        self.plus2 = [0] * num_players
        self.plus1 = [0] * num_players
        self.minus1 = [0] * num_players
        self.round_results = []   # per finished round: dict of scores/threes/ranking/...
        self.final_ranking = None
        # Results of the (last) finished round.
        self.scores = None
        self.threes = None
        self.ranking = None
        self.round = _Round(num_players, self.decks[0], 0, 0, self.options)

    def legal_actions(self):
        if self.done:
            return []
        return self.round.legal_actions()

    def step(self, action):
        if self.done:
            raise ValueError("game is over")
        self.round.step(action, self.turn_cap)  # raises ValueError before any change
        if self.round.done:
            self._finish_round()

    def _finish_round(self):
        r = self.round
        n = self.num_players
        if r.truncated:
            self.truncated = True
        self.scores = list(r.scores)
        self.threes = list(r.threes)
        self.ranking = list(r.ranking)
        self.round_results.append({
            "scores": list(r.scores), "threes": list(r.threes),
            "ranking": list(r.ranking), "turns": r.turn, "truncated": r.truncated,
        })
        if self.rounds == 1:
            self.done = True
            self.final_ranking = list(r.ranking)
            return
        # Round chips: 1st +2, 2nd +1, last -1. With 2 players the 2nd is also
        # last, and gets only the -1.
        first, last = r.ranking[0], r.ranking[-1]
        self.plus2[first] += 1
        self.round_points[first] += 2
        if n >= 3:
            second = r.ranking[1]
            self.plus1[second] += 1
            self.round_points[second] += 1
        self.minus1[last] += 1
        self.round_points[last] -= 1

        next_index = r.round_index + 1
        if next_index < self.rounds:
            # Fresh state, coins 10 each, chips cleared; the last-placed starts.
            self.round = _Round(n, self.decks[next_index], last, next_index, self.options)
        else:
            self.done = True
            place_in_last = {seat: i for i, seat in enumerate(r.ranking)}
            self.final_ranking = sorted(
                range(n),
                key=lambda p: (-self.round_points[p], -self.plus2[p], -self.plus1[p],
                               place_in_last[p]))

    def snapshot(self):
        return self.round.snapshot()
