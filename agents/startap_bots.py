"""Bots for *Стартап* (docs/startap.md): a uniform random bot, two heuristic styles and
the degenerate free-rider.

* ``builder``: careful. Takes and starts only projects its team can finish in time, works
  the most urgent project first, hires for the specialty its projects lack, pays its fair
  share into incident pools, asks 1 coin for its work and accepts help it can afford; at
  payday it lets go of staff that no project in progress or in hand needs.
* ``outsourcer``: the rulebook's "investor". Hires for what its projects lack as soon as it
  can afford to, takes only projects with an income, sells its spare work to other players
  (2 coins a unit), rides free on incident pools unless the loss is large, and accepts any
  help it can pay for. It keeps up to three projects going, counting on hires and bought
  help; like the builder it sells only hopeless ideas and lets idle staff go at payday.
* ``freerider``: takes every revealed project it can, sells one idea a turn, never works,
  hires or pays into a pool, refuses every offer. The strategy the rules must keep from
  winning: a taken project is in work and fails unless finished, and three failures put
  a player out.

Each puts a feature on its finished project with the most income.

They read only the observation (:func:`startups_env.startap.observe.views`) and the mask, so
they see what their seat may see. The builder is also compiled, for the search's rollouts
(:mod:`startups_env.agents.startap_builder_kernel`, proven equal to this one). ``act(obs, mask)`` takes obs float32[B, 1191] and mask
bool[B, 300] and returns int64[B]; like every bot here they are
:class:`~startups_env.agents.base.Agent` with their own seeded generator.
"""

from __future__ import annotations

import numpy as np

from startups_env.startap import cards as C
from startups_env.startap import rules as R
from startups_env.startap.observe import OBS_DIM, views
from startups_env.startap.simulator import uniform_legal

from .base import Agent, check_act_inputs

__all__ = ["STARTAP_AGENTS", "BuilderAgent", "FreeriderAgent", "OutsourcerAgent", "StartapRandomAgent",
           "make_startap_agent", "play_games"]

S = C.NUM_SPECIALTIES
_TOTAL_WORK = C.PROJECT_WORK.sum(axis=1)
_VALUE = C.PROJECT_INCOME.astype(float) * 6 + C.PROJECT_BONUS


def check_inputs(obs, mask) -> tuple[np.ndarray, np.ndarray]:
    """obs float[B, OBS_DIM] and mask bool[B, NUM_ACTIONS] with a legal action in each row
    (one game's obs[D] and mask[A] are taken as a batch of one): the policies' own check
    (:func:`startups_env.table.policy.check_act_inputs`) at this game's sizes."""
    obs, mask = check_act_inputs(obs, mask, R.NUM_ACTIONS)
    if obs.shape[1] != OBS_DIM:
        raise ValueError(f"obs must be [B, {OBS_DIM}], got {list(obs.shape)}")
    return obs.astype(np.float32, copy=False), mask


class StartapRandomAgent(Agent):
    """A uniformly random legal action in every game."""

    name = "random"

    def act(self, obs, mask, *, public=None, history=None):
        _, mask = check_inputs(obs, mask)
        return uniform_legal(mask, self.rng)


class Position:
    """One game's observation, read for the heuristics (relative seat 0 is the bot)."""

    def __init__(self, v: dict, g: int, legal: np.ndarray):
        self.legal = set(np.flatnonzero(legal).tolist())
        seats, projects = v["seats"], v["projects"]
        self.n = int(np.argmax(v["num_players"][g])) + R.MIN_PLAYERS
        self.phase = int(np.argmax(v["phase"][g]))
        self.coins = seats["coins"][g]
        self.employees = seats["employees"][g, 0]
        self.team = 1 + self.employees.sum()
        self.self_free = seats["self_free"][g, 0]
        self.hand = np.flatnonzero(projects["in_own_hand"][g])
        self.mine = np.flatnonzero(projects["in_progress_seat"][g, :, 0])  # own projects in progress
        self.work_left = projects["work_left"][g]
        self.weeks_left = projects["weeks_left"][g]
        self.slot_of = projects["slot"][g].argmax(axis=1)
        self.revealed = int(np.argmax(projects["revealed"][g])) if projects["revealed"][g].any() else -1
        self.opportunities = np.flatnonzero(v["own_opportunities"][g])
        self.incident_loss, self.incident_avoid = v["incident"][g, -2], v["incident"][g, -1]
        self.offer_price = v["offer_price"][g]

    def self_work(self, card: int, extra: np.ndarray | None = None) -> float:
        """Units the player must give themselves to finish ``card`` in time, the staff (and
        ``extra`` hires per specialty) doing what they can of their specialties."""
        staff = self.employees + (0 if extra is None else extra)
        weeks = C.PROJECT_DEADLINE[card]
        return float(np.maximum(C.PROJECT_WORK[card] - staff * weeks, 0).sum())

    def feasible(self, card: int, extra_team: int = 0) -> bool:
        """The player and the staff can finish the project in time, next to what the projects
        in progress still need of the player (``extra_team``: generalists to be hired)."""
        busy = sum(float(np.maximum(self.work_left[c] - self.employees * self.weeks_left[c], 0).sum())
                   for c in self.mine)
        spent = 1 - min(self.self_free, 1) if self.phase == R.MAIN else 0  # the player's unit already given
        return self.self_work(card) + busy <= (1 + extra_team) * C.PROJECT_DEADLINE[card] - spent

    def first(self, *actions):
        """The first legal one of ``actions`` (None if none is)."""
        return next((a for a in actions if a in self.legal), None)

    def urgent_work(self) -> int | None:
        """A legal unit on the own project with the fewest weeks left (then the lowest card),
        in the specialty with the most work left (then the lowest: a stable sort, as numpy's
        default sort orders ties by the machine's SIMD routine)."""
        for card in sorted(self.mine, key=lambda c: self.weeks_left[c]):
            k = self.slot_of[card]
            for s in np.argsort(-self.work_left[card], kind="stable"):
                a = R.WORK_BASE + k * S + int(s)
                if a in self.legal:
                    return a
        return None

    def other_work(self) -> int | None:
        """A legal unit on the feature, a long incident, then the backup."""
        for t in (R.TARGET_FEATURE, *range(R.TARGET_LONG, R.NUM_TARGETS), R.TARGET_BACKUP):
            a = self.first(*(R.WORK_BASE + t * S + s for s in range(S)))
            if a is not None:
                return a
        return None

    def best_start(self) -> int | None:
        """The legal start of the feasible project in hand with the most value per unit."""
        cards = [c for c in self.hand if R.PLAY_PROJECT_BASE + c in self.legal and self.feasible(c)]
        if not cards:
            return None
        return R.PLAY_PROJECT_BASE + max(cards, key=lambda c: _VALUE[c] / _TOTAL_WORK[c])

    def sell_hopeless(self) -> int | None:
        """Sell a project in hand that even two more generalists could not finish in time."""
        hopeless = [c for c in self.hand if not self.feasible(c, extra_team=2)]
        return self.first(*(R.SELL_BASE + c for c in hopeless))

    def idle_staff(self) -> int | None:
        """A fire action for an employee of a specialty that no own project in progress or in
        hand needs (None if every employee has work ahead)."""
        need = sum((self.work_left[c] for c in self.mine), np.zeros(S)) + C.PROJECT_WORK[self.hand].sum(axis=0)
        return self.first(*(R.FIRE_BASE + s for s in range(S) if self.employees[s] > 0 and need[s] == 0))

    def needed_specialty(self) -> int | None:
        """The specialty own projects lack most, if any."""
        need = sum((self.work_left[c] for c in self.mine), np.zeros(S))
        if not need.any():
            return None
        return int(np.argmax(need - self.employees))

    def hire(self, specialty: int | None) -> int | None:
        cards = [j for j in self.opportunities if R.HIRE_BASE + j in self.legal
                 and (specialty is None or C.OPP_SPECIALTY[j] == specialty)]
        return R.HIRE_BASE + cards[0] if cards else None

    def good_front(self) -> int | None:
        """An investor, a feature, or an extension when a project is short of time."""
        short = any(self.weeks_left[c] * self.team < self.work_left[c].sum() for c in self.mine)
        for j in self.opportunities:
            kind = C.OPP_SITUATION[j]
            if R.FRONT_BASE + j in self.legal and (kind in (C.INVESTOR, -1) or (kind == C.EXTENSION and short)):
                return R.FRONT_BASE + j
        return None


class _Heuristic(Agent):
    def act(self, obs, mask, *, public=None, history=None):
        obs, mask = check_inputs(obs, mask)
        v = views(obs)
        out = np.empty(len(obs), np.int64)
        for g in range(len(obs)):
            pos = Position(v, g, mask[g])
            a = self.choose(pos)
            out[g] = a if a is not None and a in pos.legal else min(pos.legal)
        return out

    def choose(self, pos: Position) -> int | None:
        handlers = {R.PROJECT_OFFER: self.on_offer, R.COMMIT: self.on_pool, R.PRICE: self.on_price,
                    R.ANSWER: self.on_answer, R.TARGET: self.on_target, R.MAIN: self.on_main,
                    R.ATTACH: self.on_attach, R.PAYDAY: self.on_payday}
        return handlers[pos.phase](pos)

    def on_attach(self, pos: Position) -> int | None:
        homes = [a - R.ATTACH_BASE for a in pos.legal]
        return R.ATTACH_BASE + max(homes, key=lambda c: (C.PROJECT_INCOME[c], -c))

    def on_payday(self, pos: Position) -> int | None:
        return R.DONE

    def on_target(self, pos: Position) -> int | None:
        richest = 1 + int(np.argmax(pos.coins[1:pos.n]))
        return R.TARGET_BASE + richest - 1

    def on_answer(self, pos: Position) -> int | None:
        return R.TAKE if R.TAKE in pos.legal else R.PASS


class BuilderAgent(_Heuristic):
    """The careful style (see the module docstring)."""

    name = "builder"

    def on_offer(self, pos):
        c = pos.revealed  # a taken project is in work at once: only what the team finishes in time
        return R.TAKE if R.TAKE in pos.legal and pos.feasible(c) and len(pos.mine) < 2 else R.PASS

    def on_payday(self, pos):
        return pos.idle_staff() or R.DONE

    def on_pool(self, pos):
        share = int(np.ceil(pos.incident_avoid / pos.n))
        return R.COMMIT_BASE + min(share, int(pos.coins[0]), R.MAX_COMMIT)

    def on_price(self, pos):
        return R.PRICE_BASE

    def on_answer(self, pos):
        return R.TAKE if R.TAKE in pos.legal and pos.offer_price <= 2 else R.PASS

    def on_main(self, pos):
        hire = pos.hire(pos.needed_specialty()) if pos.coins[0] >= 6 else None
        start = pos.best_start() if len(pos.mine) < 2 else None
        fire = next((R.FIRE_BASE + s for s in range(S) if pos.coins[0] < 2 and pos.employees[s] > 0), None)
        return (start or hire or pos.urgent_work() or pos.good_front()
                or pos.other_work() or fire or pos.sell_hopeless() or R.DONE)


class OutsourcerAgent(_Heuristic):
    """The investor style (see the module docstring)."""

    name = "outsourcer"

    def on_offer(self, pos):
        c = pos.revealed
        return R.TAKE if R.TAKE in pos.legal and C.PROJECT_INCOME[c] > 0 and pos.feasible(c) else R.PASS

    def on_payday(self, pos):
        return pos.idle_staff() or R.DONE

    def on_pool(self, pos):
        big = pos.incident_loss >= 5 or pos.incident_loss == 0  # data losses and heavy fines
        return R.COMMIT_BASE + (min(int(pos.incident_avoid), int(pos.coins[0]), R.MAX_COMMIT) if big else 0)

    def on_price(self, pos):
        return R.PRICE_BASE + 1

    def on_main(self, pos):
        hire = pos.hire(pos.needed_specialty()) if pos.coins[0] >= 5 and pos.team < 4 else None
        start = pos.best_start() if len(pos.mine) < 3 else None
        sell_work = pos.first(*range(R.OFFER_BASE, R.ATTACH_BASE)) if pos.urgent_work() is None else None
        return (start or hire or pos.urgent_work() or sell_work or pos.good_front() or pos.other_work()
                or pos.sell_hopeless() or R.DONE)


def play_games(bots, num_players: int, games: int, seed=None) -> dict:
    """Play about ``games`` games of ``num_players`` seats in the shared arena
    (:func:`startups_env.agents.arena.run_arena`: whole deals, every rotation of the seats,
    one batch); entry ``e`` of ``bots`` starts at seat ``e``. Returns ``{"wins":
    float[len(bots)] (share of the games each entry won), "decisions": mean decisions a
    game, "truncated": share truncated}``."""
    from .arena import run_arena  # (the arena imports the registry, which imports this module)

    if len(bots) != num_players:
        raise ValueError(f"{len(bots)} bots for {num_players} seats")
    result = run_arena(list(bots), num_players, games, seed=0 if seed is None else seed, game="startap", rate=False)
    return {"wins": np.array([row["win_rate"] for row in result.entry_stats()]),
            "decisions": sum(result.decisions) / result.games, "truncated": float(result.truncated.mean())}


class FreeriderAgent(_Heuristic):
    """The free-rider (see the module docstring)."""

    name = "freerider"

    def on_offer(self, pos):
        return R.TAKE if R.TAKE in pos.legal else R.PASS

    def on_pool(self, pos):
        return R.COMMIT_BASE

    def on_price(self, pos):
        return R.PRICE_BASE  # (it never offers work)

    def on_answer(self, pos):
        return R.PASS

    def on_main(self, pos):
        return pos.first(*(R.SELL_BASE + c for c in pos.hand)) or R.DONE


STARTAP_AGENTS = {"random": StartapRandomAgent, "builder": BuilderAgent, "outsourcer": OutsourcerAgent,
                  "freerider": FreeriderAgent}


def make_startap_agent(name: str, *, seed=None) -> Agent:
    """A Стартап bot by name: one of :data:`STARTAP_AGENTS`."""
    if name not in STARTAP_AGENTS:
        raise ValueError(f"unknown Стартап bot {name!r}; bots are {sorted(STARTAP_AGENTS)}")
    return STARTAP_AGENTS[name](seed=seed)
