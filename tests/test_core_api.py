"""The Simulator's API contract: determinism, auto-reset, bad input (a clear ValueError and
no change of state), State.take/put/copy, memory per game."""

import numpy as np
import pytest
from helpers import assert_states_equal, load_golden, states_equal

from startups_env import Rules, Simulator, State
from startups_env.startups.rules import NUM_ACTIONS, Action, action_to_string
from startups_env.startups.state import shuffled_decks

MIXED = np.array([2, 3, 4, 5, 6, 7, 4, 3])


def _trajectory(seed: int, steps: int = 400):
    sim = Simulator(Rules(), len(MIXED), seed=seed, num_players=MIXED)
    states, results = [sim.state.copy()], []
    for _ in range(steps):
        if sim.done.all():
            break
        results.append(sim.step(sim.random_actions()))
        states.append(sim.state.copy())
    return states, results


# ----------------------------------------------------------------- determinism
def test_same_seed_same_games_and_trajectory():
    states_a, results_a = _trajectory(11)
    states_b, results_b = _trajectory(11)
    assert len(states_a) == len(states_b) > 10
    for k, (a, b) in enumerate(zip(states_a, states_b)):
        assert_states_equal(a, b, f"step {k}")
    for ra, rb in zip(results_a, results_b):
        for x, y in zip(ra, rb):
            np.testing.assert_array_equal(x, y)
    states_c, _ = _trajectory(12)
    assert not np.array_equal(states_a[0].deck, states_c[0].deck), "another seed deals other games"


def test_first_decks_of_a_seed_do_not_depend_on_batch_size():
    decks = {b: Simulator(Rules(num_players=3), b, seed=2024).state.deck for b in (1, 7, 64)}
    np.testing.assert_array_equal(decks[1][:, 0], decks[7][:, 0])
    np.testing.assert_array_equal(decks[7], decks[64][:, :7])
    # shuffled_decks: every row a permutation, and rows differ.
    rows = shuffled_decks(np.random.default_rng(0), 50)
    assert rows.dtype == np.int8 and rows.shape == (50, 45)
    assert (np.sort(rows, axis=1) == np.sort(rows[0])).all()
    assert len({r.tobytes() for r in rows}) == 50


def test_reset_with_a_seed_replays_and_a_generator_is_used_as_is():
    sim = Simulator(Rules(), 4, seed=5)
    first = sim.state.copy()
    for _ in range(10):
        sim.step(sim.random_actions())
    sim.reset(seed=5)
    assert_states_equal(first, sim.state, "reset(seed=5)")
    gen = np.random.default_rng(9)
    sim.reset(seed=gen)
    assert sim.rng is gen
    np.testing.assert_array_equal(sim.state.deck.T, shuffled_decks(np.random.default_rng(9), 4))
    # reset() without a seed continues the generator: new games.
    before = sim.state.deck.copy()
    sim.reset()
    assert not np.array_equal(before, sim.state.deck)


def test_random_actions_are_legal_and_use_the_given_generator():
    sim = Simulator(Rules(), 32, seed=0, num_players=np.resize(MIXED, 32))
    for _ in range(60):
        mask = sim.legal_mask()
        a = sim.random_actions(rng=np.random.default_rng(1))
        b = sim.random_actions(rng=np.random.default_rng(1))
        np.testing.assert_array_equal(a, b)
        running = ~sim.done
        assert mask[np.arange(32), a][running].all()
        sim.step(sim.random_actions(mask))


# Legal sets of the frequency test: take-phase and put-down-phase rows, one with a single
# action, one with the whole put-down range (the first and last ids of a row are where an
# off-by-one would show).
FREQUENCY_ROWS = [[0, 2, 5], [7, 9, 13, 16, 18], [4], [1, 6], list(range(7, 19)), [0, 1, 2, 3, 4, 5, 6]]


@pytest.mark.parametrize("batch", [8, 64])  # up to 32 games and above: separate code paths
def test_random_actions_are_uniform_over_the_legal_actions(batch):
    """random_actions draws each legal action of a game with equal probability, from the
    generator it is given (the simulator's own generator is left alone)."""
    sim = Simulator(Rules(), batch, seed=0)
    rows = [FREQUENCY_ROWS[g % len(FREQUENCY_ROWS)] for g in range(batch)]
    mask = np.zeros((batch, NUM_ACTIONS), bool)
    for g, legal in enumerate(rows):
        mask[g, legal] = True
    draws = 3000
    rng = np.random.default_rng(123)
    own = sim.rng.bit_generator.state
    picked = np.stack([sim.random_actions(mask, rng=rng) for _ in range(draws)])  # [draws, B]
    assert sim.rng.bit_generator.state == own, "the given generator must be used, not the simulator's"
    assert mask[np.arange(batch), picked].all(), "an illegal action was drawn"
    for g, legal in enumerate(rows):
        assert set(picked[:, g].tolist()) == set(legal), f"game {g}: some legal action never drawn"
    for k, legal in enumerate(FREQUENCY_ROWS):  # pooled over the games of each legal set
        games = np.arange(k, batch, len(FREQUENCY_ROWS))
        n, p = draws * games.size, 1.0 / len(legal)
        freq = np.bincount(picked[:, games].ravel(), minlength=NUM_ACTIONS)[legal]
        # 6 standard deviations: a uniform sampler lands outside once in ~5e8 counts.
        tolerance = 6 * np.sqrt(n * p * (1 - p))
        assert np.abs(freq - n * p).max() <= tolerance, f"legal {legal}: {freq.tolist()} of {n} draws"
    # Another generator gives other actions; the same seed the same ones.
    a, b = (sim.random_actions(mask, rng=np.random.default_rng(seed)) for seed in (1, 2))
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, sim.random_actions(mask, rng=np.random.default_rng(1)))


# ----------------------------------------------------------------- auto-reset
def test_auto_reset_redeals_finished_games_and_reports_their_results():
    seed = 3
    plain = Simulator(Rules(num_players=4, turn_cap=50), 16, seed=seed)
    auto = Simulator(Rules(num_players=4, turn_cap=50), 16, seed=seed, auto_reset=True)
    rng = np.random.default_rng(0)
    ended_games = np.zeros(16, bool)
    while not ended_games.all():
        assert_states_equal(plain.state.take(np.flatnonzero(~ended_games)),
                            auto.state.take(np.flatnonzero(~ended_games)), "games not yet ended")
        actions = plain.random_actions(rng=rng)
        r_plain = plain.step(actions)
        # Re-dealt games in `auto` play on with their own actions.
        r_auto = auto.step(np.where(ended_games, auto.random_actions(rng=rng), actions))
        ending = (r_plain.terminated | r_plain.truncated) & ~ended_games
        # On the ending step both report the same results.
        for name, x, y in zip(r_plain._fields, r_plain, r_auto):
            np.testing.assert_array_equal(x[ending], y[ending], err_msg=name)
        assert (r_auto.terminated | r_auto.truncated)[ending].all()
        assert (r_auto.rewards[ending] != 0).any(axis=1).all()
        # ... and the auto-reset games are dealt afresh inside the same step.
        s = auto.state
        assert not s.done.any()
        assert (s.turn[ending] == 0).all() and (s.phase[ending] == 0).all() and (s.current[ending] == 0).all()
        assert (s.coins[:4, ending] == 10).all() and (s.market_count[:, ending] == 0).all()
        assert (s.pile_pos[ending] == 5 + 3 * 4).all() and (s.chip[:, ending] == -1).all()
        assert (s.portfolio[:, :, ending] == 0).all() and (s.hand[:, :, ending].sum(axis=(0, 1)) == 12).all()
        assert auto.legal_mask()[ending].any(axis=1).all()
        # Games that did not end report nothing (auto-reset or not).
        assert (r_auto.rewards[~ending & ~ended_games] == 0).all()
        ended_games |= ending
    # The plain simulator keeps finished games waiting; the flags persist.
    assert plain.done.all() and not auto.done.any()


def test_auto_reset_round_game_rewards_only_at_the_end():
    sim = Simulator(Rules(num_players=3, rounds=4, turn_cap=30), 8, seed=1, auto_reset=True)
    rounds_seen = np.zeros(8, int)
    games_ended = 0
    for _ in range(2000):
        before_round = sim.state.round.copy()
        result = sim.step(sim.random_actions())
        ended = result.terminated | result.truncated
        rounds_seen += (sim.state.round != before_round) & ~ended
        assert (result.rewards[~ended] == 0).all()
        if ended.any():
            assert (rounds_seen[ended] == 3).all(), "a game must end after its 4th round"
            np.testing.assert_allclose(result.rewards[ended].sum(axis=1), 0, atol=1e-5)
            assert (sim.state.round[ended] == 0).all() and (sim.state.round_points[:, ended] == 0).all()
            rounds_seen[ended] = 0
            games_ended += int(ended.sum())
    assert games_ended >= 8


# ----------------------------------------------------------------- bad input
def _running_sim(b: int = 6) -> Simulator:
    sim = Simulator(Rules(), b, seed=4, num_players=np.resize(MIXED, b))
    for _ in range(9):  # some games in the take phase, some in the put-down phase
        sim.step(sim.random_actions())
    return sim


def _assert_rejected(sim: Simulator, call, *words) -> None:
    """``call()`` raises ValueError mentioning ``words``; the state, the generator and the
    legal mask are unchanged."""
    state = sim.state.copy()
    rng_state = sim.rng.bit_generator.state
    mask = sim.legal_mask()
    with pytest.raises(ValueError) as err:
        call()
    for word in words:
        assert word in str(err.value), f"{word!r} not in {str(err.value)!r}"
    assert_states_equal(state, sim.state, "after rejected input")
    assert sim.rng.bit_generator.state == rng_state
    np.testing.assert_array_equal(mask, sim.legal_mask())


def test_illegal_actions_raise_naming_games_and_actions():
    sim = _running_sim()
    mask = sim.legal_mask()
    actions = sim.random_actions()
    phase = sim.state.phase
    # Make games 1 and 4 illegal: a put-down id in the take phase or a draw in the put phase.
    for g in (1, 4):
        actions[g] = Action.KEEP if phase[g] == 0 else Action.DRAW
        assert not mask[g, actions[g]]
    _assert_rejected(sim, lambda: sim.step(actions), "illegal", "game 1", "game 4",
                     action_to_string(actions[1]), action_to_string(actions[4]))
    # Legal actions are accepted afterwards.
    sim.step(sim.random_actions())


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda b: np.zeros(b + 1, np.int64), ["shape", "[6]"]),
        (lambda b: np.zeros((b, 1), np.int64), ["shape"]),
        (lambda b: np.int64(0), ["shape"]),
        (lambda b: np.zeros(b, np.float32), ["integer", "float32"]),
        (lambda b: np.zeros(b, bool), ["integer"]),
        (lambda b: np.full(b, NUM_ACTIONS), ["range", "19"]),
        (lambda b: np.full(b, -1), ["range"]),
    ],
    ids=["too-long", "2d", "scalar", "float", "bool", "id-19", "id-minus-1"],
)
def test_malformed_actions_are_rejected(make, words):
    sim = _running_sim()
    _assert_rejected(sim, lambda: sim.step(make(sim.batch_size)), *words)


def _decks(b: int) -> np.ndarray:
    return shuffled_decks(np.random.default_rng(1), b).astype(np.int64)


@pytest.mark.parametrize(
    "bad, words",
    [
        (lambda d: d[:, :44], ["shape", "45"]),
        (lambda d: np.concatenate([d, d[:, :1]], axis=1), ["shape"]),
        (lambda d: d[:-1], ["shape"]),
        (lambda d: np.where(np.arange(45) == 0, (d[:, :1] + 1) % 6, d), ["permutation"]),
        (lambda d: np.full_like(d, 7), ["permutation"]),
        (lambda d: d.astype(np.float64), ["integer", "float64"]),
        (lambda d: d[:, None, :].repeat(2, axis=1), ["shape"]),
    ],
    ids=["short", "long", "batch", "not-permutation", "bad-ids", "float", "two-rounds"],
)
def test_bad_decks_are_rejected(bad, words):
    sim = _running_sim()
    decks = bad(_decks(sim.batch_size))
    _assert_rejected(sim, lambda: sim.reset(decks=decks), *words)
    _assert_rejected(sim, lambda: sim.reset(seed=99, decks=decks), *words)  # the generator is kept too
    with pytest.raises(ValueError):
        Simulator(Rules(), sim.batch_size, decks=decks)


def test_round_game_decks_need_four_rounds():
    d = _decks(3)
    sim = Simulator(Rules(rounds=4), 3, decks=np.stack([d] * 4, axis=1))
    _assert_rejected(sim, lambda: sim.reset(decks=np.stack([d] * 3, axis=1)), "shape")
    # One deck per game is accepted: it deals the first round.
    sim.reset(decks=d)
    np.testing.assert_array_equal(sim.state.deck.T, d)


@pytest.mark.parametrize(
    "bad, words",
    [
        (np.array([3, 4, 5]), ["num_players", "[6]"]),
        (np.array([3, 4, 5, 6, 7, 8]), ["num_players", "8"]),
        (np.array([1, 4, 5, 6, 7, 2]), ["num_players", "1"]),
        (np.full(6, 4.0), ["num_players"]),
        (np.full((6, 1), 4), ["num_players"]),
        (8, ["num_players"]),
    ],
    ids=["length", "eight", "one", "float", "2d", "scalar-8"],
)
def test_bad_num_players_are_rejected(bad, words):
    sim = _running_sim()
    _assert_rejected(sim, lambda: sim.reset(num_players=bad), *words)
    with pytest.raises(ValueError):
        Simulator(Rules(), 6, num_players=bad)


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(num_players=1), "num_players"),
        (dict(num_players=8), "num_players"),
        (dict(num_players=4.0), "num_players"),
        (dict(rounds=2), "rounds"),
        (dict(turn_cap=0), "turn_cap"),
        (dict(turn_cap=-5), "turn_cap"),
        (dict(reward="foo"), "reward"),
    ],
)
def test_bad_rules_are_rejected(kwargs, word):
    with pytest.raises(ValueError, match=word):
        Rules(**kwargs)


def test_bad_simulator_arguments_are_rejected():
    with pytest.raises(ValueError, match="batch_size"):
        Simulator(Rules(), 0)
    with pytest.raises(ValueError, match="batch_size"):
        Simulator(Rules(), 2.5)
    with pytest.raises(ValueError, match="Rules"):
        Simulator({"num_players": 3}, 2)


def test_rules_are_frozen_and_official_flag():
    rules = Rules(num_players=2)
    with pytest.raises(AttributeError):
        rules.num_players = 3  # frozen dataclass
    assert not rules.official and Rules(num_players=3).official


def test_finished_games_accept_any_valid_id_and_ignore_it():
    game = load_golden()[0]
    sim = Simulator(Rules(num_players=game["players"]), 1, decks=[game["deck"]])
    for a in game["actions"]:
        sim.step(np.array([a]))
    assert sim.done[0]
    before = sim.state.copy()
    for a in range(NUM_ACTIONS):
        result = sim.step(np.array([a]))
        assert result.terminated[0] and (result.rewards == 0).all()
    assert_states_equal(before, sim.state, "finished game")
    # Out-of-range ids are still rejected.
    _assert_rejected(sim, lambda: sim.step(np.array([NUM_ACTIONS])), "range")


# ----------------------------------------------------------------- State
def test_state_take_put_copy_round_trip():
    sim = _running_sim(8)
    s = sim.state
    original = s.copy()
    assert_states_equal(original, s, "copy")
    # copy is deep: changing it leaves the original alone.
    original.coins[0, 0] += 1
    assert not states_equal(original, s)
    original = s.copy()

    picked = s.take([5, 2, 2])
    assert picked.batch_size == 3
    assert_states_equal(picked.take([0]), s.take([5]), "take keeps games")
    assert_states_equal(picked.take([1]), picked.take([2]), "repeated index clones")
    for name in ("hand", "coins", "deck", "market_stamp", "current"):
        assert getattr(picked, name).flags.c_contiguous

    # put the taken games back in swapped positions, then swap back: a round trip.
    swapped = s.copy()
    swapped.put([2, 5], s.take([5, 2]))
    assert_states_equal(swapped.take([2]), s.take([5]))
    assert_states_equal(swapped.take([5]), s.take([2]))
    assert_states_equal(swapped.take([0, 1, 3, 4, 6, 7]), s.take([0, 1, 3, 4, 6, 7]), "others untouched")
    swapped.put([5, 2], swapped.take([2, 5]))
    assert_states_equal(swapped, original, "round trip")
    assert_states_equal(s, original, "take/put do not touch the source")


def test_a_taken_game_plays_on_like_the_original():
    """A game cloned twice with State.take into a new simulator (Simulator.from_state)
    continues exactly like the original."""
    sim = _running_sim(6)
    clone = Simulator.from_state(sim.state.take([3, 3]), sim.rules)
    rng = np.random.default_rng(5)
    while not sim.done[3]:
        actions = sim.random_actions(rng=rng)
        np.testing.assert_array_equal(sim.legal_mask()[3], clone.legal_mask()[0])
        sim.step(actions)
        clone.step(actions[[3, 3]])
        assert_states_equal(sim.state.take([3, 3]), clone.state, "clone diverged")


def test_a_state_of_views_plays_like_a_contiguous_copy():
    """The step writes through flat views of the State arrays: a State built from views
    of part of a larger batch (its first half: no flat view of these exists) must still be
    played, not its writes silently lost in copies."""
    sim = _running_sim(8)
    strided = State(**{name: array[..., :4] for name, array in vars(sim.state).items()})
    assert not strided.hand.flags.c_contiguous
    plain = Simulator.from_state(sim.state.take(np.arange(4)), sim.rules)
    views = Simulator.from_state(strided, sim.rules)
    rng = np.random.default_rng(3)
    for _ in range(60):
        actions = plain.random_actions(rng=rng)
        plain.step(actions)
        views.step(actions)
        assert_states_equal(plain.state, views.state, "strided state diverged")


def test_memory_per_game_is_small():
    for b in (1, 64):
        state = Simulator(Rules(), b, seed=0).state
        assert state.nbytes_per_game() <= 512
        assert state.nbytes_per_game() == sum(a.nbytes for a in vars(state).values()) // b
    assert isinstance(state, State)


def test_writing_into_state_then_state_changed_refreshes_the_mask():
    from startups_env import Rules, Simulator

    sim = Simulator(Rules(num_players=3), batch_size=4, seed=0)
    other = Simulator(Rules(num_players=3), batch_size=4, seed=1)
    for _ in range(3):
        other.step(other.random_actions())
    sim.legal_mask()  # fill the cache
    sim.state.put(np.arange(4), other.state)
    sim.state_changed()
    assert (sim.legal_mask() == other.legal_mask()).all()
    sim.step(other.random_actions())  # legal in the written games


def test_assigning_a_state_of_another_size_raises():
    from startups_env import Rules, Simulator

    sim = Simulator(Rules(), batch_size=4, seed=0)
    with pytest.raises(ValueError, match="holds 2 games"):
        sim.state = Simulator(Rules(), batch_size=2, seed=0).state


def test_offset_caches_stay_small_across_many_batch_sizes():
    """Search rollouts shrink their batches through every size; the per-size offset caches
    once grew without bound (gigabytes over a long arena run)."""
    from startups_env.startups.observe import _offsets, observe
    from startups_env.startups.queries import _slot_rows
    from startups_env.startups.queries import company_rows as _company_rows

    sim = Simulator(Rules(num_players=4), 64, seed=0)
    for _ in range(6):
        sim.step(sim.random_actions())
    for size in range(1, 64):
        part = Simulator.from_state(sim.state.take(np.arange(size)), sim.rules)
        part.step(part.random_actions())
        observe(part.state)
        part.state.unseen(part.state.current)
        part.state.market_take_coins()
    for cached in (_company_rows, _slot_rows, _offsets):
        assert cached.cache_info().currsize <= 16
