"""Constants of *Startups* and the frozen :class:`Rules` configuration.

This module holds no game state and no numpy arrays: the names, sizes and the canonical
action encoding of ``docs/rules.md`` (a public contract), and the table-level settings.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

NUM_COMPANIES = 6
COMPANY_NAMES = ("giraffe", "bowwow", "flamingo", "octo", "hippo", "elephant")
COMPANY_TITLES = (
    "Giraffe Beer",
    "Bowwow Games",
    "Flamingo Soft",
    "Octo Coffee",
    "Hippo Powertech",
    "Elephant Mars Travel",
)
COMPANY_SIZES = (5, 6, 7, 8, 9, 10)
DECK_SIZE = sum(COMPANY_SIZES)  # 45
NUM_REMOVED = 5
HAND_SIZE = 3
STARTING_COINS = 10
MIN_PLAYERS = 2  # 2 is allowed but unofficial
MIN_OFFICIAL_PLAYERS = 3
MAX_PLAYERS = 7
ROUND_GAME_ROUNDS = 4
ROUND_CHIPS = (2, 1, -1)  # 1st, 2nd, last place in the optional round game
REWARD_SCHEMES = ("win", "rank", "score", "margin")
SCORE_REWARD_SCALE = 10.0  # the "score" reward is (score - table mean) / this
MARGIN_REWARD_SCALE = 8.0  # the "margin" reward is tanh((score - best rival + 0.5) / this)
DEFAULT_TURN_CAP = 400

# The 45 cards in sorted order: company c appears COMPANY_SIZES[c] times.
SORTED_DECK = tuple(c for c, n in enumerate(COMPANY_SIZES) for _ in range(n))


def pile_start(num_players):
    """Deck position of the first pile card at a table of ``num_players`` (an int or an
    array): the removed cards and the dealt hands come first in the canonical deck order."""
    return NUM_REMOVED + HAND_SIZE * num_players


class Action(IntEnum):
    """Offsets of the canonical 19-action encoding (``docs/rules.md``)."""

    DRAW = 0
    TAKE = 1  # 1 + c: take company c from the market
    KEEP = 7  # 7 + c: put company c from hand into own portfolio
    MARKET = 13  # 13 + c: put company c from hand into the market


NUM_ACTIONS = 19
TAKE_PHASE, PUT_PHASE = 0, 1
PHASE_NAMES = ("take", "put")


def action_to_string(action: int) -> str:
    """Short human name of a canonical action id: ``draw``, ``take octo``, ``keep hippo``,
    ``market giraffe``."""
    action = int(action)
    if action == Action.DRAW:
        return "draw"
    if Action.TAKE <= action < Action.KEEP:
        return f"take {COMPANY_NAMES[action - Action.TAKE]}"
    if Action.KEEP <= action < Action.MARKET:
        return f"keep {COMPANY_NAMES[action - Action.KEEP]}"
    if Action.MARKET <= action < NUM_ACTIONS:
        return f"market {COMPANY_NAMES[action - Action.MARKET]}"
    raise ValueError(f"action must be an integer in [0, {NUM_ACTIONS}), got {action}")


def string_to_action(text: str) -> int:
    """Inverse of :func:`action_to_string`; also accepts the action id as digits."""
    words = text.strip().lower().split()
    if len(words) == 1 and words[0].isdigit():
        action = int(words[0])
        action_to_string(action)  # validates the range
        return action
    for action in range(NUM_ACTIONS):
        if " ".join(words) == action_to_string(action):
            return action
    raise ValueError(f"unknown action {text!r}; expected e.g. 'draw', 'take octo', 'keep hippo', 'market giraffe' or an id 0-18")


# The options of play that differ from the rulebook (docs/rules.md, "Other rulesets"): each
# a bool field of Rules, and a bit of ``Rules.option_bits``, which every dealt game carries
# in ``State.options`` (as it carries its table size), so that any code holding a state
# plays it by its own rules.
OPTIONS = ("market_row", "chip_triples_coins", "payout_in_points")
MARKET_ROW, CHIP_TRIPLES_COINS, PAYOUT_IN_POINTS = 1, 2, 4  # the options' bits, in OPTIONS order
RULESETS = {"rulebook": (), "summary": OPTIONS}  # named presets: the options each turns on


class RuleParams(NamedTuple):
    """The settings of :class:`Rules` that change play, as plain ints: the one record in
    which they reach the compiled rules (``Rules.params``). A new option of play is a
    field of Rules and a field here."""

    turn_cap: int
    options: int  # Rules.option_bits


@dataclass(frozen=True)
class Rules:
    """Table-level settings; game state lives apart, in :class:`startups_env.startups.state.State`.

    Attributes:
        num_players: seats at the table, 2-7 (2 is an unofficial variant, see ``official``).
        rounds: 1 for the standard game, 4 for the optional round game (+2/+1/-1 chips;
            rewards come after the 4th round, from the round points).
        turn_cap: completed turns after which a round that has not ended is scored as it
            stands (hands added, as if the pile were exhausted) and reported as
            *truncated*. The rules allow endless cycling through the market; the default
            of 400 turns is far beyond any normal game (a game draws its 19-34 pile cards
            in well under 100 turns; random play needs about 70), so only stalling
            reaches it, and stalling never pays a losing agent because the game is scored.
        reward: terminal reward scheme, one of
            ``"win"``: +1 to the winner, -1/(N-1) to every other player (zero-sum);
            ``"rank"``: 1 - 2*rank/(N-1), from +1 for the winner down to -1 for last
            (zero-sum);
            ``"score"``: (score - mean score of the table) / 10 (zero-sum);
            ``"margin"``: tanh((score - best other score + 0.5) / 8), in (-1, 1): above 0
            for the winner (and for a player tied with it on score), by how much it won,
            below 0 for the others, by how far they trailed. A smooth stand-in for "win"
            (not zero-sum) that tells a narrow loss from a rout (how it trained as a
            PPO reward: docs/experiments.md).
            In the round game, "win" and "rank" use the final round-game ranking and
            "score" and "margin" use the round points ("score" unscaled, minus their mean;
            "margin" with 1 in place of 8).
        market_row: the market is one row in the order its cards entered; taking a card
            costs one coin for each card in front of it (the coins leave the game), and
            drawing from the pile is free. "take company c" takes c's front-most card.
        chip_triples_coins: at the payout, a player who holds the majority of some company
            (so its anti-monopoly chip) scores 3 points for each of its 1-point coins.
        payout_in_points: the payout is in points, not coins: each minority share costs its
            holder 3 points and gives the majority holder 3.
        The three options default to the rulebook's game; ``Rules.preset("summary")`` turns
        all three on (docs/rules.md, "Other rulesets").
    """

    num_players: int = 4
    rounds: int = 1
    turn_cap: int = DEFAULT_TURN_CAP
    reward: str = "win"
    market_row: bool = False
    chip_triples_coins: bool = False
    payout_in_points: bool = False

    def __post_init__(self) -> None:
        # Every int field is type-checked before its range: True == 1 and 4.0 == 4, so a
        # range or membership test alone would accept a bool or a float.
        for name in ("num_players", "rounds", "turn_cap"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} must be an int, got {value!r}")
        if not MIN_PLAYERS <= self.num_players <= MAX_PLAYERS:
            raise ValueError(
                f"num_players must be between {MIN_PLAYERS} and {MAX_PLAYERS} "
                f"(3-7 official, 2 unofficial), got {self.num_players}"
            )
        if self.rounds not in (1, ROUND_GAME_ROUNDS):
            raise ValueError(
                f"rounds must be 1 (standard game) or {ROUND_GAME_ROUNDS} (round game), got {self.rounds!r}"
            )
        if not 1 <= self.turn_cap <= 30000:
            raise ValueError(f"turn_cap must be an int in [1, 30000], got {self.turn_cap!r}")
        if not isinstance(self.reward, str) or self.reward not in REWARD_SCHEMES:
            raise ValueError(f"reward must be one of {REWARD_SCHEMES}, got {self.reward!r}")
        for name in OPTIONS:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")

    @classmethod
    def preset(cls, ruleset: str = "rulebook", **settings) -> "Rules":
        """Rules of a named ruleset: a preset name (``"rulebook"``, ``"summary"``) or a
        comma-separated list of options (``"market_row,payout_in_points"``), as
        :attr:`ruleset` writes it; ``settings`` are the other fields (``num_players``...)."""
        return cls(**parse_ruleset(ruleset), **settings)

    @property
    def ruleset(self) -> str:
        """The options of play in force, as a name :meth:`preset` reads: a preset's name
        where one matches, else the options joined by commas."""
        on = tuple(name for name in OPTIONS if getattr(self, name))
        for name, options in RULESETS.items():
            if on == options:
                return name
        return ",".join(on)

    @functools.cached_property
    def option_bits(self) -> int:
        """The options in force as bits (MARKET_ROW | CHIP_TRIPLES_COINS | PAYOUT_IN_POINTS);
        0 for the rulebook's game."""
        return sum(1 << i for i, name in enumerate(OPTIONS) if getattr(self, name))

    def option_vector(self) -> tuple[float, ...]:
        """The options in force as 0/1 flags in :data:`OPTIONS` order: the documented rules
        vector a policy trained across rulesets may read beside its observation."""
        return tuple(float(getattr(self, name)) for name in OPTIONS)

    @functools.cached_property
    def params(self) -> RuleParams:
        """The settings that change play, as the record the compiled rules read."""
        return RuleParams(turn_cap=self.turn_cap, options=self.option_bits)

    @property
    def official(self) -> bool:
        """False for the unofficial 2-player variant."""
        return self.num_players >= MIN_OFFICIAL_PLAYERS


def options_of_bits(bits: int) -> dict[str, bool]:
    """The option fields of :class:`Rules` that ``bits`` (``Rules.option_bits``, as a game
    records them in ``State.options``) turn on."""
    return {name: bool(bits >> i & 1) for i, name in enumerate(OPTIONS)}


def parse_ruleset(text: str) -> dict[str, bool]:
    """The option fields of :class:`Rules` that a ruleset name sets: a preset name of
    :data:`RULESETS` or a comma-separated list of :data:`OPTIONS` (all others off)."""
    if not isinstance(text, str):
        raise ValueError(f"a ruleset must be a string, got {text!r}")
    text = text.strip().lower()
    if text in RULESETS:
        names = RULESETS[text]
    else:
        names = tuple(word.strip() for word in text.split(",") if word.strip())
        unknown = [name for name in names if name not in OPTIONS]
        if unknown or not names:
            raise ValueError(f"unknown ruleset {text!r}: expected one of {sorted(RULESETS)} or a comma-separated "
                             f"list of options from {list(OPTIONS)}")
    return {name: name in names for name in OPTIONS}
