"""Shared test set-up."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs_in_a_temporary_folder(tmp_path_factory):
    """SB3's ``learn()`` without a logger makes an empty ``SB3-<date>`` folder in the system's
    temporary directory on every call, unless ``SB3_LOGDIR`` names one: the suite (the
    MaskablePPO test, the README's example) left a folder there on each run."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3_logs")))
    yield
    mp.undo()
