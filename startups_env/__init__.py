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

__all__ = [
    "COMPANY_NAMES", "COMPANY_SIZES", "MAX_PLAYERS", "NUM_ACTIONS", "NUM_COMPANIES", "Action", "Rules",
    "Simulator", "State", "StepResult", "action_to_string", "env", "raw_env", "shuffled_decks", "string_to_action",
]


def __getattr__(name: str):
    # The PettingZoo env is imported on first use (`from startups_env import env`), so the
    # batch simulator does not pay for importing pettingzoo and gymnasium.
    if name in ("env", "raw_env"):
        from . import aec

        return getattr(aec, name)
    raise AttributeError(f"module 'startups_env' has no attribute {name!r}")
