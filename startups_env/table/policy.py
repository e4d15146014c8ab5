"""The policy protocol: what every driver of this package asks of a bot.

A *policy* picks one legal action in each of B games at once::

    actions = policy.act(obs, mask, *, public=None, history=None)

``obs`` float32[B, OBS_DIM] is each game's observation of the player to act
(:func:`startups_env.startups.observe.observe`), ``mask`` bool[B, 19] its legal actions, and the
result int[B] one legal action id per game. A policy receives nothing else unless it
declares it in ``needs`` (a set of the names in :data:`NEEDS`):

* ``"public"``: ``public=``, a :class:`~startups_env.startups.state.State` of the B games holding
  only what the player to act may know (:func:`startups_env.startups.state.public_state`), for bots
  that sample hidden cards (search);
* ``"history"``: ``history=``, the :class:`~startups_env.startups.history.History` of the B games,
  the table's put-downs as everyone saw them, for bots that read hands from them;
* ``"rules"``: ``rules=``, the :class:`~startups_env.startups.rules.Rules` of the table, for
  bots that value a move by the options of play (a free draw on a market row...), which
  every player knows as it knows the table size.

A plain callable ``f(obs, mask) -> actions`` is a policy as it is (it needs nothing);
:func:`as_policy` gives it the ``act`` method and :func:`needs_of` reads what any policy
needs. :func:`pettingzoo_policy` adapts a one-game ``f(observation_dict) -> action`` as
PettingZoo users write them. Drivers (:mod:`startups_env.table.driver`, and through it the
vector env, the replay recorder, the arena and the PettingZoo helper) supply what is
declared and check what comes back; a bot that is not given what it needs raises
rather than playing weaker.

The library never imports a bot; ``startups_env.agents.base.Agent`` (the shipped bots)
subclasses :class:`Policy` and adds a seeded generator.
"""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

from startups_env.checks import is_int
from startups_env.startups.rules import NUM_ACTIONS

#: What a policy may declare in ``needs``; every driver supplies each of them.
NEEDS = frozenset({"public", "history", "rules"})


class Policy(abc.ABC):
    """Base class of batch policies (subclassing it is optional: any object with an ``act``
    method, or a plain callable, is a policy).

    Attributes:
        name: a short display name (drivers name the policy in their errors with it).
        needs: what :meth:`act` must be passed besides obs and mask, a subset of
            :data:`NEEDS` (empty: observations alone).
    """

    name: str = "policy"
    needs: frozenset[str] = frozenset()

    @abc.abstractmethod
    def act(self, obs: np.ndarray, mask: np.ndarray, *, public=None, history=None) -> np.ndarray:
        """obs float32[B, OBS_DIM], mask bool[B, 19] (every row has a legal action) ->
        int[B] legal action ids. ``public`` and ``history`` are passed when declared in
        :attr:`needs` (see the module docstring)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class FunctionPolicy(Policy):
    """A plain callable ``fn(obs, mask) -> actions`` as a :class:`Policy` (what
    :func:`as_policy` makes of one). A ``needs`` attribute on the callable is honoured:
    its ``public=`` / ``history=`` keywords are then passed on."""

    def __init__(self, fn, name: str | None = None):
        if not callable(fn):
            raise ValueError(f"a policy function must be callable, got {type(fn).__name__} {fn!r}")
        self.fn = fn
        self.name = name or policy_name(fn)
        self.needs = needs_of(fn)

    def act(self, obs, mask, **given):
        return self.fn(obs, mask, **given)


class PettingZooPolicy(Policy):
    """A one-game policy as PettingZoo users write them, ``fn(observation) -> action``
    (``observation`` the env's dict ``{"observation": float32[197], "action_mask":
    int8[19]}``, action an int), as a batch :class:`Policy`: it is called once per game
    of a batch, in game order. Build it with :func:`pettingzoo_policy`."""

    def __init__(self, fn, name: str | None = None):
        if not callable(fn):
            raise ValueError(f"a PettingZoo policy must be callable, got {type(fn).__name__} {fn!r}")
        self.fn = fn
        self.name = name or policy_name(fn)

    def act(self, obs, mask):
        obs, mask = check_act_inputs(obs, mask)
        actions = np.empty(obs.shape[0], np.int64)
        for i in range(obs.shape[0]):
            action = self.fn({"observation": obs[i], "action_mask": mask[i].astype(np.int8)})
            if isinstance(action, np.ndarray) and action.size == 1:
                action = action.reshape(())[()]
            if not is_int(action):
                raise ValueError(f"PettingZoo policy {self.name!r} must return one integer action id, "
                                 f"got {type(action).__name__} {action!r}")
            actions[i] = int(action)
        return actions


def pettingzoo_policy(fn, name: str | None = None) -> PettingZooPolicy:
    """Seat a one-game ``fn(observation_dict) -> action`` (PettingZoo style) wherever a
    policy goes: ``play_aec_game(env, {"player_0": pettingzoo_policy(my_fn), ...})``."""
    return PettingZooPolicy(fn, name)


def policy_name(policy: Any, default: str | None = None) -> str:
    """The display name of a policy: its ``name``, a function's ``__name__``, else
    ``default`` (or the type name)."""
    name = getattr(policy, "name", None) or getattr(policy, "__name__", None)
    return str(name or default or type(policy).__name__)


def needs_of(policy: Any) -> frozenset[str]:
    """What ``policy`` declares it needs (its ``needs``; nothing if it has none), checked:
    ValueError naming the policy for anything outside :data:`NEEDS`, or for the flags that
    ``needs`` replaced (``needs_public_state``, ``reads_put_downs``), which no driver reads
    any more (obeying them silently would not be possible, ignoring them would be silent)."""
    needs = getattr(policy, "needs", None)
    if needs is None:
        old = [flag for flag in ("needs_public_state", "reads_put_downs") if getattr(policy, flag, False)]
        if old:
            raise ValueError(f"policy {policy_name(policy)!r} sets {' and '.join(old)}, which drivers no longer read; "
                             "declare needs = frozenset({'public'}) (and 'history' to read the table's put-downs)")
        return frozenset()
    if isinstance(needs, str) or not all(isinstance(n, str) for n in needs):
        raise ValueError(f"policy {policy_name(policy)!r}: needs must be a set of names from {sorted(NEEDS)}, "
                         f"got {needs!r}")
    needs = frozenset(needs)
    unknown = needs - NEEDS
    if unknown:
        raise ValueError(f"policy {policy_name(policy)!r} needs {sorted(unknown)}, which no driver supplies; "
                         f"policies may need {sorted(NEEDS)}")
    return needs


def as_policy(policy: Any) -> Policy:
    """``policy`` with an ``act`` method: an object that has one is returned as it is (after
    checking its ``needs``), a plain callable ``f(obs, mask)`` is wrapped in a
    :class:`FunctionPolicy`. ValueError for anything else."""
    if callable(getattr(policy, "act", None)):
        needs_of(policy)
        return policy
    if callable(policy):
        return FunctionPolicy(policy)
    if isinstance(policy, str):  # the library never imports a bot, so it cannot build one from its name
        raise ValueError(f"{policy!r} is a bot's name, not a policy: build the bot first, e.g. "
                         f"startups_env.agents.make_agent({policy!r}, seed=0) (run_arena and the command lines "
                         "take names themselves)")
    raise ValueError(f"a policy must have an act(obs, mask) method or be a callable f(obs, mask), "
                     f"got {type(policy).__name__} {policy!r}")


def check_act_inputs(obs, mask, num_actions: int = NUM_ACTIONS) -> tuple[np.ndarray, np.ndarray]:
    """Validate the arguments of a policy's ``act``; returns them as float32[B, D] and
    bool[B, A] (A = ``num_actions``, *Startups*' 19 by default). One game may come as the
    PettingZoo env gives it, obs[D] and an int8 (or bool) mask[A]; it is returned as a
    batch of one (the policy then returns int[1], which the env's ``step`` accepts).
    Integer masks must hold only 0 and 1."""
    obs = np.asarray(obs)
    mask = np.asarray(mask)
    if obs.ndim == 1 and mask.ndim == 1:  # one game
        obs, mask = obs[None], mask[None]
    if obs.ndim != 2:
        raise ValueError(f"obs must be float32[B, OBS_DIM] (or [OBS_DIM] for one game), got shape {list(obs.shape)}")
    if mask.ndim != 2 or mask.shape != (obs.shape[0], num_actions):
        raise ValueError(f"mask must be bool[{obs.shape[0]}, {num_actions}], got {mask.dtype} {list(mask.shape)}")
    if mask.dtype != bool:
        # The env's int8 mask; a float or a 2 would be a caller's bug, not a mask.
        if mask.dtype.kind not in "iu" or np.count_nonzero((mask != 0) & (mask != 1)):
            raise ValueError(f"mask must be bool (or integer 0/1) [{obs.shape[0]}, {num_actions}], got {mask.dtype}"
                             + ("" if mask.dtype.kind not in "iu" else " with values other than 0 and 1"))
        mask = mask.astype(bool)
    if not mask.any(axis=1).all():
        bad = np.flatnonzero(~mask.any(axis=1))
        raise ValueError(f"mask rows {bad[:10].tolist()} have no legal action (finished games must not be passed)")
    # Deliberately no NaN/inf test of obs: it would read all B x OBS_DIM values (about 1-2 us
    # at B=1, 70-110 us at B=4096 measured), several times the cost of the checks above and
    # 5-20% of the random bot's whole act; observe() never produces them.
    return obs.astype(np.float32, copy=False), mask
