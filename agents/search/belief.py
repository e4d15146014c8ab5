"""A learned hand belief: a network that reads, from what one seat may see, the companies of
the other seats' hidden hand cards, for the search's world drawing
(``SearchConfig.belief``; trained by :mod:`startups_env.train.belief`).

**Input** (:func:`belief_inputs`): the seat's observation
(:func:`~startups_env.startups.observe.observe`) and, for each other relative seat 1..6,
what the table's :class:`~startups_env.startups.history.History` says of it this round:
its latest put-down and the one before (one-hots of the 12 put-downs), the take of the
latest put-down's turn (one-hot of the 7 takes), its older put-downs of the round
(counts per put-down), and how many of its hand cards are hidden (one-hot 0..3). All of
it is public or the seat's own: dealing the hidden cards anew leaves it unchanged.

**Output**: per other relative seat, a per-card *evidence* ``e[r, c]``: each hidden
composition ``n`` (counts per company, one of
:data:`~startups_env.agents.search.worlds.COMPOSITIONS`) of that seat gets the log-chance

    log_deal(n) + sum_c n_c * e[r, c]        (normalised over the compositions)

where ``log_deal`` is its chance in a uniform deal from the unseen cards (card counting).
So ``e`` is the network's evidence beyond counting, a log-likelihood ratio per card, and
``e = 0`` is card counting exactly (the output layer starts at zero). A network over the
``"reading"`` base (:data:`BASES`) puts the search's hand reading (its posterior,
:func:`~.inference.hand_posteriors`) in the place of ``log_deal``, and gets the reading's
expected cards per other seat and company as inputs too: it learns what the reading
misses or over-trusts, and ``e = 0`` is the reading. The form is the one
the search weighs its hand hypotheses with (:func:`~.inference.hand_hypotheses` adds it to
``log_deal`` where the hand reading adds the put-downs' likelihood), and the network is
fitted to it: the loss is the log-chance of each seat's true composition under exactly
this distribution (:func:`composition_log_probs`). Six numbers per seat rather than 56
keep the head small and tie the compositions together (a seat that likely holds two
giraffes likely holds one).

Checkpoints are weights only (``torch.load(..., weights_only=True)``): :func:`load_belief`
refuses anything else with a ValueError.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import torch
from torch import nn

from startups_env.startups import queries
from startups_env.startups.history import History
from startups_env.startups.observe import OBS_DIM, observe
from startups_env.startups.rules import HAND_SIZE, MAX_PLAYERS, NUM_COMPANIES, Action
from startups_env.startups.state import State, hidden_hand_counts

from .worlds import COMPOSITION_VALID, COMPOSITIONS, LOG_FACTORIAL, composition_evidence, composition_posterior

P, C = MAX_PLAYERS, NUM_COMPANIES
OTHERS = P - 1  # relative seats 1..6
PUT_DOWNS = 2 * C  # keep or market, per company: actions KEEP..KEEP+11
TAKES = 1 + C  # draw, or a market take per company
SEAT_FEATURES = 3 * PUT_DOWNS + TAKES + HAND_SIZE + 1
INPUT_DIM = OBS_DIM + OTHERS * SEAT_FEATURES
#: What the network's evidence multiplies: card counting (the deal's chance), or the
#: search's hand reading (its posterior), whose expected cards per other seat and company
#: are then inputs too.
BASES = ("counting", "reading")
FORMAT = "startups_env.hand_belief"
FORMAT_VERSION = 1


def belief_inputs(public: State, seat: np.ndarray, log: History) -> np.ndarray:
    """float32[n, INPUT_DIM]: the network's input for ``seat`` (int[n]) in the n games of
    ``public`` (a public state seen by ``seat``, or the full state: the same input) with
    their History ``log`` (see the module docstring)."""
    n = public.batch_size
    seat = np.asarray(seat, np.intp)
    absolute, present = queries.absolute_seats(seat, public.num_players)  # [P, n]
    others, games = absolute[1:], np.arange(n)[None, :]
    present = present[1:]
    latest = log.valid(public)[others, games] & present  # [6, n]
    earlier = latest & log.earlier_valid()[others, games]
    seat_part = np.zeros((OTHERS, n, SEAT_FEATURES), np.float32)
    rows_r, rows_g = np.nonzero(latest)
    seat_part[rows_r, rows_g, log.action[others, games][latest] - Action.KEEP] = 1.0
    rows_r, rows_g = np.nonzero(earlier)
    seat_part[rows_r, rows_g, PUT_DOWNS + log.earlier_action[others, games][earlier] - Action.KEEP] = 1.0
    took = latest & (log.take_action[others, games] >= 0)
    rows_r, rows_g = np.nonzero(took)
    seat_part[rows_r, rows_g, 3 * PUT_DOWNS + log.take_action[others, games][took]] = 1.0
    older = log.older_valid(public)[:, others, games] & present[None]  # [OLDER, 6, n]
    slot, rows_r, rows_g = np.nonzero(older)
    np.add.at(seat_part, (rows_r, rows_g, 2 * PUT_DOWNS + log.older_action[:, others, games][older] - Action.KEEP), 1.0)
    need = _hidden_counts(public, seat)[others, games]  # [6, n]
    rows_r, rows_g = np.nonzero(present)
    seat_part[rows_r, rows_g, 3 * PUT_DOWNS + TAKES + need[present]] = 1.0
    return np.concatenate([observe(public, seat), seat_part.transpose(1, 0, 2).reshape(n, -1)], axis=1)


def _hidden_counts(state: State, seat: np.ndarray) -> np.ndarray:
    """int64[7, n]: :func:`~startups_env.startups.state.hidden_hand_counts` of ``state``
    seen by ``seat``, whether ``state`` is the full state or a public one (whose other
    hands hold just their known cards): a hand's size less its publicly known cards."""
    known_beyond_public = state.hand.sum(axis=1, dtype=np.int64) - state.known.sum(axis=1, dtype=np.int64)
    seats = np.arange(P)[:, None]
    others = (seats != seat[None, :]) & (seats < state.num_players[None, :])
    return np.where(others, hidden_hand_counts(state, seat) + known_beyond_public, 0)


def input_width(base: str) -> int:
    """The network's input width over ``base``: the reading's expected cards come on top."""
    return INPUT_DIM + (OTHERS * C if base == "reading" else 0)


def absolute_to_relative(values: np.ndarray, seat: np.ndarray, num_players: np.ndarray) -> np.ndarray:
    """float[n, 6, K]: ``values`` (float[7, n, K], by absolute seat) by relative seat 1..6 of
    ``seat`` (int[n]); 0 for the empty seats."""
    absolute, present = queries.absolute_seats(np.asarray(seat, np.intp), num_players)
    rows = values[absolute[1:], np.arange(values.shape[1])[None, :]]  # [6, n, K]
    return np.where(present[1:, :, None], rows, 0).transpose(1, 0, 2)


def relative_to_absolute(values: np.ndarray, seat: np.ndarray, num_players: np.ndarray) -> np.ndarray:
    """float[7, n, C]: per absolute seat, the rows of ``values`` (float[n, 6, C], by
    relative seat 1..6 of ``seat`` int[n]); 0 for ``seat`` itself and the empty seats."""
    n = values.shape[0]
    absolute, present = queries.absolute_seats(np.asarray(seat, np.intp), num_players)
    out = np.zeros((P, n, values.shape[2]))
    rows_r, rows_g = np.nonzero(present[1:])
    out[absolute[1:][rows_r, rows_g], rows_g] = values[rows_g, rows_r]
    return out


class BeliefNet(nn.Module):
    """The belief network: inputs scaled per column (``scale``, fixed from the training
    data), an MLP, and the evidence ``e`` float[n, 6, C] (see the module docstring) that
    multiplies ``base``'s distribution (:data:`BASES`)."""

    def __init__(self, hidden: list[int], scale: torch.Tensor | None = None, base: str = "counting"):
        super().__init__()
        if base not in BASES:
            raise ValueError(f"base must be one of {BASES}, got {base!r}")
        self.hidden, self.base = list(hidden), base
        self.register_buffer("scale", torch.ones(input_width(base)) if scale is None else scale.float())
        layers, width = [], input_width(base)
        for size in self.hidden:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        last = nn.Linear(width, OTHERS * C)
        nn.init.zeros_(last.weight)  # starts as card counting
        nn.init.zeros_(last.bias)
        self.body = nn.Sequential(*layers, last)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x * self.scale).view(-1, OTHERS, C)


def composition_log_probs(evidence: torch.Tensor, pool: torch.Tensor, need: torch.Tensor,
                          base: torch.Tensor | None = None) -> torch.Tensor:
    """float[n, 6, 56]: the normalised log-chance of each composition of each other
    relative seat's ``need`` (int[n, 6]) hidden cards: its deal from ``pool`` (int[n, C],
    the unseen cards), or ``base`` (float[n, 6, 56], the hand reading's log-chances) where
    given, times ``exp(n . evidence)`` (``evidence`` float[n, 6, C]); -inf for the
    impossible ones. A seat with no hidden cards has the one empty composition."""
    comps = torch.as_tensor(COMPOSITIONS, device=pool.device)[need]  # [n, 6, 56, C]
    valid = torch.as_tensor(COMPOSITION_VALID, device=pool.device)[need]  # [n, 6, 56]
    have = pool[:, None, None, :].expand_as(comps)
    possible = valid & (comps <= have).all(dim=-1)
    if base is None:
        log_factorial = torch.as_tensor(LOG_FACTORIAL, dtype=evidence.dtype, device=pool.device)
        # log C(pool_c, n_c) summed over the companies (the deal's denominator is the same for all)
        base = (log_factorial[have] - log_factorial[comps] - log_factorial[(have - comps).clamp(min=0)]).sum(-1)
    else:
        possible &= torch.isfinite(base)
    scores = base + (comps.to(evidence.dtype) * evidence[:, :, None, :]).sum(-1)
    scores = scores.masked_fill(~possible, float("-inf"))
    return torch.log_softmax(scores, dim=-1)


class HandBelief:
    """A loaded belief network, for the search and the measurement."""

    def __init__(self, net: BeliefNet, path: str = ""):
        self.net = net.eval()
        self.path = path

    @property
    def base(self) -> str:
        return self.net.base

    def relative_evidence(self, public: State, seat: np.ndarray, log: History,
                          reading: np.ndarray | None = None) -> np.ndarray:
        """float64[n, 6, C]: the evidence per other relative seat and company; ``reading``
        (float[7, n, C], the hand reading's expected hidden cards per absolute seat) is
        required over the reading base."""
        x = belief_inputs(public, seat, log)
        if self.base == "reading":
            if reading is None:
                raise ValueError("this belief network refines the hand reading: pass its expected cards (reading=)")
            x = np.concatenate([x, absolute_to_relative(reading, seat, public.num_players).reshape(len(x), -1)],
                               axis=1).astype(np.float32)
        with torch.no_grad():
            return self.net(torch.from_numpy(x)).double().numpy()

    def composition_scores(self, public: State, seat: np.ndarray, log: History, need: np.ndarray,
                           log_deal: np.ndarray, posterior: np.ndarray) -> np.ndarray:
        """float[7, n, 56]: each other seat's compositions scored as the network says: the
        base's log-chance (``log_deal``, or the hand reading's ``posterior``, both
        float[7, n, 56] as :func:`~.inference.hand_posteriors` gives them) plus the
        evidence of its cards (``need`` int[7, n] hidden cards per seat)."""
        reading = None
        if self.base == "reading":
            reading = composition_posterior(posterior, need)[1]
        evidence = relative_to_absolute(self.relative_evidence(public, seat, log, reading), seat, public.num_players)
        return (log_deal if self.base == "counting" else posterior) + composition_evidence(evidence, need)


def checkpoint(net: BeliefNet, **extra) -> dict:
    """The checkpoint dict of ``net`` (weights and settings only), with ``extra`` plain data."""
    return {"format": FORMAT, "version": FORMAT_VERSION,
            "config": {"hidden": net.hidden, "input_dim": input_width(net.base), "base": net.base},
            "model": {k: v.detach().cpu() for k, v in net.state_dict().items()}, **extra}


def net_from_checkpoint(data, path: str = "the checkpoint") -> BeliefNet:
    """The :class:`BeliefNet` a :func:`checkpoint` dict holds; ValueError naming what is wrong."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path} is not a hand-belief checkpoint (no format={FORMAT!r} key)")
    if data.get("version") != FORMAT_VERSION:
        raise ValueError(f"{path} has hand-belief version {data.get('version')!r}; this code reads {FORMAT_VERSION}")
    config = data.get("config")
    base = config.get("base", "counting") if isinstance(config, dict) else None  # (first files: counting)
    if base not in BASES:
        raise ValueError(f"{path}: its base must be one of {BASES}, got {base!r}")
    if config.get("input_dim") != input_width(base):
        raise ValueError(f"{path} was trained on inputs of another width than this code's {input_width(base)}")
    hidden = config.get("hidden")
    if not isinstance(hidden, list) or not hidden or not all(isinstance(h, int) and h > 0 for h in hidden):
        raise ValueError(f"{path}: bad hidden widths {hidden!r}")
    net = BeliefNet(hidden, base=base)
    try:
        net.load_state_dict(data["model"])
    except (KeyError, RuntimeError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path}: its weights do not fit the belief network ({type(exc).__name__}: {exc})") from exc
    return net.eval()


def load_belief(path) -> HandBelief:
    """The belief network saved at ``path`` (weights only); a ValueError where the file is
    missing, unreadable, holds pickled objects, or is not a hand-belief checkpoint."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"belief must be the path of a hand-belief checkpoint, got {path!r}")
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"belief: no file at {path!r} (train one: python -m startups_env.train.belief --out DIR)")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise ValueError(f"{path} is not a weights-only checkpoint: not a file torch.save wrote, or one that holds "
                         f"pickled objects besides weights and settings (not loaded: they could run code)") from exc
    except Exception as exc:  # torch raises RuntimeError, EOFError, ... by what is wrong with the bytes
        raise ValueError(f"{path} is not a readable checkpoint: not written by torch.save, or corrupt or truncated "
                         f"(torch.load raised {type(exc).__name__})") from exc
    return HandBelief(net_from_checkpoint(data, path), path)
