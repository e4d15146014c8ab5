"""The ``search`` bot: determinized Monte-Carlo search with batched rollouts.

For each decision with more than one legal action the bot

1. draws worlds consistent with what its player has seen: the hidden cards dealt anew
   (:mod:`.worlds`), the other players' hands drawn from their posteriors given the
   table's put-downs (:mod:`.inference`), each drawn world dealt a pile of its own;
2. plays each candidate in every world (common random numbers: all candidates of a
   decision face the same worlds), then rolls the game out with the greedy bot playing
   every seat as the opponent model says (:mod:`.rollout`). A candidate is a legal action,
   or at a take decision a *whole turn*: a market take followed by one of its
   ``turn_puts`` best put-downs (a draw stays a single action);
3. values each rollout for the mover (``value``);
4. allocates the budget by *sequential halving*: every candidate gets ``determinizations``
   worlds (more late in the game, where rollouts are short; fewer where there are more
   than ``halving_width`` candidates), then the better half gets twice as many fresh
   worlds, and so on for ``halving_rounds`` rounds (more where there are many
   candidates). After each round, and halfway through the first, a candidate whose value
   trails the leader's by more than ``race_z`` standard errors of their paired difference
   drops out, and a decision whose leader is clear of all the others stops. The first
   action of the best survivor is played; with ``greedy_anchor``, plans that start with
   the greedy bot's own move count that much more.

The settings are one :class:`~.config.SearchConfig`. All rollouts of all games the bot is
asked to move in (a whole arena batch) run in one batch, so the cost per decision shrinks
with the batch; ``python -m startups_env.agents.bench`` prints the seconds per decision at the
default budget on each backend. All game logic comes from ``startups_env.startups.simulator`` and
``startups_env.startups.numba_backend``: the bot only samples hidden cards and reads results.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import NamedTuple

import numpy as np

from startups_env.startups import queries
from startups_env.startups.history import History
from startups_env.startups.rules import NUM_ACTIONS, Action, Rules, pile_start
from startups_env.startups.simulator import Simulator
from startups_env.startups.state import State
from startups_env.table.policy import needs_of

from ..base import Agent, check_act_inputs
from ..features import features, state_features
from ..greedy import best_legal, greedy_scores
from .backends import search_backend
from .config import SearchConfig
from .inference import hand_hypotheses
from .rollout import NUM_PLANS, PLAN_FIRST, PUTS, Rollouts
from .worlds import WorldPool, determinize


class SearchAgent(Agent):
    """Determinized Monte-Carlo search over greedy rollouts (see the module docstring).

    Built from a :class:`~.config.SearchConfig` (``config``), or from its fields as keyword
    arguments (``SearchAgent(determinizations=8)``; with ``config`` too, they replace its
    fields). rules: the game's rules (rounds, turn cap, reward; the table size is read from
    the state), default ``Rules()``. rollout_policy: None (greedy, like every other seat),
    or an :class:`~startups_env.agents.base.Agent` that acts from observations alone, to
    play the searching seat's own moves in the rollouts, from the seat's observation of
    the sampled world; it draws from the search's generator (reseeded with it, here and by
    :meth:`seed`). By name: ``make_agent("search", rollout_policy="ppo")``, or
    ``search[rollout_policy=ppo]`` on a command line (the registry builds it). prior: None
    (the greedy bot), or an Agent with ``logits(obs, mask)`` such as a policy network
    (``search[prior=ppo:PATH]``): its logits replace the greedy bot's scores where the
    search ranks its candidates (``max_candidates``), and its most likely action is the
    one ``greedy_anchor`` favors. The backend (``config.backend``) is resolved here, once.
    """

    name = "search"
    needs = frozenset({"public", "history"})  # (per instance: no "history" without hand reading)

    def __init__(self, seed=None, *, config: SearchConfig | None = None, rules: Rules | None = None,
                 rollout_policy: Agent | None = None, prior: Agent | None = None, **options):
        super().__init__(seed)
        if config is None:
            config = SearchConfig(**options)
        elif not isinstance(config, SearchConfig):
            raise ValueError(f"config must be a SearchConfig, got {config!r}")
        elif options:
            config = dataclasses.replace(config, **options)
        self.config = config
        self.rules = rules if rules is not None else Rules()
        self.needs = frozenset({"public", "history"} if config.reads_hands else {"public"})
        self.rollout_policy = _rollout_policy(rollout_policy, self.rng)
        if prior is not None and not (isinstance(prior, Agent) and callable(getattr(prior, "logits", None))):
            raise ValueError(f"prior must be None (the greedy bot) or an Agent with logits(obs, mask), such as a "
                             f"policy network ('ppo:PATH'), got {prior!r}")
        self.prior = prior
        self.backend = search_backend(config.backend)
        self.belief = _hand_belief(config.belief)
        self.rollouts = Rollouts(config, self.rules, self.backend, self.rollout_policy)
        self.last_values = np.zeros((0, NUM_ACTIONS))  # (see act)

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        if self.rollout_policy is not None:
            self.rollout_policy.seed(self.rng)

    def act(self, obs, mask, *, public=None, history: History | None = None):
        """public: ``startups_env.startups.state.public_state(state, seats)`` of the same games;
        history: their :class:`~startups_env.startups.history.History` (required where the search
        reads hands, ``config.reads_hands``; ignored otherwise).

        After each call, ``last_values`` (float[B, 19]) holds the search's value of each
        action it searched, for the mover (the mean over the worlds it met of the rollouts'
        returns; for a take searched as whole turns, its best turn), NaN elsewhere and in
        games with a single legal action: what expert iteration fits beside the choice."""
        obs, mask = check_act_inputs(obs, mask)
        if public is None or not isinstance(public, State) or public.batch_size != obs.shape[0]:
            raise ValueError("search needs public=startups_env.startups.state.public_state(state, seats) for the same games")
        if self.config.reads_hands:
            if history is None:
                raise ValueError("search reads the other hands from history= (the startups_env.startups.history.History "
                                 "of the same games, e.g. table.history.take(games)); pass it, or build the bot "
                                 "with infer_hands=False to search uniformly sampled hands")
            if not isinstance(history, History) or history.batch_size != obs.shape[0]:
                raise ValueError("history must be the startups_env.startups.history.History of the same games "
                                 "(history.take(games))")
        choice = mask.argmax(axis=1).astype(np.int64)  # the only legal action where there is one
        self.last_values = np.full(mask.shape, np.nan)
        open_games = np.flatnonzero(mask.sum(axis=1) > 1)
        if open_games.size:
            public = public.take(open_games)
            log = history.take(open_games) if self.config.reads_hands else None
            plans = self._plans(public, self._candidates(obs[open_games], mask[open_games]))
            favored = None
            if self.config.greedy_anchor:
                best = best_legal(self._prior_scores(obs[open_games], mask[open_games]).T, mask[open_games])
                favored = PLAN_FIRST[None, :] == best[:, None]
            plan, plan_values = self._search(public, plans, log, favored)
            choice[open_games] = PLAN_FIRST[plan]
            self.last_values[open_games] = action_values(plan_values)
        return choice

    def _candidates(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The legal actions worth searching: the ``max_candidates`` best by the prior's
        scores (all of them if ``max_candidates`` is 0)."""
        most = self.config.max_candidates
        if not most or (mask.sum(axis=1) <= most).all():
            return mask
        return mask & _top(self._prior_scores(obs, mask), mask, most)

    def _prior_scores(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float[B, 19]: the prior's score of each action, -inf where illegal: the greedy
        bot's own scores, or the ``prior`` network's logits."""
        if self.prior is None:
            scores = greedy_scores(features(obs), self.config.greedy).T
        else:
            scores = self.prior.logits(obs, mask).astype(np.float64)
        return np.where(mask, scores, -np.inf)

    def _plans(self, public: State, candidates: np.ndarray) -> np.ndarray:
        """bool[n, NUM_PLANS]: the plans to search. With ``turn_puts``, each candidate
        market take of a game in its take phase is replaced by whole turns: the take
        followed by each of the ``turn_puts`` best put-downs (by the greedy bot's scores)
        that are legal after it; draws and put-down decisions stay single actions."""
        n = public.batch_size
        plans = np.zeros((n, NUM_PLANS), bool)
        plans[:, :NUM_ACTIONS] = candidates
        if not self.config.turn_puts:
            return plans
        game, company = np.nonzero(candidates[:, Action.TAKE:Action.KEEP])
        if game.size == 0:
            return plans
        # Play each take on a copy of the public state (a market take draws nothing, so
        # the hidden cards do not matter); the simulator says which put-downs are legal.
        sim = Simulator.from_state(public.take(game), self.rules, backend=self.backend.name)
        sim.step(Action.TAKE + company)
        mask = sim.legal_mask()[:, Action.KEEP:]  # [k, 12]
        scores = greedy_scores(state_features(sim.state), self.config.greedy)[Action.KEEP:].T  # [k, 12]
        best = _top(np.where(mask, scores, -np.inf), mask, self.config.turn_puts)
        plans[game, Action.TAKE + company] = False
        rows, put = np.nonzero(best)
        plans[game[rows], NUM_ACTIONS + company[rows] * PUTS + put] = True
        return plans

    def _worlds(self, public: State) -> np.ndarray:
        """int[n] worlds per candidate in the first round: more late in the game, where
        rollouts are short (their cost grows with the cards left in the pile, about a
        turn per card, up to the horizon)."""
        dealt_pile = queries.pile_left(pile_start(public.num_players.astype(np.float64)))
        pile = queries.pile_left(public.pile_pos.astype(np.float64))
        if self.config.horizon:
            dealt_pile = np.minimum(dealt_pile, self.config.horizon)
            pile = np.minimum(pile, self.config.horizon)
        factor = np.clip((dealt_pile + 4.0) / (pile + 4.0), 1.0, self.config.max_world_factor)
        return np.round(self.config.determinizations * factor).astype(np.int64)

    def _search(self, public: State, candidates: np.ndarray, log: History | None,
                favored: np.ndarray | None = None) -> np.ndarray:
        """Best plan in each of n games by sequential halving over the candidate plans
        (bool[n, NUM_PLANS]). A game with more than ``halving_width`` candidates starts with
        proportionally fewer worlds per candidate and halves more often, so that every
        round costs about the same. After each round (and halfway through the first),
        candidates that trail the leader clearly (``race_z``: :func:`_clear_losers`) drop
        out too, and a game stops where one candidate is left. ``favored`` (bool[n,
        NUM_PLANS], optional): plans whose value counts ``greedy_anchor`` more. Returns (the
        best plan int[n], and each plan's mean value over the worlds it met float[n,
        NUM_PLANS], the anchor's bonus left out, NaN for plans not searched)."""
        config = self.config
        seat = public.current.astype(np.intp)
        alive = candidates.copy()
        count = alive.sum(axis=1)
        # Summed values (bonus included); all surviving candidates of a game have met the same worlds.
        sums = np.zeros(alive.shape)
        met = np.zeros(alive.shape)  # worlds each plan met
        bonus = None if favored is None else config.greedy_anchor * favored
        worlds = self._worlds(public)
        pool = None if log is None else self._hand_hypotheses(public, seat, worlds, log)
        wide = count > config.halving_width
        worlds[wide] = np.maximum(1, np.round(worlds[wide] * config.halving_width / count[wide])).astype(np.int64)
        last = np.maximum(config.halving_rounds, np.ceil(np.log2(np.maximum(count, 1))).astype(np.int64) - 1)
        rounds: list[Outcomes] = []
        for round_, played, round_ends in self._schedule(worlds):
            count = alive.sum(axis=1)
            live = (count > 1) & (round_ <= last)
            if not live.any():
                break
            open_games = np.flatnonzero(live & (played > 0))
            if open_games.size:
                outcomes = self._evaluate(public.take(open_games), seat[open_games], alive[open_games],
                                          played[open_games], None if pool is None else pool.take(open_games))
                outcomes = outcomes._replace(game=open_games[outcomes.game])
                if bonus is not None:
                    outcomes = outcomes._replace(value=outcomes.value + bonus[outcomes.game, outcomes.plan])
                rounds.append(outcomes)
                flat = outcomes.game * NUM_PLANS + outcomes.plan
                sums += np.bincount(flat, weights=outcomes.value, minlength=sums.size).reshape(sums.shape)
                met += np.bincount(flat, minlength=sums.size).reshape(sums.shape)
            if round_ends:  # keep the better half (rounded up) of each game's candidates
                halve = np.flatnonzero(live & (round_ < last))
                rank = _descending_rank(np.where(alive[halve], sums[halve], -np.inf))
                alive[halve] &= rank < -(-count[halve] // 2)[:, None]
            if config.race_z and rounds:
                alive &= ~_clear_losers(rounds, alive, sums, config.race_z)
        values = np.where(met > 0, sums / np.maximum(met, 1), np.nan) - (0.0 if bonus is None else bonus)
        return np.where(alive, sums, -np.inf).argmax(axis=1).astype(np.int64), values

    def _hand_hypotheses(self, public: State, seat: np.ndarray, worlds: np.ndarray, log: History) -> WorldPool | None:
        """:func:`.inference.hand_hypotheses` of the games of ``public`` (seen by ``seat``,
        ``worlds`` per candidate in their first round) from their History ``log``, with this
        search's settings and generator."""
        return hand_hypotheses(public, seat, worlds, log, self.config, self.rules, self.backend, self.rng,
                               self.belief)

    def _schedule(self, worlds: np.ndarray):
        """The rounds of sequential halving: (round, worlds per candidate int[n], whether the
        round ends) for each batch of rollouts, round r playing ``worlds * 2**r``. With racing
        the first round is played in two halves, raced in between (most clear losers show
        in the first half)."""
        if self.config.race_z:
            first = (worlds + 1) // 2
            yield 0, first, False
            yield 0, worlds - first, True
        else:
            yield 0, worlds, True
        for round_ in itertools.count(1):
            yield round_, worlds << round_, True

    def _evaluate(self, public: State, seat: np.ndarray, candidates: np.ndarray, worlds: np.ndarray,
                  pool: WorldPool | None) -> Outcomes:
        """The rollout values of each candidate plan (bool[n, NUM_PLANS]) of game i on worlds[i]
        sampled worlds (the same worlds for every candidate of a game), played in batches of
        at most ``max_rollouts`` rollouts: one :class:`Outcomes` entry per world and
        candidate, worlds numbered across the n games."""
        n = public.batch_size
        per_game = worlds * self.config.rollouts * candidates.sum(axis=1)
        parts = []
        start = 0
        while start < n:
            stop = start + 1 + int(np.searchsorted(np.cumsum(per_game[start + 1:]),
                                                   self.config.max_rollouts - per_game[start], side="right"))
            games = np.arange(start, stop)
            part = self._evaluate_batch(public.take(games), seat[games], candidates[games], worlds[games],
                                        None if pool is None else pool.take(games))
            parts.append(part._replace(game=part.game + start, world=part.world + worlds[:start].sum()))
            start = stop
        return Outcomes(*(np.concatenate(field) for field in zip(*parts)))

    def _evaluate_batch(self, public: State, seat: np.ndarray, candidates: np.ndarray,
                        worlds: np.ndarray, pool: WorldPool | None) -> Outcomes:
        """:meth:`_evaluate` of games whose rollouts fit in one batch: the worlds drawn
        (from ``pool`` where hands are read, else uniformly), copied once per candidate and
        rollout, and rolled out together."""
        n = public.batch_size
        repeats = self.config.rollouts
        game_of_world = np.repeat(np.arange(n), worlds)  # game i's worlds are consecutive
        cand_game, cand_plan = np.nonzero(candidates)  # every (game, plan) candidate, game-major
        counts = candidates.sum(axis=1)
        first = np.concatenate([[0], np.cumsum(counts)[:-1]])
        # For each world, one row per candidate of its game, repeated `rollouts` times.
        reps = counts[game_of_world] * repeats
        world_row = np.repeat(np.arange(game_of_world.size), reps)
        offset = np.arange(world_row.size) - np.repeat(np.cumsum(reps) - reps, reps)
        candidate = first[game_of_world[world_row]] + offset // repeats  # index into cand_*
        mover = seat[game_of_world[world_row]]
        # Each rollout's own copy of its world, a row per (world, candidate, repeat).
        if pool is None:
            starts = self.backend.take(determinize(public, seat, worlds, self.rng, self.backend), world_row)
        else:
            starts = pool.sample(worlds, self.rng, self.backend, repeat=world_row)
        # Random-move chances per world: the rollouts from one world share its row.
        belief = None if pool is None else pool.greedy_belief
        chance = self.rollouts.random_chance(seat[game_of_world],
                                             self.rollouts.world_greedy_chance(belief, game_of_world, self.rng))
        # Every candidate of a world meets the same random numbers (common random numbers);
        # a world's repeated rollouts of one candidate each their own.
        stream = world_row * repeats + offset % repeats
        values = self.rollouts.values(starts, cand_plan[candidate], mover, self.rng, chance, chance_row=world_row,
                                      stream=stream)
        # A (world, candidate)'s rollouts are consecutive rows.
        each = slice(None, None, repeats)
        return Outcomes(cand_game[candidate[each]], cand_plan[candidate[each]], world_row[each],
                        values.reshape(-1, repeats).mean(axis=1))


def _hand_belief(path: str | None):
    """The hand-belief network at ``path`` (``config.belief``), or None; a ValueError
    where the file is not one. (Its module, and torch, are imported only where one is
    asked for.)"""
    if path is None:
        return None
    from .belief import load_belief

    return load_belief(path)


def _rollout_policy(policy, rng: np.random.Generator) -> Agent | None:
    """The agent for ``SearchAgent(rollout_policy=...)``, reseeded with the search's
    generator; None stays None (greedy rollouts for every seat)."""
    if policy is None:
        return None
    if isinstance(policy, str):  # names are the registry's business: this module does not import it
        raise ValueError(f"rollout_policy must be an Agent or None, got the name {policy!r}; build it by name with "
                         f"startups_env.agents.make_agent('search', rollout_policy={policy!r})")
    if not isinstance(policy, Agent):
        raise ValueError(f"rollout_policy must be an Agent or None (greedy), got {policy!r}")
    if needs_of(policy):
        raise ValueError(f"rollout_policy {policy.name!r} needs the public state or the history "
                         f"({sorted(needs_of(policy))}); rollouts give a policy its observation only (use e.g. 'ppo')")
    policy.seed(rng)
    return policy


class Outcomes(NamedTuple):
    """One round of a search's rollouts: an entry per sampled world and candidate plan
    (int[k] ``game``, ``plan``, ``world``; ``world`` numbers the round's worlds, each
    belonging to one game) and its value (float[k]; the mean of its rollouts)."""

    game: np.ndarray
    plan: np.ndarray
    world: np.ndarray
    value: np.ndarray


def action_values(plan_values: np.ndarray) -> np.ndarray:
    """float[n, NUM_ACTIONS]: each action's value, the best of the plans (float[n,
    NUM_PLANS], NaN where not searched) that start with it; NaN where none was searched."""
    best = np.full((plan_values.shape[0], NUM_ACTIONS), -np.inf)
    np.maximum.at(best, (slice(None), PLAN_FIRST), np.nan_to_num(plan_values, nan=-np.inf))
    return np.where(np.isfinite(best), best, np.nan)


def _clear_losers(rounds: list[Outcomes], alive: np.ndarray, sums: np.ndarray, z: float) -> np.ndarray:
    """bool[n, NUM_PLANS]: the alive plans (bool[n, NUM_PLANS]) whose value trails their
    game's leader (the alive plan of the highest ``sums``) by more than ``z`` standard
    errors of the mean paired difference, over every world both met in ``rounds`` (common
    random numbers: a plan alive now met every world of its game so far, as did the
    leader). A difference that is the same in every world counts as clear when it is
    positive."""
    n = alive.shape[0]
    lead = np.where(alive, sums, -np.inf).argmax(axis=1)
    moments = np.zeros((3, n * NUM_PLANS))  # per (game, plan): worlds, sum and sum of squares of the deficit
    for outcomes in rounds:
        game, plan = outcomes.game, outcomes.plan
        leads = plan == lead[game]
        lead_value = np.zeros(outcomes.world.max() + 1)
        lead_value[outcomes.world[leads]] = outcomes.value[leads]
        counted = alive[game, plan] & ~leads
        deficit = (lead_value[outcomes.world] - outcomes.value)[counted]
        flat = (game * NUM_PLANS + plan)[counted]
        for k, weights in enumerate((None, deficit, deficit * deficit)):
            moments[k] += np.bincount(flat, weights=weights, minlength=n * NUM_PLANS)
    worlds, total, squares = moments.reshape(3, n, NUM_PLANS)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / worlds
        variance = np.maximum(squares - total * mean, 0.0) / (worlds - 1)
        clear = np.where(variance > 0, mean > z * np.sqrt(variance / worlds), mean > 0)
    return alive & (worlds > 1) & clear


def _top(scores: np.ndarray, mask: np.ndarray, k: int) -> np.ndarray:
    """bool[B, A]: the k legal entries of each row with the highest scores (ties to the
    lower index). Legal entries with -inf scores still rank above illegal ones."""
    return mask & (_descending_rank(np.where(mask, np.maximum(scores, -1e30), -np.inf)) < k)


def _descending_rank(scores: np.ndarray) -> np.ndarray:
    """int[B, A]: each entry's place in its row, 0 for the highest score (ties to the lower index)."""
    return np.argsort(np.argsort(-scores, axis=1, kind="stable"), axis=1, kind="stable")
