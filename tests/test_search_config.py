"""The search bot's settings: one frozen SearchConfig that refuses a bad field by name, built
alike from keyword arguments, from a config, and from the registry's ``search[...]`` specs."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from startups_env.agents.registry import build_agent
from startups_env.agents.search import NumpyBackend, SearchAgent, SearchConfig, search_backend

from startups_env import Rules, Simulator
from startups_env.startups.history import History
from startups_env.startups.observe import observe
from startups_env.startups.state import public_state

BAD_FIELDS = [
    ("determinizations", 0), ("determinizations", 1.5), ("determinizations", True), ("rollouts", 0),
    ("max_rollouts", 0), ("halving_rounds", -1), ("max_candidates", -1), ("horizon", -1), ("horizon", "20"),
    ("turn_puts", -1), ("halving_width", 0), ("inference_oversample", 0),
    ("rollout_epsilon", 1.5), ("rollout_epsilon", float("nan")), ("soft_scale", 0.0), ("soft_scale", "abc"),
    ("greedy_prior", 0.0), ("greedy_prior", 1.0), ("other_type_epsilon", 0.0), ("other_type_epsilon", 1.5),
    ("greedy_anchor", 1.0), ("greedy_anchor", -0.1), ("inference_temperature", 0.0), ("race_z", 0.5),
    ("race_z", float("nan")), ("max_world_factor", 0.5), ("max_world_factor", True),
    ("value", "best"), ("opponent_model", "search"), ("infer_hands", "yes"), ("infer_hands", 1),
    ("read_takes", None), ("types_per_world", 0), ("greedy", {"spread": 0.3}), ("backend", "cuda"),
]


@pytest.mark.parametrize("field, value", BAD_FIELDS, ids=[f"{f}={v!r}" for f, v in BAD_FIELDS])
def test_a_bad_field_is_a_value_error_that_names_it(field, value):
    with pytest.raises(ValueError, match=rf"^{field} must "):
        SearchConfig(**{field: value})
    with pytest.raises(ValueError, match=rf"^{field} must "):
        SearchAgent(**{field: value})


def test_fields_are_kept_as_plain_python_values():
    config = SearchConfig(determinizations=np.int64(8), soft_scale=4, race_z=np.float32(3.0),
                          infer_hands=np.bool_(False))
    assert type(config.determinizations) is int and type(config.soft_scale) is float
    assert type(config.race_z) is float and config.infer_hands is False
    assert config == SearchConfig(determinizations=8, soft_scale=4.0, race_z=3.0, infer_hands=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.horizon = 0
    with pytest.raises(TypeError):
        SearchConfig(8)  # (keywords only: no setting by position)


def test_the_random_opponent_model_reads_no_hands():
    assert SearchConfig().reads_hands and not SearchConfig(infer_hands=False).reads_hands
    assert not SearchConfig(opponent_model="random").reads_hands
    assert SearchAgent(config=SearchConfig(opponent_model="random")).needs == {"public"}
    assert SearchAgent().needs == {"public", "history"}


SPECS = [
    ("search", {}),
    ("search[determinizations=288,horizon=0]", {"determinizations": 288, "horizon": 0}),
    ("search[backend=numpy]", {"backend": "numpy"}),
    ("search[opponent_model=random;infer_hands=false;soft_scale=2]",
     {"opponent_model": "random", "infer_hands": False, "soft_scale": 2.0}),
    ("search[value=win, race_z=0, greedy_anchor=0.03, read_takes=true]",
     {"value": "win", "race_z": 0.0, "greedy_anchor": 0.03, "read_takes": True}),
]


@pytest.mark.parametrize("spec, fields", SPECS, ids=[spec for spec, _ in SPECS])
def test_a_spec_builds_the_config_of_its_keywords(spec, fields):
    built = build_agent(spec, seed=0)
    assert built.config == SearchConfig(**fields) == SearchAgent(**fields).config
    assert built.backend.name == search_backend(fields.get("backend")).name


@pytest.mark.parametrize("spec, message", [
    ("search[determinizations=0]", "determinizations must be an int >= 1, got 0"),
    ("search[horizon=0,determinizations=0]", "determinizations must be an int >= 1, got 0"),
    ("search[value=best]", "value must be one of ('soft', 'win', 'rank'), got 'best'"),
    ("search[backend=cuda]", "backend must be one of"),
    ("search[nonsense=1]", "unknown setting 'nonsense'; the settings of 'search' are rollout_policy, prior, "
                           "determinizations,"),
    ("search[max_candidate=4]", "unknown setting 'max_candidate' (did you mean 'max_candidates'?)"),
])
def test_a_bad_spec_names_the_spec_and_the_field(spec, message):
    with pytest.raises(ValueError, match=re.escape(f"agent {spec!r}: ") + ".*" + re.escape(message)):
        build_agent(spec, seed=0)


def test_an_agent_takes_a_config_and_keywords_that_replace_its_fields():
    config = SearchConfig(determinizations=4, halving_rounds=1, backend="numpy")
    assert SearchAgent(config=config).config is config
    assert SearchAgent(config=config, horizon=0).config == dataclasses.replace(config, horizon=0)
    assert isinstance(SearchAgent(config=config).backend, NumpyBackend)
    with pytest.raises(ValueError, match="config must be a SearchConfig"):
        SearchAgent(config={"determinizations": 4})
    # The same search, given its settings either way, makes the same choices.
    sim = Simulator(Rules(num_players=3), 6, seed=2)
    for _ in range(9):
        sim.step(sim.random_actions())
    state = sim.state
    given = dict(obs=observe(state), mask=sim.legal_mask(), public=public_state(state, state.current),
                 history=History(6))
    choices = [SearchAgent(seed=3, config=config).act(**given),
               SearchAgent(seed=3, determinizations=4, halving_rounds=1, backend="numpy").act(**given)]
    assert np.array_equal(*choices)


def test_search_backend_resolves_a_name_once_into_its_operations():
    assert search_backend("numpy").name == "numpy"
    assert search_backend().name in ("numpy", "numba")
    with pytest.raises(ValueError, match="backend must be one of"):
        search_backend("cuda")
