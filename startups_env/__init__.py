"""startups_env: the card games *Startups* (Oink Games) and *Стартап* (Mosigra) for
reinforcement learning.

Two ways into a game, both importable from here:

* ``env(num_players=4, render_mode=None, *, game="startups", **rules)``: the PettingZoo
  AEC environment of either game (``game="startap"``: *Стартап*, 2-6 players, rules in
  docs/startap.md; its bots: ``make_agent("builder", game="startap")``),
  with PettingZoo's order-enforcing wrapper; ``raw_env`` is *Startups*' class without it
  (:mod:`startups_env.envs.aec`). The envs are imported on first use, so the batch
  simulator does not import PettingZoo and gymnasium.
* ``Simulator(Rules(...), batch_size=B, seed=...)``: the batch simulator, the one home of
  every rule: ``legal_mask()``, ``step(actions)`` and ``state`` for B games in lockstep.

Also here: ``Rules`` (table settings and reward scheme), ``State`` and ``StepResult``,
``shuffled_decks``, the company constants and the action ids (``Action``,
``action_to_string``, ``string_to_action``).

The layers, each importing only those below it (docs/architecture.md):

* ``startups`` -- the game: ``rules`` (constants, action ids, ``Rules``), ``state``
  (``State``), ``simulator`` (``Simulator``, with a backend chosen once), the two backends
  (``numpy_backend``, ``numba_backend``), ``queries`` (derived public quantities),
  ``observe`` (the observation vector), ``history`` and ``render``;
* ``table`` -- the policy protocol (``policy``) and the one table driver (``driver``);
* ``envs`` -- the PettingZoo env (``aec``), the batch learner and SB3 VecEnv (``vector``),
  AEC wrappers for other libraries (``wrappers``), the OpenSpiel game (``openspiel``: the
  ``openspiel`` extra);
* ``tools`` -- game logs and replays (``replay``), Ray workers (``distributed``), the
  environment card (``docs``), atomic writes (``files``), what the command-line tools share
  (``cli``: ``--players``, their name);
* ``checks`` -- argument checks shared by every layer;
* ``agents`` -- the bots (``make_agent``), the arena, the ladder, the bench and the terminal
  game; ``train`` -- self-play PPO and distillation (the ``train`` extra).

The modules' paths before release 0.2 (``startups_env.startups.simulator``, ``startups_env.envs.aec``...) still
import, with a FutureWarning naming the new home.

The rules, with the action ids and deck order, are in the repository's docs/rules.md.
"""

from startups_env import _moved
from startups_env.startups.rules import (
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
from startups_env.startups.simulator import Simulator
from startups_env.startups.state import State, StepResult, shuffled_decks

_moved.install()

__version__ = "0.2.0"

__all__ = [
    "COMPANY_NAMES", "COMPANY_SIZES", "MAX_PLAYERS", "NUM_ACTIONS", "NUM_COMPANIES", "Action", "Rules",
    "Simulator", "State", "StepResult", "action_to_string", "env", "raw_env", "shuffled_decks", "string_to_action",
]


def __dir__() -> list[str]:
    # The lazily imported env and raw_env are listed too, so dir() and help() show them.
    return sorted(set(globals()) | set(__all__))


def env(*args, game: str = "startups", **kwargs):
    """The PettingZoo AEC env of ``game`` with PettingZoo's order-enforcing wrapper.

    ``game="startups"`` (the default): :func:`startups_env.envs.aec.env` (arguments
    ``num_players``, ``rules``, ``render_mode`` and the fields of :class:`Rules`).
    ``game="startap"``: *Стартап*, :func:`startups_env.envs.startap_aec.env`
    (``num_players`` 2-6, ``render_mode``)::

        import startups_env
        e = startups_env.env(game="startap", num_players=4)
        e.reset(seed=0)
        for agent in e.agent_iter():
            obs, reward, termination, truncation, info = e.last()
            mask = obs["action_mask"]
            e.step(None if termination or truncation else e.action_space(agent).sample(mask))

    Any other registered game (:mod:`startups_env.table.games`) is served through its
    :class:`startups_env.game.Game` record (:mod:`startups_env.envs.game_aec`).
    """
    from startups_env.envs.game_aec import make_env

    return make_env(game, *args, **kwargs)


def __getattr__(name: str):
    # The PettingZoo env is imported on first use (`from startups_env import env`), so the
    # batch simulator does not pay for importing pettingzoo and gymnasium.
    if name == "raw_env":
        from startups_env.envs import aec

        return aec.raw_env
    raise AttributeError(f"module 'startups_env' has no attribute {name!r}")
