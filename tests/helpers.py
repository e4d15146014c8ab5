"""Shared helpers of the simulator tests: golden games, hand-built decks, conversion of the
batch ``State`` into the reference's ``snapshot()`` format, and state comparison.

Kept free of assertions about the rules themselves: each test module states what it
expects.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import fields

import numpy as np

from startups_env.startups.backend import BACKENDS, numba_available
from startups_env.startups.queries import SLOTS
from startups_env.startups.rules import (
    COMPANY_NAMES,
    COMPANY_SIZES,
    DECK_SIZE,
    HAND_SIZE,
    NUM_COMPANIES,
    NUM_REMOVED,
    Action,
    string_to_action,
)
from startups_env.startups.state import State

_HERE = os.path.dirname(os.path.abspath(__file__))
#: The 300 reference games (deck, actions, final scores, ranking, tags), kept with the tests.
GOLDEN_PATH = os.path.join(_HERE, "data", "reference_games.jsonl")


#: The simulator backends installed here: the reference numpy one, and numba's where it is.
INSTALLED_BACKENDS = [b for b in BACKENDS if b == "numpy" or numba_available()]


def run_uncompiled(code: str) -> subprocess.CompletedProcess:
    """Run the Python ``code`` in a fresh interpreter with ``NUMBA_DISABLE_JIT=1``, so that the
    kernels run as the Python they are written in (and coverage sees them), from the
    repository's root with the tests' folder importable."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    return subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, 'tests')\n{code}"],
                          cwd=os.path.dirname(_HERE), env=env, capture_output=True, text=True, timeout=600)


def load_golden() -> list[dict]:
    with open(GOLDEN_PATH) as f:
        return [json.loads(line) for line in f if line.strip()]


# ----------------------------------------------------------------- cards and decks
def cards(text: str) -> list[int]:
    """'octo octo hippo' -> [3, 3, 4] (company names as in ``COMPANY_NAMES``)."""
    return [COMPANY_NAMES.index(word) for word in text.split()]


def counts(text_or_cards) -> list[int]:
    """Cards per company: 'octo octo hippo' -> [0, 0, 0, 2, 1, 0]."""
    ids = cards(text_or_cards) if isinstance(text_or_cards, str) else list(text_or_cards)
    return [ids.count(c) for c in range(NUM_COMPANIES)]


def _as_ids(x) -> list[int]:
    return cards(x) if isinstance(x, str) else [int(c) for c in x]


def make_deck(hands, pile=(), removed=()) -> list[int]:
    """A canonical deck (docs/rules.md): ``hands`` lists the 3 cards of every seat (the table
    size is ``len(hands)``), ``pile`` the front of the pile, ``removed`` some of the 5
    removed cards. The cards not named fill the removed slots first, then the back of the
    pile, in company order. Each entry may be a string of company names or a list of ids.
    """
    hands = [_as_ids(h) for h in hands]
    pile, removed = _as_ids(pile), _as_ids(removed)
    if any(len(h) != HAND_SIZE for h in hands):
        raise ValueError("every hand holds 3 cards")
    named = removed + [c for h in hands for c in h] + pile
    left = [COMPANY_SIZES[c] - named.count(c) for c in range(NUM_COMPANIES)]
    if min(left) < 0 or len(removed) > NUM_REMOVED:
        raise ValueError(f"too many cards named: {named}")
    rest = [c for c in range(NUM_COMPANIES) for _ in range(left[c])]
    fill = NUM_REMOVED - len(removed)
    deck = removed + rest[:fill] + [c for h in hands for c in h] + pile + rest[fill:]
    assert len(deck) == DECK_SIZE
    return deck


def draw_keep_game(holdings, removed, starter: int = 0, hands=None) -> tuple[list[int], list[int]]:
    """Deck and action script of a game in which every turn draws from the pile and keeps
    the drawn card in the portfolio, so that seat i ends with ``holdings[i]`` (cards per
    company, hand + portfolio): the dealt hand stays in hand to the end.

    hands: the dealt hands (default: the first 3 cards of each seat's holdings in company
    order). The draws of each seat are laid into the pile in company order.
    """
    n = len(holdings)
    pile_size = DECK_SIZE - NUM_REMOVED - HAND_SIZE * n
    seat_of_turn = [(starter + t) % n for t in range(pile_size)]
    own = [[c for c in range(NUM_COMPANIES) for _ in range(holdings[p][c])] for p in range(n)]
    if hands is None:
        hands = [own[p][:HAND_SIZE] for p in range(n)]
    hands = [_as_ids(h) for h in hands]
    draws = []
    for p in range(n):
        rest = list(own[p])
        for c in hands[p]:
            rest.remove(c)  # raises if the hand is not part of the holdings
        if len(rest) != seat_of_turn.count(p):
            raise ValueError(f"seat {p} draws {seat_of_turn.count(p)} cards, holdings need {len(rest)}")
        draws.append(rest)
    pile = [draws[p].pop(0) for p in seat_of_turn]
    deck = make_deck(hands, pile, _as_ids(removed))
    actions = [a for c in pile for a in (Action.DRAW, Action.KEEP + c)]
    return deck, actions


def random_deck(rng) -> list[int]:
    """A uniformly shuffled deck from a ``random.Random``."""
    deck = [c for c in range(NUM_COMPANIES) for _ in range(COMPANY_SIZES[c])]
    rng.shuffle(deck)
    return deck


def act(name: str) -> int:
    """'take octo' -> 4 (``string_to_action``)."""
    return string_to_action(name)


# ----------------------------------------------------------------- state <-> reference
def market_cards(state: State, g: int) -> list[list[int]]:
    """Coins on each market card of game g, per company, oldest first: walk the ring
    buffer from ``market_head``; a card holds ``market_paid - stamp`` coins."""
    out = []
    for c in range(NUM_COMPANIES):
        head, count = int(state.market_head[c, g]), int(state.market_count[c, g])
        paid = int(state.market_paid[c, g])
        out.append([paid - int(state.market_stamp[c, (head + i) % SLOTS, g]) for i in range(count)])
    return out


def snapshots(state: State, rounds: int = 1) -> list[dict]:
    """Every game of ``state`` in the format of ``ReferenceGame.snapshot()``.

    The reference keeps the index of the last round (``rounds - 1``) once a round game is
    over, where the simulator has counted past it; ``round`` is clamped to compare them.
    """
    hand = state.hand.transpose(2, 0, 1).tolist()
    portfolio = state.portfolio.transpose(2, 0, 1).tolist()
    coins = state.coins.T.tolist()
    chip = state.chip.T.tolist()
    pile = (DECK_SIZE - state.pile_pos.astype(int)).tolist()
    done = state.done.tolist()
    order = state.market_order.T.tolist()
    out = []
    for g in range(state.batch_size):
        n = int(state.num_players[g])
        out.append({
            "hands": hand[g][:n],
            "portfolios": portfolio[g][:n],
            "coins": coins[g][:n],
            "chips": chip[g],
            "market": market_cards(state, g),
            "row": [c for c in order[g] if c >= 0],
            "pile": pile[g],
            "current": int(state.current[g]),
            "phase": int(state.phase[g]),
            "barred": int(state.barred[g]),
            "turn": int(state.turn[g]),
            "round": min(int(state.round[g]), rounds - 1),
            "done": done[g],
        })
    return out


def snapshot(state: State, g: int = 0, rounds: int = 1) -> dict:
    return snapshots(state.take([g]), rounds)[0]


def ranking(ranks_row) -> list[int]:
    """Seats best first from a row of ranks (rank 0 = best; -1 = padded seat)."""
    ranks_row = np.asarray(ranks_row)
    seats = np.flatnonzero(ranks_row >= 0)
    return [int(s) for s in seats[np.argsort(ranks_row[seats], kind="stable")]]


# ----------------------------------------------------------------- comparing states
def assert_states_equal(a: State, b: State, what: str = "") -> None:
    for f in fields(State):
        x, y = getattr(a, f.name), getattr(b, f.name)
        assert x.dtype == y.dtype, f"{what}: field {f.name} dtype {x.dtype} != {y.dtype}"
        np.testing.assert_array_equal(x, y, err_msg=f"{what}: field {f.name} differs")


def states_equal(a: State, b: State) -> bool:
    return all(np.array_equal(getattr(a, f.name), getattr(b, f.name)) for f in fields(State))
