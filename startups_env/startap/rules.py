"""Constants and the action encoding of *Стартап* (docs/startap.md, "Actions").

One fixed discrete action space serves every decision; the phase of the game says which
ids can be legal. A multi-part choice (a player's part of the turn: playing cards, hiring,
firing, assigning work, offering work) is a sequence of decisions ending with DONE.
"""

from __future__ import annotations

from dataclasses import dataclass

from startups_env.checks import is_int
from startups_env.startap.cards import NUM_OPPORTUNITIES, NUM_PROJECTS, NUM_SPECIALTIES, SPECIALTIES

MIN_PLAYERS, MAX_PLAYERS = 2, 6
START_COINS = 10
START_PROJECTS = 3
START_OPPORTUNITIES = 3
WIN_COINS = 27
MAX_FAILURES = 3
BACKUP_WORK = 2
SLOTS = 3  # projects in progress per player
MAX_OFFERS = 2  # work offers a player may make in one part of the turn
MAX_COMMIT = 5  # coins one player may put into an incident pool
MAX_PRICE = 3  # coins one offered unit of work may ask
TURN_CAP = 60  # turns; a game still running then is truncated and ranked as at the end
#: Office rent by headcount (employees plus the player): (at least this many people, coins).
RENT_STEPS = ((3, 1), (5, 2), (7, 3))

# Phases: what the player to act decides.
PROJECT_OFFER, COMMIT, MAIN, PRICE, ANSWER, TARGET, ATTACH, PAYDAY = range(8)
PHASE_NAMES = ("project offer", "incident pool", "main", "price", "answer", "target", "feature's project", "payday")
NUM_PHASES = len(PHASE_NAMES)

# Work targets of one's own: the project slots, the feature in progress, the backup, the
# long incidents on the table (in the order of cards.LONG_KINDS).
TARGET_FEATURE = SLOTS
TARGET_BACKUP = SLOTS + 1
TARGET_LONG = SLOTS + 2
NUM_TARGETS = SLOTS + 2 + 3

# The action ids, range by range.
PASS = 0  # project offer: leave it; answer: refuse the offer
TAKE = 1  # project offer: take it; answer: accept the offer
COMMIT_BASE = 2  # + k: put k coins (0..MAX_COMMIT) into the pool
PRICE_BASE = COMMIT_BASE + MAX_COMMIT + 1  # + (k - 1): ask k coins (1..MAX_PRICE)
TARGET_BASE = PRICE_BASE + MAX_PRICE  # + (r - 1): the player r seats after you (1..MAX_PLAYERS - 1)
DONE = TARGET_BASE + MAX_PLAYERS - 1  # main: end your part of the turn
SELL_BASE = DONE + 1  # + c: sell project card c from your hand for 1 coin
PLAY_PROJECT_BASE = SELL_BASE + NUM_PROJECTS  # + c: start project card c
HIRE_BASE = PLAY_PROJECT_BASE + NUM_PROJECTS  # + j: play opportunity j as its employee
FRONT_BASE = HIRE_BASE + NUM_OPPORTUNITIES  # + j: play opportunity j as its feature or situation
FIRE_BASE = FRONT_BASE + NUM_OPPORTUNITIES  # + s: fire an employee of specialty s
WORK_BASE = FIRE_BASE + NUM_SPECIALTIES  # + t * 4 + s: one unit of specialty s on own target t
OFFER_BASE = WORK_BASE + NUM_TARGETS * NUM_SPECIALTIES  # + ((r - 1) * SLOTS + k) * 4 + s
ATTACH_BASE = OFFER_BASE + (MAX_PLAYERS - 1) * SLOTS * NUM_SPECIALTIES  # + c: the feature goes on project c
NUM_ACTIONS = ATTACH_BASE + NUM_PROJECTS


def target_name(t: int) -> str:
    if t < SLOTS:
        return f"project slot {t}"
    return ("feature", "backup", "no-profit incident", "rent-hike incident", "hiring-freeze incident")[t - SLOTS]


def action_to_string(a: int) -> str:
    """A readable name of action id ``a``; ValueError outside 0..NUM_ACTIONS-1."""
    if not is_int(a) or not 0 <= a < NUM_ACTIONS:
        raise ValueError(f"action must be an int in [0, {NUM_ACTIONS}), got {a!r}")
    a = int(a)  # (a numpy integer, as action_space.sample() gives, names the same action)
    if a == PASS:
        return "pass / refuse"
    if a == TAKE:
        return "take / accept"
    if a < PRICE_BASE:
        return f"put {a - COMMIT_BASE} coins into the pool"
    if a < TARGET_BASE:
        return f"ask {a - PRICE_BASE + 1} coins"
    if a < DONE:
        return f"target the player {a - TARGET_BASE + 1} seats on"
    if a == DONE:
        return "done"
    if a >= ATTACH_BASE:
        return f"attach the feature to project {a - ATTACH_BASE}"
    if a < PLAY_PROJECT_BASE:
        return f"sell project {a - SELL_BASE}"
    if a < HIRE_BASE:
        return f"start project {a - PLAY_PROJECT_BASE}"
    if a < FRONT_BASE:
        return f"hire opportunity {a - HIRE_BASE}"
    if a < FIRE_BASE:
        return f"play opportunity {a - FRONT_BASE} as feature/situation"
    if a < WORK_BASE:
        return f"fire a {SPECIALTIES[a - FIRE_BASE]}"
    if a < OFFER_BASE:
        t, s = divmod(a - WORK_BASE, NUM_SPECIALTIES)
        return f"{SPECIALTIES[s]} work on {target_name(t)}"
    rk, s = divmod(a - OFFER_BASE, NUM_SPECIALTIES)
    r, k = divmod(rk, SLOTS)
    return f"offer {SPECIALTIES[s]} work on slot {k} of the player {r + 1} seats on"


def rent(headcount: int) -> int:
    """Coins of office rent a turn for a team of ``headcount`` people (the player included)."""
    return sum(1 for people, _coins in RENT_STEPS if headcount >= people)


REWARD_SCHEMES = ("win", "rank")


@dataclass(frozen=True)
class Rules:
    """Table-level settings of *Стартап* (the tools' common ``rules`` object).

    Attributes:
        num_players: seats, 2-6.
        reward: the terminal reward, ``"win"`` (+1 to the winner, -1/(N-1) to every other
            seat) or ``"rank"`` (1 - 2 * rank / (N-1), +1 for the winner down to -1 for
            last); players tied on the tie-break share the mean of their places' rewards;
            both zero-sum.
        turn_cap: the turns after which a game is truncated; fixed at :data:`TURN_CAP`
            (docs/startap.md), accepted here so that tools can pass it alike to every game.
    """

    num_players: int = 4
    reward: str = "win"
    turn_cap: int = TURN_CAP

    def __post_init__(self) -> None:
        if isinstance(self.num_players, bool) or not isinstance(self.num_players, int) or not (
                MIN_PLAYERS <= self.num_players <= MAX_PLAYERS):
            raise ValueError(f"num_players must be an int between {MIN_PLAYERS} and {MAX_PLAYERS}, got {self.num_players!r}")
        if self.reward not in REWARD_SCHEMES:
            raise ValueError(f"reward must be one of {REWARD_SCHEMES} in Стартап, got {self.reward!r}")
        if self.turn_cap != TURN_CAP:
            raise ValueError(f"Стартап's turn cap is fixed at {TURN_CAP} turns, got turn_cap={self.turn_cap!r}")
