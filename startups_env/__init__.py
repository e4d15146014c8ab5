"""startups_env: the card game *Startups* (Oink Games) for reinforcement learning.

Two ways into the same game, both importable from here:

* ``env(num_players=4, render_mode=None, **rules)``: the PettingZoo AEC environment,
  with PettingZoo's order-enforcing wrapper; ``raw_env`` is the class without it. Both live in :mod:`startups_env.aec` and are imported on first use, so the
  batch simulator does not import PettingZoo and gymnasium.
* ``Simulator(Rules(...), batch_size=B, seed=...)``: the batch simulator, the one home of
  every rule: ``legal_mask()``, ``step(actions)`` and ``state`` for B games in lockstep.

Also here: ``Rules`` (table settings and reward scheme), ``State`` and ``StepResult``,
``shuffled_decks``, the company constants and the action ids (``Action``,
``action_to_string``, ``string_to_action``).

Submodules:

* ``core`` -- the simulator (``Simulator``, ``State``, ``public_state``);
* ``rules`` -- constants, the action encoding and ``Rules``;
* ``queries`` -- quantities derived from a state that every player may know;
* ``observe`` -- the observation vector and its layout (``observe``, ``views``);
* ``aec`` -- the PettingZoo environment (``env``, ``raw_env``);
* ``wrappers`` -- AEC wrappers for other RL libraries (illegal move ends the game, mask in infos, key names);
* ``vector`` -- a batch with one learner seat per game, and a Stable-Baselines3 ``VecEnv``;
* ``render`` -- the table as text and as an RGB picture;
* ``replay`` -- game logs (JSON), replays, HTML pages and GIFs;
* ``bench`` -- speed figures; ``docs`` -- the generated environment card; ``files`` --
  atomic writes; ``cli`` -- what the command-line tools share (``--players``, their name);
* ``distributed`` -- shards played here or on Ray workers (the optional ``ray`` extra);
* ``agents`` -- the bots (``make_agent``), the arena, the ladder and the terminal game;
* ``train`` -- self-play PPO and distillation of the search bot (needs the ``train`` extra).

The rules, with the action ids and deck order, are in the repository's docs/rules.md.
"""

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


def __dir__() -> list[str]:
    # The lazily imported env and raw_env are listed too, so dir() and help() show them.
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str):
    # The PettingZoo env is imported on first use (`from startups_env import env`), so the
    # batch simulator does not pay for importing pettingzoo and gymnasium.
    if name in ("env", "raw_env"):
        from . import aec

        return getattr(aec, name)
    raise AttributeError(f"module 'startups_env' has no attribute {name!r}")
