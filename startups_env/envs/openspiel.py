"""*Startups* as an OpenSpiel game: ``pyspiel.load_game("startups")``.

Importing this module registers the game with ``pyspiel.register_game`` under the short
name ``"startups"`` (it needs the ``openspiel`` extra: ``pip install
'startups-env[openspiel]'``)::

    import pyspiel
    import startups_env.envs.openspiel  # registers "startups"

    game = pyspiel.load_game("startups", {"players": 4})      # or "startups(players=4,rounds=4)"
    state = game.new_initial_state()

**Parameters** (:data:`PARAMETERS`, the fields of :class:`~startups_env.startups.rules.Rules`):
``players`` (2-7, default 4), ``rounds`` (1, or 4 for the round game), ``turn_cap``
(default 400) and ``reward`` (``"win"``, ``"rank"``, ``"score"`` or ``"margin"``). A new
rule option is a new parameter here.

**Chance: one card at a time.** The deal is not one chance node with every ordering of the
45 cards (far too many outcomes for any algorithm to list); each card is a chance outcome
when it first matters: the three cards of each hand at the start of a round (seat 0's
first, then seat 1's...), and the pile's top card when a player draws (``draw`` is the
player's action; the card is the next chance node, seen by the drawer only). An outcome
is a company id 0-5, with the chance of drawing that company from the cards not dealt yet
(the pile and the five removed cards together: nobody ever sees the removed cards, so to
every player the next pile card is a uniform draw from all of them). This is the same
distribution as shuffling the whole deck first, and it keeps every chance node at most
six outcomes with exact probabilities, which outcome- and external-sampling MCCFR and
IS-MCTS need; and a resampled world need not fix the order of the pile.

**Observations.** ``observation_tensor`` is the PettingZoo env's observation vector
(float32[197], the pieces of :data:`startups_env.startups.observe.PIECES`, seats relative
to the observer; ``observation_string`` writes the same pieces as ``name=values``).
``information_state_tensor`` is that vector followed by ``record``, one row per decision
of the game so far (a one-hot of its action id; ``[2 * turn_cap * rounds, 19]``): every
take and put-down is public, so the record is the whole public history. With its own
hand (in the observation) a player's information state holds everything the player has
seen that still matters: each card that ever left its hand did so in public. (It is not
perfect recall in the strict sense: a player does not recall which of its cards it held
earlier, which changes nothing it could learn about the hidden cards.)
``information_state_string`` is the observation string followed by the record's ids.

**Resampling.** :meth:`StartupsState.resample_from_infostate` deals the hidden cards of a
state anew as the search's worlds are drawn
(:func:`startups_env.startups.state.deal_hidden`): each other hand keeps its publicly
known cards and is filled up uniformly from the cards the player cannot see; the rest go
to the pile and the removed cards. OpenSpiel's Python algorithms find it on the state
(the C++ ones cannot: it is a Python method); :func:`make_resampler` gives the seeded
callback of ``ISMCTSBot.set_resampler``.

**Returns** are the env's rewards (``Simulator.rewards`` in float64), given at the end;
a game cut by the turn cap is scored as it stood and ends like any other.

The games are played by the package's :class:`~startups_env.startups.simulator.Simulator`
(batch of one game, the default backend): each state keeps one game's
:class:`~startups_env.startups.state.State`, and one simulator per rule set, shared by all
states, steps and observes whichever state asks (so use the states of one game from one
thread at a time).
"""

from __future__ import annotations

import functools
from dataclasses import fields

import numpy as np
import pyspiel

from startups_env.startups.history import History
from startups_env.startups.observe import OBS_DIM, PIECES
from startups_env.startups.render import table_text
from startups_env.startups.rules import (
    COMPANY_NAMES,
    COMPANY_SIZES,
    DECK_SIZE,
    DEFAULT_TURN_CAP,
    HAND_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_ACTIONS,
    NUM_COMPANIES,
    NUM_REMOVED,
    ROUND_CHIPS,
    ROUND_GAME_ROUNDS,
    SCORE_REWARD_SCALE,
    STARTING_COINS,
    SORTED_DECK,
    Action,
    Rules,
    action_to_string,
    pile_start,
)
from startups_env.startups.simulator import Simulator
from startups_env.startups.state import State, deal_hidden, public_state

__all__ = ["GAME_NAME", "PARAMETERS", "StartupsGame", "StartupsObserver", "StartupsState", "game_info", "game_type",
           "make_resampler", "max_decisions", "rules_from_params", "state_from_public", "utility_bounds"]

#: The short name the game is registered under.
GAME_NAME = "startups"
#: The game's parameters and their defaults (the fields of Rules; ``players`` is ``num_players``).
PARAMETERS = {"players": 4, "rounds": 1, "turn_cap": DEFAULT_TURN_CAP, "reward": "win"}
_ONE_GAME = np.zeros(1, np.intp)  # the index of a state's one game
_DRAW = int(Action.DRAW)
_SIZES = np.array(COMPANY_SIZES, np.int64)
_HIDDEN = np.r_[0:NUM_REMOVED]  # deck positions of the removed cards


def rules_from_params(params: dict | None) -> Rules:
    """The :class:`~startups_env.startups.rules.Rules` of a game's parameters (missing ones
    take :data:`PARAMETERS`' defaults). ValueError naming an unknown parameter or a bad
    value."""
    params = dict(params or {})
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(f"unknown startups game parameters {unknown}; the parameters are {list(PARAMETERS)}")
    values = {**PARAMETERS, **params}
    players = values.pop("players")
    if isinstance(players, bool) or not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"players must be an int from {MIN_PLAYERS} to {MAX_PLAYERS}, got {players!r}")
    return Rules(num_players=players, **values)


def utility_bounds(rules: Rules) -> tuple[float, float]:
    """(min, max) of a player's return under ``rules.reward``: exact for ``win`` and
    ``rank``, the open interval's ends for ``margin``, and for ``score`` a bound from the
    most a score can be (every coin of the table plus three points for each of the 40
    cards in play) and the least (-40: one coin paid for each of them)."""
    n = rules.num_players
    if rules.reward == "win":
        return -1.0 / (n - 1), 1.0
    if rules.reward in ("rank", "margin"):
        return -1.0, 1.0
    share = (n - 1) / n  # a score's distance from the table's mean, at most this times the widest spread
    if rules.rounds > 1:
        spread = (ROUND_CHIPS[0] - ROUND_CHIPS[-1]) * rules.rounds
        return -share * spread, share * spread
    in_play = DECK_SIZE - NUM_REMOVED
    spread = (STARTING_COINS * n + 3 * in_play + in_play) / SCORE_REWARD_SCALE
    return -share * spread, share * spread


def max_decisions(rules: Rules) -> int:
    """The most decisions a game can last: two a turn, ``turn_cap`` turns a round."""
    return 2 * rules.turn_cap * rules.rounds


def game_type(rules: Rules | None = None) -> pyspiel.GameType:
    """The game's ``pyspiel.GameType``; zero-sum but for the ``margin`` reward."""
    general = rules is not None and rules.reward == "margin"
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Startups (Oink Games)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM if general else pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=MAX_PLAYERS,
        min_num_players=MIN_PLAYERS,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=dict(PARAMETERS),
    )


def game_info(rules: Rules) -> pyspiel.GameInfo:
    """The game's ``pyspiel.GameInfo`` under ``rules``."""
    low, high = utility_bounds(rules)
    return pyspiel.GameInfo(num_distinct_actions=NUM_ACTIONS, max_chance_outcomes=NUM_COMPANIES,
                            num_players=rules.num_players, min_utility=low, max_utility=high,
                            utility_sum=None if rules.reward == "margin" else 0.0,
                            max_game_length=max_decisions(rules))


class StartupsGame(pyspiel.Game):
    """The OpenSpiel game (see the module docstring); ``params`` as :data:`PARAMETERS`.

    Attributes:
        rules: the :class:`~startups_env.startups.rules.Rules` the parameters give.
    """

    def __init__(self, params: dict | None = None):
        rules = rules_from_params(params)
        given = {**PARAMETERS, **dict(params or {})}
        super().__init__(game_type(rules), game_info(rules), given)
        self.rules = rules

    def new_initial_state(self) -> "StartupsState":
        """The state before the deal: the first hand card is the first chance node."""
        return StartupsState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> "StartupsObserver":
        """The observation (``perfect_recall`` False) or the information state (True)."""
        return StartupsObserver(self.rules, iig_obs_type, params)


class _Play:
    """The game behind an OpenSpiel state: its :class:`State` (one game), the public record
    of its decisions, the hand cards dealt so far in the round's deal (``HAND_SIZE *
    players`` once dealt), whether the player on turn is drawing (the card is the chance
    node pending) and the returns once it is over. Deep copies copy the arrays and share
    the Rules (OpenSpiel clones a state by deep-copying its attributes)."""

    def __init__(self, rules: Rules, state: State, record: list[int], dealt: int, drawing: bool,
                 returns: list[float] | None):
        self.rules = rules
        self.state = state
        self.record = record
        self.dealt = dealt
        self.drawing = drawing
        self.returns = returns

    def copy(self) -> "_Play":
        return _Play(self.rules, self.state.copy(), list(self.record), self.dealt, self.drawing,
                     None if self.returns is None else list(self.returns))

    def __deepcopy__(self, memo) -> "_Play":
        return self.copy()

    @property
    def dealing(self) -> bool:
        """Whether the round's hands are still being dealt (the next card is a chance node)."""
        return self.dealt < HAND_SIZE * self.rules.num_players


_SIMULATORS: dict[Rules, Simulator] = {}


def _simulator(play: _Play) -> Simulator:
    """The simulator of ``play``'s rules, with ``play.state`` as its game (one simulator per
    rule set serves every state: binding another state costs a few microseconds, a
    simulator of its own a clone's time over again)."""
    sim = _SIMULATORS.get(play.rules)
    if sim is None:
        sim = _SIMULATORS[play.rules] = Simulator(play.rules, 1, seed=0)
    if sim.state is not play.state:
        sim.state = play.state
    return sim


@functools.lru_cache(maxsize=64)
def _initial_play(rules: Rules) -> _Play:
    """The state before the deal (copied for each new state, never changed): the table
    set, every hand empty."""
    play = _Play(rules, State.empty(1), [], 0, False, None)
    _simulator(play).reset(decks=np.array(SORTED_DECK)[None, :])  # coins, seats, the pile's start
    _begin_deal(play)
    return play


def _begin_deal(play: _Play) -> None:
    """Empty the hands of the round just dealt by the simulator (from any deck) and forget
    its deck: the hands are dealt again card by card, as chance outcomes."""
    play.state.hand[:] = 0
    play.state.deck[:] = -1
    play.dealt = 0
    _simulator(play).state_changed()


def _undealt(play: _Play) -> np.ndarray:
    """int64[C]: the cards of each company not dealt yet this round (during the deal: the
    deck minus the hand cards so far; then: the pile and the removed cards)."""
    deck = play.state.deck[:, 0]
    if play.dealing:
        return _left_after_hands(deck, play.dealt)
    hidden = np.concatenate([deck[:NUM_REMOVED], deck[int(play.state.pile_pos[0]):]])
    return np.bincount(hidden, minlength=NUM_COMPANIES).astype(np.int64)


def _deal_card(play: _Play, company: int) -> None:
    """The next hand card of the deal is ``company``; the last one completes the deck (the
    cards not dealt, in company order, into the removed cards and the pile: nobody sees
    their order, a draw picks its card as a chance outcome)."""
    s, n = play.state, play.rules.num_players
    s.hand[play.dealt // HAND_SIZE, company, 0] += 1
    s.deck[NUM_REMOVED + play.dealt, 0] = company
    play.dealt += 1
    if not play.dealing:
        rest = np.repeat(np.arange(NUM_COMPANIES, dtype=np.int8), _left_after_hands(s.deck[:, 0], play.dealt))
        s.deck[:NUM_REMOVED, 0] = rest[:NUM_REMOVED]
        s.deck[pile_start(n):, 0] = rest[NUM_REMOVED:]
    _simulator(play).state_changed()


def _left_after_hands(deck: np.ndarray, dealt: int) -> np.ndarray:
    """int64[C]: the cards of each company left once the first ``dealt`` hand cards of
    ``deck`` (int8[45], canonical order) are dealt."""
    return _SIZES - np.bincount(deck[NUM_REMOVED:NUM_REMOVED + dealt], minlength=NUM_COMPANIES)


def _draw_card(play: _Play, company: int) -> None:
    """The draw pending is of ``company``: a card of it moves from among the cards not
    dealt to the pile's top, and the draw is played."""
    deck = play.state.deck[:, 0]
    top = int(play.state.pile_pos[0])
    places = np.concatenate([_HIDDEN, np.arange(top, DECK_SIZE)])
    place = int(places[np.flatnonzero(deck[places] == company)[0]])
    deck[place], deck[top] = deck[top], company
    play.drawing = False
    _step(play, _simulator(play), _DRAW)  # (the legal mask does not read the deck: no state_changed)


def _decide(play: _Play, action: int) -> None:
    """The player on turn plays ``action`` (a draw waits for its card, the next chance
    node). ValueError naming the legal actions if it is not legal."""
    sim = _simulator(play)
    legal = sim.legal_rows()[:, 0]
    if not 0 <= action < NUM_ACTIONS or not legal[action]:
        names = ", ".join(f"{a} ({action_to_string(a)})" for a in np.flatnonzero(legal))
        raise ValueError(f"illegal action {action} for player {int(play.state.current[0])}; legal: {names}")
    play.record.append(action)
    if action == _DRAW:
        play.drawing = True
        return
    _step(play, sim, action)


def _step(play: _Play, sim: Simulator, action: int) -> None:
    """Play ``action`` in the simulator; at the game's end keep the returns, at the end of a
    round of the round game deal the next one card by card."""
    result = sim.step_one(action)
    if result is None:
        return
    if result.terminated[0] or result.truncated[0]:
        n = play.rules.num_players
        play.returns = sim.rewards(_ONE_GAME, np.float64)[:n, 0].tolist()
    else:
        _begin_deal(play)


class StartupsState(pyspiel.State):
    """A state of the OpenSpiel game (see the module docstring)."""

    def __init__(self, game: StartupsGame):
        super().__init__(game)
        self._play = _initial_play(game.rules).copy()

    # --------------------------------------------------------------- OpenSpiel's API
    def current_player(self) -> int:
        """The seat to act, ``CHANCE`` for a card to deal or draw, ``TERMINAL`` at the end."""
        play = self._play
        if play.returns is not None:
            return pyspiel.PlayerId.TERMINAL
        if play.drawing or play.dealing:
            return pyspiel.PlayerId.CHANCE
        return int(play.state.current[0])

    def _legal_actions(self, player: int) -> list[int]:
        """The legal action ids of the player on turn, ascending (the env's mask)."""
        return np.flatnonzero(_simulator(self._play).legal_rows()[:, 0]).tolist()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """(company, chance) of the card dealt or drawn next: its share of the cards not dealt."""
        undealt = _undealt(self._play)
        total = int(undealt.sum())
        return [(c, int(k) / total) for c, k in enumerate(undealt.tolist()) if k]

    def _apply_action(self, action: int) -> None:
        play = self._play
        if play.returns is not None:
            raise ValueError("the game is over")
        if not (play.drawing or play.dealing):
            _decide(play, int(action))
        elif not 0 <= action < NUM_COMPANIES or not _undealt(play)[action]:
            raise ValueError(f"chance outcome {action} is not a company with cards left to deal: "
                             f"{self.chance_outcomes()}")
        elif play.dealing:
            _deal_card(play, int(action))
        else:
            _draw_card(play, int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"card {COMPANY_NAMES[action]}"
        return action_to_string(action)

    def is_terminal(self) -> bool:
        return self._play.returns is not None

    def returns(self) -> list[float]:
        """The env's rewards once the game is over (zeros before)."""
        play = self._play
        return list(play.returns) if play.returns is not None else [0.0] * play.rules.num_players

    def __str__(self) -> str:
        """The whole table, every hand shown, and what chance deals next."""
        play = self._play
        if play.dealing:
            pending = f"\ndealing hand card {play.dealt + 1} of {HAND_SIZE * play.rules.num_players}"
        else:
            pending = "\ndrawing" if play.drawing else ""
        undealt = " ".join(f"{COMPANY_NAMES[c]} {k}" for c, k in enumerate(_undealt(play).tolist()) if k)
        return f"{table_text(play.state, 0)}{pending}\nnot dealt: {undealt or '-'}\nrecord: {play.record}"

    # --------------------------------------------------------------- for the package's bots
    def public_state(self, player: int) -> State:
        """The game as ``player`` may know it, as the package's bots are given it
        (:func:`startups_env.startups.state.public_state`, a one-game State; a copy)."""
        return public_state(self._play.state, np.array([self._seat(player)]))

    def table_history(self) -> History:
        """The table's :class:`~startups_env.startups.history.History` of this game (what
        bots that read the put-downs are given), replayed from ``history()``. ValueError
        for a state that its ``history()`` does not replay (a resampled one, or one made by
        :func:`state_from_public`)."""
        replay = self.get_game().new_initial_state()
        log = History(1)
        for action in self.history():
            if not replay.is_chance_node():
                log.record(replay._play.state, np.array([action]))
            replay.apply_action(action)
        if replay._play.record != self._play.record or not _same_game(replay._play.state, self._play.state):
            raise ValueError("this state's history() does not replay it (a resampled state, or one made from a "
                             "public state): its table history is unknown")
        return log

    def _seat(self, player) -> int:
        n = self._play.rules.num_players
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)) or not 0 <= player < n:
            raise ValueError(f"player must be a seat from 0 to {n - 1}, got {player!r}")
        return int(player)

    # --------------------------------------------------------------- resampling
    def resample_from_infostate(self, player_id: int, probability_sampler) -> "StartupsState":
        """A state that ``player_id`` cannot tell from this one: the same public record and
        the same own hand, the other hands' hidden cards and the order of the pile and the
        removed cards dealt anew, uniformly (:func:`startups_env.startups.state.deal_hidden`,
        the search's world drawing). ``probability_sampler``: OpenSpiel's
        ``UniformProbabilitySampler`` (or any callable giving uniform floats in [0, 1)), or
        a ``numpy.random.Generator``. The state's ``history()`` is this one's (OpenSpiel
        keeps it in C++): replayed, it gives this world, not the new one. ValueError during
        a deal or after the game, when nothing is hidden that a resample could redraw
        consistently with the record."""
        play = self._play
        if play.returns is not None or play.dealing:
            raise ValueError("resample_from_infostate needs a game in play: not during a deal nor after the end")
        seat = np.array([self._seat(player_id)], np.intp)
        world = deal_hidden(public_state(play.state, seat), seat, _uniform_keys(probability_sampler))
        other = self.clone()
        other._play = _Play(play.rules, world, list(play.record), play.dealt, play.drawing, None)
        return other


def _same_game(a: State, b: State) -> bool:
    """Whether two States hold the same games, field by field."""
    return all(np.array_equal(getattr(a, f.name), getattr(b, f.name)) for f in fields(State))


def _uniform_keys(sampler) -> np.ndarray:
    """float64[1, 45] uniform keys from ``sampler`` (a numpy Generator or a callable)."""
    if isinstance(sampler, np.random.Generator):
        return sampler.random((1, DECK_SIZE))
    if callable(sampler):
        return np.array([[float(sampler()) for _ in range(DECK_SIZE)]])
    raise ValueError(f"probability_sampler must be a numpy Generator or a callable giving uniform floats in "
                     f"[0, 1), got {type(sampler).__name__}")


def make_resampler(seed=None):
    """``cb(state, player) -> state``: :meth:`StartupsState.resample_from_infostate` with a
    generator of its own seeded by ``seed``, for ``ISMCTSBot.set_resampler`` (reproducible
    worlds, and no C++ sampler made per call)."""
    rng = np.random.default_rng(seed)

    def resample(state: StartupsState, player: int) -> StartupsState:
        return state.resample_from_infostate(player, rng)

    return resample


def state_from_public(game: StartupsGame, public: State, rng: np.random.Generator) -> StartupsState:
    """An OpenSpiel state at the decision of ``public`` (a one-game
    :func:`~startups_env.startups.state.public_state` of its player on turn: what a table
    gives a bot that needs ``public``), its hidden cards dealt at random from ``rng``: for
    a bot that searches from the decision by resampling it (IS-MCTS). Its record starts
    here (the table does not give the decisions before) and its ``history()`` is empty.
    ValueError where ``public`` is not a running game of ``game``'s table size and rounds."""
    if not isinstance(public, State) or public.batch_size != 1:
        raise ValueError(f"public must be a one-game startups_env State, got {type(public).__name__}")
    rules = game.rules
    if int(public.num_players[0]) != rules.num_players or bool(public.done[0]):
        raise ValueError(f"public must be a running game of {rules.num_players} players, got "
                         f"{int(public.num_players[0])} players{' (over)' if public.done[0] else ''}")
    if int(public.round[0]) >= rules.rounds:
        raise ValueError(f"public is in round {int(public.round[0]) + 1}, the game has {rules.rounds}: "
                         f"the table plays the round game (rounds={ROUND_GAME_ROUNDS})")
    world = deal_hidden(public, public.current.astype(np.intp), rng.random((1, DECK_SIZE)))
    state = game.new_initial_state()
    state._play = _Play(rules, world, [], HAND_SIZE * rules.num_players, False, None)
    return state


class StartupsObserver:
    """The PyObserver of OpenSpiel's Python games: ``tensor`` (float32) and ``dict`` (its
    named views, one per observation piece, then ``record`` for the information state),
    filled by :meth:`set_from`; :meth:`string_from` writes the same as text.

    iig_obs_type: None or the default (``perfect_recall`` False): the observation;
    ``perfect_recall`` True: the information state. Only a single player's view with its
    public information is offered (ValueError otherwise), and no ``params``."""

    def __init__(self, rules: Rules, iig_obs_type=None, params=None):
        if params:
            raise ValueError(f"the startups observer takes no parameters, got {params}")
        if iig_obs_type is not None and (iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
                                         or not iig_obs_type.public_info):
            raise ValueError(f"the startups observer gives a player's own view (private_info=SINGLE_PLAYER, "
                             f"public_info=True), got {iig_obs_type}")
        self.perfect_recall = iig_obs_type is not None and bool(iig_obs_type.perfect_recall)
        shapes = [(p.name, p.shape) for p in PIECES]
        if self.perfect_recall:
            shapes.append(("record", (max_decisions(rules), NUM_ACTIONS)))
        sizes = [int(np.prod(shape)) for _, shape in shapes]
        self.tensor = np.zeros(sum(sizes), np.float32)
        starts = np.cumsum([0] + sizes)
        self.dict = {name: self.tensor[a:b].reshape(shape) for (name, shape), a, b in zip(shapes, starts, starts[1:])}

    def set_from(self, state: StartupsState, player: int) -> None:
        play = state._play
        self.tensor[:OBS_DIM] = _simulator(play).observe_one(player)
        if self.perfect_recall:
            record = self.dict["record"]
            record.fill(0)
            record[np.arange(len(play.record)), play.record] = 1

    def string_from(self, state: StartupsState, player: int) -> str:
        play = state._play
        text = _OBSERVATION_TEXT.format(*_simulator(play).observe_one(player).astype(np.int64).tolist())
        if self.perfect_recall:
            text += " record=" + ",".join(map(str, play.record))
        return text


# The observation as text, ``name=v,v,...`` piece by piece (every value is a whole number).
_OBSERVATION_TEXT = " ".join(f"{piece.name}=" + ",".join(["{}"] * piece.size) for piece in PIECES)


pyspiel.register_game(game_type(), StartupsGame)
