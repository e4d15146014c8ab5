"""The learner-seat batch adapters: SeatBatch (numpy) and StartupsVecEnv (SB3 VecEnv)."""

import numpy as np
import pytest

from startups_env import Rules
from startups_env.envs.vector import (
    PRIVILEGED_DIM,
    SeatBatch,
    StartupsVecEnv,
    parse_players,
    privileged_observation,
    random_legal_actions,
)
from startups_env.startups.observe import OBS_DIM, SLICES
from startups_env.startups.rules import COMPANY_SIZES


def play(batch, steps, rng):
    """Step a SeatBatch with random legal learner actions; yield each step's results."""
    for _ in range(steps):
        mask = batch.action_masks()
        assert mask.shape == (batch.num_envs, 19) and mask.dtype == bool
        assert mask.any(axis=1).all(), "the learner must always have a legal action"
        actions = random_legal_actions(mask, rng)
        yield mask, actions, batch.step(actions)


class Recorder:
    """A random opponent that records what it was shown."""

    name = "recorder"

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.calls = []

    def __call__(self, obs, mask):
        self.calls.append((obs.copy(), mask.copy()))
        return random_legal_actions(mask, self.rng)


def test_parse_players():
    assert parse_players(4) == (4,)
    assert parse_players("3-7") == (3, 4, 5, 6, 7)
    assert parse_players("6,3,3") == (3, 6)
    assert parse_players([2, 5]) == (2, 5)
    for bad in ("8", "1-3", "x", "5-3", True, [], 9, [3, "4"]):
        with pytest.raises(ValueError):
            parse_players(bad)


def test_shapes_rewards_and_episode_results():
    batch = SeatBatch(64, rules=Rules(reward="rank"), players="3-7", seed=1)
    obs = batch.reset()
    assert obs.shape == (64, OBS_DIM) and obs.dtype == np.float32
    # The learner is to act in every game: relative seat 0 holds the turn.
    assert (obs[:, SLICES["current_player"]][:, 0] == 1).all()
    rng = np.random.default_rng(2)
    episodes = 0
    sizes, seats = set(), set()
    for _, _, (obs, reward, term, trunc, info) in play(batch, 150, rng):
        assert obs.shape == (64, OBS_DIM) and reward.dtype == np.float32
        assert (obs[:, SLICES["current_player"]][:, 0] == 1).all()
        done = term | trunc
        assert (reward[~done] == 0).all(), "rewards are terminal only"
        assert info["decisions"] >= 64
        for g in np.flatnonzero(done):
            n, rank = int(info["num_players"][g]), int(info["rank"][g])
            assert 3 <= n <= 7 and 0 <= rank < n
            assert reward[g] == pytest.approx(1 - 2 * rank / (n - 1))  # the "rank" scheme
            assert info["episode_return"][g] == reward[g]
            assert info["episode_length"][g] >= 1
            # The terminal observation is the learner's view of the finished game: empty pile.
            assert info["terminal_obs"][g, SLICES["pile"]][0] == 0 or trunc[g]
            sizes.add(n)
        seats.update(batch.learner_seat.tolist())
        episodes += int(done.sum())
    assert episodes > 200
    assert sizes == {3, 4, 5, 6, 7}
    assert seats == set(range(7)), "the learner's seat is drawn at random"
    assert ((batch.learner_seat >= 0) & (batch.learner_seat < batch.num_players)).all()


def test_win_rate_of_random_play_is_fair():
    batch = SeatBatch(128, players=4, seed=3)
    batch.reset()
    rng = np.random.default_rng(4)
    wins = games = 0
    for _, _, (_, _, term, trunc, info) in play(batch, 300, rng):
        done = term | trunc
        wins += int((info["rank"][done] == 0).sum())
        games += int(done.sum())
    assert games > 1000
    assert abs(wins / games - 0.25) < 0.04  # random vs random: 1/4 each, whatever the seat


def test_seeding_is_reproducible():
    def trace(seed):
        batch = SeatBatch(16, players="3-5", seed=seed)
        out = [batch.reset()]
        rng = np.random.default_rng(0)
        for _, _, (obs, reward, *_rest) in play(batch, 60, rng):
            out += [obs, reward]
        return out

    a, b, c = trace(7), trace(7), trace(8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))
    batch = SeatBatch(16, players="3-5", seed=99)
    assert np.array_equal(batch.reset(seed=7), a[0]), "reset(seed) re-seeds"


def test_opponents_see_their_own_turn_and_weights_apply():
    first, second = Recorder(1), Recorder(2)
    batch = SeatBatch(32, [first, second], players=4, opponent_weights=[1.0, 0.0], seed=5)
    batch.reset()
    assert (batch.opponent == 0).all()
    for _ in play(batch, 50, np.random.default_rng(0)):
        pass
    assert first.calls and not second.calls
    for obs, mask in first.calls:
        assert (obs[:, SLICES["current_player"]][:, 0] == 1).all(), "an opponent sees its own view"
        assert mask.any(axis=1).all()
    batch.set_opponent_weights([0.0, 1.0])
    for _ in play(batch, 100, np.random.default_rng(1)):
        pass
    assert second.calls, "games dealt after the change draw the new weights"
    with pytest.raises(ValueError):
        batch.set_opponent_weights([1.0])
    with pytest.raises(ValueError):
        batch.set_opponent_weights([-1.0, 2.0])


def test_public_state_opponent():
    class Peeker:
        name = "peeker"
        needs = frozenset({"public"})

        def __init__(self):
            self.rng = np.random.default_rng(0)
            self.seen = 0

        def act(self, obs, mask, public=None):
            assert public is not None and public.batch_size == obs.shape[0]
            assert (public.deck == -1).all(), "the pile is hidden from opponents"
            self.seen += obs.shape[0]
            return random_legal_actions(mask, self.rng)

    peeker = Peeker()
    batch = SeatBatch(8, peeker, players=3, seed=0)
    batch.reset()
    for _ in play(batch, 20, np.random.default_rng(0)):
        pass
    assert peeker.seen > 0


def test_bad_actions_raise_and_change_nothing():
    batch = SeatBatch(8, players=4, seed=0)
    obs = batch.reset()
    mask = batch.action_masks()
    bad = np.where(mask, -1, np.arange(19)).max(axis=1)  # an illegal id per game
    with pytest.raises(ValueError, match="illegal"):
        batch.step(bad)
    with pytest.raises(ValueError, match="shape"):
        batch.step(np.zeros(3, np.int64))
    assert np.array_equal(batch.observe(), obs)

    def cheat(obs, mask):
        return np.full(obs.shape[0], 18, np.int64) * (~mask[:, 18])

    batch = SeatBatch(8, cheat, players=4, seed=0)
    with pytest.raises(ValueError, match="opponent 0|cheat"):
        batch.reset()
        for _ in play(batch, 10, np.random.default_rng(0)):
            pass
    with pytest.raises(RuntimeError):
        SeatBatch(2).step(np.zeros(2, np.int64))
    with pytest.raises(ValueError):
        SeatBatch(0)
    with pytest.raises(ValueError):
        SeatBatch(2, opponents=[])


def test_turn_cap_truncates():
    batch = SeatBatch(16, rules=Rules(num_players=3, turn_cap=6), seed=0)
    batch.reset()
    truncated = 0
    for _, _, (_, _, term, trunc, info) in play(batch, 40, np.random.default_rng(0)):
        assert not (term & trunc).any()
        truncated += int(trunc.sum())
        assert (info["episode_length"][trunc] >= 1).all()
    assert truncated > 0


# ----------------------------------------------------------------------------- SB3
def test_vecenv_contract():
    from stable_baselines3.common.vec_env import VecCheckNan
    from stable_baselines3.common.vec_env.util import obs_space_info

    env = StartupsVecEnv(num_envs=12, players="3-7", seed=0, rules=Rules(turn_cap=30))
    _, shapes, dtypes = obs_space_info(env.observation_space)
    assert shapes[None] == (OBS_DIM,) and dtypes[None] == np.float32
    assert env.action_space.n == 19
    checked = VecCheckNan(env, raise_exception=True)
    obs = checked.reset()
    assert obs.shape == (12, OBS_DIM) and obs.dtype == np.float32
    rng = np.random.default_rng(0)
    finished = truncated = 0
    for _ in range(150):
        masks = np.stack(env.env_method("action_masks"))
        assert masks.shape == (12, 19) and np.array_equal(masks, env.action_masks())
        obs, rewards, dones, infos = checked.step(random_legal_actions(masks, rng))
        assert obs.shape == (12, OBS_DIM) and rewards.shape == (12,) and dones.dtype == bool
        assert len(infos) == 12
        for row in obs:
            assert env.observation_space.contains(row)
        for done, info in zip(dones, infos):
            if done:
                finished += 1
                assert env.observation_space.contains(info["terminal_observation"])
                assert set(info["episode"]) == {"r", "l", "t"}
                assert isinstance(info["TimeLimit.truncated"], bool)
                truncated += info["TimeLimit.truncated"]
                assert info["is_success"] == (info["rank"] == 0)
            else:
                assert info == {}
    assert finished > 20 and truncated > 0
    assert env.get_attr("render_mode") == [None] * 12
    assert env.env_is_wrapped(object) == [False] * 12
    assert env.seed(3) == list(range(3, 15))
    first = env.reset()
    assert np.array_equal(first, (env.seed(3), env.reset())[1]), "seed() applies to the next reset"
    env.close()


def test_maskable_ppo_trains_without_glue():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    env = StartupsVecEnv(num_envs=8, players="3-7", seed=0)
    assert is_masking_supported(env)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0, verbose=0,
                        policy_kwargs={"net_arch": [32, 32]})
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    assert len(model.ep_info_buffer) > 0
    obs = env.reset()
    masks = get_action_masks(env)
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert masks[np.arange(8), actions].all()


def test_privileged_observation_accounts_for_every_card():
    batch = SeatBatch(32, players="2-7", seed=4)
    batch.reset()
    rng = np.random.default_rng(0)
    for _, _, (obs, _, term, trunc, info) in play(batch, 40, rng):
        priv = batch.privileged()
        assert priv.shape == (32, PRIVILEGED_DIM) and priv.dtype == np.float32
        hands = priv[:, :42].reshape(32, 7, 6)
        # Relative seat 0 is the learner: its hand is the one in its own observation.
        assert np.array_equal(hands[:, 0], obs[:, SLICES["hand"]])
        s = batch.sim.state
        total = hands.sum(axis=1) + priv[:, 42:48] + priv[:, 48:54]
        total += s.portfolio.sum(axis=0).T + s.market_count.T
        assert (total == np.array(COMPANY_SIZES)).all()
        n = batch.num_players
        assert all((hands[g, n[g]:] == 0).all() for g in range(32)), "padded seats hold nothing"
        done = term | trunc
        if done.any():
            assert (info["terminal_privileged"][done][:, 42:48] == 0).all() or trunc[done].any()
    with pytest.raises(ValueError):
        privileged_observation(batch.sim.state, np.zeros(3))


class FailingOpponent:
    """Plays the first legal action; on its ``fail_at``-th call (0-based) it misbehaves:
    returns an illegal action, or raises an error of its own when ``crash``."""

    name = "flaky"

    def __init__(self, fail_at, crash=False):
        self.fail_at, self.crash, self.calls = fail_at, crash, 0

    def __call__(self, obs, mask):
        self.calls += 1
        if self.calls - 1 == self.fail_at:
            if self.crash:
                raise RuntimeError("boom")
            return np.where(mask, -1, np.arange(19)).max(axis=1)  # an illegal id per game
        return np.argmax(mask, axis=1)


def test_failed_opponent_leaves_batch_needing_reset():
    opp = FailingOpponent(fail_at=-1)
    batch = SeatBatch(8, opp, players=4, seed=0)
    batch.reset()
    opp.fail_at = opp.calls + 2  # in the second step()'s opponent turns
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"opponent 0 \(flaky\) chose illegal actions .* in games .* \(seats"):
        for _ in range(10):
            batch.step(random_legal_actions(batch.action_masks(), rng))
    # Some games now wait for an opponent: the learner's actions must not be played there.
    decisions = batch.decisions
    with pytest.raises(RuntimeError, match="mid-turn when opponent 'flaky' failed.*reset"):
        batch.step(np.zeros(8, np.int64))
    with pytest.raises(RuntimeError, match="mid-turn"):
        batch.action_masks()
    assert batch.decisions == decisions
    batch.reset()
    for _ in play(batch, 5, rng):
        pass

    # An opponent's own exception while reset() lets it play first does the same.
    batch = SeatBatch(8, FailingOpponent(fail_at=0, crash=True), players=4, seed=0)
    with pytest.raises(RuntimeError, match="boom"):
        batch.reset()
    with pytest.raises(RuntimeError, match="mid-turn when opponent 'flaky' failed \\(RuntimeError: boom\\)"):
        batch.step(np.zeros(8, np.int64))
    batch.reset()
    for _ in play(batch, 5, rng):
        pass


def test_seatbatch_seed_is_checked():
    for bad in (-1, 1.5, "a", True, [1, 2]):
        with pytest.raises(ValueError, match="seed must be"):
            SeatBatch(2, seed=bad)
    batch = SeatBatch(4, players=4, seed=np.random.SeedSequence(3))
    obs = batch.reset(seed=np.int64(5))
    mask = batch.action_masks()
    with pytest.raises(ValueError, match="seed must be .*got -1"):
        batch.reset(seed=-1)
    assert np.array_equal(batch.observe(), obs) and np.array_equal(batch.action_masks(), mask)
    assert np.array_equal(SeatBatch(4, players=4).reset(seed=5), obs)


def test_vecenv_step_async_checks_actions():
    env = StartupsVecEnv(num_envs=4, players=4, seed=0)
    obs = env.reset()
    decisions = env.batch.decisions
    legal = np.argmax(env.action_masks(), axis=1)
    shape = r"actions must have shape \[4\] or \[4, 1\] \(one per env\), got "
    for bad, match in [
        (np.full(4, 0.7), "actions must be integers, got dtype float64"),
        (legal.astype(float), "actions must be integers"),  # whole floats too: SB3 passes ints
        ([0, 0, np.nan, 0], r"actions must be integers, got dtype float64: \[0.0, 0.0, nan, 0.0\]"),
        (legal.astype(bool), "actions must be integers, got dtype bool"),
        (legal.reshape(2, 2), shape + r"\[2, 2\]"),
        (legal[:3], shape + r"\[3\]"),
        (legal.reshape(1, 4), shape + r"\[1, 4\]"),
        (int(legal[0]), shape + r"\[\]"),
        ([[0, 1], [2]], "actions must be 4 ints"),
    ]:
        with pytest.raises(ValueError, match=match):
            env.step(bad)
        assert np.array_equal(env.batch.observe(), obs) and env.batch.decisions == decisions
    # An illegal id: the simulator's error, and no game changes.
    illegal = np.where(env.action_masks(), -1, np.arange(19)).max(axis=1)
    for bad in (illegal, np.full(4, 19)):
        with pytest.raises(ValueError, match="illegal|out of range"):
            env.step(bad)
        assert np.array_equal(env.batch.observe(), obs) and env.batch.decisions == decisions
    # A bad batch does not replace actions already handed in.
    env.step_async(legal)
    with pytest.raises(ValueError):
        env.step_async(legal[:3])
    env.step_wait()
    assert env.batch.decisions > decisions
    # What SB3 passes: int[n] (any int dtype), int[n, 1], a list of ints.
    for form in (lambda a: a, lambda a: a.astype(np.int32).reshape(4, 1), lambda a: a.tolist(),
                 lambda a: a.astype(np.uint8)):
        decisions = env.batch.decisions
        env.step(form(np.argmax(env.action_masks(), axis=1)))
        assert env.batch.decisions > decisions


def test_vecenv_seed_is_checked_and_kept_until_used():
    env = StartupsVecEnv(num_envs=4, players=4, seed=0)
    env.reset()
    assert env.seed(2) == [2, 3, 4, 5]
    for bad in (-1, 1.5, "a", True, np.int64(-2), np.random.SeedSequence(1)):
        with pytest.raises(ValueError, match="seed must be None or a non-negative int"):
            env.seed(bad)
    assert np.array_equal(env.reset(), StartupsVecEnv(num_envs=4, players=4, seed=2).reset()), \
        "a rejected seed() keeps the seed given before"

    # A reset that fails (here an opponent error) keeps the pending seed for the next one.
    flaky = FailingOpponent(fail_at=0, crash=True)
    env = StartupsVecEnv(num_envs=8, opponents=flaky, players=4, seed=0)
    env.seed(np.int64(5))
    with pytest.raises(RuntimeError, match="boom"):
        env.reset()
    assert flaky.calls == 1
    steady = StartupsVecEnv(num_envs=8, opponents=FailingOpponent(fail_at=-1), players=4, seed=1)
    steady.seed(5)
    assert np.array_equal(env.reset(), steady.reset())


def test_the_same_seed_sequence_gives_the_same_games_every_time():
    sequence = np.random.SeedSequence(11)
    batch = SeatBatch(4, players=4, seed=sequence)
    first = batch.reset()
    assert sequence.n_children_spawned == 0, "the caller's sequence is left as it was"
    assert np.array_equal(batch.reset(seed=sequence), first)
    assert np.array_equal(SeatBatch(4, players=4, seed=np.random.SeedSequence(11)).reset(), first)
