"""Bad input gets a clear error and loses nothing: arguments that used to be truncated,
cut short or reported as an unrelated numpy/Python error (replay, observe, Rules,
Simulator.from_state, the raw AEC env) now raise a ValueError that names the argument.
(Observations are not checked for NaN in the agents' act: measured too costly for that hot
path; see startups_env.agents.base.check_act_inputs.)"""

import json
import re
from dataclasses import replace

import numpy as np
import pytest
from helpers import assert_states_equal

from startups_env import Rules, Simulator
from startups_env.envs.aec import raw_env
from startups_env.startups.observe import OBS_DIM, observe, views
from startups_env.startups.rules import NUM_ACTIONS, SORTED_DECK
from startups_env.startups.state import State, public_state
from startups_env.tools.replay import GameLog, record_game


def _first_legal(sim) -> int:
    return int(np.flatnonzero(sim.legal_mask()[0])[0])


class _StubAgent:
    """An object with the policy interface whose ``act`` returns ``answer(legal ids)``."""

    name = "stub"

    def __init__(self, answer):
        self.answer = answer

    def act(self, obs, mask, public=None):
        return self.answer(np.flatnonzero(mask[0]))


def _mid_game(batch_size: int = 3, steps: int = 10) -> Simulator:
    sim = Simulator(Rules(num_players=4), batch_size, seed=0)
    for _ in range(steps):
        sim.step(sim.random_actions())
    return sim


# ----------------------------------------------------------------- record_game
@pytest.mark.parametrize(
    "policy, match",
    [
        (lambda sim: _first_legal(sim) + 0.9,
         r"policy \(decision 0, seat 0 to act\) must return one integer action id.*float"),
        (lambda sim: np.array([_first_legal(sim)] * 3), r"policy .* must return one integer .*shape \[3\]"),
        (lambda sim: np.array([_first_legal(sim) + 0.0]), r"policy .* must return one integer .*float64"),
        (lambda sim: True, r"policy .* must return one integer .*bool"),
        (lambda sim: None, r"policy .* must return one integer .*NoneType"),
    ],
    ids=["float", "batch-of-3", "float-array", "bool", "None"],
)
def test_record_game_refuses_non_integer_or_batched_policy_outputs(policy, match):
    with pytest.raises(ValueError, match=match):
        record_game(policy, Rules(num_players=3), seed=0)


@pytest.mark.parametrize(
    "answer, match",
    [
        (lambda legal: legal[:1] + 0.9,
         r"agent of seat 0 \(stub\) returned float64 \[1\] for games \[0\] \(seats \[0\]\); .*int\[1\]"),
        (lambda legal: np.repeat(legal[:1], 3), r"agent of seat 0 \(stub\) returned int64 \[3\]"),
        (lambda legal: legal[:1][:, None].repeat(2, axis=1), r"agent of seat 0 \(stub\) returned int64 \[1, 2\]"),
        # A policy answers int[B] for B games, one game too: a scalar is refused (it would
        # break the same bot at any other batch size).
        (lambda legal: legal[0], r"agent of seat 0 \(stub\) returned int64 \[\]"),
        (lambda legal: np.array(legal[0]), r"agent of seat 0 \(stub\) returned int64 \[\]"),
        (lambda legal: np.zeros(1, bool), r"agent of seat 0 \(stub\) returned bool \[1\]"),
        (lambda legal: np.array([18]) if 18 not in legal else np.array([0]),
         r"agent of seat 0 \(stub\) chose illegal actions \[18\] in games \[0\] \(seats \[0\]\)"),
    ],
    ids=["float", "batch-of-3", "2-d", "scalar", "0-d", "bool", "illegal"],
)
def test_record_game_refuses_bad_agent_outputs_naming_the_seat(answer, match):
    with pytest.raises(ValueError, match=match):
        record_game([_StubAgent(answer)] * 3, Rules(num_players=3), seed=0)


def test_record_game_takes_policies_returning_one_action():
    """int[1] (what a policy returns for one game) of any integer dtype, or a list of one int."""
    for answer in (lambda legal: legal[:1], lambda legal: legal[:1].astype(np.uint8), lambda legal: [int(legal[0])]):
        log = record_game([_StubAgent(answer)] * 3, Rules(num_players=3), seed=0, max_decisions=6)
        assert len(log.actions) == 6 and log.players == ["stub"] * 3
    # A plain callable f(obs, mask) is a policy too.
    log = record_game([lambda obs, mask: mask.argmax(axis=1)] * 3, Rules(num_players=3), seed=0, max_decisions=6)
    assert len(log.actions) == 6 and log.players == ["<lambda>"] * 3


def test_record_game_refuses_agent_names_before_playing():
    with pytest.raises(ValueError, match=r"policy\[0\]: 'random' is a bot's name, not a policy.*make_agent\('random', seed=0\)"):
        record_game(["random"] * 4, Rules(num_players=4), seed=0)
    with pytest.raises(ValueError, match=r"policy\[1\]: a policy must .*int 3"):
        record_game([_StubAgent(lambda legal: legal[:1]), 3, 4], Rules(num_players=3), seed=0)
    with pytest.raises(ValueError, match=r"policy must be None, a callable policy\(sim\) or a list of per-seat policies"):
        record_game("random", Rules(num_players=4), seed=0)
    with pytest.raises(ValueError, match="rules must be a startups_env.Rules"):
        record_game(None, {"num_players": 4}, seed=0)


# ----------------------------------------------------------------- GameLog.load
def test_loading_a_binary_file_names_the_file(tmp_path):
    path = tmp_path / "game.gif"
    path.write_bytes(b"GIF89a\n\x01\x00\xff\xfe\x80 not text")
    with pytest.raises(ValueError, match=r"game\.gif: line 2 is not UTF-8 text \(byte 0xff\)"):
        GameLog.load(path)


def test_a_golden_line_without_actions_names_the_file_and_the_missing_key(tmp_path):
    path = tmp_path / "line.json"
    path.write_text(json.dumps({"players": 4, "deck": list(SORTED_DECK)}))
    with pytest.raises(ValueError, match=r"line\.json: golden-game line has players and deck but lacks 'actions'"):
        GameLog.load(path)
    with pytest.raises(ValueError, match="lacks 'actions'"):
        GameLog.from_dict({"players": 4, "deck": list(SORTED_DECK)})


# ----------------------------------------------------------------- observe, views, public_state
@pytest.mark.parametrize(
    "seat, match",
    [
        (np.array([1.7, 0.0, 2.0]), "seat must be integer seats, got dtype float64"),
        ([1.7, 0.2, 2.9], "seat must be integer seats, got dtype float64"),
        (np.array([True, False, True]), "seat must be integer seats, got dtype bool"),
        (np.array([0, 1]), r"seat must have shape \[3\], got \[2\]"),
    ],
)
def test_observe_refuses_non_integer_seats(seat, match):
    state = _mid_game().state
    with pytest.raises(ValueError, match=match):
        observe(state, seat)


def test_observe_one_game_refuses_a_bool_seat():
    state = _mid_game(batch_size=1).state
    with pytest.raises(ValueError, match="dtype bool"):
        observe(state, np.array([True]))


@pytest.mark.parametrize("shape", [(3, 7), (OBS_DIM + 1,), (2, OBS_DIM - 1), ()])
def test_views_names_the_expected_and_given_shape(shape):
    expected = f"obs must have shape [..., {OBS_DIM}] (observation vectors), got {list(shape)}"
    with pytest.raises(ValueError, match=re.escape(expected)):
        views(np.zeros(shape, np.float32))


def test_views_still_splits_good_vectors():
    obs = observe(_mid_game().state)
    assert views(obs)["hand"].shape == (3, 6)
    assert views(obs[0])["portfolios"].shape == (7, 6)


@pytest.mark.parametrize(
    "seat, match",
    [
        (np.array([0, 1]), r"seat must have shape \[3\] \(one per game\), got \[2\]"),
        (np.array([0.0, 1.0, 2.0]), "seat must be integer seats, got dtype float64"),
        (np.array([True, False, True]), "dtype bool"),
        (np.array([0, 4, 1]), r"games \[1\] have seats \[4\] at tables of \[4\]"),
        (np.array([0, -2, 1]), r"games \[1\] have seats \[-2\]"),
    ],
)
def test_public_state_refuses_bad_seats(seat, match):
    state = _mid_game().state
    before = state.copy()
    with pytest.raises(ValueError, match=match):
        public_state(state, seat)
    np.testing.assert_array_equal(state.hand, before.hand)


def test_public_state_still_takes_minus_one_for_no_seat():
    state = _mid_game().state
    public = public_state(state, np.full(3, -1, np.int8))
    np.testing.assert_array_equal(public.hand, state.known)


# ----------------------------------------------------------------- Rules
@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(rounds=True), "rounds"),
        (dict(rounds=4.0), "rounds"),
        (dict(rounds=1.0), "rounds"),
        (dict(rounds="4"), "rounds"),
        (dict(num_players=True), "num_players"),
        (dict(num_players=4.0), "num_players"),
        (dict(turn_cap=True), "turn_cap"),
        (dict(turn_cap=400.0), "turn_cap"),
    ],
)
def test_rules_refuse_bools_and_floats_in_int_fields(kwargs, field):
    value = kwargs[field]
    with pytest.raises(ValueError, match=rf"{field} must be an int, got {value!r}"):
        Rules(**kwargs)


def test_rules_refuse_a_non_string_reward():
    with pytest.raises(ValueError, match="reward must be one of"):
        Rules(reward=["win"])


# ----------------------------------------------------------------- Simulator.from_state
def _with(state: State, **changes) -> State:
    return replace(state.copy(), **changes)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda s: dict(hand=s.hand[..., :2].copy()),
         r"state\.hand must be int8\[7, 6, 3\] for a batch of 3 games .*got int8\[7, 6, 2\]"),
        (lambda s: dict(coins=s.coins.astype(np.float64)), r"state\.coins must be int16\[7, 3\] .*got float64\[7, 3\]"),
        (lambda s: dict(coins=s.coins.astype(np.int8)), r"state\.coins must be int16"),
        (lambda s: dict(terminated=s.terminated.astype(np.int8)), r"state\.terminated must be bool\[3\]"),
        (lambda s: dict(market_stamp=s.market_stamp[:, :5]), r"state\.market_stamp must be int16\[6, 10, 3\]"),
        (lambda s: dict(deck=s.deck.tolist()), r"state\.deck must be int8\[45, 3\] .*got list"),
        (lambda s: dict(current=s.current[None]), r"state\.current must be int8\[B\] .*\[1, 3\]"),
    ],
    ids=["hand-of-2-games", "float64-coins", "int8-coins", "int8-terminated", "short-market-stamp", "list-deck",
         "2-d-current"],
)
def test_from_state_refuses_fields_of_the_wrong_shape_or_dtype(change, match):
    state = _mid_game().state
    bad = _with(state, **change(state))
    with pytest.raises(ValueError, match=match):
        Simulator.from_state(bad, Rules(num_players=4))


def test_from_state_still_continues_a_good_state():
    sim = _mid_game()
    other = Simulator.from_state(sim.state.copy(), Rules(num_players=4))
    actions = sim.random_actions(rng=np.random.default_rng(1))
    sim.step(actions)
    other.step(actions)
    np.testing.assert_array_equal(sim.state.hand, other.state.hand)


# ----------------------------------------------------------------- the raw AEC env
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda e: e.step(0), "step"),
        (lambda e: e.last(), "last"),
        (lambda e: e.observe("player_0"), "observe"),
        (lambda e: e.agent_iter(), "agent_iter"),
        (lambda e: e.render(), "render"),
    ],
    ids=["step", "last", "observe", "agent_iter", "render"],
)
def test_raw_env_before_reset_says_to_call_reset(call, name):
    e = raw_env(num_players=3, render_mode="ansi")
    with pytest.raises(ValueError, match=rf"{name}\(\) needs a game: call reset\(\) first"):
        call(e)
    e.reset(seed=0)  # nothing was lost: the env works once reset
    obs, *_ = e.last()
    assert obs["action_mask"].shape == (NUM_ACTIONS,)
    e.step(int(np.flatnonzero(obs["action_mask"])[0]))


@pytest.mark.parametrize("seed", [-1, 1.5, "7", True, np.bool_(False), [1, 2]])
def test_simulator_and_aec_refuse_bad_seeds_and_keep_their_games(seed):
    """A float, string, bool or negative seed was left to numpy: a TypeError about
    SeedSequence entropy, or silently seed 1 for ``True``."""
    with pytest.raises(ValueError, match=r"seed must be None or a non-negative int or .*got "):
        Simulator(Rules(num_players=4), 2, seed=seed)
    sim = _mid_game()
    before = sim.state.copy()
    with pytest.raises(ValueError, match="seed must be"):
        sim.reset(seed=seed)
    assert_states_equal(sim.state, before)
    e = raw_env(num_players=3)
    e.reset(seed=0)
    first = e.observe(e.agent_selection)["observation"]
    with pytest.raises(ValueError, match="seed must be"):
        e.reset(seed=seed)
    assert np.array_equal(e.observe(e.agent_selection)["observation"], first)


def test_simulator_still_takes_every_kind_of_seed():
    decks = [Simulator(Rules(num_players=4), 2, seed=s).state.deck.copy()
             for s in (5, np.int64(5), np.random.SeedSequence(5), np.random.default_rng(5))]
    assert all(np.array_equal(d, decks[0]) for d in decks)
    assert Simulator(Rules(num_players=4), 2).state.deck.shape == decks[0].shape


@pytest.mark.parametrize("name", ["random", "greedy", "banker", "search", "ppo", "exit"])
def test_agents_refuse_bad_seeds_by_name(name):
    from startups_env.agents import make_agent

    for bad in (-1, 0.5, True):
        with pytest.raises(ValueError, match="seed must be"):
            make_agent(name, seed=bad)
    agent = make_agent(name, seed=3)
    rng_state = agent.rng.bit_generator.state
    with pytest.raises(ValueError, match="seed must be"):
        agent.seed(-1)
    assert agent.rng.bit_generator.state == rng_state


def test_build_agent_names_the_spec_once():
    from startups_env.agents.registry import build_agent

    with pytest.raises(ValueError, match=r"^unknown agent 'nobody'; known agents"):
        build_agent("nobody")
    with pytest.raises(ValueError, match=r"^agent 'greedy\[chip_value=abc\]': "):
        build_agent("greedy[chip_value=abc]")
