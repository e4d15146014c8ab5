"""Shared test set-up, and the ``game`` fixture: every game of the contract."""

import importlib

import pytest

from startups_env.table.games import GAMES, register

#: The games that live only in the tests (tests/games/), each added by this one line.
TEST_GAMES = (importlib.import_module("games.race21").GAME,)


@pytest.fixture(params=(*GAMES.values(), *TEST_GAMES), ids=lambda game: game.name)
def game(request):
    """Each registered game and each game of the tests, which is registered for the test's length."""
    game = request.param
    if game.name not in GAMES:
        register(game)
        request.addfinalizer(lambda: GAMES.pop(game.name))
    return game


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs_in_a_temporary_folder(tmp_path_factory):
    """SB3's ``learn()`` without a logger makes an empty ``SB3-<date>`` folder in the system's
    temporary directory on every call, unless ``SB3_LOGDIR`` names one: the suite (the
    MaskablePPO test, the README's example) left a folder there on each run."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3_logs")))
    yield
    mp.undo()
