"""Observations: shape, dtype and bounds at every table size; every piece recomputed
independently from the state (seats relative to the observer); the one-game path equal to
the batch path; no leak of hidden cards, and public changes shown (both paths);
``public_state``; the declared layout (``PIECES``, ``SLICES``, ``views``, ``layout_table``)."""

import numpy as np
import pytest
from helpers import assert_states_equal, snapshots, states_equal

from startups_env import Rules, Simulator
from startups_env.startups import queries
from startups_env.startups.observe import OBS_DIM, PIECES, SLICES, layout_table, observation_bounds, observe, views
from startups_env.startups.rules import COMPANY_SIZES, DECK_SIZE, MAX_PLAYERS, NUM_COMPANIES, NUM_REMOVED
from startups_env.startups.state import State, deal_hidden, public_state

P, C = MAX_PLAYERS, NUM_COMPANIES


def _states(players, rounds=1, b=12, seed=0, every=7, steps=400, ruleset="rulebook"):
    """States reached by random play (every ``every``-th decision), mixed table sizes."""
    sim = Simulator(Rules.preset(ruleset, rounds=rounds, turn_cap=200), b, seed=seed, num_players=np.resize(players, b))
    out = [sim.state.copy()]
    for k in range(steps):
        if sim.done.all():
            break
        sim.step(sim.random_actions())
        if k % every == 0:
            out.append(sim.state.copy())
    out.append(sim.state.copy())  # includes finished games
    return out


def _seats(state: State, shift: int) -> np.ndarray:
    """Observer seat per game: the player to act moved on by ``shift`` seats."""
    n = state.num_players.astype(int)
    return ((state.current.astype(int) + shift) % n).astype(np.int8)


# ----------------------------------------------------------------- shape and bounds
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6, 7, (2, 3, 4, 5, 6, 7)])
def test_shape_dtype_and_bounds(players):
    for rounds in (1, 4):
        bound_low, bound_high = observation_bounds(Rules(rounds=rounds, turn_cap=200), tuple(np.atleast_1d(players)))
        for state in _states(np.atleast_1d(players), rounds=rounds, seed=len(np.atleast_1d(players)), every=5):
            for shift in range(P):
                obs = observe(state, _seats(state, shift))
                assert obs.shape == (state.batch_size, OBS_DIM) and obs.dtype == np.float32
                assert np.isfinite(obs).all()
                low, high = obs < bound_low, obs > bound_high
                assert not low.any() and not high.any(), f"out of bounds at {np.flatnonzero(low | high)[:5]}"
            np.testing.assert_array_equal(observe(state), observe(state, state.current))


# Action weights of the biased random players of the bounds test (unlisted actions: 1):
# between them they drive every piece to its extremes at some table size.
_DRAW, _TAKES, _KEEPS, _MARKETS = [0], range(1, 7), range(7, 13), range(13, 19)
_STYLES = {
    "uniform": {},
    "hoard": {**dict.fromkeys(_TAKES, 50), 12: 1000, **dict.fromkeys(_MARKETS, 20)},  # take, keep elephants
    "feed": {0: 50, **dict.fromkeys(_MARKETS, 200), 18: 2000},  # draw, put into the market
    "keep": {0: 1000, **dict.fromkeys(_KEEPS, 100), **dict.fromkeys(_TAKES, 0.01)},  # draw, keep: coins pile up
}
_BOUND_TABLES = [  # (rules, the style of each seat, cycled)
    *[(Rules(num_players=n), styles) for n in range(2, 8) for styles in (["uniform"], ["hoard", "feed"])],
    (Rules(num_players=2), ["keep"]), (Rules(num_players=7), ["feed"]),
    (Rules(num_players=3, rounds=4), ["uniform"]), (Rules(num_players=4, turn_cap=30), ["uniform"]),
]


def _piece_ranges(rules: Rules, styles: list[str], games: int = 150, seed: int = 0) -> dict[str, tuple[float, float]]:
    """(min, max) of every piece over random games of biased-random players, every seat
    observed before every decision and at the end."""
    sim = Simulator(rules, games, seed=seed)
    rng = np.random.default_rng(seed)
    weights = np.ones((P, 19))
    for seat in range(P):
        for action, weight in _STYLES[styles[seat % len(styles)]].items():
            weights[seat, action] = weight
    lows, highs = np.full(OBS_DIM, np.inf), np.full(OBS_DIM, -np.inf)

    def look():
        for seat in range(rules.num_players):
            obs = observe(sim.state, np.full(games, seat, np.int8))
            np.minimum(lows, obs.min(axis=0), out=lows)
            np.maximum(highs, obs.max(axis=0), out=highs)

    while not sim.done.all():
        look()
        w = sim.legal_mask() * weights[sim.state.current]
        pick = rng.random((games, 1)) * w.sum(axis=1, keepdims=True)
        actions = np.minimum((w.cumsum(axis=1) < pick).sum(axis=1), 18)
        sim.step(np.where(sim.done, 0, actions), active=~sim.done)
    look()
    return {p.name: (lows[SLICES[p.name]].min(), highs[SLICES[p.name]].max()) for p in PIECES}


def test_bounds_are_reached_and_never_exceeded():
    """Every piece's declared bounds hold in every game of every table (random and
    biased-random players, 2-7 seats, the round game, a low turn cap) and each bound is
    reached, or nearly (within 20% of the range), at some table: the bounds are what the rules
    allow, not a loose cap. The turn piece reaches the turn cap. The one exception is by
    declaration: the standard game's round points are always 0 and get the range [0, 1] so
    that bound-based normalisers do not divide by 0."""
    reached_low, best_high = set(), dict.fromkeys(SLICES, 0.0)
    for rules, styles in _BOUND_TABLES:
        low, high = observation_bounds(rules)
        for p, (seen_low, seen_high) in zip(PIECES, _piece_ranges(rules, styles).values()):
            bound_low, bound_high = low[SLICES[p.name]][0], high[SLICES[p.name]][0]
            assert bound_low <= seen_low and seen_high <= bound_high, (rules, styles, p.name, seen_low, seen_high)
            if p.name == "round_points" and rules.rounds == 1:
                assert seen_low == seen_high == 0
                continue
            if seen_low == bound_low:
                reached_low.add(p.name)
            best_high[p.name] = max(best_high[p.name], (seen_high - bound_low) / (bound_high - bound_low))
            if p.name == "turn" and rules.turn_cap < 400:
                assert seen_high == bound_high == rules.turn_cap
    assert reached_low == set(SLICES)
    assert {name: share for name, share in best_high.items() if share < 0.8} == {}
    assert sum(share == 1 for share in best_high.values()) >= len(PIECES) - 3  # most are reached exactly


# ----------------------------------------------------------------- content
def _expected(snap: dict, state: State, g: int, seat: int, rounds_done: int) -> dict:
    """Every piece of game g as seen by ``seat``, computed from the snapshot."""
    n = len(snap["hands"])
    rel = [(seat + r) % n for r in range(n)]  # absolute seat of each relative seat
    exp = {p.name: np.zeros(p.shape, np.float32) for p in PIECES}
    exp["num_players"][n - 2] = 1
    exp["phase"][snap["phase"]] = 1
    exp["current_player"][(snap["current"] - seat) % n] = 1
    exp["hand"][:] = snap["hands"][seat]
    for r, p in enumerate(rel):
        exp["portfolios"][r] = snap["portfolios"][p]
        exp["known_hands"][r] = state.known[p, :, g]
        exp["coins"][r] = snap["coins"][p]
        exp["round_points"][r] = state.round_points[p, g]
    for c, holder in enumerate(snap["chips"]):
        if holder >= 0:
            exp["chips"][c, (holder - seat) % n] = 1
    market = snap["market"]
    exp["market_cards"][:] = [len(m) for m in market]
    exp["market_coins"][:] = [sum(m) for m in market]
    exp["take_coins"][:] = [m[0] if m else 0 for m in market]  # the oldest card is the richest
    exp["pile"][0] = snap["pile"]
    if snap["barred"] >= 0:
        exp["barred"][snap["barred"]] = 1
    seen = np.array(snap["hands"][seat]) + np.sum(snap["portfolios"], axis=0) + exp["market_cards"]
    seen += sum(state.known[p, :, g] for p in range(n) if p != seat)
    exp["unseen"][:] = np.array(COMPANY_SIZES) - seen
    exp["turn"][0] = snap["turn"]
    exp["round"][rounds_done] = 1
    return exp


@pytest.mark.parametrize("rounds", [1, 4])
def test_every_piece_matches_the_state_with_seats_relative_to_the_observer(rounds):
    for state in _states((2, 3, 4, 5, 6, 7), rounds=rounds, b=12, seed=rounds, every=11):
        snaps = snapshots(state, rounds)
        for shift in range(P):
            seat = _seats(state, shift)
            obs = views(observe(state, seat))
            for g in range(state.batch_size):
                exp = _expected(snaps[g], state, g, int(seat[g]), snaps[g]["round"])
                for name, want in exp.items():
                    np.testing.assert_array_equal(obs[name][g], want, err_msg=f"piece {name}, game {g}")


def test_observer_comes_first():
    """Relative seat 0 is the observer; seat 1 the next player in turn order."""
    state = _states((5,), b=4, seed=3)[-2]
    for seat in range(5):
        v = views(observe(state, np.full(4, seat)))
        for r in range(5):
            np.testing.assert_array_equal(v["coins"][:, r], state.coins[(seat + r) % 5])
            np.testing.assert_array_equal(v["portfolios"][:, r], state.portfolio[(seat + r) % 5].T)
        assert (v["coins"][:, 5:] == 0).all() and (v["portfolios"][:, 5:] == 0).all()


def test_out_buffer_is_overwritten_completely():
    state = _states((3, 6), b=6, seed=8)[-3]
    fresh = observe(state)
    buf = np.full((6, OBS_DIM), 99.0, np.float32)
    assert observe(state, out=buf) is buf
    np.testing.assert_array_equal(buf, fresh)


def test_bad_seats_are_rejected():
    state = _states((3,), b=4)[1]
    with pytest.raises(ValueError, match="seat"):
        observe(state, np.zeros(3, int))
    with pytest.raises(ValueError, match="seat"):
        observe(state, np.full(4, 3))  # a 3-player table has seats 0-2
    with pytest.raises(ValueError, match="seat"):
        observe(state, np.full(4, -1))


def _split(state: State) -> list[State]:
    """The games of ``state`` as batches of one."""
    return [state.take([g]) for g in range(state.batch_size)]


def _one_by_one(games: list[State], seat: np.ndarray) -> np.ndarray:
    """observe() of each batch of one (``_split``): the one-game path the PettingZoo env uses."""
    return np.concatenate([observe(game, seat[g:g + 1]) for g, game in enumerate(games)])


@pytest.mark.parametrize("rounds,ruleset", [(1, "rulebook"), (4, "rulebook"), (1, "market_row")])
def test_one_game_path_matches_the_batch_path(rounds, ruleset):
    """observe() encodes a batch of one game with its own code (``observe_one_game``); it must
    give the batch path's vectors bit for bit, for every observer, table size and round,
    and for turn counts past the int8 range that path assembles its bytes in (and, on a
    market row, the negative take coins)."""
    states = _states((2, 3, 4, 5, 6, 7), rounds=rounds, b=12, seed=20 + rounds, every=6, ruleset=ruleset)
    for state in states:
        games = _split(state)
        for shift in range(P):
            seat = _seats(state, shift)
            np.testing.assert_array_equal(_one_by_one(games, seat), observe(state, seat))
    state = states[len(states) // 2].copy()
    for turn in (127, 128, 255, 256, 29999, 30000):
        state.turn[:] = turn
        one = _one_by_one(_split(state), state.current)
        np.testing.assert_array_equal(one, observe(state))
        assert (views(one)["turn"] == turn).all()


# ----------------------------------------------------------------- no leak
def redeal_hidden(state: State, observer: np.ndarray, rng: np.random.Generator) -> State:
    """A copy of ``state`` in which every card ``observer`` cannot see is dealt anew: the
    other seats' hand cards that are not publicly known, the pile and the removed cards are
    pooled, shuffled and dealt back in the same numbers (known cards stay in their hands)."""
    new = state.copy()
    for g in range(state.batch_size):
        n, o, top = int(state.num_players[g]), int(observer[g]), int(state.pile_pos[g])
        others = [p for p in range(n) if p != o]
        hidden = {p: (state.hand[p, :, g] - state.known[p, :, g]).astype(int) for p in others}
        pool = [c for p in others for c in range(C) for _ in range(hidden[p][c])]
        pool += state.deck[:NUM_REMOVED, g].tolist() + state.deck[top:, g].tolist()
        rng.shuffle(pool)
        for p in others:
            k = int(hidden[p].sum())
            dealt, pool = pool[:k], pool[k:]
            new.hand[p, :, g] = state.known[p, :, g] + np.bincount(dealt, minlength=C)
        new.deck[:NUM_REMOVED, g], pool = pool[:NUM_REMOVED], pool[NUM_REMOVED:]
        new.deck[top:, g] = pool
        assert len(pool) == DECK_SIZE - top
    return new


@pytest.mark.parametrize("rounds", [1, 4])
def test_no_leak_of_hidden_cards(rounds):
    rng = np.random.default_rng(rounds)
    changed = 0
    for state in _states((2, 3, 4, 5, 6, 7), rounds=rounds, b=12, seed=10 + rounds, every=9):
        games = _split(state)
        for shift in range(P):
            seat = _seats(state, shift)
            other = redeal_hidden(state, seat, rng)
            changed += not states_equal(state, other)
            np.testing.assert_array_equal(observe(state, seat), observe(other, seat), err_msg="observation leaks")
            np.testing.assert_array_equal(_one_by_one(games, seat), _one_by_one(_split(other), seat),
                                          err_msg="the one-game path (the PettingZoo env's) leaks")
            assert_states_equal(public_state(state, seat), public_state(other, seat), "public_state leaks")
    assert changed > 50, "the re-deals must actually change hidden cards"


def test_visible_changes_do_change_the_observation():
    """Control for the no-leak test: swapping a card of the observer's own hand with a pile
    card of another company changes the observation."""
    state = _states((4,), b=8, seed=2)[3]
    seat = state.current.copy()
    other = state.copy()
    differs = 0
    for g in range(8):
        top = int(state.pile_pos[g])
        mine = np.flatnonzero(state.hand[seat[g], :, g])[0]
        pile_card = next((int(c) for c in state.deck[top:, g] if c != mine), None)
        if pile_card is None:
            continue
        other.hand[seat[g], mine, g] -= 1
        other.hand[seat[g], pile_card, g] += 1
        differs += 1
    assert differs > 0
    a, b = observe(state, seat), observe(other, seat)
    assert (a != b).any(axis=1).sum() == differs


# Public edits for the converse of the no-leak test: the pieces each must change, for
# observers other than the seat it concerns and for that seat.
_PUBLIC_EDITS = {
    "portfolio": ({"portfolios", "unseen"}, {"portfolios", "unseen"}),
    "market_coin": ({"coins", "market_coins", "take_coins"},) * 2,
    "chip": ({"chips"},) * 2,
    "known": ({"known_hands", "unseen"}, {"known_hands"}),
    "round_points": ({"round_points"},) * 2,
}


def _edit_public(state: State, g: int, kind: str) -> int | None:
    """Change one public fact of game g in place, keeping the card and coin totals (the
    result need not be reachable by play). Returns the seat it concerns, or None where
    game g offers nothing to edit."""
    n, top = int(state.num_players[g]), int(state.pile_pos[g])
    q = (int(state.current[g]) + 1) % n
    if kind == "portfolio":  # one of q's portfolio cards swapped with a pile card of another company
        held = [c for c in range(C) if state.portfolio[q, c, g]]
        for pos in range(top, DECK_SIZE):
            new = int(state.deck[pos, g])
            old = next((c for c in held if c != new), None)
            if old is not None:
                state.portfolio[q, old, g] -= 1
                state.portfolio[q, new, g] += 1
                state.deck[pos, g] = old
                return q
        return None
    if kind == "market_coin":  # one of q's coins laid on the richest card of a company
        c = next((c for c in range(C) if state.market_count[c, g]), None)
        if c is None or state.coins[q, g] == 0:
            return None
        state.market_stamp[c, state.market_head[c, g], g] -= 1
        state.market_coins[c, g] += 1
        state.coins[q, g] -= 1
        return q
    if kind == "chip":  # a chip moves on to the next seat (an unclaimed one to q)
        c = g % C
        holder = int(state.chip[c, g])
        state.chip[c, g] = q if holder < 0 else (holder + 1) % n
        return q
    if kind == "known":  # one more of q's hand cards becomes publicly known
        c = next((c for c in range(C) if state.hand[q, c, g] > state.known[q, c, g]), None)
        if c is None:
            return None
        state.known[q, c, g] += 1
        return q
    state.round_points[q, g] += 1
    return q


@pytest.mark.parametrize("rounds", [1, 4])
def test_public_changes_do_change_the_observation(rounds):
    """The converse of the no-leak test: changing one public fact (a portfolio card, a coin
    laid on a market card, a chip, a publicly known hand card, round points) changes
    exactly the pieces that show it, for every observer, on both encoding paths."""
    names = np.array([p.name for p in PIECES])
    starts = [SLICES[name].start for name in names]
    edited = dict.fromkeys(_PUBLIC_EDITS, 0)
    for state in _states((2, 3, 4, 5, 6, 7), rounds=rounds, b=12, seed=30 + rounds, every=29):
        for kind, (for_others, for_edited) in _PUBLIC_EDITS.items():
            other = state.copy()
            concerned = np.array([_edit_public(other, g, kind) for g in range(state.batch_size)], object)
            edited[kind] += sum(q is not None for q in concerned)
            pairs = {observe: (state, other), _one_by_one: (_split(state), _split(other))}
            for shift in range(P):
                seat = _seats(state, shift)
                want = np.array([[name in (set() if q is None else for_edited if seat[g] == q else for_others)
                                  for name in names] for g, q in enumerate(concerned)])
                for path, (before, after) in pairs.items():
                    changed = np.logical_or.reduceat(path(before, seat) != path(after, seat), starts, axis=1)
                    wrong = np.flatnonzero((changed != want).any(axis=1))
                    g = wrong[0] if wrong.size else None
                    assert g is None, (f"{kind} edit of seat {concerned[g]}, game {g}, observer {seat[g]}, "
                                       f"{path.__name__}: changed {names[changed[g]].tolist()}, "
                                       f"expected {names[want[g]].tolist()}")
    assert min(edited.values()) > 15, edited


def test_public_state_hides_exactly_the_hidden_cards():
    for state in _states((2, 4, 7), rounds=4, b=9, seed=4, every=13):
        for shift in range(P):
            seat = _seats(state, shift)
            before = state.copy()
            public = public_state(state, seat)
            assert_states_equal(before, state, "public_state must not modify its input")
            own = np.arange(P)[:, None] == seat[None, :].astype(int)  # [P, B]
            np.testing.assert_array_equal(public.hand, np.where(own[:, None, :], state.hand, state.known))
            assert (public.deck == -1).all()
            for name in vars(state):
                if name not in ("hand", "deck"):
                    np.testing.assert_array_equal(getattr(public, name), getattr(state, name), err_msg=name)
                    assert getattr(public, name) is not getattr(state, name), f"{name} must be a copy"
            # What the observer may know gives the same observation.
            np.testing.assert_array_equal(observe(public, seat), observe(state, seat))


def test_deal_hidden_deals_back_a_world_the_observer_cannot_tell_apart():
    rng = np.random.default_rng(5)
    for state in _states((2, 4, 7), rounds=4, b=9, seed=6, every=11):
        state = state.take(np.flatnonzero(~state.done))  # (a finished game has nothing hidden left)
        seat = _seats(state, 1)
        public = public_state(state, seat)
        world = deal_hidden(public, seat, rng.random((state.batch_size, DECK_SIZE)))
        running = np.ones(state.batch_size, bool)
        # Every card is somewhere: hands, portfolios, market, and the deck's pile and removed cards.
        in_pile = np.arange(DECK_SIZE)[:, None] >= world.pile_pos[None, :]
        in_pile[:NUM_REMOVED] = True
        deck_cards = np.stack([((world.deck == c) & in_pile).sum(axis=0) for c in range(C)])
        total = world.hand.sum(axis=0) + world.portfolio.sum(axis=0) + world.market_count + deck_cards
        np.testing.assert_array_equal(total[:, running], np.array(COMPANY_SIZES)[:, None].repeat(running.sum(), 1))
        assert (world.deck[~in_pile] == -1).all()
        # Hands keep their size and their known cards; the observer sees the same game.
        n = state.num_players.astype(int)
        seated = np.arange(P)[:, None] < n[None, :]
        np.testing.assert_array_equal(world.hand.sum(axis=1)[:, running], state.hand.sum(axis=1)[:, running])
        assert (world.hand >= world.known).all() and (world.hand[~seated[:, None, :].repeat(C, 1)] == 0).all()
        np.testing.assert_array_equal(observe(world, seat)[running], observe(state, seat)[running])
        np.testing.assert_array_equal(public_state(world, seat).hand, public.hand)


def test_deal_hidden_refuses_a_public_state_no_deal_could_make():
    sim = Simulator(Rules(num_players=4), 1, seed=0)
    public = public_state(sim.state, np.array([0]))
    public.known[1, 0, 0] = public.hand[1, 0, 0] = 4  # four known cards in a hand of three
    with pytest.raises(ValueError, match="more known cards than a hand can"):
        deal_hidden(public, np.array([0]), np.zeros((1, DECK_SIZE)))
    with pytest.raises(ValueError, match="seat must have shape"):
        deal_hidden(public, np.array([0, 1]), np.zeros((1, DECK_SIZE)))


# ----------------------------------------------------------------- the declared layout
def test_pieces_slices_and_views_agree():
    assert OBS_DIM == sum(p.size for p in PIECES)
    assert [p.name for p in PIECES] == list(SLICES) and len(set(SLICES)) == len(PIECES)
    start = 0
    for p in PIECES:
        assert SLICES[p.name] == slice(start, start + p.size), p.name
        assert p.size == int(np.prod(p.shape)) and p.range_doc and p.doc
        for rules in (Rules(num_players=2), Rules(num_players=7, rounds=4, turn_cap=50)):
            bound_low, bound_high = p.bounds(rules)
            assert bound_low < bound_high, (p.name, rules)  # (a zero width would break normalisers)
            low, high = observation_bounds(rules)
            np.testing.assert_array_equal(low[SLICES[p.name]], bound_low)
            np.testing.assert_array_equal(high[SLICES[p.name]], bound_high)
        start += p.size
    assert start == OBS_DIM
    # Mixed table sizes: the widest range over them.
    low, high = observation_bounds(Rules(), (2, 7))
    assert high[SLICES["coins"]].max() == 70 and high[SLICES["pile"]].max() == 34
    assert not low.flags.writeable and not high.flags.writeable

    obs = np.random.default_rng(0).random((3, 5, OBS_DIM)).astype(np.float32)
    v = views(obs)
    assert list(v) == [p.name for p in PIECES]
    for p in PIECES:
        assert v[p.name].shape == (3, 5, *p.shape)
        assert np.shares_memory(v[p.name], obs), "views must not copy"
    flat = np.concatenate([v[p.name].reshape(3, 5, -1) for p in PIECES], axis=-1)
    np.testing.assert_array_equal(flat, obs)


def test_layout_table_is_generated_from_the_pieces():
    lines = layout_table().splitlines()
    assert len(lines) == 2 + len(PIECES)
    assert lines[0].startswith("|") and set(lines[1]) <= set("|-")
    for line, p in zip(lines[2:], PIECES):
        sl = SLICES[p.name]
        assert line.startswith(f"| {sl.start}-{sl.stop - 1} |"), line
        assert f"`{p.name}`" in line and str(list(p.shape)) in line and p.doc in line
    assert lines[-1].startswith(f"| {OBS_DIM - PIECES[-1].size}-{OBS_DIM - 1} |")


def test_a_market_row_shows_each_take_s_price_within_its_bounds():
    """Under market_row the take_coins piece is minus each take's price (its place in the
    row), within the declared bounds; some take costs something in random play."""
    rules = Rules.preset("summary", turn_cap=200)
    low, high = observation_bounds(rules, (2, 3, 4, 5, 6, 7))
    lowest = 0
    for state in _states((2, 3, 4, 5, 6, 7), b=12, seed=5, every=3, ruleset="summary"):
        obs = observe(state)
        assert (obs >= low).all() and (obs <= high).all()
        take = views(obs)["take_coins"]
        np.testing.assert_array_equal(take, -queries.row_prices(state.market_order).T)
        lowest = min(lowest, take.min())
    assert lowest < -3


@pytest.mark.parametrize("ruleset", ["rulebook", "market_row"])
def test_take_coins_is_the_market_s_whether_or_not_the_take_is_possible_now(ruleset):
    """docs/api.md: ``take_coins[c]`` is what a take of company c would gain by the market
    alone (the coins on its front-most card, less the row's price under ``market_row``; 0
    without a market card), the same for every observer, in both phases, and also where the
    player to act cannot take c now: they hold c's chip, or cannot pay the row's price."""
    b, n = 48, 4
    sim = Simulator(Rules.preset(ruleset, num_players=n), b, seed=5)
    seen, games = set(), np.arange(b)
    while not sim.done.all():
        s, mask = sim.state, sim.legal_mask()
        running = ~sim.done
        take = views(observe(s, s.current.astype(np.intp)))["take_coins"].T  # [C, B]
        for seat in range(n):  # every observer sees the same entries
            assert np.array_equal(views(observe(s, np.full(b, seat)))["take_coins"].T[:, running], take[:, running])
        listed = s.market_count > 0
        assert np.all(take[~listed] == 0)
        own_chip = s.chip == s.current[None].astype(s.chip.dtype)
        blocked = running & (s.phase == 0) & listed & ~mask[:, 1:7].T  # [C, B]: a market card, no take
        seen.update({"put-down"} if (running & (s.phase == 1) & listed.any(axis=0) & (take != 0).any(axis=0)).any()
                    else set())
        seen.update({"chip held"} if (blocked & own_chip).any() else set())
        seen.update({"unaffordable"} if (blocked & ~own_chip & (-take > s.coins[s.current, games])).any() else set())
        actions = sim.random_actions(mask)
        coins_before = s.coins[s.current, games].astype(int)
        seat, taking = s.current.astype(np.intp), running & (actions >= 1) & (actions <= 6)
        sim.step(actions)
        gained = sim.state.coins[seat, games].astype(int) - coins_before
        assert np.array_equal(gained[taking], take[actions[taking] - 1, games[taking]])  # a take gains take_coins
    assert seen == ({"put-down", "chip held", "unaffordable"} if ruleset == "market_row" else {"put-down", "chip held"})
