"""The PPO policy: its network (shared with ``train/selfplay.py``), the agent that plays
it, and the checkpoint loader.

    agent = make_agent("ppo")                       # the shipped weights (agents/weights/)
    agent = make_agent("ppo:runs/selfplay/policy.pt", deterministic=False)

**Checkpoints are data**: a dict of tensors, ints, floats, strings, lists and dicts, read
with ``torch.load(path, weights_only=True)`` (no code runs on load). Keys:

* ``format`` = ``"startups-ppo"``, ``version`` = 1;
* ``config``: ``obs_dim``, ``num_actions``, ``hidden`` (list of layer widths),
  ``features`` (whether the derived features of :func:`derived_features` are computed
  and fed in beside the observation), ``greedy_prior`` (whether the greedy bot's action
  scores are inputs and part of the logits; absent in older files: no), ``critic_extra``
  (training-only critic inputs, see :class:`ActorCritic`), ``belief`` (whether the network
  has a hand-belief head; absent in older files: no) and ``obs_layout`` (the
  observation pieces as ``"name:size,..."``), checked against this build of
  ``startups_env`` so a policy trained on another observation fails loudly;
* ``model``: the :class:`ActorCritic` state dict;
* training checkpoints add ``args``, ``rules``, ``global_step``, ``optimizer``, ``pool``,
  generator states, ... (see ``train/selfplay.py``); the loader ignores them.
"""

from __future__ import annotations

import itertools
import os
import pickle
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from startups_env.startups.observe import OBS_DIM, PIECES, SLICES
from startups_env.startups.rules import MAX_PLAYERS, NUM_ACTIONS, NUM_COMPANIES
from startups_env.table.games import DEFAULT_GAME, game_by_name

from .base import Agent, check_act_inputs
from .features import features as parse_features
from .greedy import greedy_scores

FORMAT = "startups-ppo"
FORMAT_VERSION = 1
#: The shipped policy, loaded by ``make_agent("ppo")``.
DEFAULT_WEIGHTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "weights", "ppo_startups.pt")
#: The shipped policy of each game (``make_agent("ppo", game=...)``).
SHIPPED_WEIGHTS = {"startups": DEFAULT_WEIGHTS,
                   "startap": os.path.join(os.path.dirname(DEFAULT_WEIGHTS), "ppo_startap.pt")}
#: The network of expert iteration (:mod:`startups_env.train.exit`), loaded by ``make_agent("exit")``.
EXIT_WEIGHTS = os.path.join(os.path.dirname(DEFAULT_WEIGHTS), "exit_startups.pt")
#: Observation layout signature stored in checkpoints: the declared pieces, in order.
OBS_LAYOUT = game_by_name(DEFAULT_GAME).obs_layout


class CheckpointError(ValueError):
    """A file that is not a usable PPO checkpoint (corrupt, truncated, wrong format, or
    trained for another observation layout)."""


#: The network's input divisor per observation piece (pieces not named: 1). Observations are
#: raw counts; these keep card counts, coins, pile and turn within a few units. They are
#: fixed numbers, not the observation's bounds (which follow the Rules): the shipped weights
#: and every checkpoint were trained with exactly these (once the declared bounds capped at 20).
INPUT_DIVISORS = {"hand": 10, "portfolios": 10, "known_hands": 10, "coins": 20, "market_cards": 10,
                  "market_coins": 20, "take_coins": 20, "pile": 20, "unseen": 10, "turn": 20, "round_points": 8}


def obs_scale() -> np.ndarray:
    """float32[OBS_DIM]: per-feature input scale, 1 / :data:`INPUT_DIVISORS`."""
    divisor = np.concatenate([np.full(p.size, INPUT_DIVISORS.get(p.name, 1), np.float32) for p in PIECES])
    return (1.0 / divisor).astype(np.float32)


NUM_DERIVED = 9 * NUM_COMPANIES


def bounds_scale(game: str, obs_dim: int) -> np.ndarray:
    """float32[obs_dim]: the input scale of a network of another game (or size): the game's
    own (``Game.input_scale``), else one over each feature's largest magnitude at the
    game's usual table (1 where it is 0 or unbounded, or where the size is not the game's)."""
    record = game_by_name(game)
    if obs_dim != record.obs_dim:
        return np.ones(obs_dim, np.float32)
    if record.input_scale is not None:
        return record.input_scale()
    low, high = record.observation_bounds(record.default_rules(), None)
    largest = np.maximum(np.abs(low), np.abs(high))
    largest = np.where(np.isfinite(largest) & (largest > 0), largest, 1.0)
    return (1.0 / largest).astype(np.float32)


def derived_features(obs: torch.Tensor) -> torch.Tensor:
    """float[B, 54]: per-company quantities the payout turns on, computed from the raw
    observation [B, OBS_DIM] (so a checkpoint stays weights only). An MLP can learn them,
    but slowly: "the most cards among six other seats" is a max over seats, and the
    payout compares it with my own cards. Per company c (each block of 6, scaled to a few
    units):

    mine (hand + portfolio), the most any other seat is known to hold (portfolio + hand
    cards known from the market), the margin between the two, its sign, the other seats'
    known total (what a sole leader collects), my portfolio lead over the best other
    portfolio (what the anti-monopoly chip follows), cards unseen, and whether I / another
    seat hold the chip.
    """
    p, c = MAX_PLAYERS, NUM_COMPANIES
    hand = obs[:, SLICES["hand"]]
    port = obs[:, SLICES["portfolios"]].reshape(-1, p, c)
    known = obs[:, SLICES["known_hands"]].reshape(-1, p, c)
    chips = obs[:, SLICES["chips"]].reshape(-1, c, p)
    mine = hand + port[:, 0]
    others = port[:, 1:] + known[:, 1:]
    # amax, not max(dim): max also finds the indices, on a thread pool that costs a single
    # decision milliseconds whenever the cores are busy.
    best_other = torch.amax(others, dim=1)
    margin = mine - best_other
    port_lead = port[:, 0] - torch.amax(port[:, 1:], dim=1)
    blocks = [mine / 5, best_other / 5, margin / 3, torch.sign(margin), others.sum(dim=1) / 10, port_lead / 3,
              obs[:, SLICES["unseen"]] / 5, chips[:, :, 0], chips[:, :, 1:].sum(dim=2)]
    return torch.cat(blocks, dim=1)


#: The hand-belief head's outputs: cards per company in each other seat's hand, by relative
#: seat 1..6 (the ``hands`` piece of the hidden observation less the observer's own row).
BELIEF_DIM = (MAX_PLAYERS - 1) * NUM_COMPANIES


#: How far below the greedy bot's best action its prior scores reach (in coin-like units).
PRIOR_FLOOR = 5.0


def greedy_prior(obs: torch.Tensor) -> torch.Tensor:
    """float[B, 19]: the ``greedy`` bot's score of every action relative to its best one,
    clipped to [-PRIOR_FLOOR, 0] (actions it never plays, e.g. of the other phase, sit at
    the floor). Computed from the observation alone by :func:`startups_env.agents.greedy.greedy_scores`,
    so a checkpoint using it stays weights only."""
    scores = greedy_scores(parse_features(obs.detach().cpu().numpy()))  # [19, B], -inf where unplayable
    scores = np.where(np.isfinite(scores), scores, -1e9)
    relative = np.maximum(scores - scores.max(axis=0), -PRIOR_FLOOR)
    return torch.from_numpy(np.ascontiguousarray(relative.T, dtype=np.float32)).to(obs.device)


def _mlp(sizes: list[int], out: int, out_gain: float, generator: torch.Generator | None) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(sizes):
        layers += [_linear(a, b, np.sqrt(2), generator), nn.ReLU()]
    layers.append(_linear(sizes[-1], out, out_gain, generator))
    return nn.Sequential(*layers)


def _linear(a: int, b: int, gain: float, generator: torch.Generator | None) -> nn.Linear:
    layer = nn.Linear(a, b)
    nn.init.orthogonal_(layer.weight, gain, generator=generator)  # CleanRL's initialisation
    nn.init.zeros_(layer.bias)
    return layer


class ActorCritic(nn.Module):
    """Separate actor and critic MLPs (ReLU) over the scaled observation.

    ReLU rather than CleanRL's tanh: on the CPU builds of torch used here tanh costs about
    20x a ReLU and more than the matrix product itself at width 128.

    With ``greedy_prior`` the network starts from the ``greedy`` bot rather than from
    uniform play: the greedy bot's relative action scores (:func:`greedy_prior`) are fed
    in beside the observation, and the actor's logits are ``prior_weight *`` those scores
    plus the MLP's output, with ``prior_weight`` a learned scalar (initially
    ``prior_init``). The MLP's last layer starts near zero, so the untrained policy's most
    likely action is the greedy bot's, and PPO learns where to depart from it.

    With ``belief`` a third MLP predicts the hidden hands (:data:`BELIEF_DIM` card counts,
    :meth:`belief_counts`), trained on the true hands of recorded games
    (``startups_env.train.exit``); play never reads it.

    ``obs_scale`` is a buffer, so a checkpoint carries its own input normalisation.
    Illegal actions are masked with ``torch.where(mask, logits, finfo.min)``.
    """

    def __init__(self, obs_dim: int = OBS_DIM, hidden: list[int] | tuple[int, ...] = (128, 128),
                 num_actions: int = NUM_ACTIONS, generator: torch.Generator | None = None, features: bool = True,
                 critic_extra: int = 0, greedy_prior: bool = False, prior_init: float = 2.0, belief: bool = False,
                 game: str = DEFAULT_GAME):
        super().__init__()
        hidden = [int(h) for h in hidden]
        if not hidden or min(hidden) < 1:
            raise ValueError(f"hidden must list positive layer widths, got {hidden}")
        self.obs_dim, self.hidden, self.num_actions = int(obs_dim), hidden, int(num_actions)
        self.game = game_by_name(game).name
        # Derived features and the greedy prior read Startups' declared layout; a model of
        # another size or game goes without.
        startups = self.game == DEFAULT_GAME and self.obs_dim == OBS_DIM
        self.features = bool(features) and startups
        # Training-only critic inputs (e.g. hidden hands, the opponent's kind): play never
        # needs the critic, so a policy with a privileged critic still acts from obs alone.
        self.critic_extra = int(critic_extra)
        scale = obs_scale() if startups else bounds_scale(self.game, self.obs_dim)
        self.register_buffer("obs_scale", torch.as_tensor(scale))
        self.greedy_prior = bool(greedy_prior) and startups and self.num_actions == NUM_ACTIONS
        if self.greedy_prior:
            self.prior_weight = nn.Parameter(torch.tensor(float(prior_init)))
        inputs = obs_dim + (NUM_DERIVED if self.features else 0) + (self.num_actions if self.greedy_prior else 0)
        self.actor = _mlp([inputs, *hidden], num_actions, 0.01, generator)
        self.critic = _mlp([inputs + self.critic_extra, *hidden], 1, 1.0, generator)
        self.has_belief = bool(belief) and startups  # (the head predicts Startups' hidden hands)
        if self.has_belief:
            self.belief = _mlp([inputs, *hidden], BELIEF_DIM, 1.0, generator)

    def config(self) -> dict[str, Any]:
        return {"obs_dim": self.obs_dim, "num_actions": self.num_actions, "hidden": list(self.hidden),
                "features": self.features, "critic_extra": self.critic_extra, "greedy_prior": self.greedy_prior,
                "belief": self.has_belief, "obs_layout": game_by_name(self.game).obs_layout, "game": self.game}

    def inputs(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(the network input: the scaled observation, + the derived features, + the
        greedy prior scaled to [-1, 0]; the greedy prior or None)."""
        parts = [obs * self.obs_scale]
        if self.features:
            parts.append(derived_features(obs))
        prior = None
        if self.greedy_prior:
            prior = greedy_prior(obs)
            parts.append(prior / PRIOR_FLOOR)
        return (torch.cat(parts, dim=1) if len(parts) > 1 else parts[0]), prior

    def _actor_logits(self, x: torch.Tensor, prior: torch.Tensor | None) -> torch.Tensor:
        logits = self.actor(x)
        return logits if prior is None else logits + self.prior_weight * prior

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = self._actor_logits(*self.inputs(obs))
        return torch.where(mask, logits, torch.finfo(logits.dtype).min)

    def _critic_input(self, x: torch.Tensor, extra: torch.Tensor | None) -> torch.Tensor:
        if not self.critic_extra:
            return x
        if extra is None or extra.shape[-1] != self.critic_extra:
            raise ValueError(f"this critic needs {self.critic_extra} extra inputs, got "
                             f"{None if extra is None else list(extra.shape)}")
        return torch.cat([x, extra], dim=1)

    def value(self, obs: torch.Tensor, extra: torch.Tensor | None = None) -> torch.Tensor:
        return self.critic(self._critic_input(self.inputs(obs)[0], extra)).squeeze(-1)

    def belief_counts(self, x: torch.Tensor) -> torch.Tensor:
        """float[B, BELIEF_DIM]: the predicted cards per company in each other seat's hand
        (relative seats 1..6, company-minor), from the output of :meth:`inputs`; never
        below 0."""
        if not self.has_belief:
            raise ValueError("this network has no hand-belief head (built without belief=True)")
        return F.softplus(self.belief(x))

    def forward(self, obs: torch.Tensor, mask: torch.Tensor,
                extra: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits [B, A], values [B]); ``extra``: the critic's extra inputs."""
        return self.heads(*self.inputs(obs), mask, extra)

    def heads(self, x: torch.Tensor, prior: torch.Tensor | None, mask: torch.Tensor,
              extra: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`forward` from the output of :meth:`inputs`. The inputs hold no learned
        parameters, so a trainer that passes over the same observations several times can
        compute them (the greedy prior above all) once."""
        logits = self._actor_logits(x, prior)
        value = self.critic(self._critic_input(x, extra)).squeeze(-1)
        return torch.where(mask, logits, torch.finfo(logits.dtype).min), value


def checkpoint_dict(model: ActorCritic, **extra) -> dict[str, Any]:
    """The minimal checkpoint of a model (weights + config); ``extra`` keys are added."""
    return {"format": FORMAT, "version": FORMAT_VERSION, "config": model.config(),
            "model": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}, **extra}


def read_checkpoint(path: str, game: str | None = DEFAULT_GAME) -> dict[str, Any]:
    """Load and validate a checkpoint dict (weights only) of a network that plays ``game``
    (None: the game the checkpoint records, as a training run's ``--resume`` reads it). Raises FileNotFoundError if the file is missing and :class:`CheckpointError` if it is
    not a usable checkpoint."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise CheckpointError(f"{path} is a folder, not a PPO checkpoint file (a training run's policy is "
                              f"{os.path.join(path, 'policy.pt')})")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"PPO checkpoint not found: {path}")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        # torch's own text (ANSI codes, and the advice to load with weights_only=False, which would run
        # whatever code the file holds) stays in the exception's cause.
        raise CheckpointError(
            f"{path} is not a readable PPO checkpoint: it holds pickled Python objects besides tensors and plain "
            "data (a whole nn.Module saved with torch.save(model)?), which are not loaded because loading them "
            "could run code; a checkpoint holds weights and settings only (startups_env.agents.ppo.checkpoint_dict)"
        ) from exc
    except Exception as exc:  # torch raises RuntimeError, EOFError, KeyError, ... by what is wrong with the bytes
        raise CheckpointError(
            f"{path} is not a readable PPO checkpoint: not a file torch.save wrote, or a corrupt or truncated one "
            f"(torch.load raised {type(exc).__name__})"
        ) from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a {FORMAT} checkpoint (no format={FORMAT!r} key)")
    if data.get("version") != FORMAT_VERSION:
        raise CheckpointError(f"{path} has checkpoint version {data.get('version')!r}; this code reads {FORMAT_VERSION}")
    config = data.get("config")
    if not isinstance(config, dict) or not isinstance(data.get("model"), dict):
        raise CheckpointError(f"{path} lacks the 'config' or 'model' entry")
    check_game(config, path, game_by_name(config.get("game", DEFAULT_GAME) if game is None else game))
    return data


def check_game(config: dict, path: str, game) -> None:
    """CheckpointError unless the network of ``config`` was trained on ``game``, with its
    observation size, layout and action count (a checkpoint without a game is *Startups*')."""
    trained = config.get("game", DEFAULT_GAME)
    if trained != game.name:
        raise CheckpointError(f"{path} was trained on the game {trained!r}, not {game.name!r}")
    if config.get("obs_dim") != game.obs_dim or config.get("num_actions") != game.num_actions:
        raise CheckpointError(
            f"{path} was trained for obs_dim={config.get('obs_dim')}, num_actions={config.get('num_actions')}; "
            f"this startups_env has obs_dim={game.obs_dim}, num_actions={game.num_actions} ({game.title})"
        )
    if config.get("obs_layout") != game.obs_layout:
        raise CheckpointError(
            f"{path} was trained on another observation layout:\n  checkpoint: {config.get('obs_layout')}\n"
            f"  this build: {game.obs_layout}"
        )


def model_from_checkpoint(data: dict[str, Any], path: str = "<checkpoint>") -> ActorCritic:
    """Build the :class:`ActorCritic` of a validated checkpoint dict."""
    config = data["config"]
    try:
        model = ActorCritic(config["obs_dim"], config["hidden"], config["num_actions"],
                            features=bool(config.get("features", False)),
                            critic_extra=int(config.get("critic_extra", 0)),
                            greedy_prior=bool(config.get("greedy_prior", False)),
                            belief=bool(config.get("belief", False)), game=config.get("game", DEFAULT_GAME))
        model.load_state_dict(data["model"])
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{path}: weights do not match the declared network {config}: {exc}") from exc
    broken = [name for name, tensor in model.state_dict().items() if not bool(torch.isfinite(tensor).all())]
    if broken:
        raise CheckpointError(f"{path}: non-finite (NaN or infinite) weights in {', '.join(broken)}; "
                              "the run that wrote it diverged")
    model.eval()
    return model


class PPOAgent(Agent):
    """Plays a trained :class:`ActorCritic`: the most likely legal action
    (``deterministic=True``, default) or one sampled from the policy (with the agent's
    own seeded generator, Gumbel-max over the masked logits)."""

    name = "ppo"

    def __init__(self, model: ActorCritic, *, seed: int | None = None, deterministic: bool = True,
                 name: str | None = None):
        super().__init__(seed)
        if not isinstance(model, ActorCritic):
            raise ValueError(f"model must be an startups_env.agents.ppo.ActorCritic, got {type(model).__name__}")
        self.model = model
        self.deterministic = bool(deterministic)
        if name is not None:
            self.name = name

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """float32[B, 19] masked logits (illegal actions at float32 min)."""
        obs, mask = check_act_inputs(obs, mask, self.model.num_actions)
        if obs.shape[1] != self.model.obs_dim:
            raise ValueError(f"obs must have {self.model.obs_dim} features, got {obs.shape[1]}")
        with torch.inference_mode():
            return self.model.masked_logits(torch.from_numpy(obs), torch.from_numpy(mask)).numpy()

    def act(self, obs, mask, *, public=None, history=None):
        logits = self.logits(obs, mask)
        if not self.deterministic:
            gumbel = -np.log(-np.log(self.rng.random(logits.shape, dtype=np.float32) + 1e-20) + 1e-20)
            logits = np.where(np.asarray(mask, bool), logits + gumbel, logits)
        return logits.argmax(axis=1).astype(np.int64)


def load_ppo_agent(path: str | None = None, seed: int | None = None, *, deterministic: bool = True,
                   name: str | None = None, game: str = DEFAULT_GAME) -> PPOAgent:
    """A :class:`PPOAgent` from a checkpoint file (None: the game's shipped weights,
    :data:`SHIPPED_WEIGHTS`, ``agents/weights/ppo_<game>.pt``) of a network that plays ``game``. Training
    checkpoints and exported policies both load. Raises FileNotFoundError /
    :class:`CheckpointError` with the reason."""
    game = game_by_name(game).name
    shipped = path is None
    if shipped:
        path = SHIPPED_WEIGHTS[game]
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"the shipped PPO weights are missing ({path}); train some with "
                "`python -m startups_env.train.selfplay --out runs/x` and use 'ppo:runs/x/policy.pt'"
            )
    data = read_checkpoint(path, game)
    model = model_from_checkpoint(data, path)
    return PPOAgent(model, seed=seed, deterministic=deterministic,
                    name=name or ("ppo" if shipped else f"ppo:{os.path.basename(path)}"))
