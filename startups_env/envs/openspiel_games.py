"""Any game of :mod:`startups_env.table.games` as an OpenSpiel game, from its
:class:`~startups_env.game.Game` record: ``pyspiel.load_game("startups_env_startap")``.

*Startups* has its own adapter with exact chance nodes card by card
(:mod:`startups_env.envs.openspiel`, ``"startups"``). A game whose record names
``openspiel="startups_env_<name>"`` is served here: importing this module registers every
such game of the package, and :func:`register` another one.

**Chance: the deal.** The first node is chance: one of ``deals`` equally likely deals
(parameter, default 1024), deal k being the game's ``shuffled_decks`` from seed k. A game
whose randomness is all in its deal (Стартап's decks are shuffled once, at the deal) is
then played exactly, over a sample of its deals.

**Observations.** ``observation_tensor`` is the game's ``observe`` of the player
(float32[obs_dim]) and ``observation_string`` its ``render_text`` as that player sees it;
no information state is offered (not every decision is public in every game).

**Returns** are the simulator's rewards at the end (parameter ``reward``: ``win`` or
``rank``, both zero-sum, in [-1, 1]); ``players`` is the table size. A state keeps one
simulator of one game; a clone is a deep copy, and so is a serialized state (the
simulator pickled).
"""

from __future__ import annotations

import numpy as np
import pyspiel

from startups_env.game import Game
from startups_env.table.games import GAMES, game_by_name

__all__ = ["RecordGame", "RecordState", "register", "short_name"]

DEFAULT_DEALS = 1024


def short_name(game: Game) -> str:
    """The name ``game`` is registered under."""
    return f"startups_env_{game.name}"


def _game_type(game: Game) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=short_name(game), long_name=f"{game.title} (startups_env)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM, reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=game.max_players, min_num_players=game.min_players,
        provides_information_state_string=False, provides_information_state_tensor=False,
        provides_observation_string=True, provides_observation_tensor=True,
        parameter_specification={"players": game.default_rules().num_players, "reward": "win",
                                 "deals": DEFAULT_DEALS})


class RecordGame(pyspiel.Game):
    """A game of the package as an OpenSpiel game (see the module docstring)."""

    record: Game  # set on each registered subclass

    def __init__(self, params: dict | None = None):
        kind = _game_type(self.record)
        given = {**kind.parameter_specification, **dict(params or {})}
        if given["reward"] not in ("win", "rank"):
            raise ValueError(f"reward must be 'win' or 'rank' (zero-sum), got {given['reward']!r}")
        if int(given["deals"]) < 1:
            raise ValueError(f"deals must be >= 1, got {given['deals']}")
        self.rules = self.record.make_rules(int(given["players"]), reward=given["reward"])
        self.deals = int(given["deals"])
        info = pyspiel.GameInfo(num_distinct_actions=self.record.num_actions, max_chance_outcomes=self.deals,
                                num_players=self.rules.num_players, min_utility=-1.0, max_utility=1.0,
                                utility_sum=0.0, max_game_length=int(self.rules.turn_cap) * 64)
        super().__init__(kind, info, given)

    def new_initial_state(self) -> RecordState:
        return RecordState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> RecordObserver:
        return RecordObserver(self)


class RecordState(pyspiel.State):
    """One game: before the deal (chance), then the game's simulator of one game."""

    def __init__(self, game: RecordGame):
        super().__init__(game)
        self.sim, self.returns_ = None, np.zeros(game.rules.num_players)

    @property
    def record(self) -> Game:
        # (read from the game, not kept: a state pickles without the record's functions)
        return self.get_game().record

    def current_player(self) -> int:
        if self.sim is None:
            return pyspiel.PlayerId.CHANCE
        if self.sim.done[0]:
            return pyspiel.PlayerId.TERMINAL
        return int(self.sim.state.current[0])

    def chance_outcomes(self):
        deals = self.get_game().deals
        return [(k, 1.0 / deals) for k in range(deals)]

    def _legal_actions(self, player):
        return np.flatnonzero(self.sim.legal_mask()[0]).tolist()

    def _apply_action(self, action):
        if self.sim is None:
            rules = self.get_game().rules
            decks = self.record.shuffled_decks(np.random.default_rng(action), 1, rules)
            self.sim = self.record.make_simulator(rules, 1, action, decks)
            return
        result = self.sim.step(np.array([action]))
        if self.sim.done[0]:
            self.returns_ = np.asarray(result.rewards[0, :len(self.returns_)], np.float64)

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {action}"
        return self.record.action_to_string(action)

    def is_terminal(self) -> bool:
        return self.sim is not None and bool(self.sim.done[0])

    def returns(self):
        return self.returns_.tolist()

    def __str__(self) -> str:
        return "before the deal" if self.sim is None else self.record.render_text(self.sim.state, 0, None)


class RecordObserver:
    """The game's observation of a player (``observe``), and its text (``render_text``)."""

    def __init__(self, game: RecordGame):
        self.record = game.record
        self.tensor = np.zeros(self.record.obs_dim, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: RecordState, player: int) -> None:
        self.tensor[:] = 0 if state.sim is None else self.record.observe(state.sim.state, np.array([player]))[0]

    def string_from(self, state: RecordState, player: int) -> str:
        return "before the deal" if state.sim is None else self.record.render_text(state.sim.state, 0, player)


def register(game) -> str:
    """Register ``game`` (a name or a :class:`Game` whose ``openspiel`` is
    ``"startups_env_<name>"``) with pyspiel, once; returns its short name."""
    game = game_by_name(game)
    if game.openspiel != short_name(game):
        raise ValueError(f"{game.title} is not served from its record (its Game.openspiel is {game.openspiel!r}, "
                         f"not {short_name(game)!r})")
    name = short_name(game)
    if name not in pyspiel.registered_names():
        pyspiel.register_game(_game_type(game), type(f"{game.name.title()}Game", (RecordGame,), {"record": game}))
    return name


for _game in list(GAMES.values()):
    if _game.openspiel == short_name(_game):
        register(_game)
