"""A determinized search for any game of the contract (:class:`startups_env.game.Game`).

At each decision of a seat it draws ``worlds`` deals of the cards the seat cannot see from
the game's own ``deal_hidden`` (given the ``public`` state the table hands a bot that needs
it), plays each candidate action in every world (the same worlds for every candidate), plays
each world on to its end with the game's rollout policy on the game's simulator, and takes
the candidate whose worlds give the seat the best mean reward. What differs per game lives
with the game, in a subclass: the record (:attr:`DeterminizedSearch.game`), the rollout
(:meth:`DeterminizedSearch.play_out`) and the candidate the rollout policy itself would
play (:meth:`DeterminizedSearch.preferred`), always among the candidates.
"""

from __future__ import annotations

import numpy as np

from startups_env.game import Game

from ..base import Agent, check_act_inputs


class DeterminizedSearch(Agent):
    """The search bot of a game (see the module docstring).

    Args:
        seed: its generator's seed (worlds, candidate subsets).
        worlds: deals of the hidden cards per decision.
        max_candidates: the candidates searched at a decision with more legal actions
            (the rollout policy's own choice and others drawn at random).
    """

    name = "search"
    needs = frozenset({"public"})
    #: The game's record (a subclass sets it).
    game: Game | None = None
    #: The settings of the rollouts' rules (``game.make_rules(n, **rollout_settings)``): the
    #: reward the search maximizes.
    rollout_settings: dict = {}

    def __init__(self, seed=None, *, worlds: int = 8, max_candidates: int = 8):
        super().__init__(seed)
        if worlds < 1 or max_candidates < 2:
            raise ValueError(f"need worlds >= 1 and max_candidates >= 2, got {worlds}, {max_candidates}")
        self.worlds, self.max_candidates = int(worlds), int(max_candidates)
        self._sims: dict[tuple[int, int], object] = {}
        self.last_values = np.zeros((0, self.game.num_actions))  # (see act)

    def play_out(self, sim) -> None:
        """Play every game of ``sim`` (the game's simulator) to its end with the game's rollout policy."""
        raise NotImplementedError

    def preferred(self, public, legal: np.ndarray) -> int:
        """The action the rollout policy would play in ``public`` (one game); one of ``legal``."""
        return int(legal[0])

    def act(self, obs, mask, *, public=None, history=None):
        """int64[B]: the searched action of each game. After each call, ``last_values``
        (float[B, actions]) holds the mean reward of each candidate searched, NaN elsewhere
        (all NaN at a decision with one legal action, which is not searched): what expert
        iteration fits a policy to."""
        obs, mask = check_act_inputs(obs, mask, self.game.num_actions)
        if public is None:
            raise ValueError(f"the search of {self.game.title} needs the public state (public=)")
        out = np.empty(mask.shape[0], np.int64)
        self.last_values = np.full(mask.shape, np.nan)
        for b in range(mask.shape[0]):
            out[b] = self.decide(public.take([b]), np.flatnonzero(mask[b]), self.last_values[b])
        return out

    def candidates(self, public, legal: np.ndarray) -> np.ndarray:
        """The actions searched, the rollout policy's choice first (so that it wins a tie): every
        legal one, or (more than ``max_candidates``) ``max_candidates - 1`` others at random."""
        first = self.preferred(public, legal)
        others = legal[legal != first]
        if others.size >= self.max_candidates:
            others = np.sort(self.rng.choice(others, self.max_candidates - 1, replace=False))
        return np.concatenate([[first], others])

    def _simulator(self, num_players: int, size: int):
        key = (num_players, size)
        if key not in self._sims:
            self._sims[key] = self.game.make_simulator(self.game.make_rules(num_players, **self.rollout_settings), size,
                                                      seed=0)
        return self._sims[key]

    def decide(self, public, legal: np.ndarray, values: np.ndarray | None = None) -> int:
        """The searched action of the seat to act in ``public`` (one game), among ``legal``;
        each candidate's mean reward is written into ``values`` (float[actions]) if given."""
        if legal.size == 1:
            return int(legal[0])
        cands = self.candidates(public, legal)
        seat, w, k = int(public.current[0]), self.worlds, cands.size
        worlds = self.game.deal_hidden(public.take(np.zeros(w, np.intp)), np.full(w, seat), self.rng)
        sim = self._simulator(int(public.num_players[0]), w * k)
        sim.state = worlds.take(np.tile(np.arange(w), k))
        sim.step(np.repeat(cands, w))
        self.play_out(sim)
        value = sim.rewards(np.arange(w * k))[seat].reshape(k, w).mean(axis=1)
        if values is not None:
            values[cands] = value
        return int(cands[int(np.argmax(value))])  # (the first of the best: the preferred on a tie)
