"""OpenSpiel's bots at our table: ``openspiel:ismcts[...]``, ``openspiel:random`` and
``openspiel:MODULE:CALLABLE[...]`` (any ``pyspiel.Bot``), seated like every other bot
(:mod:`startups_env.agents.registry`). Needs the ``openspiel`` extra.

A table gives a bot the public state of each game it is to move in (it declares ``needs =
{"public"}``), not the game's past: so for every decision :class:`OpenSpielAgent` builds
an OpenSpiel state of the game :mod:`startups_env.envs.openspiel` at that decision
(:func:`~startups_env.envs.openspiel.state_from_public`: the public state with its hidden
cards dealt at random) and asks the bot's ``step`` for the action. That is all IS-MCTS
uses: it draws its worlds by resampling the state (the cards dealt to build it are
redrawn at every simulation) and keys its tree from there. A bot that follows a game
through ``inform_action`` or reads ``state.history()`` learns nothing here: each decision
is a state of its own, whose record starts at that decision.

* ``openspiel:ismcts[max_simulations=8;uct_c=2;rollouts=1;...]``: OpenSpiel's Python
  IS-MCTS (``open_spiel.python.algorithms.ismcts.ISMCTSBot``) with random rollouts
  (``mcts.RandomRolloutEvaluator``) and the game's own resampler, seeded from the agent's
  seed (:func:`make_ismcts`). Its time per decision grows with ``max_simulations``: about
  1 ms a simulation on average over a four-player game (a random rollout to the end, each
  step through the Python game), 13 ms a decision at 12 simulations.
* ``openspiel:random``: OpenSpiel's C++ uniform random bot.
* ``openspiel:MODULE:CALLABLE[...]``: ``CALLABLE(game, player_id=..., seed=..., **args)``
  returns any ``pyspiel.Bot`` playing seat ``player_id`` of ``game`` (a
  :class:`~startups_env.envs.openspiel.StartupsGame`); one is built per table size and seat.

The other way round, :class:`StartupsBot` seats one of our bots (any policy of
:mod:`startups_env.table.policy`) in OpenSpiel's own game loop as a ``pyspiel.Bot``, so an
OpenSpiel policy can be evaluated against our baselines there
(``open_spiel.python.algorithms.evaluate_bots``; docs/integrations.md).

Every spec also takes the game's settings besides the table size: ``rounds``,
``turn_cap`` and ``reward`` (:data:`startups_env.envs.openspiel.PARAMETERS`): the bot
values its searches with them, so give the table's (``openspiel:ismcts[rounds=4]`` at a
round-game table; a state of a later round than the game has is refused).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from startups_env.envs.openspiel import PARAMETERS, StartupsGame, make_resampler, state_from_public
from startups_env.startups.rules import NUM_ACTIONS, Rules
from startups_env.table.policy import as_policy, check_act_inputs, needs_of, policy_name

from .base import Agent

#: The game settings a spec may give (the table size comes from each game's public state).
GAME_SETTINGS = tuple(name for name in PARAMETERS if name != "players")
#: IS-MCTS's final policy by name (``final_policy=``).
FINAL_POLICIES = {"max_visit_count": ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
                  "normalized_visit_count": ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT,
                  "max_value": ismcts.ISMCTSFinalPolicyType.MAX_VALUE}

#: ``make_bot(game, player_id, rng) -> pyspiel.Bot``: how an agent builds its bot for one
#: seat of one table size.
BotFactory = Callable[[StartupsGame, int, np.random.Generator], pyspiel.Bot]


class OpenSpielAgent(Agent):
    """A ``pyspiel.Bot`` as a batch policy (see the module docstring).

    Args:
        make_bot: ``make_bot(game, player_id, rng) -> pyspiel.Bot``, called once per table
            size and seat met (again after :meth:`seed`); ``rng`` is the agent's generator,
            to seed the bot.
        name: the display name.
        seed: the agent's seed (the bots', the states' hidden cards).
        settings: the game's ``rounds``, ``turn_cap`` and ``reward`` (defaults of
            :data:`startups_env.envs.openspiel.PARAMETERS`).
    """

    needs = frozenset({"public"})

    def __init__(self, make_bot: BotFactory, name: str, seed=None, **settings):
        super().__init__(seed)
        unknown = sorted(set(settings) - set(GAME_SETTINGS))
        if unknown:
            raise ValueError(f"unknown arguments {unknown}; the game's settings are {list(GAME_SETTINGS)}")
        self.make_bot = make_bot
        self.name = name
        self.settings = settings
        StartupsGame({"players": PARAMETERS["players"], **settings})  # (checks the settings now)
        self._games: dict[int, StartupsGame] = {}
        self._bots: dict[tuple[int, int], pyspiel.Bot] = {}

    def seed(self, seed=None) -> None:
        """Reseed the agent; its bots are built again from the new generator."""
        super().seed(seed)
        self._bots = {}

    def _game(self, players: int) -> StartupsGame:
        if players not in self._games:
            self._games[players] = StartupsGame({"players": players, **self.settings})
        return self._games[players]

    def _bot(self, game: StartupsGame, seat: int) -> pyspiel.Bot:
        key = (game.num_players(), seat)
        if key not in self._bots:
            self._bots[key] = self.make_bot(game, seat, self.rng)
        return self._bots[key]

    def act(self, obs, mask, *, public=None) -> np.ndarray:
        obs, mask = check_act_inputs(obs, mask)
        if public is None or public.batch_size != obs.shape[0]:
            raise ValueError(f"{self.name} needs public=, the public state of the {obs.shape[0]} game(s) "
                             "(startups_env.startups.state.public_state of the player to act)")
        actions = np.empty(obs.shape[0], np.int64)
        for i in range(obs.shape[0]):
            one = public.take([i])
            game = self._game(int(one.num_players[0]))
            state = state_from_public(game, one, self.rng)
            legal = state.legal_actions()
            if legal != np.flatnonzero(mask[i]).tolist():
                raise ValueError(f"game {i}: the OpenSpiel state's legal actions {legal} differ from the mask's "
                                 f"{np.flatnonzero(mask[i]).tolist()}")
            actions[i] = legal[0] if len(legal) == 1 else int(self._bot(game, state.current_player()).step(state))
        return actions


def make_ismcts(max_simulations: int = 8, uct_c: float = 2.0, rollouts: int = 1, max_world_samples: int = -1,
                final_policy: str = "max_visit_count", use_observation_string: bool = False) -> BotFactory:
    """The factory of OpenSpiel's Python IS-MCTS: ``max_simulations`` simulations a
    decision, UCT exploration ``uct_c``, ``rollouts`` random rollouts to value a new node,
    at most ``max_world_samples`` worlds (-1: a fresh one each simulation), the final
    policy by name (:data:`FINAL_POLICIES`), nodes keyed by the observation string instead
    of the information state string if ``use_observation_string``. ValueError for a bad
    value."""
    for name, value in (("max_simulations", max_simulations), ("rollouts", rollouts),
                        ("max_world_samples", max_world_samples)):
        if isinstance(value, bool) or not isinstance(value, int) or not (value >= 1 or (
                name == "max_world_samples" and value == -1)):
            raise ValueError(f"{name} must be an int >= 1" + (" or -1" if name == "max_world_samples" else "")
                             + f", got {value!r}")
    if isinstance(uct_c, bool) or not isinstance(uct_c, (int, float)) or not uct_c >= 0:
        raise ValueError(f"uct_c must be a number >= 0, got {uct_c!r}")
    if final_policy not in FINAL_POLICIES:
        raise ValueError(f"final_policy must be one of {list(FINAL_POLICIES)}, got {final_policy!r}")
    if not isinstance(use_observation_string, bool):
        raise ValueError(f"use_observation_string must be true or false, got {use_observation_string!r}")

    def make_bot(game: StartupsGame, player_id: int, rng: np.random.Generator) -> pyspiel.Bot:
        random_state = np.random.RandomState(int(rng.integers(2**31)))
        bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(rollouts, random_state), float(uct_c),
                               max_simulations, max_world_samples=max_world_samples, random_state=random_state,
                               final_policy_type=FINAL_POLICIES[final_policy],
                               use_observation_string=use_observation_string)
        bot.set_resampler(make_resampler(rng.integers(2**63)))
        return bot

    return make_bot


def make_random() -> BotFactory:
    """The factory of OpenSpiel's C++ uniform random bot."""
    def make_bot(game: StartupsGame, player_id: int, rng: np.random.Generator) -> pyspiel.Bot:
        return pyspiel.make_uniform_random_bot(player_id, int(rng.integers(2**31)))

    return make_bot


def outside_factory(factory, **kwargs) -> BotFactory:
    """The factory of an outside bot: ``factory(game, player_id=..., seed=..., **kwargs)``
    returning a ``pyspiel.Bot`` (checked when it is built)."""
    def make_bot(game: StartupsGame, player_id: int, rng: np.random.Generator) -> pyspiel.Bot:
        bot = factory(game, player_id=player_id, seed=int(rng.integers(2**31)), **kwargs)
        if not isinstance(bot, pyspiel.Bot):
            raise ValueError(f"{getattr(factory, '__name__', factory)!r} returned a {type(bot).__name__}, "
                             "not a pyspiel.Bot")
        return bot

    return make_bot


def make_openspiel_agent(kind: str, seed=None, factory=None, **kwargs) -> OpenSpielAgent:
    """The agent of ``openspiel:KIND[...]``: ``ismcts`` (kwargs: :func:`make_ismcts`'s and
    the game's settings), ``random`` (the settings only), or an outside bot's ``factory``
    (``kind`` its ``MODULE:CALLABLE``; kwargs besides the settings go to it)."""
    settings = {k: kwargs.pop(k) for k in GAME_SETTINGS if k in kwargs}
    if factory is not None:
        make_bot = outside_factory(factory, **kwargs)
    elif kind == "ismcts":
        make_bot = make_ismcts(**kwargs)
    elif kind == "random":
        if kwargs:
            raise ValueError(f"openspiel:random takes only the game's settings {list(GAME_SETTINGS)}, "
                             f"got {sorted(kwargs)}")
        make_bot = make_random()
    else:
        raise ValueError(f"unknown OpenSpiel bot {kind!r}: openspiel:ismcts, openspiel:random or "
                         "openspiel:MODULE:CALLABLE (a factory of a pyspiel.Bot)")
    return OpenSpielAgent(make_bot, f"openspiel:{kind}", seed, **settings)


class StartupsBot(pyspiel.Bot):
    """One of our bots playing seat ``player_id`` of the OpenSpiel game, as a ``pyspiel.Bot``.

    ``policy``: any policy of :mod:`startups_env.table.policy` (e.g. ``make_agent("greedy",
    seed=1)``). At each decision it is given the observation and the legal mask of the
    state, and what it declares it needs: the public state
    (:meth:`~startups_env.envs.openspiel.StartupsState.public_state`) and the table's
    history, replayed from the state's ``history()``
    (:meth:`~startups_env.envs.openspiel.StartupsState.table_history`: a state played from
    the deal; it costs a replay of the game so far at every decision)."""

    def __init__(self, policy, player_id: int):
        pyspiel.Bot.__init__(self)
        self.policy = as_policy(policy)
        self.needs = needs_of(self.policy)
        self.name = policy_name(policy)
        if isinstance(player_id, bool) or not isinstance(player_id, int) or player_id < 0:
            raise ValueError(f"player_id must be a seat (an int >= 0), got {player_id!r}")
        self._player_id = player_id

    def player_id(self) -> int:
        return self._player_id

    def restart_at(self, state) -> None:
        """Nothing to forget: each decision reads the state it is given."""

    def inform_action(self, state, player_id, action) -> None:
        """Nothing to follow: each decision reads the state it is given."""

    def step(self, state) -> int:
        """The policy's action at ``state`` (its player on turn must be this bot's seat)."""
        player = state.current_player()
        if player != self._player_id:
            raise ValueError(f"{self.name} plays seat {self._player_id}, the state asks seat {player}")
        mask = np.zeros((1, NUM_ACTIONS), bool)
        mask[0, state.legal_actions()] = True
        given = {}
        if "public" in self.needs:
            given["public"] = state.public_state(player)
        if "history" in self.needs:
            given["history"] = state.table_history()
        if "rules" in self.needs:  # (the OpenSpiel game plays the rulebook's options)
            given["rules"] = Rules(num_players=state.num_players())
        action = self.policy.act(np.array(state.observation_tensor(player), np.float32)[None], mask, **given)
        return int(np.asarray(action).reshape(-1)[0])
