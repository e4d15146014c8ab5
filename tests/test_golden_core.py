"""The 300 golden games (scored by an independent reading of docs/rules.md) replayed through the
batch simulator: one game per Simulator, then one batch per table size, then all 300 in
one mixed batch. Every action must be legal and the results must match exactly."""

from collections import defaultdict

import numpy as np
import pytest
from helpers import INSTALLED_BACKENDS, assert_states_equal, load_golden, ranking

from startups_env import Rules, Simulator
from startups_env.startups.rules import NUM_ACTIONS

GAMES = load_golden()


def test_golden_file_covers_every_table_size_and_edge_case():
    assert len(GAMES) == 300
    assert {g["players"] for g in GAMES} == {2, 3, 4, 5, 6, 7}
    tags = {t for g in GAMES for t in g["tags"]}
    assert tags == {"debt", "tied_majority", "tie_threes", "tie_recency", "chip_move"}


@pytest.mark.parametrize("index", range(len(GAMES)))
def test_golden_game_single(index):
    g = GAMES[index]
    n = g["players"]
    sim = Simulator(Rules(num_players=n), 1, decks=[g["deck"]])
    actions = g["actions"]
    for k, action in enumerate(actions):
        assert not sim.done[0], f"game ended early before action #{k}"
        mask = sim.legal_mask()
        assert mask[0, action], f"action #{k} ({action}) illegal; legal {np.flatnonzero(mask[0]).tolist()}"
        result = sim.step(np.array([action]))
        if k < len(actions) - 1:
            assert not result.terminated[0] and not result.truncated[0]
            assert (result.rewards == 0).all()
    s = sim.state
    assert result.terminated[0] and not result.truncated[0]
    assert s.terminated[0] and not s.truncated[0]
    assert not sim.legal_mask().any()
    assert s.scores[:n, 0].tolist() == g["scores"]
    assert s.threes[:n, 0].tolist() == g["threes"]
    assert ranking(s.ranks[:, 0]) == g["ranking"]
    assert int(s.turn[0]) == g["turns"]
    # The ending step reports the same results.
    assert result.scores[0, :n].tolist() == g["scores"]
    assert ranking(result.ranks[0]) == g["ranking"]


def _replay_batch(sim: Simulator, games: list[dict]) -> None:
    """Replay ``games`` in lockstep in ``sim`` (already reset with their decks); finished
    games get action 0, which must be ignored."""
    b = len(games)
    longest = max(len(g["actions"]) for g in games)
    lengths = np.array([len(g["actions"]) for g in games])
    table = np.zeros((b, longest), np.int64)
    for i, g in enumerate(games):
        table[i, : len(g["actions"])] = g["actions"]
    ended_at = np.full(b, -1)
    for k in range(longest):
        running = k < lengths
        np.testing.assert_array_equal(sim.done, ~running, err_msg=f"done flags before action #{k}")
        mask = sim.legal_mask()
        assert not mask[~running].any(), "finished games must have an empty mask"
        legal = mask[np.arange(b), table[:, k]]
        bad = np.flatnonzero(running & ~legal)
        assert bad.size == 0, f"illegal golden actions at #{k} in games {bad.tolist()}"
        result = sim.step(table[:, k])
        ending = running & (k == lengths - 1)
        ended_at[ending] = k
        np.testing.assert_array_equal(result.terminated, ~running | ending)
        assert not result.truncated.any()
        assert (result.rewards[~ending] == 0).all(), "rewards only on the ending step"
        for i in np.flatnonzero(ending):
            n = games[i]["players"]
            assert result.scores[i, :n].tolist() == games[i]["scores"]
            assert ranking(result.ranks[i]) == games[i]["ranking"]
    assert (ended_at == lengths - 1).all()
    s = sim.state
    assert s.terminated.all() and not s.truncated.any()
    assert not sim.legal_mask().any()
    for i, g in enumerate(games):
        n = g["players"]
        assert s.scores[:n, i].tolist() == g["scores"], f"scores of game {i}"
        assert (s.scores[n:, i] == 0).all()
        assert s.threes[:n, i].tolist() == g["threes"], f"threes of game {i}"
        assert ranking(s.ranks[:, i]) == g["ranking"], f"ranking of game {i}"
        assert int(s.turn[i]) == g["turns"], f"turns of game {i}"


@pytest.mark.parametrize("backend", INSTALLED_BACKENDS)
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6, 7])
def test_golden_games_batched_per_table_size(players, backend):
    games = [g for g in GAMES if g["players"] == players]
    sim = Simulator(Rules(num_players=players), len(games), decks=[g["deck"] for g in games], backend=backend)
    _replay_batch(sim, games)


@pytest.mark.parametrize("backend", INSTALLED_BACKENDS)
def test_golden_games_one_mixed_batch(backend):
    by_size = defaultdict(list)
    for g in GAMES:
        by_size[g["players"]].append(g)
    # Interleave table sizes so neighbouring games differ.
    games = [g for i in range(300) for n in sorted(by_size) if i < len(by_size[n]) for g in [by_size[n][i]]]
    assert len(games) == 300
    sim = Simulator(Rules(num_players=4), len(games), decks=[g["deck"] for g in games],
                    num_players=np.array([g["players"] for g in games]), backend=backend)
    _replay_batch(sim, games)
    # Stepping the finished batch again changes nothing.
    before = sim.state.copy()
    sim.step(np.full(len(games), NUM_ACTIONS - 1))
    assert_states_equal(before, sim.state, "finished golden batch")


def test_golden_games_reset_in_place():
    """reset(decks=, num_players=) on a used simulator replays the games the same way."""
    games = GAMES[:40]
    sim = Simulator(Rules(num_players=3), len(games), seed=1)
    sim.step(sim.random_actions())
    sim.reset(decks=[g["deck"] for g in games], num_players=[g["players"] for g in games])
    _replay_batch(sim, games)
