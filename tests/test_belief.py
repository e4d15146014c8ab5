"""The learned hand belief: its input holds nothing hidden, its composition distribution is
card counting times its evidence, its checkpoints are weights only, its training command
resumes, the held-out measurement scores what it says, and the search draws its worlds
from it on both backends."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from startups_env.agents import make_agent
from startups_env.agents.registry import build_agent
from startups_env.agents.search import determinize, search_backend
from startups_env.agents.search.inference import hand_hypotheses
from startups_env.agents.search import belief as belief_net
from startups_env.agents.search.config import SearchConfig
from startups_env.agents.search.worlds import COMPOSITIONS, composition_evidence, deal_log_chance
from startups_env.train import belief as train_belief
from startups_env.train.common import atomic_save
from test_agents import _greedy_games_with_log, _play_to_the_end

from startups_env import Rules
from startups_env.startups import queries
from startups_env.startups.observe import OBS_DIM, observe
from startups_env.startups.rules import MAX_PLAYERS, NUM_COMPANIES, Action
from startups_env.startups.state import hidden_hand_counts, public_state

P, C = MAX_PLAYERS, NUM_COMPANIES


def _positions(players: int = 4, games: int = 8, turns: int = 40, seed: int = 3):
    """(state, log, seat): greedy games some turns in, seen by the seat to act."""
    sim, log, _ = _greedy_games_with_log(players, games, seed=seed, turns=turns)
    running = np.flatnonzero(~sim.state.done)
    return sim.state.take(running), log.take(running), sim.state.current[running].astype(np.intp)


@pytest.mark.parametrize("players", [3, 5])
def test_the_input_is_the_same_whatever_the_hidden_cards(players):
    state, log, seat = _positions(players)
    inputs = belief_net.belief_inputs(state, seat, log)
    public = public_state(state, seat)
    assert np.array_equal(belief_net.belief_inputs(public, seat, log), inputs)
    for backend in ("numpy", "numba"):
        redealt = determinize(public, seat, 1, np.random.default_rng(5), search_backend(backend))
        assert not np.array_equal(redealt.hand, state.hand)  # the other hands did change
        assert np.array_equal(belief_net.belief_inputs(redealt, seat, log), inputs)


def test_the_input_reads_each_other_seats_put_downs_take_and_hidden_count():
    state, log, seat = _positions(4, turns=45)
    inputs = belief_net.belief_inputs(state, seat, log)
    assert np.array_equal(inputs[:, :OBS_DIM], observe(state, seat))
    seat_part = inputs[:, OBS_DIM:].reshape(len(seat), P - 1, belief_net.SEAT_FEATURES)
    latest, earlier = log.valid(state), log.earlier_valid()
    older_valid = log.older_valid(state)
    need = hidden_hand_counts(public_state(state, seat), seat)
    for g in range(len(seat)):
        for r in range(1, 4):
            s = (seat[g] + r) % 4
            expected = np.zeros(belief_net.SEAT_FEATURES)
            if latest[s, g]:
                expected[log.action[s, g] - Action.KEEP] = 1
                if earlier[s, g]:
                    expected[12 + log.earlier_action[s, g] - Action.KEEP] = 1
                if log.take_action[s, g] >= 0:
                    expected[36 + log.take_action[s, g]] = 1
            for k in np.flatnonzero(older_valid[:, s, g]):
                expected[24 + log.older_action[k, s, g] - Action.KEEP] += 1
            expected[43 + need[s, g]] = 1
            assert np.array_equal(seat_part[g, r - 1], expected), (g, r)
        assert not seat_part[g, 3:].any()  # the empty seats of a four-player table


def test_recorded_positions_hold_the_true_hidden_cards_of_the_other_seats():
    state, log, seat = _positions(5, games=6)
    games = np.arange(len(seat))
    record = train_belief.record_positions(state, log, games)
    assert np.array_equal(record["inputs"], belief_net.belief_inputs(state, seat, log).astype(np.int16))
    for g in games:
        for r in range(1, 5):
            s = (seat[g] + r) % 5
            assert np.array_equal(record["hidden"][g, r - 1], state.hand[s, :, g] - state.known[s, :, g])
            assert record["need"][g, r - 1] == record["hidden"][g, r - 1].sum()
        assert not record["need"][g, 4:].any()
        assert (record["hidden"][g].sum(axis=0) <= record["pool"][g]).all()
    assert np.array_equal(record["pool"], queries.unseen(state, seat).T)


def test_the_composition_distribution_is_counting_times_the_evidence():
    rng = np.random.default_rng(0)
    n = 5
    pool = rng.integers(0, 8, (n, C))
    need = rng.integers(0, 4, (n, P - 1))
    evidence = rng.normal(size=(n, P - 1, C))
    log_probs = belief_net.composition_log_probs(torch.from_numpy(evidence), torch.from_numpy(pool),
                                                 torch.from_numpy(need)).numpy()
    for i in range(n):
        for r in range(P - 1):
            comps = COMPOSITIONS[need[i, r]]
            scores = deal_log_chance(np.repeat(pool[i][None], len(comps), 0), comps, np.full(len(comps), need[i, r]))
            scores = scores + composition_evidence(evidence[i, r][None, None], np.array([[need[i, r]]]))[0, 0]
            valid = belief_net.COMPOSITION_VALID[need[i, r]] & np.isfinite(scores)
            expected = scores[valid] - np.logaddexp.reduce(scores[valid])
            assert np.allclose(log_probs[i, r][valid], expected)
            assert np.isneginf(log_probs[i, r][~valid]).all()


def test_an_untrained_network_is_card_counting():
    net = belief_net.BeliefNet([8])
    state, log, seat = _positions()
    assert not belief_net.HandBelief(net).relative_evidence(state, seat, log).any()


def test_score_beliefs_on_a_hand_made_case():
    """One seat with one hidden card, a uniform belief over the six companies, truth company
    0: the expected cards are 1/6 each, so the error is (5/6 + 5/6) over six entries, and
    the true hand's log-chance is log(1/6)."""
    need = np.zeros((P, 1), np.int64)
    need[1] = 1
    truth = np.zeros((P, 1, C), np.int64)
    truth[1, 0, 0] = 1
    seats = np.zeros((P, 1), bool)
    seats[1] = True
    figures = train_belief.score_beliefs(np.zeros((P, 1, 56)), need, truth, seats)
    assert figures["entries"] == 6 and figures["hands"] == 1
    assert math.isclose(figures["abs_error"], 10 / 6)
    assert math.isclose(figures["log_likelihood"], math.log(1 / 6))
    sure = np.full((P, 1, 56), -np.inf)
    sure[1, 0, 0] = 0.0  # all the chance on company 0 (the first composition of one card)
    figures = train_belief.score_beliefs(sure, need, truth, seats)
    assert figures["abs_error"] == 0 and figures["log_likelihood"] == 0


def test_measure_scores_an_untrained_network_as_counting_and_hand_reading_better():
    figures = train_belief.measure(belief_net.HandBelief(belief_net.BeliefNet([8])), 12, (4,), 1.0, seed=2,
                                   sample=0.2)
    assert set(figures) == set(train_belief.METHODS)
    assert figures["network"] == pytest.approx(figures["counting"])
    assert figures["hand reading"]["hands"] == figures["counting"]["hands"] > 100
    # Against greedy bots, reading their put-downs beats counting cards.
    assert figures["hand reading"]["mae"] < figures["counting"]["mae"]
    assert figures["hand reading"]["log_likelihood"] > figures["counting"]["log_likelihood"]


def test_an_untrained_network_over_the_reading_is_the_hand_reading():
    net = belief_net.BeliefNet([8], base="reading")
    figures = train_belief.measure(belief_net.HandBelief(net), 6, (5,), 0.0, seed=3, sample=0.2)
    assert figures["network"] == pytest.approx(figures["hand reading"])
    state, log, seat = _positions()
    with pytest.raises(ValueError, match="reading="):
        belief_net.HandBelief(net).relative_evidence(state, seat, log)


def test_recorded_reading_is_the_hand_readings_distribution_by_relative_seat():
    state, log, seat = _positions(4, games=6)
    games = np.arange(len(seat))
    record = train_belief.record_positions(state, log, games, np.random.default_rng(0))
    need, _, posterior = train_belief.hand_reading(public_state(state, seat), seat, log, SearchConfig(),
                                                   np.random.default_rng(0))
    for g in games:
        for r in range(1, 4):
            s = (seat[g] + r) % 4
            valid = np.isfinite(posterior[s, g]) & belief_net.COMPOSITION_VALID[need[s, g]]
            expected = posterior[s, g][valid] - np.logaddexp.reduce(posterior[s, g][valid])
            assert np.allclose(record["reading"][g, r - 1][valid], expected, atol=0.02)
            assert np.exp(record["reading"][g, r - 1][valid].astype(float)).sum() == pytest.approx(1, abs=0.01)
    batch = train_belief.tensors(record, games)
    assert batch["inputs"].shape[1] == belief_net.input_width("reading")


def _checkpoint(tmp_path, hidden=(8,), base="counting") -> str:
    net = belief_net.BeliefNet(list(hidden), base=base)
    with torch.no_grad():
        net.body[-1].bias.normal_(generator=torch.Generator().manual_seed(0))
    path = str(tmp_path / "belief.pt")
    atomic_save(belief_net.checkpoint(net), path)
    return path


def test_a_checkpoint_loads_as_it_was_saved(tmp_path):
    path = _checkpoint(tmp_path)
    data = torch.load(path, weights_only=True)
    assert data["format"] == belief_net.FORMAT
    state, log, seat = _positions()
    loaded = belief_net.load_belief(path)
    assert loaded.base == "counting"
    expected = belief_net.HandBelief(belief_net.net_from_checkpoint(data)).relative_evidence(state, seat, log)
    assert np.array_equal(loaded.relative_evidence(state, seat, log), expected) and expected.any()


def test_a_bad_belief_file_is_a_value_error(tmp_path):
    path = _checkpoint(tmp_path)
    with open(path, "rb") as f:
        good = f.read()
    cases = {"truncated.pt": good[: len(good) // 2], "text.pt": b"not a checkpoint"}
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError, match="not a"):
            belief_net.load_belief(str(tmp_path / name))
    torch.save({"format": "something else"}, str(tmp_path / "other.pt"))
    with pytest.raises(ValueError, match="not a hand-belief checkpoint"):
        belief_net.load_belief(str(tmp_path / "other.pt"))
    torch.save(SearchConfig(), str(tmp_path / "pickled.pt"))  # an object, not weights
    with pytest.raises(ValueError, match="weights-only"):
        belief_net.load_belief(str(tmp_path / "pickled.pt"))
    wrong = belief_net.checkpoint(belief_net.BeliefNet([8]))
    wrong["config"]["hidden"] = [9]
    torch.save(wrong, str(tmp_path / "wrong.pt"))
    with pytest.raises(ValueError, match="do not fit"):
        belief_net.load_belief(str(tmp_path / "wrong.pt"))
    with pytest.raises(ValueError, match="no file"):
        make_agent("search", belief=str(tmp_path / "missing.pt"))
    with pytest.raises(ValueError, match="infer_hands"):
        SearchConfig(belief=path, infer_hands=False)
    with pytest.raises(ValueError, match="belief must be"):
        SearchConfig(belief=3)


@pytest.mark.parametrize("backend, base", [("numpy", "counting"), ("numba", "counting"), ("numba", "reading")])
def test_the_search_with_a_belief_plays_legal_reproducible_games(tmp_path, backend, base):
    path = _checkpoint(tmp_path, base=base)
    moves = []
    for _ in range(2):
        search = build_agent(f"search[belief={path};determinizations=2;max_candidates=2;backend={backend}]", seed=4)
        assert search.belief is not None and search.needs == {"public", "history"}
        sim = _play_to_the_end([search, make_agent("greedy"), make_agent("greedy")], 4, seed=6)
        assert sim.done.all() and not sim.state.truncated.any()
        moves.append(sim.state.portfolio.copy())
    assert np.array_equal(moves[0], moves[1])


def test_the_belief_changes_the_worlds_the_search_draws(tmp_path):
    """The same decisions' hand hypotheses with and without the network: the network's
    evidence moves the weights (a strong evidence for one company shows in the hands)."""
    net = belief_net.BeliefNet([8])
    with torch.no_grad():
        net.body[-1].bias.copy_(torch.tensor([4.0, 0, 0, 0, 0, 0] * (P - 1)))  # every seat: company 0
    state, log, seat = _positions(4, games=8, turns=30)
    public = public_state(state, seat)
    config, backend = SearchConfig(determinizations=50), search_backend()
    pools = [hand_hypotheses(public, seat, np.full(len(seat), 50), log, config, Rules(), backend,
                             np.random.default_rng(1), belief) for belief in (None, belief_net.HandBelief(net))]
    share = [pool.hands[:, 0].sum() / pool.hands.sum() for pool in pools]
    assert share[1] > share[0] + 0.1


def test_the_training_command_resumes(tmp_path, capsys):
    out = str(tmp_path / "run")
    args = ["--out", out, "--games", "8", "--shard-games", "4", "--hidden", "8", "--measure-games", "0", "--seed", "2"]
    assert train_belief.main(args + ["--epochs", "1"]) == 0
    first = torch.load(f"{out}/belief.pt", weights_only=True)
    assert train_belief.main(args + ["--epochs", "2"]) == 0
    text = capsys.readouterr().out
    assert "resumed the fit after epoch 1" in text and "shard 1/2" in text.split("resumed")[0]
    assert text.count("shard 1/2") == 1  # the second run kept the shards
    second = belief_net.load_belief(f"{out}/belief.pt")
    assert any(not torch.equal(first["model"][k], v) for k, v in second.net.state_dict().items())
    assert train_belief.main(["--out", out, "--games", "0"]) == 2
    assert train_belief.main(["--out", out, "--measure-only", "--measure-games", "2", "--players", "4"]) == 0
    assert "| 4 players, greedy bots | network |" in capsys.readouterr().out
    assert train_belief.main(["--out", str(tmp_path / "none"), "--measure-only"]) == 2
