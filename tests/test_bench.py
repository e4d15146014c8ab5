"""The shipped benchmark prints every figure, per installed backend, in its line format
(the figures themselves are measured by running it, never by tests)."""

import os
import re

import pytest
from helpers import INSTALLED_BACKENDS
from startups_env.agents import bench


def test_the_benchmark_prints_every_figure_per_backend(capsys):
    bench.main(["--repeats", "1", "--seconds", "0.05", "--batch-sizes", "1,8", "--observe-batch", "8",
                "--search-games", "1"])
    out = capsys.readouterr().out
    for backend in INSTALLED_BACKENDS:
        for b in (1, 8):
            assert re.search(rf"^batch B={b} players=4 backend={backend} decisions_per_s=\d+$", out, re.M), out
        assert re.search(rf"^search players=4 backend={backend} games=1 seconds_per_decision=[\d.]+$", out, re.M)
        assert re.search(rf"^aec players=4 backend={backend} decisions_per_s=\d+$", out, re.M), out
    assert re.search(r"^aec_bare players=4 decisions_per_s=\d+$", out, re.M), out  # beside the aec lines
    aec = [line.split(" decisions_per_s=")[0] for line in out.splitlines() if line.startswith("aec")
           and "decisions_per_s=" in line]
    assert aec == [f"aec players=4 backend={backend}" for backend in INSTALLED_BACKENDS] + ["aec_bare players=4"]
    assert re.search(r"^observe B=8 players=4 obs_per_s=\d+$", out, re.M)
    for network in ("ppo", "exit"):  # the shipped networks, one decision at a time
        assert re.search(rf"^network players=4 bot={network} batch=1 ms_per_decision=[\d.]+$", out, re.M), out
    assert re.search(r"^state_bytes_per_game=\d+$", out, re.M)
    if "numba" in INSTALLED_BACKENDS:  # numpy's time over numba's (one run each here)
        seconds = {backend: float(re.search(rf"^search players=4 backend={backend} games=1 "
                                            r"seconds_per_decision=([\d.]+)$", out, re.M).group(1))
                   for backend in ("numpy", "numba")}
        speedup = float(re.search(r"^search_speedup players=4 numba_over_numpy=([\d.]+)$", out, re.M).group(1))
        # (printed to 2 decimals, the times to 4, which can be as small as 0.001 here)
        assert speedup == pytest.approx(seconds["numpy"] / seconds["numba"], rel=0.05, abs=0.006)
        for b in (1, 8):  # numba's rate over numpy's, the same runs
            rates = {backend: int(re.search(rf"^batch B={b} players=4 backend={backend} decisions_per_s=(\d+)$",
                                            out, re.M).group(1)) for backend in ("numpy", "numba")}
            ratio = float(re.search(rf"^batch_speedup B={b} players=4 numba_over_numpy=([\d.]+)$", out, re.M).group(1))
            assert ratio == pytest.approx(rates["numba"] / rates["numpy"], abs=0.006)
        rates = {backend: int(re.search(rf"^aec players=4 backend={backend} decisions_per_s=(\d+)$", out, re.M).group(1))
                 for backend in ("numpy", "numba")}
        ratio = float(re.search(r"^aec_speedup players=4 numba_over_numpy=([\d.]+)$", out, re.M).group(1))
        assert ratio == pytest.approx(rates["numba"] / rates["numpy"], abs=0.006)
        assert re.search(r"^numba_threads layer=\w+ threads=\d+ wait=", out, re.M), out
    assert re.search(r"^load_average before 1,5,15min=[\d.,]+ cores=\d+$", out, re.M), out


@pytest.mark.parametrize("kind", ["batch", "busy"])
def test_a_competitor_runs_beside_the_figures_and_stops_after_them(kind):
    """--competitor starts its processes (each has started its work when the block is
    entered) and stops them all when the block ends, an error included."""
    with pytest.raises(KeyError), bench.competitor(kind, 3) as processes:
        assert len(processes) == (1 if kind == "batch" else len(os.sched_getaffinity(0)))
        assert all(process.poll() is None for process in processes)
        raise KeyError("stop early")
    assert processes and all(process.poll() is not None for process in processes)
    with pytest.raises(ValueError, match="competitor must be one of"):
        with bench.competitor("nothing", 3):
            pass
