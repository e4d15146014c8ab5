"""The compiled backend: the rules of *Startups* game by game, in numba, over the arrays
of :class:`startups_env.startups.state.State`.

:mod:`startups_env.startups.simulator` is the reference: its numpy step applies every rule to the whole
batch at once. The kernels here apply the same rules to one game at a time, in plain
scalar code that reads like the rulebook (docs/rules.md), and loop over the games (on
numba's threads from ``PARALLEL_FROM`` games on, where they pay: :class:`.numba_runtime.ThreadChoice`). ``Simulator(..., backend="numba")`` runs
on them; the tests prove the two backends equal state for state (tests/test_kernels.py).

What is compiled: the legal mask, the uniform legal sampler, the take / put-down step, the
scoring of a finished round and the deal of a round from a shuffled deck (under auto-reset
in the one-round game, both and the ended games' report in one call, :func:`end_games`).
The rest of the end of a round (the round game's chips, rewards, the shuffling, which
draws from the simulator's generator) happens in a few games per step and stays in core's
numpy code, shared by both backends.

The kernels take the State's arrays by their State names (``hand[p, c, g]`` is seat p's
hand cards of company c in game g) and change them in place; compiled callers that need
many of them (the greedy and rollout kernels of ``startups_env.agents``) pass the
:class:`StateArrays` named tuple of :func:`arrays`. They are compiled on first use and
cached on disk (``cache=True``, kept in step with every source they compile in by
:func:`forget_stale_cache`); the first use on a machine pays the compile time once.
"""

from __future__ import annotations

import glob
import hashlib
import os
import types

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils
from numba.extending import intrinsic

from startups_env.startups import numba_runtime, queries, rules
from startups_env.startups.observe import OBS_DIM, PIECES, SLICES
from startups_env.startups.rules import (
    CHIP_TRIPLES_COINS,
    COMPANY_SIZES,
    DECK_SIZE,
    HAND_SIZE,
    MARKET_ROW,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_ACTIONS,
    NUM_COMPANIES,
    NUM_REMOVED,
    PAYOUT_IN_POINTS,
    PUT_PHASE,
    ROUND_GAME_ROUNDS,
    STARTING_COINS,
    TAKE_PHASE,
    Action,
)
from startups_env.startups.state import State, StepResult, arrays, illegal_actions_error


def forget_stale_cache(module_file: str, *sources: str) -> None:
    """Delete the on-disk cache of the kernels of ``module_file`` if it or one of the
    ``sources`` whose functions its kernels compile in (inlined or called) changed since
    the cache was written. numba checks a cached kernel against its own source file only,
    so an edited rule in another file would otherwise be served stale (or fail to load,
    when a type it names is gone). A hash of all the sources is kept beside the cache.
    Every kernel module calls this on import, before its kernels are first used; the
    cache of a custom ``NUMBA_CACHE_DIR`` is not looked after."""
    folder = os.path.join(os.path.dirname(os.path.abspath(module_file)), "__pycache__")
    stem = os.path.splitext(os.path.basename(module_file))[0]
    digest = hashlib.sha256()
    for path in (module_file, *sources):
        with open(path, "rb") as f:
            digest.update(f.read())
    stamp = os.path.join(folder, f"{stem}.kernel-sources.sha256")
    try:
        with open(stamp) as f:
            if f.read() == digest.hexdigest():
                return
    except OSError:
        pass
    try:
        for path in glob.glob(os.path.join(folder, f"{stem}.*.nbi")) + glob.glob(os.path.join(folder, f"{stem}.*.nbc")):
            os.remove(path)
        os.makedirs(folder, exist_ok=True)
        partial = f"{stamp}.{os.getpid()}"
        with open(partial, "w") as f:
            f.write(digest.hexdigest())
        os.replace(partial, stamp)
    except OSError:  # a read-only install: numba falls back to its own cache folder
        pass


forget_stale_cache(__file__, queries.__file__, rules.__file__)
numba_runtime.describe_kernels(__name__, "the simulator's kernels (the rules, compiled)", 45)
numba_runtime.start_threads()  # (before any parallel kernel runs: how numba's threads wait on a busy machine)

P, C = MAX_PLAYERS, NUM_COMPANIES
SLOTS = queries.SLOTS
DRAW, TAKE, KEEP, MARKET = int(Action.DRAW), int(Action.TAKE), int(Action.KEEP), int(Action.MARKET)
NO_ONE = -1
_NO_GAMES = np.empty(0, np.intp)  # shared, never modified: "no game ended"
_NO_GAMES.flags.writeable = False

def _jit(function):
    """A kernel called from Python over a batch. Compiled without numba's reference
    counting (``_nrt=False``): the kernels allocate nothing, and counting the references
    of every array handed to each inlined per-game piece made the step 7x slower."""
    return numba.njit(cache=True, nogil=True, _nrt=False)(function)


def _inline(function):
    """A per-game piece, inlined into each kernel that calls it: a compiled call passes
    every array as a dozen words, which costs more than the rule it applies."""
    return numba.njit(cache=True, nogil=True, inline="always")(function)


def _prefetch_hint(typingctx, array, index):
    def codegen(context, builder, signature, args):
        array_type, index_type = signature.args
        arr = context.make_array(array_type)(context, builder, args[0])
        indices = [context.cast(builder, i, t, numba.types.intp)
                   for i, t in zip(cgutils.unpack_tuple(builder, args[1], index_type.count), index_type.types)]
        pointer = cgutils.get_item_pointer(context, builder, array_type, arr, indices, wraparound=False)
        i32 = ir.IntType(32)
        hint = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [pointer.type, i32, i32, i32]),
                                              "llvm.prefetch.p0")
        builder.call(hint, [pointer, i32(0), i32(3), i32(1)])  # (a read, kept in every cache level, data)
        return context.get_dummy_value()
    return numba.types.void(array, index), codegen


def _no_hint(array, index) -> None:
    """(NUMBA_DISABLE_JIT: the kernels run as Python, where a hint means nothing.)"""


#: ``prefetch(array, (i, j, ...))`` in a kernel: a hint to the CPU to bring the cache line
#: of ``array[i, j, ...]`` in, and nothing else (no load, no effect on any value). A batch
#: kernel issues it for a game a few ahead whose rows lie where the hardware would not look:
#: a loop that spends a few hundred cycles a game otherwise waits on each of those rows.
prefetch = _no_hint if numba.config.DISABLE_JIT else intrinsic(_prefetch_hint)


class CallSite:
    """One place that calls a kernel from Python with arguments whose types never change
    there (the simulator's state record, its masks, its action arrays). The first call goes
    through numba's dispatcher, which compiles or loads the kernel and types every argument;
    later calls go straight to that compiled version, because typing the state record on
    every call (about 20 us) cost more than a one-game step."""

    __slots__ = ("kernel", "entry")

    def __init__(self, kernel):
        self.kernel = kernel
        self.entry = None

    def __get__(self, instance, owner):
        # Read as an attribute of the class using it: once compiled, the entry point itself,
        # which spares each call a Python frame.
        return self if self.entry is None else self.entry

    def __call__(self, *args):
        if self.entry is not None:
            return self.entry(*args)
        result = self.kernel(*args)
        overloads = getattr(self.kernel, "overloads", None)  # (none where NUMBA_DISABLE_JIT runs plain Python)
        if overloads is not None:
            self.entry = overloads[tuple(numba.typeof(arg) for arg in args)].entry_point
        return result


def loop_body(function):
    """The body of a loop over games that numba may run on threads: a compiled function
    called, not inlined. (Inlined into a ``prange`` loop, numba 0.68 drops the writes made
    through a field of the state record, ``s.hand[...] = x``; a call keeps them.) One call
    covers a block or a thread's share of the games, so its cost is paid rarely."""
    return numba.njit(cache=True, nogil=True, _nrt=False)(function)


def serial_and_parallel(function):
    """Two compiled versions of a kernel that loops over the games with ``numba.prange``:
    one on the calling thread (``prange`` runs as ``range``), one on numba's threads. A
    parallel region costs a thread hand-off, which small batches do not repay, and on a
    machine whose cores are busy it waits for every thread to be scheduled.

    The parallel one is compiled from a copy of the function under another name: numba
    files its on-disk cache by the function's name and signature, not by the ``parallel``
    flag, so both versions of one function would load whichever was cached first."""
    copy = types.FunctionType(function.__code__, function.__globals__, f"{function.__name__}_parallel",
                              function.__defaults__, function.__closure__)
    copy.__qualname__ = f"{function.__qualname__}_parallel"
    twins = _jit(function), numba.njit(cache=True, nogil=True, _nrt=False, parallel=True)(copy)
    TWINS.append(twins)
    return twins


TWINS: list[tuple] = []  # every (serial, parallel) pair of serial_and_parallel, for compile_twins


def compile_twins() -> int:
    """Compile (or load from the cache) each version of every :func:`serial_and_parallel`
    kernel for the argument types the other version has been called with, so that a run
    that used only one of them (small batches, say) leaves both cached; returns how many
    versions that took. What ``python -m startups_env.agents.precompile`` calls last."""
    count = 0
    for pair in TWINS:
        for this, other in (pair, pair[::-1]):
            for signature in other.signatures:
                if signature not in this.signatures:
                    this.compile(signature)
                    count += 1
    return count


PARALLEL_FROM = 4096  # games per batch from which the step may run on numba's threads (where they pay, measured)
PARALLEL_ROUNDS_FROM = 128  # finished rounds from which their scoring and next deal run on numba's threads


def thread_count() -> int:
    """How many threads numba's parallel kernels run on here."""
    return numba.get_num_threads()


# The element-wise rules of queries, compiled as they are: one home for each.
card_coins = _inline(queries.card_coins)
takes_chip = _inline(queries.takes_chip)
pile_start = _inline(rules.pile_start)
relative_seat = _inline(queries.relative_seat)
pile_left = _inline(queries.pile_left)
unseen_count = _inline(queries.unseen_count)

# Every kernel takes the arrays it reads or writes as separate arguments, in State's names:
# numba passes a named tuple of arrays by value, and reading fields of one inside the loop
# over games made the step several times slower.


@_inline
def draw_cost(g, seat, s):
    """Coins a draw by ``seat`` lays on the market of game g: one per market card of each
    company whose chip it lacks (queries.draw_cost); none where the market is a row."""
    cost = 0
    for c in range(C):  # (arithmetic, not a branch: which chips the seat lacks is unpredictable)
        cost += s.market_count[c, g] * (s.chip[c, g] != seat)
    return cost * ((s.options[g] & MARKET_ROW) == 0)


@_inline
def row_price(g, c, s):
    """What a take of company c costs in game g where the market is a row: its front-most
    card's place in ``market_order`` (the cards in front of it); 0 where c has no market
    card (queries.row_prices)."""
    for i in range(DECK_SIZE):
        company = s.market_order[i, g]
        if company == c:
            return i
        if company < 0:
            break
    return 0


@_inline
def legal_row_takes(legal, column, g, s):
    """Where game g's market is a row, clear in column ``column`` of ``legal`` the takes its
    player to act cannot pay for."""
    if s.options[g] & MARKET_ROW:
        purse = s.coins[s.current[g], g]
        for c in range(C):
            legal[TAKE + c, column] &= purse >= row_price(g, c, s)


@_inline
def legal_block(legal, lo, hi, s):
    """Write the legal actions of games lo..hi-1 into their columns of ``legal`` (bool[19,
    W]: ``legal[a, g]`` is action a's flag); all False where the game is over.

    At a take, a draw the player can afford (a coin on every market card of the companies
    whose chip it lacks) or the oldest market card of such a company; at a put-down, any
    hand card face up, or into the market unless it was just taken from there.

    Written action by action over the games, without branches (both phases' flags are
    computed, then masked by the phase; the player's row is picked by arithmetic, not by
    indexing): the loops over games compile to vector instructions, which write a batch's
    mask much faster than :func:`legal_actions` game by game (the tests hold the two equal).
    The game indices are unsigned: numba wraps a signed index that may be negative around
    at every read, which stops the vectorizing."""
    lo, hi = np.uint64(lo), np.uint64(hi)
    for g in range(lo, hi):
        seat = s.current[g]
        purse = 0
        for p in range(P):
            purse += s.coins[p, g] * (seat == p)
        taking = _running(g, s) & (s.phase[g] == TAKE_PHASE)
        legal[DRAW, g] = taking & (purse >= draw_cost(g, seat, s))
    for c in range(C):
        for g in range(lo, hi):
            taking = _running(g, s) & (s.phase[g] == TAKE_PHASE)
            legal[TAKE + c, g] = taking & (s.market_count[c, g] > 0) & (s.chip[c, g] != s.current[g])
    for c in range(C):
        for g in range(lo, hi):
            held = 0  # the player's hand cards of company c: every bit of its row (& -1), none of the others' (& 0)
            for p in range(P):
                held |= s.hand[p, c, g] & -np.int8(s.current[g] == p)
            put = _running(g, s) & (s.phase[g] != TAKE_PHASE) & (held > 0)
            legal[KEEP + c, g] = put
            legal[MARKET + c, g] = put & (c != s.barred[g])
    for g in range(lo, hi):
        legal_row_takes(legal, g, g, s)


@_inline
def _running(g, s):
    """Game g is not over (without the branch of ``or``)."""
    return not (s.terminated[g] | s.truncated[g])


@_inline
def legal_actions(legal, g, s):
    """Write game g's legal actions into column g of ``legal`` (bool[19, W]: ``legal[a, g]``
    is action a's flag); all False once the game is over. The rule of :func:`legal_block`
    for one game, as the rulebook puts it (:func:`legal_holding`): it indexes the player's
    rows directly, which for a single game (a rollout's move, a game whose round just
    ended) is faster than the block's arithmetic over every seat."""
    if s.terminated[g] or s.truncated[g]:
        for a in range(NUM_ACTIONS):
            legal[a, g] = False
        return
    legal_holding(legal, g, g, s, s.hand, s.current[g], g)


@_inline
def legal_holding(legal, column, g, s, hands, row, hand_column):
    """Write into column ``column`` of ``legal`` (bool[19, W]) the actions legal in running
    game g to the player to act, were its hand ``hands[row, :, hand_column]`` (cards per
    company: its own, or one a bot supposes). At a take: a draw it can afford (a coin on
    every market card of the companies whose chip it lacks), or the oldest market card of
    such a company; at a put-down, a hand card face up, or into the market unless it was
    just taken from there. (Indices, not views: a view per call slowed the rollouts.)"""
    seat = s.current[g]
    take = s.phase[g] == TAKE_PHASE
    legal[DRAW, column] = take and s.coins[seat, g] >= draw_cost(g, seat, s)
    for c in range(C):
        legal[TAKE + c, column] = take and s.market_count[c, g] > 0 and s.chip[c, g] != seat
        put = not take and hands[row, c, hand_column] > 0
        legal[KEEP + c, column] = put
        legal[MARKET + c, column] = put and c != s.barred[g]
    if take:
        legal_row_takes(legal, column, g, s)


@_inline
def legal_game(g, legal, s):
    """Write game g's legal actions into row g of ``legal`` (bool[B, 19], game-major: the
    layout of callers that read one game's flags at a time, as the rollouts do)."""
    legal_actions(legal.T, g, s)


def new_mask(batch_size: int) -> np.ndarray:
    """An uninitialized bool[19, W] mask for the simulator's kernels, W >= ``batch_size``:
    action-major like the numpy backend's mask (row a holds action a's flag of every game),
    each row padded to an odd number of 64-byte cache lines. The step writes each game's 19
    flags one to a row; rows a power of two apart in memory fall in one cache set and evict
    one another. Games use columns 0..B-1; pass the whole array to the kernels, which then
    see C-contiguous rows."""
    lines = -(-batch_size // 64)
    return np.empty((NUM_ACTIONS, 64 * (lines + 1 - lines % 2)), bool)


@_jit
def legal_rows(legal, s):
    """The legal mask of every game into its column of ``legal`` (bool[19, W], see
    :func:`new_mask`)."""
    legal_block(legal, 0, s.current.shape[0], s)


@_jit
def legal_columns(games, legal, s):
    """The legal mask of the listed games only, into their columns of ``legal``."""
    for g in games:
        legal_actions(legal, g, s)


@_inline
def take(g, action, s):
    """The take phase of game g: draw the top pile card (paying the market first) or take
    the oldest card of a company from the market with its coins."""
    seat = s.current[g]
    row = (s.options[g] & MARKET_ROW) != 0
    if action == DRAW:
        for c in range(C):  # a coin on each market card of the companies whose chip the seat lacks
            count = s.market_count[c, g]
            pays = (count > 0) & (s.chip[c, g] != seat) & (not row)  # (arithmetic, not a branch: see draw_cost)
            s.market_paid[c, g] += pays
            s.market_coins[c, g] += count * pays
            s.coins[seat, g] -= count * pays
        card = s.deck[s.pile_pos[g], g]
        s.pile_pos[g] += 1
    else:
        card = action - TAKE
        head = s.market_head[card, g]
        gained = card_coins(s.market_paid[card, g], s.market_stamp[card, head, g])
        s.coins[seat, g] += gained
        s.market_coins[card, g] -= gained
        s.market_count[card, g] -= 1
        s.market_head[card, g] = 0 if head + 1 == SLOTS else head + 1
        s.barred[g] = card  # it may not go straight back into the market
        s.known[seat, card, g] += 1  # everyone saw where it went
        if row:
            take_from_row(g, seat, card, s)
    s.hand[seat, card, g] += 1
    s.phase[g] = PUT_PHASE


@_inline
def take_from_row(g, seat, company, s):
    """Where the market is a row: ``seat`` pays a coin, out of the game, for each card in
    front of the front-most card of ``company``, which leaves the row."""
    place = row_price(g, company, s)
    s.coins[seat, g] -= place
    for i in range(place, DECK_SIZE - 1):
        s.market_order[i, g] = s.market_order[i + 1, g]
        if s.market_order[i, g] < 0:
            break
    s.market_order[DECK_SIZE - 1, g] = NO_ONE


@_inline
def put_down(g, action, r, s):
    """The put-down phase of game g: a hand card face up (the anti-monopoly chip follows
    the largest portfolio) or into the market; the turn ends. Returns whether the round
    ended (the pile ran out, or the turn cap was reached)."""
    seat = s.current[g]
    c = (action - KEEP) % C
    s.hand[seat, c, g] -= 1
    s.known[seat, c, g] = max(s.known[seat, c, g] - 1, 0)
    if action < MARKET:
        mine = s.portfolio[seat, c, g] + 1
        s.portfolio[seat, c, g] = mine
        holder = s.chip[c, g]
        if takes_chip(holder, mine, s.portfolio[max(holder, 0), c, g]):
            s.chip[c, g] = seat
    else:
        count = s.market_count[c, g]
        slot = s.market_head[c, g] + count
        if slot >= SLOTS:  # the ring wraps
            slot -= SLOTS
        s.market_stamp[c, slot, g] = s.market_paid[c, g]  # a new card carries no coins
        s.market_count[c, g] = count + 1
        if s.options[g] & MARKET_ROW:  # it joins the end of the row
            end = 0
            for k in range(C):
                end += s.market_count[k, g]
            s.market_order[end - 1, g] = c
    s.turn[g] += 1
    s.phase[g] = TAKE_PHASE
    s.barred[g] = NO_ONE
    over = s.pile_pos[g] >= DECK_SIZE or s.turn[g] >= r.turn_cap
    if over:
        if s.pile_pos[g] < DECK_SIZE:
            s.capped[g] = True
    else:
        s.current[g] = 0 if seat + 1 == s.num_players[g] else seat + 1
    return over


@_inline
def step_game(g, action, r, s):
    """Apply the legal ``action`` in running game g; returns whether its round ended."""
    if s.phase[g] == TAKE_PHASE:
        take(g, action, s)
        return False
    return put_down(g, action, r, s)


@_jit
def step_one_game(legal, action, r, s):
    """:func:`step_game` in game 0 (the PettingZoo env's one game), then its next legal mask
    into column 0 of ``legal`` (bool[19, W], see :func:`new_mask`) unless the round ended
    (then the end of the round changes the game first). Returns whether the round ended.
    One compiled call where two would cost the env more than the rules do."""
    ended = step_game(0, action, r, s)
    if not ended:
        legal_actions(legal, 0, s)
    return ended


@_jit
def count_illegal(legal, actions, active, s):
    """How many running, active games got an action their mask (bool[19, W]) does not allow."""
    bad = 0
    for g in range(actions.shape[0]):
        if active[g] and not (s.terminated[g] or s.truncated[g]) and not legal[actions[g], g]:
            bad += 1
    return bad


STEP_BLOCK = 512  # games stepped before their masks are written (while their state is in the nearest cache)


def _step_games(actions, active, r, over, legal, s):
    """Apply ``actions`` (legal, int[B]) in every running, active game; ``over`` (bool[B])
    is set where a round ended, and ``legal`` (bool[19, W], see :func:`new_mask`) receives
    every game's legal mask afterwards (stale where a round ended: the end of a round is not
    applied here). Games go in blocks of ``STEP_BLOCK``: each block is stepped game by game,
    then its masks are written action by action (:func:`legal_block`)."""
    b = actions.shape[0]
    for block in numba.prange((b + STEP_BLOCK - 1) // STEP_BLOCK):
        lo = block * STEP_BLOCK
        _step_block(lo, min(lo + STEP_BLOCK, b), actions, active, r, over, legal, s)


@loop_body
def _step_block(lo, hi, actions, active, r, over, legal, s):
    """:func:`_step_games` for games lo..hi-1."""
    for g in range(lo, hi):
        over[g] = False
        if active[g] and not (s.terminated[g] or s.truncated[g]):
            over[g] = step_game(g, actions[g], r, s)
    legal_block(legal, lo, hi, s)


step_games, step_games_parallel = serial_and_parallel(_step_games)


@_inline
def count_legal(legal, g, lo, hi):
    """How many of the actions lo..hi-1 are legal in game g (``legal`` bool[B, 19])."""
    count = 0
    for a in range(lo, hi):
        count += legal[g, a]
    return count


@_inline
def nth_legal(legal, g, lo, hi, pick):
    """The (pick+1)-th legal action of game g among lo..hi-1; hi - 1 where there are fewer."""
    for a in range(lo, hi):
        if legal[g, a]:
            if pick == 0:
                return a
            pick -= 1
    return hi - 1


@_jit
def legal_choice(legal, u, lo, hi, out, pick, seen):
    """out[g] = the (k+1)-th legal action of game g among lo..hi-1 (``legal`` bool[19, W],
    game g's flags in column g) for k = floor(u[g] * legal count), in u's float32
    (queries.legal_choice, offset by lo); hi - 1 where there is none. ``pick`` and ``seen``
    (int8[B]) are scratch.

    The loops run over the games innermost with no branch, not even a conditional store
    (``out[g] = a if ... else out[g]`` compiles to one, which does not vectorize and, with
    random flags, mispredicts about every other game), so that they compile to vector
    instructions: as in queries.legal_choice, the choice is lo plus the number of actions
    before it, the actions whose running legal count is still <= k."""
    b = u.shape[0]
    for g in range(b):
        pick[g] = 0
    for a in range(lo, hi):  # the legal counts, for now
        for g in range(b):
            pick[g] += legal[a, g]
    for g in range(b):
        pick[g] = np.int8(u[g] * np.float32(pick[g]))
        out[g] = lo
        seen[g] = 0
    for a in range(lo, hi - 1):
        for g in range(b):
            seen[g] += legal[a, g]
            out[g] += seen[g] <= pick[g]


@_inline
def score_round_game(g, s):
    """Score the finished round of game g (core's ``_score_rounds`` and ``company_payouts``
    for one game): in each company, if one seat holds strictly the most cards (hand +
    portfolio), every other seat pays it a coin per card it holds there, and each coin it
    receives counts 3 points. A seat's score is its coins less what it paid, plus 3 per coin
    received. Ranks: higher score first, then more 3-point coins, then the seat that played
    later, counting back from the player who took the last turn. Padded seats score 0 and
    rank -1."""
    n = s.num_players[g]
    for p in range(P):
        s.scores[p, g] = 0
        s.threes[p, g] = 0
        s.ranks[p, g] = -1
    for p in range(n):
        s.scores[p, g] = s.coins[p, g]
    in_points = (s.options[g] & PAYOUT_IN_POINTS) != 0
    majority = 0  # bit p: seat p holds the most of some company alone
    for c in range(C):
        most, winner, holders = 0, 0, 0
        for p in range(n):
            held = s.hand[p, c, g] + s.portfolio[p, c, g]
            if held > most:
                most, winner, holders = held, p, 1
            elif held == most:
                holders += 1
        if most == 0 or holders != 1:
            continue
        majority |= 1 << winner
        for p in range(n):
            if p != winner:
                paid = s.hand[p, c, g] + s.portfolio[p, c, g]
                s.scores[p, g] -= paid * (3 if in_points else 1)
                s.threes[winner, g] += paid
    for p in range(n):
        if s.options[g] & CHIP_TRIPLES_COINS and (majority >> p) & 1:
            # A majority holder's coins count 3 each: those kept after paying in coins, or
            # all of them where the payout is in points; a debt is not tripled.
            capital = s.coins[p, g] if in_points else s.scores[p, g]
            s.scores[p, g] += 2 * max(capital, 0)
        s.scores[p, g] += 3 * s.threes[p, g]
    last = s.current[g]
    for p in range(n):
        key = (np.int64(s.scores[p, g]) * 10_000 + np.int64(s.threes[p, g]) * 10) - relative_seat(last, p, n)
        rank = 0
        for q in range(n):
            other = (np.int64(s.scores[q, g]) * 10_000 + np.int64(s.threes[q, g]) * 10) - relative_seat(last, q, n)
            rank += other > key
        s.ranks[p, g] = rank


def _score_rounds(parts, games, s):
    """Score the finished rounds of the listed games (:func:`score_round_game`), split into
    ``parts`` consecutive runs (one per thread in the threaded version)."""
    n = games.shape[0]
    for part in numba.prange(parts):
        _score_part(n * part // parts, n * (part + 1) // parts, games, s)


@loop_body
def _score_part(lo, hi, games, s):
    """:func:`_score_rounds` for games[lo:hi]."""
    for i in range(lo, hi):
        score_round_game(games[i], s)


score_rounds, score_rounds_parallel = serial_and_parallel(_score_rounds)


def _deal_rounds(parts, games, decks, starters, r, s):
    """Deal a fresh round in each listed game g = games[i] from ``decks[i]`` (int8[45], the
    canonical order: the removed cards, the seats' hands, the pile), seat ``starters[i]`` to
    begin (core's ``_start_rounds``): every seated player gets its hand and the starting
    coins; portfolios, known cards, chips and the market are cleared, and the game takes
    the options of play of ``r`` (the rules record). (The market's stamps are left as they
    are: a card entering the market writes its own.)"""
    # Row by row, game by game within a row: the dealt games' entries of a row are near one
    # another in memory, where one game's entries are a row apart. The games are split into
    # ``parts`` consecutive runs, one per thread in the threaded version.
    for part in numba.prange(parts):
        _deal_part(games.shape[0] * part // parts, games.shape[0] * (part + 1) // parts, games, decks, starters, r, s)


@loop_body
def _deal_part(lo, hi, games, decks, starters, r, s):
    """:func:`_deal_rounds` for games[lo:hi]."""
    for pos in range(DECK_SIZE):
        for i in range(lo, hi):
            s.deck[pos, games[i]] = decks[i, pos]
    for p in range(P):
        for c in range(C):
            for i in range(lo, hi):
                g = games[i]
                s.hand[p, c, g] = 0
                s.portfolio[p, c, g] = 0
                s.known[p, c, g] = 0
        for i in range(lo, hi):
            s.coins[p, games[i]] = STARTING_COINS if p < s.num_players[games[i]] else 0
    for c in range(C):
        for i in range(lo, hi):
            g = games[i]
            s.chip[c, g] = NO_ONE
            s.market_count[c, g] = 0
            s.market_head[c, g] = 0
            s.market_paid[c, g] = 0
            s.market_coins[c, g] = 0
    for i in range(lo, hi):
        g = games[i]
        n = s.num_players[g]
        for p in range(n):
            for k in range(HAND_SIZE):
                s.hand[p, decks[i, NUM_REMOVED + HAND_SIZE * p + k], g] += 1
        s.pile_pos[g] = pile_start(n)
        s.options[g] = r.options
        if r.options & MARKET_ROW:
            for pos in range(DECK_SIZE):
                s.market_order[pos, g] = NO_ONE
        s.current[g] = starters[i]
        s.phase[g] = TAKE_PHASE
        s.barred[g] = NO_ONE
        s.turn[g] = 0


deal_rounds, deal_rounds_parallel = serial_and_parallel(_deal_rounds)


def _end_games(parts, games, decks, starters, ended_terminated, ended_truncated, ended_scores, ended_ranks,
               legal, r, s):
    """The end of the listed one-round games under auto-reset, in one call (core's
    ``_finish``, ``_auto_reset`` and the step's ``legal_columns``): score each game
    (:func:`score_round_game`), report it in row g of the step's results (``ended_*``:
    terminated unless capped, truncated if capped, scores and ranks by seat), clear its
    game-level fields, deal it a fresh round from ``decks[i]`` (``starters[i]`` begins) and
    write its legal mask into column g of ``legal``. The rewards are left to core: they
    read the scores and ranks the state keeps."""
    n = games.shape[0]
    for part in numba.prange(parts):
        _end_part(n * part // parts, n * (part + 1) // parts, games, decks, starters, ended_terminated,
                  ended_truncated, ended_scores, ended_ranks, legal, r, s)


@loop_body
def _end_part(lo, hi, games, decks, starters, ended_terminated, ended_truncated, ended_scores, ended_ranks, legal, r,
              s):
    """:func:`_end_games` for games[lo:hi]."""
    for i in range(lo, hi):
        g = games[i]
        score_round_game(g, s)
        ended_terminated[g] = not s.capped[g]
        ended_truncated[g] = s.capped[g]
        for p in range(P):
            ended_scores[g, p] = s.scores[p, g]
            ended_ranks[g, p] = s.ranks[p, g]
            s.round_points[p, g] = 0
            s.plus2[p, g] = 0
            s.plus1[p, g] = 0
        s.round[g] = 0
        s.terminated[g] = False
        s.truncated[g] = False
        s.capped[g] = False
    _deal_part(lo, hi, games, decks, starters, r, s)
    for i in range(lo, hi):
        legal_actions(legal, games[i], s)


end_games, end_games_parallel = serial_and_parallel(_end_games)


# ----------------------------------------------------------------------------- taking games
PARALLEL_GATHER_FROM = 1024  # rows from which a take runs on numba's threads
GATHER_CHUNK = 512  # rollouts a thread gathers at a time (int8 rows: whole cache lines)


@_inline
def _gather_1d(source, rows, target):
    # (a loop from 0 over a slice: numba drops its negative-index check, and LLVM then
    # compiles the copy about twice as fast)
    for j in range(rows.shape[0]):
        target[j] = source[rows[j]]


@_inline
def _gather_2d(source, rows, target):
    for a in range(source.shape[0]):
        _gather_1d(source[a], rows, target[a])


@_inline
def _gather_3d(source, rows, target):
    for a in range(source.shape[0]):
        for b in range(source.shape[1]):
            _gather_1d(source[a, b], rows, target[a, b])


def _gather(s, rows, t):
    """Game ``rows[j]`` of the State arrays ``s`` into game j of ``t``, field by field (every
    field of State: tests/test_kernels.py checks the list), ``GATHER_CHUNK`` games at
    a time."""
    for chunk in numba.prange((rows.shape[0] + GATHER_CHUNK - 1) // GATHER_CHUNK):
        lo = chunk * GATHER_CHUNK
        hi = min(lo + GATHER_CHUNK, rows.shape[0])
        r = rows[lo:hi]
        _gather_3d(s.hand, r, t.hand[:, :, lo:hi])
        _gather_3d(s.portfolio, r, t.portfolio[:, :, lo:hi])
        _gather_3d(s.known, r, t.known[:, :, lo:hi])
        _gather_2d(s.coins, r, t.coins[:, lo:hi])
        _gather_2d(s.chip, r, t.chip[:, lo:hi])
        _gather_2d(s.market_count, r, t.market_count[:, lo:hi])
        _gather_2d(s.market_head, r, t.market_head[:, lo:hi])
        _gather_2d(s.market_paid, r, t.market_paid[:, lo:hi])
        _gather_3d(s.market_stamp, r, t.market_stamp[:, :, lo:hi])
        _gather_2d(s.market_coins, r, t.market_coins[:, lo:hi])
        _gather_2d(s.deck, r, t.deck[:, lo:hi])
        _gather_1d(s.pile_pos, r, t.pile_pos[lo:hi])
        _gather_1d(s.num_players, r, t.num_players[lo:hi])
        _gather_1d(s.current, r, t.current[lo:hi])
        _gather_1d(s.phase, r, t.phase[lo:hi])
        _gather_1d(s.barred, r, t.barred[lo:hi])
        _gather_1d(s.turn, r, t.turn[lo:hi])
        _gather_1d(s.round, r, t.round[lo:hi])
        _gather_2d(s.round_points, r, t.round_points[:, lo:hi])
        _gather_2d(s.plus2, r, t.plus2[:, lo:hi])
        _gather_2d(s.plus1, r, t.plus1[:, lo:hi])
        _gather_2d(s.scores, r, t.scores[:, lo:hi])
        _gather_2d(s.threes, r, t.threes[:, lo:hi])
        _gather_2d(s.ranks, r, t.ranks[:, lo:hi])
        _gather_1d(s.terminated, r, t.terminated[lo:hi])
        _gather_1d(s.truncated, r, t.truncated[lo:hi])
        _gather_1d(s.capped, r, t.capped[lo:hi])
        _gather_1d(s.options, r, t.options[lo:hi])
        _gather_2d(s.market_order, r, t.market_order[:, lo:hi])


_gather_serial, _gather_parallel = serial_and_parallel(_gather)


def take_games(state: State, rows: np.ndarray) -> State:
    """``state.take(rows)`` (a new State of the games ``rows``, int[r], which may repeat),
    gathered in one compiled pass (on numba's threads from ``PARALLEL_GATHER_FROM`` rows): numpy's
    take moves the batch-last arrays an element at a time through its generic copy (the
    search gathers a copy of a world per rollout)."""
    rows = np.asarray(rows, np.int64)
    if rows.size and not 0 <= rows.min() <= rows.max() < state.batch_size:
        raise IndexError(f"rows must be games 0..{state.batch_size - 1} of the state")
    taken = State.empty(rows.size)  # (every field is overwritten)
    gather = _gather_parallel if rows.size >= PARALLEL_GATHER_FROM else _gather_serial
    gather(arrays(state), rows, arrays(taken))
    return taken


# ----------------------------------------------------------------------------- the observation
# The pieces, in order, with the shapes the kernel below writes them in.
_WRITTEN = {
    "num_players": (MAX_PLAYERS - MIN_PLAYERS + 1,), "phase": (2,), "current_player": (P,), "hand": (C,),
    "portfolios": (P, C), "known_hands": (P, C), "coins": (P,), "chips": (C, P), "market_cards": (C,),
    "market_coins": (C,), "take_coins": (C,), "pile": (1,), "barred": (C,), "unseen": (C,), "turn": (1,),
    "round": (ROUND_GAME_ROUNDS,), "round_points": (P,),
}
if [(p.name, p.shape) for p in PIECES] != list(_WRITTEN.items()):
    raise ImportError("startups_env.startups.observe.PIECES is not the layout startups_env.startups.numba_backend writes: "
                      "update the kernel with the pieces")

# Offsets of the pieces (module-level ints: numba compiles them in as constants).
_NUM_PLAYERS, _PHASE, _CURRENT, _HAND = (SLICES[k].start for k in ("num_players", "phase", "current_player", "hand"))
_PORTFOLIOS, _KNOWN, _COINS, _CHIPS = (SLICES[k].start for k in ("portfolios", "known_hands", "coins", "chips"))
_MARKET_CARDS, _MARKET_COINS, _TAKE_COINS = (SLICES[k].start for k in ("market_cards", "market_coins", "take_coins"))
_PILE, _BARRED, _UNSEEN, _TURN = (SLICES[k].start for k in ("pile", "barred", "unseen", "turn"))
_ROUND, _ROUND_POINTS = SLICES["round"].start, SLICES["round_points"].start
_LAST_ROUND = ROUND_GAME_ROUNDS - 1  # a finished round game has round = rounds: shown as the last
_SIZES = np.array(COMPANY_SIZES, np.int64)



@_inline
def _take_coins(paid, head_stamp, count):
    # queries.take_coins (which calls card_coins, a Python function numba cannot see into)
    return card_coins(paid, head_stamp) * (count > 0)


@_jit
def observe_into(out, g, seat, s):
    """Write the observation of ``seat`` in game ``g`` of a State's arrays (the record of
    :func:`~startups_env.startups.state.arrays`) into ``out`` float32[OBS_DIM]. The seat
    must be seated (0 <= seat < num_players[g]); the caller checks."""
    for i in range(out.shape[0]):
        out[i] = 0
    n = np.int64(s.num_players[g])
    k = np.int64(seat)
    out[_NUM_PLAYERS + n - MIN_PLAYERS] = 1
    out[_PHASE + s.phase[g]] = 1
    out[_CURRENT + relative_seat(np.int64(s.current[g]), k, n)] = 1
    for r in range(n):  # relative seat r is absolute seat a
        a = (k + r) % n
        for c in range(C):
            out[_PORTFOLIOS + r * C + c] = s.portfolio[a, c, g]
            out[_KNOWN + r * C + c] = s.known[a, c, g]
        out[_COINS + r] = s.coins[a, g]
        out[_ROUND_POINTS + r] = s.round_points[a, g]
    for c in range(C):
        own = np.int64(s.hand[k, c, g])
        out[_HAND + c] = own
        holder = np.int64(s.chip[c, g])
        if holder >= 0:
            out[_CHIPS + c * P + relative_seat(holder, k, n)] = 1
        count = np.int64(s.market_count[c, g])
        out[_MARKET_CARDS + c] = count
        out[_MARKET_COINS + c] = s.market_coins[c, g]
        out[_TAKE_COINS + c] = _take_coins(np.int64(s.market_paid[c, g]),
                                           np.int64(s.market_stamp[c, s.market_head[c, g], g]), count)
        if s.options[g] & MARKET_ROW:  # less the take's price (queries.market_take_coins)
            out[_TAKE_COINS + c] -= row_price(g, c, s)
        public = np.int64(0)
        for a in range(n):
            public += np.int64(s.portfolio[a, c, g]) + np.int64(s.known[a, c, g])
        out[_UNSEEN + c] = unseen_count(_SIZES[c], public, own, np.int64(s.known[k, c, g]), count)
    out[_PILE] = pile_left(np.int64(s.pile_pos[g]))
    if s.barred[g] >= 0:
        out[_BARRED + s.barred[g]] = 1
    out[_TURN] = s.turn[g]
    out[_ROUND + min(np.int64(s.round[g]), _LAST_ROUND)] = 1


def observe_game(state: State, game: int, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """float32[OBS_DIM]: the observation of ``seat`` in game ``game`` of ``state``, equal to
    ``observe(state, seats)[game]`` with ``seats[game] = seat``. ``out``: an optional
    float32[OBS_DIM] array to fill and return."""
    game, seat = int(game), int(seat)
    if not 0 <= game < state.batch_size:
        raise ValueError(f"game must be in [0, {state.batch_size}), got {game}")
    if not 0 <= seat < int(state.num_players[game]):
        raise ValueError(f"seat must be in [0, {int(state.num_players[game])}) (the table size), got {seat}")
    if out is None:
        out = np.empty(OBS_DIM, np.float32)
    elif out.shape != (OBS_DIM,) or out.dtype != np.float32:
        raise ValueError(f"out must be float32 of shape [{OBS_DIM}], got {out.dtype} {list(out.shape)}")
    observe_into(out, game, seat, arrays(state))
    return out


class NumbaBackend:
    """The compiled rules applied to the games of one simulator (``sim``), whose state the
    kernels change in place. It keeps the legal mask the kernels wrote (bool[19, W], see
    :func:`new_mask`) until the state changes (:meth:`forget`); the numpy code reads its
    [19, B] view."""

    name = "numba"
    # The kernels' call sites (see CallSite: one each, their argument types fixed).
    _legal_rows, _legal_columns, _legal_choice = CallSite(legal_rows), CallSite(legal_columns), CallSite(legal_choice)
    _deal, _deal_threaded = CallSite(deal_rounds), CallSite(deal_rounds_parallel)
    _score, _score_threaded = CallSite(score_rounds), CallSite(score_rounds_parallel)
    _step, _step_threaded = CallSite(step_games), CallSite(step_games_parallel)
    _end, _end_threaded = CallSite(end_games), CallSite(end_games_parallel)
    _step_one_game, _count_illegal, _observe = CallSite(step_one_game), CallSite(count_illegal), CallSite(observe_into)

    def __init__(self, sim):
        self.sim = sim
        b = self.batch_size = sim.batch_size
        self._mask_cache: np.ndarray | None = None  # the [19, B] view of _compiled_mask
        self._compiled_mask: np.ndarray | None = None
        self._next_mask: np.ndarray | None = None  # the mask a step is filling, while it ends rounds
        self._ended_masked = False  # end_and_deal wrote the ended games' columns of _next_mask
        self._all_active = np.ones(b, bool)
        self._over = np.zeros(b, bool)  # the step's "round ended" flags
        self._one_game = np.zeros(1, np.intp)  # game 0: the game whose round ended, at B = 1
        self._arange = np.arange(b)
        self._rules = sim.rules.params  # the settings the kernels read, as one record
        self._record = None  # the state's arrays as one record (state.arrays), until the state changes
        self._threads = numba_runtime.ThreadChoice()  # whether the threaded step pays, measured

    @property
    def state(self):
        return self.sim.state

    @property
    def record(self):
        """The simulator's state as the record the kernels take (kept until :meth:`forget`)."""
        if self._record is None:
            self._record = arrays(self.sim.state)
        return self._record

    def forget(self) -> None:
        """Drop the kept mask and record: the state changed outside the rules."""
        self._mask_cache = None
        self._record = None

    def _cache(self, mask: np.ndarray) -> np.ndarray:
        self._compiled_mask = mask
        self._mask_cache = mask[:, :self.batch_size]
        return self._mask_cache

    def legal_rows(self) -> np.ndarray:
        """bool[19, B]: the legal mask, action-major (kept until the state changes)."""
        if self._mask_cache is not None:
            return self._mask_cache
        mask = new_mask(self.batch_size)
        self._legal_rows(mask, self.record)
        return self._cache(mask)

    def phase_games(self) -> tuple[np.ndarray, np.ndarray]:
        """bool[B] masks of running games in the take and in the put-down phase."""
        s = self.state
        done = s.terminated | s.truncated
        phase = s.phase.view(bool)
        return ~(phase | done), phase > done

    def choose(self, rows: np.ndarray, given: bool, u: np.ndarray, lo: int, hi: int, choice: np.ndarray) -> None:
        """As :meth:`startups_env.startups.numpy_backend.NumpyBackend.choose`, compiled
        (:func:`legal_choice`)."""
        flags = np.ascontiguousarray(rows) if given else self._compiled_mask
        scratch = np.empty((2, rows.shape[1]), np.int8)
        self._legal_choice(flags, u, lo, hi, choice, scratch[0], scratch[1])

    def deal(self, games: np.ndarray, decks: np.ndarray, starters: np.ndarray) -> None:
        """Deal fresh rounds (:func:`deal_rounds`, on numba's threads for many games)."""
        threaded = self._rounds_threaded(games.size)
        deal = self._deal_threaded if threaded else self._deal
        deal(thread_count() if threaded else 1, np.ascontiguousarray(games, np.intp),
             np.ascontiguousarray(decks, np.int8), np.ascontiguousarray(starters, np.int8), self._rules, self.record)
        self._mask_cache = None

    def _rounds_threaded(self, rounds: int) -> bool:
        """Whether the end (scoring, next deal) of ``rounds`` finished rounds runs on numba's
        threads: from PARALLEL_ROUNDS_FROM rounds on, unless the step last ran serial because
        its threads did not pay here (:class:`.numba_runtime.ThreadChoice`)."""
        return rounds >= PARALLEL_ROUNDS_FROM and self._threads.last is not False

    def score(self, games: np.ndarray) -> None:
        """Score the finished rounds of ``games`` (:func:`score_rounds`)."""
        threaded = self._rounds_threaded(games.size)
        score = self._score_threaded if threaded else self._score
        score(thread_count() if threaded else 1, np.ascontiguousarray(games, np.intp), self.record)

    def step(self, a: np.ndarray, active: np.ndarray | None) -> StepResult:
        """Apply the checked actions ``a`` (intp[B]): every action's legality is checked
        before any game changes; the kernels write the next mask as they step."""
        rows = self.legal_rows()
        if not a.flags.c_contiguous:  # (the kernels' call sites take contiguous arrays: see CallSite)
            a = np.ascontiguousarray(a)
        active = self._all_active if active is None else np.ascontiguousarray(active)
        s = self.state
        record = self.record
        if self._count_illegal(self._compiled_mask, a, active, record):
            raise illegal_actions_error(s, a, rows[a, self._arange], active & ~s.done)
        over = self._over
        self._mask_cache = None
        legal = new_mask(self.batch_size)  # the next mask, filled by the step
        if self.batch_size < PARALLEL_FROM:
            self._step(a, active, self._rules, over, legal, record)
        else:  # (threaded where that pays here and now: numba_runtime.ThreadChoice)
            self._threads.run(self._step, self._step_threaded, self.batch_size, a, active, self._rules, over, legal,
                              record)
        ended = np.flatnonzero(over) if np.count_nonzero(over) else _NO_GAMES
        return self._end_rounds(ended, legal)

    def step_one(self, action: int) -> StepResult | None:
        """:meth:`step` in a batch of one running game (:func:`step_one_game`); None where
        the round goes on."""
        self._mask_cache = None
        legal = new_mask(1)  # the next mask, filled by the step (fresh: a caller may hold the last)
        if not self._step_one_game(legal, action, self._rules, self.record):
            self._cache(legal)
            return None
        return self._end_rounds(self._one_game, legal)

    def _end_rounds(self, ended: np.ndarray, legal: np.ndarray) -> StepResult:
        """The simulator's end of the ``ended`` rounds, then their masks into ``legal``
        (unless :meth:`end_and_deal` wrote them), which becomes the kept mask."""
        if not ended.size:
            self._cache(legal)
            return self.sim.end_rounds(ended)
        self._next_mask, self._ended_masked = legal, False
        try:
            result = self.sim.end_rounds(ended)
        finally:
            self._next_mask = None
        if not self._ended_masked:  # scored, maybe re-dealt: their masks follow from the state now
            self._legal_columns(ended, legal, self.record)
        self._cache(legal)
        return result

    def end_and_deal(self, ended: np.ndarray, decks: np.ndarray, results: StepResult) -> None:
        """As :meth:`startups_env.startups.numpy_backend.NumpyBackend.end_and_deal`, in one
        compiled call (:func:`end_games`) that also writes the ended games' next masks."""
        legal = self._next_mask if self._next_mask is not None else new_mask(self.batch_size)
        n = ended.size
        parallel = self._rounds_threaded(n)
        end = self._end_threaded if parallel else self._end
        end(thread_count() if parallel else 1, ended, decks, np.zeros(n, np.int8), results.terminated,
            results.truncated, results.scores, results.ranks, legal, self._rules, self.record)
        self._ended_masked = self._next_mask is not None
        self._mask_cache = None

    def observe_one(self, seat: int) -> np.ndarray:
        """float32[OBS_DIM]: the observation of ``seat`` in game 0, compiled."""
        obs = np.empty(OBS_DIM, np.float32)  # (the kernel writes every entry)
        self._observe(obs, 0, seat, self.record)
        return obs
