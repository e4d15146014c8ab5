"""The notebooks run from top to bottom (nbclient, in a fresh python3 kernel, from the
notebooks/ folder as a reader would). Each is sized to run in about a minute on 2 cores.

Equivalent from the command line: ``pytest --nbmake notebooks``.
"""

import os

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "notebooks")
NAMES = sorted(name for name in os.listdir(NOTEBOOKS) if name.endswith(".ipynb"))


def test_the_notebooks_are_there():
    assert NAMES == ["01_quickstart.ipynb", "02_train_your_own.ipynb"]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(name, tmp_path, monkeypatch):
    # The notebooks write their runs and replays to tempfile.mkdtemp() folders, kept for the
    # reader to open; here the kernel (which inherits this environment) puts them in pytest's
    # temporary folder instead of leaving them in /tmp after every test run.
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    nb = nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": NOTEBOOKS}}
    )
    client.execute()  # raises CellExecutionError (with the cell's traceback) on failure
    errors = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
