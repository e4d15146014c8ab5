"""Race to 21, a game that lives only in the tests: it proves that a game is one
:class:`~startups_env.game.Game` record and nothing else. 2-4 players in turn add 1, 2 or
3 to a running total dealt at random (0-3); a move may not pass 21, and whoever reaches 21
wins (the others place in turn order after the winner). Everything the shared tools need is in this file."""

from dataclasses import dataclass, fields

import numpy as np

from startups_env.agents.base import Agent
from startups_env.game import Game

TARGET, MIN_P, MAX_P, ACTIONS = 21, 2, 4, 3
OBS_DIM = (TARGET + 1) + (MAX_P - MIN_P + 1)


@dataclass(frozen=True)
class Rules:
    num_players: int = 3
    reward: str = "win"
    turn_cap: int = 30

    def __post_init__(self):
        if not MIN_P <= self.num_players <= MAX_P or self.reward not in ("win", "rank", "score", "margin"):
            raise ValueError(f"race21 plays {MIN_P}-{MAX_P} players and rewards win/rank/score/margin, got {self}")


@dataclass
class State:
    num_players: np.ndarray  # int8[B]
    current: np.ndarray  # int8[B]
    total: np.ndarray  # int8[B]
    turn: np.ndarray  # int16[B]
    terminated: np.ndarray  # bool[B]
    truncated: np.ndarray  # bool[B]
    ranks: np.ndarray  # int8[B, MAX_P]: 0 the winner, the others by turn order; -1 empty seats or running

    @property
    def done(self):
        return self.terminated | self.truncated

    @property
    def batch_size(self):
        return self.current.shape[0]

    def take(self, games):
        return State(**{f.name: getattr(self, f.name)[np.asarray(games, np.intp)] for f in fields(self)})

    def copy(self):
        return self.take(np.arange(self.batch_size))


class Result:
    def __init__(self, s: State, ended):
        n = s.num_players[:, None]
        won = (s.ranks == 0) & ended[:, None]
        seated = np.arange(MAX_P)[None, :] < n
        self.rewards = np.where(ended[:, None] & seated, np.where(won, 1.0, -1.0 / (n - 1)), 0.0).astype(np.float32)
        self.terminated, self.truncated = s.terminated.copy(), s.truncated.copy()
        self.scores, self.ranks = won.astype(np.int16), np.where(ended[:, None], s.ranks, -1)


class Simulator:
    def __init__(self, rules: Rules, batch_size: int, seed=None, decks=None, num_players=None):
        self.rules, self.batch_size, self.rng = rules, int(batch_size), np.random.default_rng(seed)
        z = np.zeros(self.batch_size, np.int8)
        self.state = State(z.copy(), z.copy(), z.copy(), z.astype(np.int16), z.astype(bool), z.astype(bool),
                           np.full((self.batch_size, MAX_P), -1, np.int8))
        self.reset(decks=decks, num_players=rules.num_players if num_players is None else num_players)

    def reset(self, seed=None, *, num_players=None, decks=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self._deal(np.arange(self.batch_size), num_players, decks)

    def reset_games(self, games, *, num_players=None):
        self._deal(np.asarray(games, np.intp), num_players, None)

    def _deal(self, g, num_players, decks):
        s = self.state
        s.num_players[g] = s.num_players[g] if num_players is None else num_players
        s.total[g] = deal_decks(self.rng, g.size, self.rules) if decks is None else decks
        s.current[g], s.turn[g], s.terminated[g], s.truncated[g], s.ranks[g] = 0, 0, False, False, -1

    @property
    def done(self):
        return self.state.done

    def legal_mask(self):
        left = TARGET - self.state.total[:, None]
        return (np.arange(1, ACTIONS + 1)[None, :] <= left) & ~self.state.done[:, None]

    def step(self, actions, active=None):
        s, actions = self.state, np.asarray(actions)
        live = ~s.done if active is None else np.asarray(active, bool) & ~s.done
        if actions.shape != (self.batch_size,) or actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be int[{self.batch_size}], got {actions!r}")
        g = np.flatnonzero(live)
        if ((actions[g] < 0) | (actions[g] >= ACTIONS)).any() or not self.legal_mask()[g, actions[g]].all():
            raise ValueError(f"illegal actions {actions[g].tolist()} at totals {s.total[g].tolist()}; no game changed")
        s.total[g] += actions[g] + 1
        s.turn[g] += 1
        won = g[s.total[g] == TARGET]
        n, seat = s.num_players[won, None], np.arange(MAX_P)[None, :]  # the others ranked in turn order
        s.ranks[won] = np.where(seat < n, (seat - s.current[won, None]) % n, -1)
        s.terminated[won] = True
        s.truncated[g] = ~s.terminated[g] & (s.turn[g] >= self.rules.turn_cap)
        s.current[g] = np.where(s.done[g], s.current[g], (s.current[g] + 1) % s.num_players[g])
        return Result(s, np.isin(np.arange(self.batch_size), g) & s.done)


def deal_decks(rng, count, rules):
    return rng.integers(0, 4, count).astype(np.int8)


def observe(s, seats=None):
    obs = np.zeros((s.batch_size, OBS_DIM), np.float32)
    obs[np.arange(s.batch_size), s.total] = 1
    obs[np.arange(s.batch_size), TARGET + 1 + s.num_players - MIN_P] = 1
    return obs


class RandomBot(Agent):
    name = "random"

    def act(self, obs, mask, **given):
        mask = np.atleast_2d(mask).astype(bool)
        return np.array([self.rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in mask], np.int64)


class CounterBot(Agent):
    """Leaves the others a total 4k+1 short of 21 when it can (the counting game's rule)."""
    name = "counter"

    def act(self, obs, mask, **given):
        total = np.atleast_2d(obs)[:, :TARGET + 1].argmax(axis=1)
        best = (TARGET - total - 1) % 4  # the action id that leaves a multiple of 4 (3: none does)
        legal = np.atleast_2d(mask).astype(bool)
        ok = (best < ACTIONS) & legal[np.arange(len(total)), np.minimum(best, ACTIONS - 1)]
        return np.where(ok, best, legal.argmax(axis=1)).astype(np.int64)


def make_rules(num_players, ruleset=None, **settings):
    if ruleset not in (None, "rulebook"):
        raise ValueError(f"race21 has one ruleset, 'rulebook'; got {ruleset!r}")
    return Rules(num_players, **settings)


def action_to_string(action):
    if not 0 <= int(action) < ACTIONS:
        raise ValueError(f"action must be an int in [0, {ACTIONS}), got {action!r}")
    return f"add {int(action) + 1}"


GAME = Game(
    name="race21", title="Race to 21", min_players=MIN_P, max_players=MAX_P, num_actions=ACTIONS, obs_dim=OBS_DIM,
    privileged_dim=0, simulator_type=Simulator, make_rules=make_rules,
    make_simulator=lambda rules, b, seed=None, decks=None, num_players=None: Simulator(rules, b, seed, decks, num_players),
    shuffled_decks=deal_decks, observe=observe, privileged=None,
    observation_bounds=lambda rules=None, players=None: (np.zeros(OBS_DIM, np.float32), np.ones(OBS_DIM, np.float32)),
    public_state=None, history=None, progress=lambda s, rules: np.where(s.done, 1.0, s.total / TARGET),
    outcome=lambda s: {"ranks": s.ranks.copy(), "scores": (s.ranks == 0).astype(np.int16),
                       "truncated": s.truncated.copy(), "turns": s.turn.copy()},
    action_to_string=action_to_string,
    obs_layout=f"total:{TARGET + 1},num_players:{MAX_P - MIN_P + 1}",
    bots={"random": RandomBot, "counter": CounterBot}, ladder=(("random", "counter"), ("random", "counter")),
    opponents=("random", "counter"), openspiel="startups_env_race21",
    render_text=lambda s, g=0, viewer=None: f"total {int(s.total[g])} of {TARGET}, player_{int(s.current[g])} to add",
)
