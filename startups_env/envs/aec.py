"""
# Startups

A PettingZoo AEC environment for the card game *Startups* (Jun Sasaki, Oink Games, 2017):
2-7 players collect shares of six companies; whoever holds strictly the most cards of a
company at the end is paid by everyone else holding it. The rules are those of
`docs/rules.md`; all of them live in the batch simulator (`startups_env.startups.simulator.Simulator`),
which this environment drives with a batch of one game.

| Import             | `from startups_env import env` (or `startups_env.envs.aec.env`)       |
|--------------------|------------------------------------------------------------------|
| Actions            | Discrete                                                         |
| Parallel API       | No                                                               |
| Manual Control     | No                                                               |
| Agents             | `agents= ['player_0', 'player_1', 'player_2', 'player_3']` (N=4) |
| Agents             | 2-7 (`num_players`, default 4; 2 is an unofficial variant)       |
| Action Shape       | Discrete(19)                                                     |
| Action Values      | 0-18, see "Action Space"                                         |
| Observation Shape  | (197,)                                                           |
| Observation Values | see "Observation Space" (raw counts, float32, not normalised)    |

    from startups_env import env
    e = env(num_players=4)
    e.reset(seed=0)
    for agent in e.agent_iter():
        obs, reward, termination, truncation, info = e.last()
        action = None if termination or truncation else e.action_space(agent).sample(obs["action_mask"])
        e.step(action)

A turn is two decisions by the same agent: first *take* a card (draw from the pile, paying
1 coin on every market card of companies whose anti-monopoly chip you lack, or take a
market card with its coins), then *put one down* (into your portfolio or into the market).
So `agent_selection` stays on the same agent for two consecutive steps.

### Observation Space

The observation is a dictionary with an `"observation"` element, a float32 vector of 197
raw counts and one-hots of exactly what the observing agent may know, and an
`"action_mask"` element (see "Legal Actions Mask"). Seats are *relative* to the observer:
relative seat 0 is the observer, 1 the next player in turn order, and so on; seats past
the table size are zero, so one policy can serve every table size. Any agent may be
observed at any time. The layout is generated from `startups_env.startups.observe.PIECES`
(`observe.layout_table()`; a test checks that this copy matches it):

| index | name | shape | range | meaning |
|---|---|---|---|---|
| 0-5 | `num_players` | [6] | [0, 1] | one-hot table size, 2..7 players |
| 6-7 | `phase` | [2] | [0, 1] | one-hot phase of the player to act: take, put-down |
| 8-14 | `current_player` | [7] | [0, 1] | one-hot relative seat of the player to act (0 = observer) |
| 15-20 | `hand` | [6] | [0, 4] | observer's hidden hand: cards per company |
| 21-62 | `portfolios` | [7, 6] | [0, 10] | face-up portfolio cards per relative seat and company |
| 63-104 | `known_hands` | [7, 6] | [0, 4] | hand cards everyone knows each relative seat holds (taken from the market, not provably played since) |
| 105-111 | `coins` | [7] | [0, 10N] | 1-point coins per relative seat |
| 112-153 | `chips` | [6, 7] | [0, 1] | per company, one-hot relative seat of the anti-monopoly chip holder (all 0: unclaimed) |
| 154-159 | `market_cards` | [6] | [0, 10] | market cards per company |
| 160-165 | `market_coins` | [6] | [0, 10N] | coins on all market cards of each company |
| 166-171 | `take_coins` | [6] | [0, 10N]; market_row: [-39, 0] | coins on the card a take of each company would take (the richest); market_row: minus the take's price |
| 172-172 | `pile` | [1] | [0, 40 - 3N] | cards left in the pile |
| 173-178 | `barred` | [6] | [0, 1] | one-hot company the player to act may not put into the market this turn |
| 179-184 | `unseen` | [6] | [0, 10] | cards per company the observer cannot see: others' hands, pile, removed |
| 185-185 | `turn` | [1] | [0, turn_cap] | completed turns in this round (the turn cap truncates) |
| 186-189 | `round` | [4] | [0, 1] | one-hot round of the round game (round 0 in the standard game) |
| 190-196 | `round_points` | [7] | [-4, 8] (round game), [0, 1] (standard game: always 0) | round-game points (+2/+1/-1 chips) per relative seat |

The ranges are the observation space's bounds, what the env's `Rules` allow (N: the table
size; `startups_env.startups.observe.observation_bounds(rules)`): `turn` runs to the turn cap, coins
to the 10N coins of the table; a test plays random games to check each bound is reached
(or nearly) and never exceeded.

`startups_env.startups.observe.views(obs["observation"])` splits a vector into these named pieces.

**Global state.** `state()` (space `state_space`) is a float32 vector for centralised critics
only: `player_0`'s observation followed by every hand, the pile's cards per company and
the removed cards (layout: `startups_env.startups.observe.state_layout_table()`, in
`docs/integrations.md`).

#### Legal Actions Mask

`"action_mask"` is an int8 vector of 19 entries, 1 where the action is legal for the
observed agent. It is all zeros for every agent that is not on turn, and for every agent
once the game is over. In the take phase only ids 0-6 can be legal, in the put-down phase
only ids 7-18; the mask is never empty for the agent on turn while the game runs.

**Illegal actions raise.** Stepping an action that is not legal (or not an integer in
0-18) raises `ValueError` naming the agent, the action and the legal actions, and leaves
the game unchanged. (Many PettingZoo classic environments instead end the game with a
penalty through `TerminateIllegalWrapper`; here a wrong action is a bug in the caller,
so it is reported where it happens. Use the mask; for a library that samples without it,
`startups_env.envs.wrappers.TerminateIllegal` ends the game with a penalty instead, see
`docs/integrations.md`.)

### Action Space

| id | meaning |
|---|---|
| 0 | draw from the pile (pay 1 coin on each market card of companies whose chip you lack) |
| 1 | take a Giraffe Beer card from the market |
| 2 | take a Bowwow Games card from the market |
| 3 | take a Flamingo Soft card from the market |
| 4 | take an Octo Coffee card from the market |
| 5 | take a Hippo Powertech card from the market |
| 6 | take an Elephant Mars Travel card from the market |
| 7 | put a Giraffe Beer card from hand into your portfolio |
| 8 | put a Bowwow Games card into your portfolio |
| 9 | put a Flamingo Soft card into your portfolio |
| 10 | put an Octo Coffee card into your portfolio |
| 11 | put a Hippo Powertech card into your portfolio |
| 12 | put an Elephant Mars Travel card into your portfolio |
| 13 | put a Giraffe Beer card from hand into the market |
| 14 | put a Bowwow Games card into the market |
| 15 | put a Flamingo Soft card into the market |
| 16 | put an Octo Coffee card into the market |
| 17 | put a Hippo Powertech card into the market |
| 18 | put an Elephant Mars Travel card into the market |

`startups_env.action_to_string(id)` / `string_to_action(text)` convert ids and names.

### Rewards

Rewards are zero until the game ends; then every agent receives its terminal reward on
the same step, under `reward=` (`Rules.reward`):

| `reward` | winner | others |
|---|---|---|
| `"win"` (default) | +1 | -1/(N-1) each (zero-sum) |
| `"rank"` | +1 | 1 - 2*rank/(N-1), down to -1 for last (zero-sum) |
| `"score"` | (score - table mean) / 10 | same formula (zero-sum) |
| `"margin"` | tanh((score - runner-up + 0.5) / 8) | tanh((score - best other + 0.5) / 8), below 0 |

Rewards are Python floats computed in float64, so under the zero-sum schemes one game's
rewards sum to 0 to float64 precision (the batch simulator's are float32).

When the game ends every agent's `infos[agent]` holds `"score"` (in the rulebook's game the 1-point
balance plus 3 x `"threes"`; docs/rules.md for the others), `"threes"` (the shares paid to the agent at the payout: its 3-point
coins, or under `payout_in_points` its 3-point payments received), `"rank"` (0 =
winner, tie-breaks applied) and `"truncated"` (True if the turn cap ended it); in the
round game (`rounds=4`) also `"round_points"`, and `"rank"` is the round-game ranking.
During play the infos are empty dicts.

### Rule decisions

* **Turn cap.** The rules allow endless cycling of cards through the market, so a round
  that reaches `turn_cap` completed turns (default 400; random play needs about 70) is
  scored as it stands (hands added, as if the pile had run out) and the episode ends with
  `truncations[agent] = True` for every agent (not termination); rewards and infos are
  given as for a normal end.
* **Which market card.** Cards of one company in the market differ only in the coins on
  them; "take company c" takes the one with the most coins (the oldest).
* **Two players** are allowed (`num_players=2`) but are not an official setting.
* **Seat 0 starts** (the rulebook's "youngest player"); `player_i` sits in seat i. In the
  round game the last-placed player of a round starts the next.

### What bots may know

Bots that sample hidden cards (the search bot) need more than the observation vector:
`env.public_state(agent)` is the game as `agent` may know it (a one-game
`startups_env.startups.state.State`: the other hands reduced to their publicly known cards, no
deck), and an env made with `env(..., history=True)` keeps `env.history`, the table's
put-downs as everyone saw them (`startups_env.startups.history.History`; off by default, as it
costs time on every put-down). Both are what `startups_env.table.policy` calls `public` and
`history`; `startups_env.table.driver.play_aec_game(env, policies)` plays a game passing each
policy what it declares it needs, and ours are called so:

    from startups_env import env
    from startups_env.agents import make_agent
    e, bot = env(num_players=4, history=True), make_agent("search")
    e.reset(seed=0)
    ...  # for the agent on turn:
    action = bot.act(obs["observation"], obs["action_mask"], public=e.public_state(agent), history=e.history)

Options of `reset(seed=None, options=None)`: `options={"deck": [45 company ids]}` deals
that deck in the canonical order of `docs/rules.md` (`deck[0:5]` removed, player i gets
`deck[5+3i : 8+3i]`, the rest is the pile, drawn from its front); for the round game a
`[4, 45]` deck gives every round's deck. A deck that is not a permutation of the 45
cards raises `ValueError`. Other option keys are ignored with a warning.

### Backends

`env(..., backend="numba")`, the default wherever numba is installed (the `fast` extra),
steps the game with the compiled rules of `startups_env.startups.numba_backend` and observes with the
compiled `startups_env.startups.numba_backend.observe_game`; `backend="numpy"` runs the numpy reference. Both
play the same games, seed for seed, with the same observations, masks, rewards and infos.
`python -m startups_env.agents.bench` prints the random-agent loop's speed on each, beside the
same loop over a do-nothing env (`aec_bare`), that loop's ceiling.

### Version History

* v0: Initial release (startups_env 0.1.0).
"""

from __future__ import annotations

import warnings
from dataclasses import fields

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from startups_env.envs import game_aec
from startups_env.envs.game_aec import action_id, begin_game
from startups_env.startups.game import GAME
from startups_env.startups.history import History
from startups_env.startups.observe import STATE_DIM, hidden_observation, state_bounds
from startups_env.startups.rules import NUM_ACTIONS, PHASE_NAMES, Rules, action_to_string, parse_ruleset
from startups_env.startups.simulator import Simulator
from startups_env.startups.state import State, public_state, validate_decks

__all__ = ["env", "raw_env"]

_RULES_FIELDS = tuple(f.name for f in fields(Rules) if f.name != "num_players")
_ONE_GAME = np.zeros(1, np.intp)  # the index of the env's one game in its simulator


def env(num_players: int | None = None, rules: Rules | None = None, render_mode: str | None = None, *,
        history: bool = False, backend: str | None = None, **rules_kwargs) -> AECEnv:
    """The Startups AEC environment with PettingZoo's order-enforcing wrapper.

    Arguments as for :class:`raw_env`. ``AssertOutOfBoundsWrapper`` and
    ``TerminateIllegalWrapper`` are deliberately not applied: :meth:`raw_env.step` itself
    raises ``ValueError`` for an out-of-range or illegal action (an assert would vanish
    under ``python -O``, and the game does not end on a caller's bug).
    """
    return OrderEnforcing(raw_env(num_players, rules, render_mode, history=history, backend=backend,
                                   **rules_kwargs))


def _rules_of(num_players: int | None, rules: Rules | None, rules_kwargs: dict) -> Rules:
    """The env's rules from its constructor's arguments (see :class:`raw_env`), or a
    ValueError naming what does not fit."""
    if "ruleset" in rules_kwargs:  # a preset or options by name (Rules.preset)
        options = parse_ruleset(rules_kwargs.pop("ruleset"))
        both = sorted(set(options) & set(rules_kwargs))
        if both:
            raise ValueError(f"the options {both} are set by ruleset=; pass them one way, not both")
        rules_kwargs.update(options)
    unknown = sorted(set(rules_kwargs) - set(_RULES_FIELDS))
    if unknown:
        raise ValueError(f"unknown keyword arguments {unknown}; Rules fields are {list(_RULES_FIELDS)}")
    if rules is None:
        return Rules(num_players=4 if num_players is None else num_players, **rules_kwargs)
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a startups_env.Rules, got {type(rules).__name__}")
    if rules_kwargs or (num_players is not None and num_players != rules.num_players):
        raise ValueError("pass either rules=Rules(...) or num_players/rule keywords, not both")
    return rules


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with ``last()`` answered by the wrapped
    environment once it has been reset: the same values, without forwarding each of the
    six attributes ``last()`` reads through the wrapper's ``__getattr__`` (about a tenth
    of a decision in the usual random-agent loop), and ``step()`` likewise. Before a reset
    and after the game they fail or warn as the wrapper does."""

    def last(self, observe: bool = True):
        if not self._has_reset:
            return super().last(observe)
        return self.env.last(observe)

    def step(self, action) -> None:
        # OrderEnforcingWrapper.step, reading ``agents`` from the wrapped env directly rather
        # than through ``__getattr__`` (a failed attribute lookup first: about a tenth of
        # the bare random-agent loop's time per decision).
        if self._has_reset and self.env.agents:
            self._has_updated = True
            self.env.step(action)
        else:  # before a reset, or after the game: the wrapper's error or warning
            super().step(action)


class raw_env(game_aec.raw_env):
    """Startups as an unwrapped PettingZoo ``AECEnv`` (see the module docstring): the env of
    any game (:class:`startups_env.envs.game_aec.raw_env`) with *Startups*' rules arguments,
    dealt decks, history, global state and the simulator's one-game paths.

    Args:
        num_players: seats, 2-7 (default 4, or ``rules.num_players`` when ``rules`` is given).
        rules: a full :class:`startups_env.Rules`; alternatively pass its fields
            (``rounds``, ``turn_cap``, ``reward``, the options of play) as keyword
            arguments, and ``ruleset="summary"`` (or a comma-separated list of options,
            as ``Rules.preset`` reads it) for the options.
        render_mode: None, ``"ansi"`` (``render()`` returns the table as text),
            ``"human"`` (prints it after every step) or ``"rgb_array"`` (an image).
        history: keep :attr:`history`, the table's put-downs, for bots that read them.
        backend: the simulator's, ``"numpy"`` or ``"numba"`` (compiled: the step and the
            observation; needs numba, ``pip install 'startups-env[fast]'``); None (default):
            the fastest installed. Both play the same games with the same observations.
    """

    metadata = {
        "name": "startups_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, num_players: int | None = None, rules: Rules | None = None,
                 render_mode: str | None = None, *, history: bool = False, backend: str | None = None,
                 **rules_kwargs):
        if not isinstance(history, bool):
            raise ValueError(f"history must be True or False, got {history!r}")
        rules = _rules_of(num_players, rules, rules_kwargs)
        self._backend = backend
        super().__init__(GAME, rules.num_players, render_mode, rules=rules)
        # The global state for centralised critics (state()): seat 0's observation + every hand,
        # the pile's make-up and the removed cards.
        self.state_space = spaces.Box(*state_bounds(rules), (STATE_DIM,), np.float32)
        #: The simulator's backend, ``"numpy"`` or ``"numba"`` (``backend=`` resolved).
        self.backend = self.sim.backend
        #: Whether :attr:`history` is kept (``history=`` of the constructor).
        self.keeps_history = history
        self._history = History(1) if history else None

    def _new_simulator(self) -> Simulator:
        # Its seed is replaced by reset(seed=...); with no seed the games follow fresh OS entropy.
        return Simulator(self.rules, batch_size=1, backend=self._backend)

    # ------------------------------------------------------------------ PettingZoo API
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game. ``seed`` re-seeds the deck shuffles (None: keep the generator);
        ``options={"deck": [...]}`` deals an explicit deck (see the module docstring)."""
        decks = None
        if options:
            if not isinstance(options, dict):
                raise ValueError(f"options must be a dict or None, got {type(options).__name__}")
            ignored = sorted(set(options) - {"deck"})
            if ignored:
                warnings.warn(f"startups reset(): ignoring unknown options {ignored}; the only option is 'deck'",
                              stacklevel=2)
            if options.get("deck") is not None:
                decks = self._check_deck(options["deck"])
        # The simulator validates everything before it changes anything.
        self.sim.reset(seed=seed, decks=decks)
        if self._history is not None:
            self._history.reset()
        begin_game(self)

    def _check_deck(self, deck) -> np.ndarray:
        arr = np.asarray(deck)
        rounds = self.rules.rounds
        shapes = [(45,)] + ([(rounds, 45)] if rounds > 1 else [])
        if arr.shape not in shapes:
            raise ValueError(f"options['deck'] must have shape {' or '.join(str(list(s)) for s in shapes)} "
                             f"(company ids 0-5 in the canonical deck order of docs/rules.md), got {list(arr.shape)}")
        try:
            return validate_decks(arr[None], 1, rounds)  # [1, 45] or [1, rounds, 45]
        except ValueError as err:
            raise ValueError(f"options['deck'] is not a valid deck: {err}") from None

    # The unwrapped env has no agent_selection, rewards, ... before the first reset() (as
    # PettingZoo's OrderEnforcingWrapper expects: it reports those as missing attributes),
    # so the calls that read them say that reset() is missing instead of failing on an
    # attribute. (env() wraps this class; its wrapper raises its own error first.)
    def last(self, observe: bool = True):
        self._require_game("last")
        # AECEnv.last, inlined: env() answers every last() here (see OrderEnforcing).
        agent = self.agent_selection
        return (self.observe(agent) if observe else None, self._cumulative_rewards[agent],
                self.terminations[agent], self.truncations[agent], self.infos[agent])

    def agent_iter(self, max_iter: int = 2**63):
        self._require_game("agent_iter")
        return super().agent_iter(max_iter)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32[197], "action_mask": int8[19]}`` for any agent, fresh
        arrays each call (callers may keep them)."""
        self._require_game("observe")
        seat = self.agent_name_mapping[agent]
        obs = self.sim.observe_one(seat)
        if agent == self.agent_selection:
            # The simulator caches the mask until the state changes; all-False once over.
            mask = self.sim.legal_rows()[:, 0].astype(np.int8)  # (legal_mask()[0], one copy)
        else:
            mask = np.zeros(NUM_ACTIONS, np.int8)
        return {"observation": obs, "action_mask": mask}

    def public_state(self, agent: str) -> State:
        """The game as ``agent`` may know it: a one-game :class:`~startups_env.startups.state.State`
        with the other hands reduced to their publicly known cards and the deck hidden
        (:func:`startups_env.startups.state.public_state`). For the agent on turn, this is the
        ``public=`` of a policy that needs it (:mod:`startups_env.table.policy`). A fresh copy."""
        self._require_game("public_state")
        if agent not in self.agent_name_mapping:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        return public_state(self.sim.state, np.array([self.agent_name_mapping[agent]]))

    @property
    def history(self) -> History:
        """The table's put-downs so far in this game (a one-game
        :class:`~startups_env.startups.history.History`, live: it follows the game), the
        ``history=`` of a policy that needs it. Only kept by an env made with
        ``history=True``; ValueError otherwise."""
        if self._history is None:
            raise ValueError("this env keeps no history: create it with startups_env.env(..., history=True)")
        self._require_game("history")
        return self._history

    def state(self) -> np.ndarray:
        """float32[STATE_DIM]: the global state, for centralised critics (MAPPO-style) only:
        the observation of ``player_0`` (seats in absolute order) followed by what no player
        may know, every hand, the pile's cards per company and the removed cards
        (``startups_env.startups.observe.STATE_PIECES``; the trainer's privileged critic reads the same
        hidden part). A fresh array each call."""
        self._require_game("state")
        seat = _ONE_GAME  # seat 0: relative seats are the absolute ones
        return np.concatenate([self.sim.observe_one(0), hidden_observation(self.sim.state, seat)[0]])

    def step(self, action) -> None:
        self._require_game("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        value = self._check_action(agent, action)
        # (read before the step, logged only once the step has accepted the action)
        before = None if self._history is None else self._history.prepare(self.sim.state)
        try:
            # Simulator.step for one running game, without re-checking the action's type
            # and range; None when no round ended in this step.
            result = self.sim.step_one(value)
        except ValueError:
            raise ValueError(self._illegal_message(agent, value)) from None
        if before is not None:
            self._history.commit(before, np.array([value]))
        # The acting agent has seen its cumulative reward in last(); rewards only come at
        # the end, so the per-step rewards dict stays all zeros until then.
        self._cumulative_rewards[agent] = 0.0
        if result is not None and (result.terminated[0] or result.truncated[0]):
            self._end_game(result)
        else:
            self.agent_selection = self.possible_agents[self.sim.state.current.item()]
        if self.render_mode == "human":
            self.render()

    def _check_action(self, agent: str, action) -> int:
        """The action as a Python int in [0, 19); ValueError otherwise."""
        return action_id(agent, action, NUM_ACTIONS)

    def _illegal_message(self, agent: str, action: int) -> str:
        legal = np.flatnonzero(self.sim.legal_mask()[0]).tolist()
        phase = PHASE_NAMES[int(self.sim.state.phase[0])]
        names = ", ".join(f"{a} ({action_to_string(a)})" for a in legal)
        return (f"{agent}: illegal action {action} ({action_to_string(action)}) in the {phase} phase; "
                f"legal actions: {names}. The game is unchanged.")

    def _end_game(self, result) -> None:
        n = self.rules.num_players
        truncated = bool(result.truncated[0])
        # The simulator's rewards are float32 (for the batch learners); here they are computed
        # again in float64 and handed out as Python floats, so that a zero-sum scheme's rewards
        # of one game sum to 0 to float64 precision (float32's -1/3 leaves -3e-8).
        rewards = self.sim.rewards(_ONE_GAME, np.float64)[:n, 0].tolist()
        scores = result.scores[0, :n].tolist()
        ranks = result.ranks[0, :n].tolist()
        s = self.sim.state
        threes = s.threes[:n, 0].tolist()
        points = s.round_points[:n, 0].tolist() if self.rules.rounds > 1 else None
        for i, agent in enumerate(self.agents):
            self.rewards[agent] = rewards[i]
            self.terminations[agent] = not truncated
            self.truncations[agent] = truncated
            info = {"score": scores[i], "threes": threes[i], "rank": ranks[i], "truncated": truncated}
            if points is not None:
                info["round_points"] = points[i]
            self.infos[agent] = info
        self._accumulate_rewards()
        # The agent who took the final turn stays selected; the dead steps then visit
        # every agent in seat order (AECEnv._was_dead_step).

    def _picture(self, viewer: int | None) -> np.ndarray:
        from startups_env.startups import render as drawing

        return drawing.table_rgb(self.sim.state, game=0, viewer=viewer)
