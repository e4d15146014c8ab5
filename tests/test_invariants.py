"""Invariants of the batch simulator under random play (hypothesis draws the seeds, table
sizes, variants and how eagerly the players use the market).

Checked after every decision, for every game of the batch:
* all 45 cards are accounted for, per company: hands + portfolios + market + pile + the
  5 removed cards;
* coins are conserved: 1-point coins + coins on market cards == 10 x players (scoring
  does not move coins in the state, so this holds after the end too);
* ``market_coins`` equals the sum of the per-card coins of the ring buffers, the oldest
  card carries the most, and ``market_take_coins`` is the oldest card's coins;
* the mask is never empty in a running game (and holds only ids of the game's phase), and
  is all False in a finished one; finished games are inert;
* a chip is held exactly when some portfolio holds the company, by a player with a
  maximal portfolio count;
* 0 <= known <= hand; hands hold 3 cards (4 for the player to act in the put phase);
  padded seats are empty; ``unseen`` counts the hidden cards;
* round game: one +2 and one -1 chip per finished round, a +1 chip too at 3+ players.
"""

import numpy as np
from helpers import assert_states_equal
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st

from startups_env import Rules, Simulator
from startups_env.startups.queries import SLOTS
from startups_env.startups.rules import COMPANY_SIZES, DECK_SIZE, MAX_PLAYERS, NUM_ACTIONS, NUM_REMOVED, Action
from startups_env.startups.state import State

SIZES = np.array(COMPANY_SIZES)[:, None]  # [C, 1]
# No shrink phase: an example plays whole games (about a second), and shrinking a failure
# took minutes; the failing seed, table sizes and variant are reported as drawn.
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
SETTINGS = settings(max_examples=25, deadline=None, database=None, phases=NO_SHRINK)


def deck_counts(deck: np.ndarray, lo, hi) -> np.ndarray:
    """int[C, B]: cards of each company at deck positions lo <= i < hi (per game)."""
    pos = np.arange(DECK_SIZE)[:, None]
    inside = (pos >= np.asarray(lo)[None, :] if np.ndim(lo) else pos >= lo) & (pos < hi)
    return np.stack([((deck == c) & inside).sum(axis=0) for c in range(len(COMPANY_SIZES))])


def per_card_coins(s: State) -> tuple[np.ndarray, np.ndarray]:
    """int[C, SLOTS, B] coins of the i-th oldest market card of each company, and bool[C,
    SLOTS, B] whether that card exists."""
    i = np.arange(SLOTS)[None, :, None]
    slot = (s.market_head[:, None, :].astype(int) + i) % SLOTS
    stamp = np.take_along_axis(s.market_stamp.astype(int), slot, axis=1)
    exists = i < s.market_count[:, None, :]
    return np.where(exists, s.market_paid[:, None, :].astype(int) - stamp, 0), exists


def _eq(actual, expected, what: str) -> None:
    """Cheap array equality (numpy.testing is slow in a per-decision check)."""
    if not np.array_equal(actual, expected):
        raise AssertionError(f"{what}:\n{np.asarray(actual)}\n!=\n{np.asarray(expected)}")


def check_invariants(sim: Simulator) -> None:
    s = sim.state
    b = s.batch_size
    n = s.num_players.astype(int)
    seat = np.arange(MAX_PLAYERS)[:, None]
    present = seat < n[None, :]  # [P, B]
    running = ~s.done

    # Padded seats are empty; basic ranges.
    absent = ~present[:, None, :]
    assert not (s.hand * absent).any() and not (s.portfolio * absent).any() and not (s.known * absent).any()
    assert not s.coins[~present].any()
    assert ((n >= 2) & (n <= 7)).all()
    assert ((s.current >= 0) & (s.current < n)).all()
    assert np.isin(s.phase, (0, 1)).all()
    assert ((s.pile_pos >= NUM_REMOVED + 3 * n) & (s.pile_pos <= DECK_SIZE)).all()

    # The deck is a permutation of the 45 cards; every card is somewhere.
    _eq(deck_counts(s.deck, 0, DECK_SIZE), np.broadcast_to(SIZES, (6, b)), "deck not a permutation")
    held = s.hand.sum(axis=0, dtype=int) + s.portfolio.sum(axis=0, dtype=int) + s.market_count
    pile = deck_counts(s.deck, s.pile_pos.astype(int), DECK_SIZE)
    removed = deck_counts(s.deck, 0, NUM_REMOVED)
    _eq(held + pile + removed, np.broadcast_to(SIZES, (6, b)), "cards per company")
    assert (s.market_count >= 0).all() and (s.market_count <= SIZES).all()

    # Coins.
    _eq(s.coins.sum(axis=0, dtype=int) + s.market_coins.sum(axis=0, dtype=int), 10 * n, "coins not conserved")
    assert (s.coins[:, running] >= 0).all(), "negative coins during play"
    coins, exists = per_card_coins(s)
    _eq(coins.sum(axis=1), s.market_coins, "market_coins != sum of card coins")
    assert (coins[exists] >= 0).all()
    assert (np.diff(coins, axis=1)[exists[:, 1:]] <= 0).all(), "a newer card carries more coins than an older one"
    _eq(s.market_take_coins(), coins[:, 0, :], "market_take_coins")

    # Hands: 3 cards, 4 for the player to act in the put-down phase; 0 <= known <= hand.
    sizes = s.hand.sum(axis=1, dtype=int)  # [P, B]
    expected = np.where(present, 3, 0) + ((seat == s.current[None, :]) & (s.phase[None, :] == 1))
    _eq(sizes[:, running], expected[:, running], "hand sizes")
    assert (s.known >= 0).all() and (s.known <= s.hand).all(), "known exceeds hand"

    # Chips.
    top = s.portfolio.max(axis=0)  # [C, B]
    held_chip = s.chip >= 0
    _eq(held_chip, top > 0, "chip held iff someone has the company")
    holder = np.maximum(s.chip, 0).astype(int)
    holder_count = np.take_along_axis(s.portfolio.transpose(1, 2, 0), holder[..., None], axis=2)[..., 0]
    assert (holder_count[held_chip] == top[held_chip]).all(), "chip held by a player without a maximal portfolio"
    assert (s.chip < n[None, :]).all()

    # Unseen cards of the player to act: others' hands (less what is known) + pile + removed.
    others = present & (seat != s.current[None, :])
    hidden = ((s.hand - s.known).astype(int) * others[:, None, :]).sum(axis=0)
    _eq(s.unseen(s.current), hidden + pile + removed, "unseen")

    # Round game: one +2 and one -1 chip per finished round, and a +1 chip at tables of 3+
    # (with 2 players the second is also last and gets only the -1).
    completed = s.round.astype(int)
    _eq(s.plus2.sum(axis=0, dtype=int), completed, "+2 chips")
    _eq(s.plus1.sum(axis=0, dtype=int), np.where(n >= 3, completed, 0), "+1 chips")
    _eq(s.round_points.sum(axis=0, dtype=int), np.where(n >= 3, 2, 1) * completed, "round points")

    # The mask.
    mask = sim.legal_mask()
    assert mask.shape == (b, NUM_ACTIONS) and mask.dtype == bool
    assert not mask[~running].any(), "finished games must have an empty mask"
    assert mask[running].any(axis=1).all(), "a running game without a legal action"
    take = running & (s.phase == 0)
    assert not mask[take][:, Action.KEEP:].any() and not mask[running & ~take][:, : Action.KEEP].any()


def choose(mask: np.ndarray, rng: np.random.Generator, market_bias: float) -> np.ndarray:
    """A random legal action per game; with probability ``market_bias`` a market action
    (take a market card / put into the market) when one is legal, so that markets fill."""
    weights = mask.astype(float)
    prefer = np.zeros(NUM_ACTIONS, bool)
    prefer[Action.TAKE:Action.KEEP] = prefer[Action.MARKET:] = True
    lean = (rng.random(mask.shape[0]) < market_bias) & (mask & prefer).any(axis=1)
    weights[lean] *= prefer
    p = weights / np.maximum(weights.sum(axis=1, keepdims=True), 1)
    u = rng.random(mask.shape[0])[:, None]
    actions = (p.cumsum(axis=1) < u).sum(axis=1)
    return np.minimum(actions, NUM_ACTIONS - 1)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    players=st.lists(st.integers(2, 7), min_size=1, max_size=6),
    rounds=st.sampled_from([1, 4]),
    turn_cap=st.sampled_from([120, 120, 40, 3]),  # 120: above a normal game's length
    market_bias=st.sampled_from([0.0, 0.5, 0.9]),
)
def test_invariants_under_random_play(seed, players, rounds, turn_cap, market_bias):
    play_and_check(seed, players, rounds, turn_cap, market_bias)


@settings(max_examples=5, deadline=None, database=None, phases=NO_SHRINK)
@example(seed=40, players=[2, 3, 4, 5, 6, 7, 4, 3] * 8, rounds=1, turn_cap=120, market_bias=0.5)  # 64 games
@given(
    seed=st.integers(0, 2**32 - 1),
    players=st.lists(st.integers(2, 7), min_size=40, max_size=64),
    rounds=st.sampled_from([1, 4]),
    turn_cap=st.sampled_from([120, 40]),
    market_bias=st.sampled_from([0.0, 0.5, 0.9]),
)
def test_invariants_under_random_play_in_large_batches(seed, players, rounds, turn_cap, market_bias):
    """Batches of more than 32 games take other code paths in the simulator (e.g. the
    draw cost and the coins laid on a draw are summed row by row): the same invariants."""
    play_and_check(seed, players, rounds, turn_cap, market_bias)


def play_and_check(seed, players, rounds, turn_cap, market_bias) -> None:
    """Play a batch (one game per entry of ``players``, its table size) to the end with
    ``choose``, checking the invariants after every decision."""
    rng = np.random.default_rng(seed)
    sim = Simulator(Rules(rounds=rounds, turn_cap=turn_cap), len(players), seed=seed, num_players=players)
    decisions = 0
    while not sim.done.all():
        check_invariants(sim)
        mask = sim.legal_mask()
        actions = choose(mask, rng, market_bias)
        done = np.flatnonzero(sim.done)
        # Finished games get arbitrary ids, which must be ignored.
        actions[done] = rng.integers(0, NUM_ACTIONS, done.size)
        before = sim.state.take(done)
        result = sim.step(actions)
        assert_states_equal(before, sim.state.take(done), "finished games changed")
        np.testing.assert_array_equal(result.terminated | result.truncated, sim.done)
        decisions += 1
        assert decisions < 2 * turn_cap * rounds + 2
    check_invariants(sim)
    # The whole batch finished: any further step changes nothing.
    before = sim.state.copy()
    result = sim.step(rng.integers(0, NUM_ACTIONS, len(players)))
    assert_states_equal(before, sim.state, "finished batch changed")
    assert (result.rewards == 0).all(), "rewards only on the ending step"
    assert not sim.legal_mask().any()
    assert (sim.state.truncated == sim.state.capped).all()


@settings(max_examples=10, deadline=None, database=None, phases=NO_SHRINK)
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 7), market_bias=st.sampled_from([0.0, 0.7]))
def test_invariants_with_auto_reset(seed, players, market_bias):
    """Auto-reset re-deals finished games inside the step: the invariants hold across the
    re-deal and no game ever waits finished."""
    rng = np.random.default_rng(seed)
    sim = Simulator(Rules(num_players=players, turn_cap=60), 8, seed=seed, auto_reset=True)
    ended = 0
    for _ in range(200):
        check_invariants(sim)
        result = sim.step(choose(sim.legal_mask(), rng, market_bias))
        assert not sim.done.any()
        finished = result.terminated | result.truncated
        ended += int(finished.sum())
        # Rewards exactly on the ending step, zero-sum.
        assert (result.rewards[~finished] == 0).all()
        np.testing.assert_allclose(result.rewards.sum(axis=1), 0, atol=1e-5)
        # Re-dealt games start afresh.
        assert (sim.state.turn[finished] == 0).all() and (sim.state.phase[finished] == 0).all()
        assert (sim.state.pile_pos[finished] == 5 + 3 * players).all()
    assert ended > 0
