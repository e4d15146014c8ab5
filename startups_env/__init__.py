"""startups_env: the card game *Startups* as a numpy batch simulator and a PettingZoo env."""

from .core import Simulator, State, StepResult, shuffled_decks
from .rules import (
    COMPANY_NAMES,
    COMPANY_SIZES,
    MAX_PLAYERS,
    NUM_ACTIONS,
    NUM_COMPANIES,
    Action,
    Rules,
    action_to_string,
    string_to_action,
)

__version__ = "0.1.0"
