"""Train the hand-belief network the search can draw its worlds from
(:mod:`startups_env.agents.search.belief`; ``search[belief=PATH]``), and measure it
against card counting and the search's hand reading on held-out games.

    python -m startups_env.train.belief --out runs/belief --games 50000 --epochs 4   # ~20 minutes
    python -m startups_env.train.belief --out runs/belief_reading --base reading --games 10000 --seed 2
    python -m startups_env.agents.arena --agents 'search[belief=runs/belief_reading/belief.pt]',greedy,greedy,greedy --players 4

**Data.** Bot games of the ladder's styles at table sizes ``--players``: a share
``--greedy-share`` of the tables is all greedy bots (what the search meets in its target
evaluation), every seat of the others plays a style drawn from
:data:`~startups_env.agents.ladder.STYLES`. At a sample (``--sample``) of all decisions,
from the view of the seat to act, the record holds the network's input
(:func:`~startups_env.agents.search.belief.belief_inputs`: the seat's observation and what
the table's History says of each other seat), the unseen cards, how many hand cards of
each other relative seat are hidden, and their true companies (the hidden part of
:func:`~startups_env.startups.observe.hidden_observation`'s hands). No search is needed,
so the data is cheap. With ``--base reading`` the network refines the search's hand
reading instead of card counting: each record also holds the reading's distribution
(:func:`hand_reading`, the default SearchConfig), which costs some 2 ms a position.
Shards of ``--shard-games`` games (``OUT/data/shard_NNNN.npz``,
written atomically; shard k seeded from (seed, k)); shards already there are kept, so an
interrupted run continues where it stopped.

**Fit.** The log-chance of each other seat's true hidden composition under the belief's
composition distribution (its base times the network's per-card evidence), Adam with
a linearly decaying learning rate; the last shard is held out and its loss printed per
epoch. The fit's state is saved after every epoch (``OUT/train_state.pt``, atomically) and
a rerun resumes from it; the result is ``OUT/belief.pt`` (weights only).

**Measurement** (:func:`measure`, ``--measure-games``): fresh games (another seed), at
4 players with greedy bots and at 3-7 players with mixed styles; per method the mean
absolute error of the expected hidden cards per (other seat, company) entry, and the
mean log-likelihood of a seat's true hidden composition: card counting, the search's hand
reading (:func:`~startups_env.agents.search.inference.hand_posteriors` with the default
SearchConfig), and the network.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import torch

from startups_env.agents.ladder import STYLES
from startups_env.agents.registry import build_agent
from startups_env.agents.search import belief as belief_net
from startups_env.agents.search.backends import search_backend
from startups_env.agents.search.config import SearchConfig
from startups_env.agents.search.inference import hand_posteriors
from startups_env.agents.search.worlds import COMPOSITION_VALID, COMPOSITIONS, composition_posterior
from startups_env.startups import queries
from startups_env.startups.history import History
from startups_env.startups.observe import OBS_DIM, hidden_observation, views
from startups_env.startups.rules import MAX_PLAYERS, NUM_COMPANIES, Rules
from startups_env.startups.simulator import Simulator
from startups_env.startups.state import State, hidden_hand_counts, public_state
from startups_env.table import act_for_seats
from startups_env.tools.cli import (
    PLAYERS_FORMS,
    add_progress_argument,
    add_traceback_argument,
    players_arg,
    prog,
    report_error,
)

from .common import atomic_save, derived_seed, git_revision, hidden_sizes
from . import distill
from .distill import OTHER_HANDS, save_shard

P, C = MAX_PLAYERS, NUM_COMPANIES
OTHERS = P - 1
SHARD_KEYS = ("inputs", "pool", "need", "hidden", "greedy_table")
METHODS = ("counting", "hand reading", "network")


def play_positions(games: int, players: tuple[int, ...], greedy_share: float, sample: float, seed: int, visit,
                   turn_cap: int = 400) -> None:
    """Play ``games`` bot games (table sizes drawn from ``players``; a share
    ``greedy_share`` of them all greedy, every seat of the others a style drawn from the
    ladder's) and call ``visit(state, log, games, greedy_table)`` at a sample (each
    running game with chance ``sample``) of the decisions, before they are played:
    ``games`` int[k] the sampled games, ``log`` the History of all of them,
    ``greedy_table`` bool[B] the all-greedy games."""
    rng = np.random.default_rng(seed)
    sizes = rng.choice(np.asarray(players), games)
    sim = Simulator(Rules(num_players=max(players), turn_cap=turn_cap), games, num_players=sizes,
                    seed=np.random.default_rng(rng.integers(1 << 62)))
    agents = [build_agent(name, seed=int(rng.integers(1 << 31))) for name in STYLES]
    greedy_table = rng.random(games) < greedy_share
    assignment = np.where(greedy_table[:, None], STYLES.index("greedy"), rng.integers(0, len(STYLES), (games, P)))
    log = History(games)
    while not sim.done.all():
        state = sim.state
        chosen = np.flatnonzero(~state.done & (rng.random(games) < sample))
        if chosen.size:
            visit(state, log, chosen, greedy_table)
        sim.step(act_for_seats(sim, agents, assignment, history=log))


def record_positions(state: State, log: History, games: np.ndarray,
                     reading: np.random.Generator | None = None) -> dict[str, np.ndarray]:
    """The records of the seat to act in ``games`` (int[k]) of ``state``: ``inputs``
    int16[k, INPUT_DIM], ``pool`` int8[k, C] (the unseen cards), ``need`` int8[k, 6]
    (hidden hand cards per other relative seat) and ``hidden`` int8[k, 6, C] (their true
    companies). With ``reading`` (the generator the hand reading draws from), also
    ``reading`` float16[k, 6, 56]: the log-chance of each composition under the search's
    hand reading (default SearchConfig), the base of a network that refines it."""
    sub, seat = state.take(games), state.current[games].astype(np.intp)
    public, sub_log = public_state(sub, seat), log.take(games)
    inputs = belief_net.belief_inputs(public, seat, sub_log)
    k = games.size
    known = views(inputs[:, :OBS_DIM])["known_hands"][:, 1:]  # [k, 6, C] by relative seat
    hands = hidden_observation(sub, seat)[:, OTHER_HANDS].reshape(k, OTHERS, C)
    need = belief_net.absolute_to_relative(hidden_hand_counts(public, seat)[:, :, None], seat, sub.num_players)
    record = {"inputs": inputs.astype(np.int16), "pool": queries.unseen(public, seat).T.astype(np.int8),
              "need": need[:, :, 0].astype(np.int8), "hidden": (hands - known).astype(np.int8)}
    if reading is not None:
        need_abs, log_deal, posterior = hand_reading(public, seat, sub_log, SearchConfig(), reading)
        log_probs = composition_posterior(posterior, need_abs)[0]
        record["reading"] = belief_net.absolute_to_relative(log_probs, seat, sub.num_players).astype(np.float16)
    return record


def hand_reading(public: State, seat: np.ndarray, log: History, config: SearchConfig,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(need int[7, n], log_deal, posterior float[7, n, 56]): the search's hand reading
    (:func:`~startups_env.agents.search.inference.hand_posteriors` with ``config``) of
    the other seats' hidden cards, seen by ``seat`` in the games of ``public``."""
    need = hidden_hand_counts(public, seat)
    pool = queries.unseen(public, seat).astype(np.int64)
    seats = np.arange(P)[:, None]
    others = (seats != seat[None, :]) & (seats < public.num_players[None, :])
    log_deal, posterior, _ = hand_posteriors(public, seat, log, log.valid(public) & others, need, pool, config,
                                             Rules(), search_backend(config.backend), rng)
    return need, log_deal, posterior


def collect_shard(games: int, players: tuple[int, ...], greedy_share: float, sample: float, seed: int,
                  reading: bool = False) -> dict[str, np.ndarray]:
    """One shard of records (:func:`record_positions`, the hand reading's too where
    ``reading``; plus ``greedy_table`` bool[k])."""
    parts: list[dict[str, np.ndarray]] = []
    rng = np.random.default_rng([seed, 2]) if reading else None

    def visit(state, log, chosen, greedy_table):
        parts.append({**record_positions(state, log, chosen, rng), "greedy_table": greedy_table[chosen]})

    play_positions(games, players, greedy_share, sample, seed, visit)
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


def load_shards(paths: list[str], reading: bool = False) -> dict[str, np.ndarray]:
    """The shards' records concatenated (with the hand reading's where ``reading``);
    ValueError naming a file that is not such a shard."""
    return distill.load_shards(paths, SHARD_KEYS + (("reading",) if reading else ()), kind="belief")


def true_composition(need: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
    """int64[n, 6]: the index in ``COMPOSITIONS[need]`` of each seat's true hidden cards
    (``hidden`` int[n, 6, C])."""
    comps = torch.as_tensor(COMPOSITIONS)[need]  # [n, 6, 56, C]
    match = (comps == hidden[:, :, None, :]).all(-1) & torch.as_tensor(COMPOSITION_VALID)[need]
    return match.to(torch.int8).argmax(-1)


def batch_loss(net: belief_net.BeliefNet, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean over the positions of minus the log-chance of the other seats' true hidden
    compositions (summed over the seats)."""
    log_probs = belief_net.composition_log_probs(net(batch["inputs"]), batch["pool"], batch["need"],
                                                 batch.get("base"))
    return -log_probs.gather(2, batch["truth"][:, :, None]).sum(dim=(1, 2)).mean()


def tensors(data: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, torch.Tensor]:
    """The records ``rows`` as a batch: with the hand reading's log-chances (``base``) where
    ``data`` holds them, whose expected cards per seat and company join the inputs."""
    need = torch.from_numpy(data["need"][rows].astype(np.int64))
    hidden = torch.from_numpy(data["hidden"][rows].astype(np.int64))
    batch = {"inputs": torch.from_numpy(data["inputs"][rows].astype(np.float32)),
             "pool": torch.from_numpy(data["pool"][rows].astype(np.int64)), "need": need,
             "truth": true_composition(need, hidden)}
    if "reading" in data:
        base = torch.from_numpy(data["reading"][rows].astype(np.float32))
        comps = torch.as_tensor(COMPOSITIONS, dtype=torch.float32)[need]  # [n, 6, 56, C]
        expected = (torch.exp(base)[..., None] * comps).sum(2)  # [n, 6, C]
        batch["base"] = base
        batch["inputs"] = torch.cat([batch["inputs"], expected.reshape(len(rows), -1)], dim=1)
    return batch


def collect(out: str, games: int, shard_games: int, players: tuple[int, ...], greedy_share: float, sample: float,
            seed: int, reading: bool = False, log=print) -> list[str]:
    """Write the run's shards into ``out``/data (those already there are kept; with the
    hand reading's log-chances where ``reading``) and return their paths."""
    shards = -(-games // shard_games)
    paths = [os.path.join(out, "data", f"shard_{k:04d}.npz") for k in range(shards)]
    tick = time.perf_counter()
    for k, path in enumerate(paths):
        if os.path.exists(path):
            continue
        data = collect_shard(shard_games, players, greedy_share, sample, derived_seed(seed, k), reading)
        save_shard(data, path)
        log(f"shard {k + 1}/{shards}: {data['need'].shape[0]:,} positions, "
            f"{time.perf_counter() - tick:.0f} s since the start")
    return paths


def fit(data: dict[str, np.ndarray], held_out: np.ndarray, hidden: list[int], epochs: int, state_path: str,
        learning_rate: float = 1e-3, batch_size: int = 1024, seed: int = 0, log=print) -> belief_net.BeliefNet:
    """Fit a :class:`~startups_env.agents.search.belief.BeliefNet` to ``data`` (the rows
    not ``held_out``, bool[N]); the held-out loss is printed per epoch through ``log``.
    After every epoch the fit's state is saved at ``state_path`` (atomically); a fit that
    finds one there resumes from it (a finished one returns at once)."""
    train_rows, val_rows = np.flatnonzero(~held_out), np.flatnonzero(held_out)
    if train_rows.size == 0 or val_rows.size == 0:
        raise ValueError("the fit needs training and held-out positions")
    # Each input column scaled by its largest magnitude in the data (fixed, saved with the weights).
    scale = 1.0 / np.maximum(np.abs(data["inputs"][train_rows]).max(axis=0), 1).astype(np.float32)
    base = "reading" if "reading" in data else "counting"
    if base == "reading":  # the reading's expected cards: at most a hand's
        scale = np.concatenate([scale, np.full(OTHERS * C, 1.0 / 3.0, np.float32)])
    net = belief_net.BeliefNet(hidden, torch.from_numpy(scale), base)
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    start = 0
    if os.path.exists(state_path):
        saved = torch.load(state_path, map_location="cpu", weights_only=True)
        net = belief_net.net_from_checkpoint(saved["net"], state_path)
        optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
        optimizer.load_state_dict(saved["optimizer"])
        start = int(saved["epoch"])
        log(f"resumed the fit after epoch {start}")
    rng = np.random.default_rng([seed, start])
    steps_per_epoch = -(-train_rows.size // batch_size)
    val = tensors(data, val_rows)
    if start == 0:
        with torch.no_grad():  # (the untrained network is its base)
            log(f"{'card counting' if base == 'counting' else 'hand reading'}: held-out minus log-likelihood "
                f"{batch_loss(net.eval(), val).item():.4f} nats a position")
    for epoch in range(start, epochs):
        net.train()
        order = rng.permutation(train_rows)
        for step, first in enumerate(range(0, train_rows.size, batch_size)):
            done = (epoch * steps_per_epoch + step) / (epochs * steps_per_epoch)
            for group in optimizer.param_groups:
                group["lr"] = learning_rate * (1.0 - done)
            loss = batch_loss(net, tensors(data, order[first:first + batch_size]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        net.eval()
        with torch.no_grad():
            val_loss = batch_loss(net, val).item()
        log(f"epoch {epoch + 1}/{epochs}: held-out minus log-likelihood {val_loss:.4f} nats a position")
        atomic_save({"net": belief_net.checkpoint(net), "optimizer": optimizer.state_dict(), "epoch": epoch + 1},
                    state_path)
    return net.eval()


def score_beliefs(scores: np.ndarray, need: np.ndarray, truth: np.ndarray, seats: np.ndarray) -> dict[str, float]:
    """How well belief ``scores`` (float[7, n, 56]: each composition of ``need[s, i]``
    hidden cards, ``COMPOSITIONS[need]``, an unnormalised log-chance; -inf where
    impossible) match the ``truth`` (int[7, n, C], the true hidden cards) over the
    ``seats`` (bool[7, n]): sums of the absolute error of the expected cards per (seat,
    company) entry (``abs_error``, over ``entries``) and of the log-chance of the true
    composition (``log_likelihood``, over ``hands``)."""
    comps = COMPOSITIONS[need]  # [7, n, 56, C]
    log_probs, expected = composition_posterior(scores, need)
    is_true = (comps == truth[:, :, None, :]).all(axis=3) & COMPOSITION_VALID[need]
    true_log_prob = np.where(is_true, log_probs, 0.0).sum(axis=2)
    return {"abs_error": float(np.abs(expected - truth)[seats].sum()), "entries": float(seats.sum() * C),
            "log_likelihood": float(true_log_prob[seats].sum()), "hands": float(seats.sum())}


def method_scores(state: State, log: History, games: np.ndarray, belief: belief_net.HandBelief | None,
                  config: SearchConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each method's belief scores (float[7, k, 56], as :func:`score_beliefs` reads them)
    about the other seats' hidden hands, seen by the seat to act in ``games`` (int[k]) of
    ``state``, and ``need``, ``truth`` and ``seats`` (the other seated seats)."""
    sub, seat = state.take(games), state.current[games].astype(np.intp)
    public, sub_log = public_state(sub, seat), log.take(games)
    need, log_deal, posterior = hand_reading(public, seat, sub_log, config, rng)
    seats = (np.arange(P)[:, None] != seat[None, :]) & (np.arange(P)[:, None] < sub.num_players[None, :])
    scores = {"counting": log_deal, "hand reading": posterior}
    if belief is not None:
        scores["network"] = belief.composition_scores(public, seat, sub_log, need, log_deal, posterior)
    truth = (sub.hand - public.hand).transpose(0, 2, 1).astype(np.int64)  # [7, k, C]
    return {"scores": scores, "need": need, "truth": truth, "seats": seats}


def measure(belief: belief_net.HandBelief | None, games: int, players: tuple[int, ...], greedy_share: float,
            seed: int, sample: float = 0.1, config: SearchConfig | None = None) -> dict[str, dict[str, float]]:
    """Per method (card counting, the search's hand reading with ``config``, default
    SearchConfig(), and with ``belief`` the network), on a sample of the decisions of
    ``games`` fresh bot games (:func:`play_positions`): ``mae``, the mean absolute error
    of the expected hidden cards per (other seat, company) entry; ``log_likelihood``, the
    mean log-chance of an other seat's true hidden composition (nats); ``hands``, how many
    hands were scored."""
    config = SearchConfig() if config is None else config
    rng = np.random.default_rng([seed, 1])
    totals: dict[str, dict[str, float]] = {}

    def visit(state, log, chosen, greedy_table):
        found = method_scores(state, log, chosen, belief, config, rng)
        for method, scores in found["scores"].items():
            part = score_beliefs(scores, found["need"], found["truth"], found["seats"])
            total = totals.setdefault(method, dict.fromkeys(part, 0.0))
            for key, value in part.items():
                total[key] += value

    play_positions(games, players, greedy_share, sample, seed, visit)
    return {method: {"mae": t["abs_error"] / t["entries"], "log_likelihood": t["log_likelihood"] / t["hands"],
                     "hands": t["hands"]} for method, t in totals.items()}


def measurement_table(results: dict[str, dict[str, dict[str, float]]]) -> str:
    """The figures of :func:`measure` per setting, as a Markdown table."""
    lines = ["| positions | method | MAE (cards an entry) | log-likelihood (nats a hand) | hands |",
             "|---|---|---|---|---|"]
    for setting, figures in results.items():
        for method, row in figures.items():
            lines.append(f"| {setting} | {method} | {row['mae']:.4f} | {row['log_likelihood']:.4f} | "
                         f"{int(row['hands']):,} |")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog("startups_env.train.belief"), description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--out", default="runs/belief", help="output folder: data/ shards, train_state.pt, belief.pt")
    parser.add_argument("--games", type=int, default=20000, help="games to record (shards already in OUT count)")
    parser.add_argument("--shard-games", type=int, default=400, help="games per shard (played as one batch)")
    parser.add_argument("--players", type=players_arg, default="3-7", help=f"table sizes: {PLAYERS_FORMS}")
    parser.add_argument("--greedy-share", type=float, default=0.6, help="share of the tables of greedy bots only")
    parser.add_argument("--sample", type=float, default=0.5, help="chance that a decision is recorded")
    parser.add_argument("--base", choices=belief_net.BASES, default="counting",
                        help="what the network's evidence multiplies: card counting, or the search's hand reading "
                             "(recorded with every position, and the reading's expected cards are inputs too)")
    parser.add_argument("--hidden", default="256,256", help="widths of the hidden layers")
    parser.add_argument("--epochs", type=int, default=6, help="passes over the recorded positions")
    parser.add_argument("--learning-rate", type=float, default=1e-3, help="Adam learning rate (decays linearly to 0)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the games and the fit")
    parser.add_argument("--measure-games", type=int, default=400,
                        help="fresh games per setting of the held-out measurement (0: skip it)")
    parser.add_argument("--measure-seed", type=int, default=None,
                        help="seed of the measurement's games (default: --seed + 1; the mixed games one more)")
    parser.add_argument("--measure-only", action="store_true",
                        help="measure OUT/belief.pt without recording or fitting")
    add_progress_argument(parser, "a line per shard and per fitting epoch")
    add_traceback_argument(parser)
    return parser


def _check(args) -> None:
    hidden_sizes(args.hidden)
    if min(args.games, args.shard_games, args.epochs) < 1 or args.measure_games < 0:
        raise ValueError("--games, --shard-games and --epochs must be >= 1, --measure-games >= 0")
    if not 0.0 <= args.greedy_share <= 1.0 or not 0.0 < args.sample <= 1.0:
        raise ValueError("--greedy-share must be in [0, 1] and --sample in (0, 1]")


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    path = os.path.join(args.out, "belief.pt")
    try:
        _check(args)
        if args.measure_only:
            belief = belief_net.load_belief(path)
        else:
            belief = belief_net.HandBelief(train(args, "python -m startups_env.train.belief " +
                                                 " ".join(sys.argv[1:] if argv is None else argv)), path)
            print(f"belief: {path}")
    except (ValueError, FileNotFoundError) as exc:
        return report_error(parser.prog, exc, args.traceback)
    if args.measure_games:
        seed = args.seed + 1 if args.measure_seed is None else args.measure_seed
        results = {"4 players, greedy bots": measure(belief, args.measure_games, (4,), 1.0, seed),
                   f"{min(args.players)}-{max(args.players)} players, mixed styles":
                   measure(belief, args.measure_games, args.players, 0.0, seed + 1)}
        print(f"held out: {args.measure_games} fresh games per setting, seeds {seed} and {seed + 1}")
        print(measurement_table(results))
    return 0


def train(args, command: str) -> belief_net.BeliefNet:
    """The run's shards (recorded where missing), the fit (resumed where saved), and
    ``OUT/belief.pt`` written; the fitted network."""
    started, revision = time.perf_counter(), git_revision()
    log = (lambda text: print(text, flush=True)) if args.progress else (lambda text: None)
    paths = collect(args.out, args.games, args.shard_games, args.players, args.greedy_share, args.sample,
                    args.seed, args.base == "reading", log=log)
    data = load_shards(paths, args.base == "reading")
    held_out = np.zeros(data["need"].shape[0], bool)
    held_out[-min(held_out.size // 10 + 1, 20000):] = True  # the last shard's last positions
    print(f"{(~held_out).sum():,} training positions, {held_out.sum():,} held out", flush=True)
    net = fit(data, held_out, hidden_sizes(args.hidden), args.epochs, os.path.join(args.out, "train_state.pt"),
              args.learning_rate, seed=args.seed, log=log)
    atomic_save(belief_net.checkpoint(net, args=vars(args), positions=int(held_out.size), git_revision=revision,
                                      wall_time=time.perf_counter() - started, command=command),
                os.path.join(args.out, "belief.pt"))
    return net


if __name__ == "__main__":
    sys.exit(main())
