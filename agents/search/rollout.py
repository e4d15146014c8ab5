"""The search's rollouts: each candidate plan played in a sampled world, then the game
rolled out with the greedy bot playing every seat, each from its own observation of the
world, and valued for the mover.

A plan is what a candidate plays before the rollout: plans 0-18 are single actions; plan
``19 + 12 c + k`` is the whole turn "take company c from the market, then put-down
``7 + k``" (:data:`PLAN_FIRST`, :data:`PLAN_SECOND`).

The opponent model sets each seat's chance of a uniformly random move instead of the
greedy one (:meth:`Rollouts.random_chance`); a ``rollout_policy`` may play the mover's own
later moves instead of greedy. On the numba backend the greedy rollouts of a whole batch
run in one compiled call (:mod:`.rollout_kernel`); otherwise, and with a rollout policy, a
Simulator steps them.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from startups_env.startups import queries
from startups_env.startups.observe import observe
from startups_env.startups.rules import MAX_PLAYERS, NUM_ACTIONS, NUM_COMPANIES, Action, Rules
from startups_env.startups.simulator import Simulator
from startups_env.startups.state import State

from ..base import Agent
from ..features import state_features
from ..greedy import greedy_actions
from .config import SearchConfig
from .protocol import SearchBackend

P, C = MAX_PLAYERS, NUM_COMPANIES
PUTS = NUM_ACTIONS - Action.KEEP  # 12 put-down actions
NUM_PLANS = NUM_ACTIONS + C * PUTS
PLAN_FIRST = np.concatenate([np.arange(NUM_ACTIONS), np.repeat(Action.TAKE + np.arange(C), PUTS)])
PLAN_SECOND = np.concatenate([np.full(NUM_ACTIONS, -1), np.tile(Action.KEEP + np.arange(PUTS), C)])


class Rollouts:
    """The rollouts of a search built with ``config`` for games of ``rules``, on
    ``backend``; ``rollout_policy`` (an Agent that acts from observations, or None for
    greedy) plays the mover's own moves after its plan. With a ``horizon`` a rollout stops
    after that many turns (the simulator's turn cap, counted from the rollout's start) and
    is scored as it stands; in the round game it stops at the end of its round and is
    valued by that round's result."""

    def __init__(self, config: SearchConfig, rules: Rules, backend: SearchBackend, rollout_policy: Agent | None):
        self.config = config
        self.rules = dataclasses.replace(rules, turn_cap=config.horizon) if config.horizon else rules
        self.backend = backend
        self.rollout_policy = rollout_policy

    def values(self, state: State, plans: np.ndarray, mover: np.ndarray, rng: np.random.Generator,
               chance: np.ndarray | None = None, chance_row: np.ndarray | None = None,
               stream: np.ndarray | None = None) -> np.ndarray:
        """float64[m]: play the plans (int[m] plan ids) in the m worlds of ``state`` (the
        rollouts' own copy: changed), roll out, and value each game for ``mover`` (int[m]).
        ``chance`` (float[k, 7]): per seat, the chance of a uniformly random move instead of
        the greedy one, game i's in row ``chance_row[i]`` (default: row i; default chances:
        :meth:`random_chance` with the prior). ``stream`` (int[m], optional): rollouts of
        the same stream draw the same random moves' numbers on the compiled path (the
        Simulator-stepped one draws every rollout's afresh). Random numbers come from
        ``rng``."""
        if chance is None:
            chance = self.random_chance(mover, None)
        if self.config.horizon:
            # A sampled world's turn count matters to nothing else (bots do not read it):
            # the turn cap counts the rollout's turns.
            state.turn[:] = 0
        kernel = self.backend.fused_rollouts() if self.rollout_policy is None else None
        first, second = PLAN_FIRST[plans], PLAN_SECOND[plans]
        if kernel is not None and (self.config.value == "soft" or self.rules.rounds == 1):
            # (the round's rank and margin are the value)
            rank, margin = kernel.rollout_outcomes(state, first, second, mover, self.rules, self.config.greedy, rng,
                                                   random_chance=chance, chance_row=chance_row, stream=stream)
            return self.outcome_value(rank, margin, state.num_players.astype(np.float64))
        if chance_row is not None:  # (the paths below read one row per game)
            chance = chance[chance_row]
        if kernel is not None:  # (a round game's last round ranks by the whole game: the simulator scores it)
            finished = kernel.rollout(state, first, second, mover, self.rules, self.config.greedy, rng,
                                      random_chance=chance)
            return self.finished_value(finished, mover)
        return self._stepped_values(state, plans, mover, chance, rng)

    def _stepped_values(self, state: State, plans: np.ndarray, mover: np.ndarray, chance: np.ndarray,
                        rng: np.random.Generator) -> np.ndarray:
        """:meth:`values`, the rollouts stepped by a Simulator (``chance`` float[m, 7], a row
        per rollout)."""
        sim = Simulator.from_state(state, self.rules, seed=rng, backend=self.backend.name)
        random_moves = np.count_nonzero(chance) > 0
        start_round = state.round.copy()
        sim.step(PLAN_FIRST[plans])
        second = PLAN_SECOND[plans]
        if (second >= 0).any():
            sim.step(np.maximum(second, 0), active=second >= 0)
        live = np.arange(state.batch_size)  # rows of the original batch still in `sim`
        finished_rows, finished_states = [], []
        while True:
            # A rollout ends with the game, or (round game) with the round it started in;
            # ended rows are frozen (active=False) until they are moved out.
            done = sim.done | (sim.state.round != start_round[live])
            if done.all() or done.mean() > 0.25:
                # Compact: move ended games out so later steps only pay for live ones.
                finished_rows.append(live[done])
                finished_states.append(sim.state.take(np.flatnonzero(done)))
                keep = np.flatnonzero(~done)
                if keep.size == 0:
                    break
                live = live[keep]
                sim = Simulator.from_state(sim.state.take(keep), self.rules, seed=rng, backend=self.backend.name)
                done = done[keep]
            sim.step(self._stepped_actions(sim, live, mover, chance, done, random_moves, rng), active=~done)
        values = np.empty(state.batch_size)
        for part_rows, part in zip(finished_rows, finished_states):
            values[part_rows] = self.finished_value(part, mover[part_rows])
        return values

    def _stepped_actions(self, sim: Simulator, live: np.ndarray, mover: np.ndarray, chance: np.ndarray,
                         done: np.ndarray, random_moves: bool, rng: np.random.Generator) -> np.ndarray:
        """int[b]: the next move of each rollout in ``sim`` (rows ``live`` of the batch whose
        movers are ``mover`` and random-move chances ``chance``): greedy's, the rollout
        policy's for the mover, or with its seat's chance a uniformly random legal one; the
        ``done`` games' moves are not played."""
        mask = sim.legal_mask()
        actions = greedy_actions(state_features(sim.state), mask, self.config.greedy)
        if self.rollout_policy is not None:
            mine = np.flatnonzero((sim.state.current == mover[live]) & ~done & (mask.sum(axis=1) > 1))
            if mine.size:
                actions[mine] = self.rollout_policy.act(observe(sim.state.take(mine)), mask[mine])
        if random_moves:
            explore = rng.random(actions.size) < chance[live, sim.state.current]
            explore &= mask.any(axis=1) & ~done
            if explore.any():
                actions[explore] = queries.uniform_legal(mask[explore], rng)
        return actions

    def random_chance(self, mover: np.ndarray, belief: np.ndarray | None) -> np.ndarray:
        """float[m, 7]: per rollout and seat, the chance of a uniformly random move:
        ``rollout_epsilon`` for every seat, and for the other seats 1 under the random
        opponent model, or under the adaptive one the chance that the seat is not greedy
        (``belief`` float[m, 7], the chance that it is; None: the prior) times
        ``other_type_epsilon``."""
        config = self.config
        m = mover.size
        chance = np.full((m, P), config.rollout_epsilon)
        others = np.arange(P)[None, :] != mover[:, None]
        if config.opponent_model == "random":
            chance[others] = 1.0
        elif config.opponent_model == "adaptive":
            greedy = np.full((m, P), config.greedy_prior) if belief is None else belief
            other_type_random = (1.0 - greedy) * config.other_type_epsilon
            chance = np.where(others, 1.0 - (1.0 - chance) * (1.0 - other_type_random), chance)
        return chance

    def world_greedy_chance(self, greedy_belief: np.ndarray | None, game_of_world: np.ndarray,
                            rng: np.random.Generator) -> np.ndarray | None:
        """float[w, 7] or None (the prior): per sampled world (of game ``game_of_world``
        int[w]), the chance that each seat plays greedy in the rollouts from it, given the
        games' belief (``greedy_belief`` float[n, 7], None: the prior). With
        ``types_per_world`` under the adaptive model, each world draws every seat's type
        once from ``rng`` (1: greedy, 0: the second type), so that all the candidates rolled
        out from the world meet the same opponents, each played consistently as one type."""
        belief = None if greedy_belief is None else greedy_belief[game_of_world]
        if not (self.config.types_per_world and self.config.opponent_model == "adaptive"):
            return belief
        if belief is None:
            belief = np.full((game_of_world.size, P), self.config.greedy_prior)
        return (rng.random(belief.shape) < belief).astype(np.float64)

    def finished_value(self, state: State, mover: np.ndarray) -> np.ndarray:
        """Value of finished games (or rounds) for ``mover``, from the ranks and scores of
        the last scored round (in a finished round game, ranks are the final ranking)."""
        g = np.arange(state.batch_size)
        n = state.num_players.astype(np.float64)
        seated = np.arange(P)[:, None] < n[None, :]
        margin = queries.score_margin(state.scores.astype(np.float64), seated)[mover, g]
        return self.outcome_value(state.ranks[mover, g].astype(np.float64), margin, n)

    def outcome_value(self, rank: np.ndarray, margin: np.ndarray, num_players: np.ndarray) -> np.ndarray:
        """float64[m]: the value (``config.value``) of outcomes for their mover: its rank (0:
        best) and its score less the best other seated player's (float64[m] each) at tables
        of ``num_players`` (float64[m])."""
        if self.config.value == "win":
            return (rank == 0).astype(np.float64)
        if self.config.value == "rank":
            return queries.rank_value(rank, num_players)
        return 1.0 / (1.0 + np.exp(-(margin + 0.5) / self.config.soft_scale))
