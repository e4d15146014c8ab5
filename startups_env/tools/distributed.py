"""Independent pieces of work (*shards*) run in this process or on Ray workers.

The arena, the ladder and the search labelling of ``startups_env.train.distill`` cut their
work into shards whose contents and seeds depend only on the run's seed and the shard's
index, never on how many workers play them; the results are merged in shard order. So
the same seed gives the same results on one process, on two workers or on a cluster:
the workers only decide where each shard is played.

    with Workers(4) as pool:            # a local Ray instance of 4 CPUs, stopped after
        for index, result in pool.run(play_shard, jobs):
            ...

``Workers()`` or ``Workers(1)`` plays the shards here, one after another, without Ray
(the embedded default; Ray is the optional ``ray`` extra, ``pip install -e ".[ray]"``).
``Workers(address="HOST:PORT")`` joins a running cluster (``ray start --head``; see
docs/distributed.md); an address that cannot be reached is a :class:`ClusterError`
within ``connect_timeout`` seconds, before any shard is played.

A worker that dies (its process killed, its machine lost) has its shard played again
from the start by Ray (``max_retries``); a shard's result counts only once it is
returned whole, so no game is counted twice or lost. An exception raised by the work
itself is not retried: it is a bug, and it stops the run.

Each shard runs on as many threads as Ray reserved CPUs for it: ``threads_per_worker``
(one by default) for numba's parallel kernels and torch. Without this, every worker ran
numba's threads, one per core of its machine, so two workers on two cores ran four threads
and were slower than one process. A local instance this pool starts has ``workers *
threads_per_worker`` CPUs; when a run has fewer shards than that, its shards share them.

Outside bots (``module:callable``) must be importable on the workers: a local instance
passes this process's current folder and ``PYTHONPATH`` on to its workers; on a cluster,
give ``working_dir`` (Ray uploads that folder to every worker and puts it on their
path) or install the bot's package on every machine.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable, Iterable, Iterator

from startups_env.checks import is_int
from startups_env.startups.backend import numba_available

#: Times Ray plays a shard again after its worker died.
MAX_RETRIES = 3

#: Seconds to wait for a cluster address to answer before giving up.
CONNECT_TIMEOUT = 10.0

#: The Ray release the ``ray`` extra of pyproject.toml asks for (a test keeps them equal).
RAY_REQUIREMENT = "ray>=2.40"


class ClusterError(ConnectionError):
    """Ray is missing, or the cluster cannot be reached or started."""


def check_workers(workers, address, threads_per_worker=1) -> None:
    """ValueError unless ``workers`` is None or a positive int, ``address`` None or a
    non-empty string and ``threads_per_worker`` a positive int."""
    if workers is not None and (not is_int(workers) or workers < 1):
        raise ValueError(f"workers must be None or a positive int, got {workers!r}")
    if not is_int(threads_per_worker) or threads_per_worker < 1:
        raise ValueError(f"threads_per_worker (--threads-per-worker) must be a positive int, got {threads_per_worker!r}")
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise ValueError(f"ray address must be None or a non-empty string like HOST:PORT, got {address!r}")


def _import_ray(what: str):
    """The ray module; ClusterError saying that ``what`` needs it if it is not installed."""
    try:
        import ray
    except ImportError as exc:
        raise ClusterError(f"{what} needs Ray, the optional extra: pip install -e \".[ray]\" "
                           f"(or pip install \"{RAY_REQUIREMENT}\")") from exc
    return ray


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """ClusterError unless ``address`` (``HOST:PORT`` or ``ray://HOST:PORT``; ``auto``
    is left to Ray) accepts a connection within ``timeout`` seconds. Ray itself would
    keep retrying an address that does not answer for a minute or more."""
    if address == "auto":
        return
    host_port = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = host_port.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ClusterError(f"ray address {address!r} is not HOST:PORT (e.g. 10.0.0.5:6379, the address "
                           "`ray start --head` prints) or 'auto'")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ClusterError(f"ray address {address}: cannot connect within {timeout:g} s "
                           f"({type(exc).__name__}: {exc}); is `ray start --head` running there?") from exc


class Workers:
    """Where shards are played: here (``workers`` None or 1, no ``address``), on a local
    Ray instance of ``workers`` workers started for the run and stopped after it, or on the
    cluster at ``address``. If Ray is already initialised in this process (a notebook or
    a test started it), that instance is used and left running.

    threads_per_worker: the CPUs Ray reserves for each shard, and the threads its numba
        kernels and torch run on there (at most the cores of the worker's machine). A
        local instance started here has ``workers * threads_per_worker`` CPUs. In this
        process (no Ray) the shards keep numba's and torch's own thread counts.
    working_dir: a folder Ray uploads to every worker and puts on their path (for outside
        bots on a cluster whose machines do not share this folder).
    """

    def __init__(self, workers: int | None = None, address: str | None = None, *, threads_per_worker: int = 1,
                 working_dir: str | None = None, connect_timeout: float = CONNECT_TIMEOUT):
        check_workers(workers, address, threads_per_worker)
        if working_dir is not None and not os.path.isdir(working_dir):
            raise ValueError(f"working_dir {working_dir!r} is not a folder")
        self.workers = None if workers is None else int(workers)
        self.address = None if address is None else address.strip()
        self.threads_per_worker = int(threads_per_worker)
        self.working_dir = working_dir
        self.connect_timeout = float(connect_timeout)
        self.local = self.address is None and (self.workers is None or self.workers == 1)
        self._ray = None
        self._owned = False  # we started Ray, so we stop it
        self.startup_seconds = 0.0

    @property
    def sharded(self) -> bool:
        """Workers were asked for (any count, 1 included): callers cut their work into the
        fixed-size shards that make results the same for every count."""
        return self.workers is not None or self.address is not None

    def __enter__(self) -> Workers:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        """Connect to, or start, Ray (nothing for a local pool). Raises ClusterError."""
        if self.local or self._ray is not None:
            return
        ray = _import_ray(f"joining the Ray cluster at {self.address}" if self.address is not None
                          else f"playing on {self.workers} workers")
        tick = time.perf_counter()
        if self.address is not None:
            check_reachable(self.address, self.connect_timeout)
        if not ray.is_initialized():
            try:
                ray.init(address=self.address, num_cpus=None if self.address else self._local_cpus(),
                         include_dashboard=False, runtime_env=self._runtime_env(), log_to_driver=True)
            except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
                raise ClusterError(f"could not {'join the Ray cluster at ' + self.address if self.address else 'start Ray'}"
                                   f": {type(exc).__name__}: {exc}") from exc
            self._owned = True
        self._ray = ray
        self._check_a_machine_fits_a_worker()
        self.startup_seconds = time.perf_counter() - tick

    def _local_cpus(self) -> int:
        """The CPUs of the local instance this pool starts: one worker per ``workers``."""
        return (self.workers or 1) * self.threads_per_worker

    def _check_a_machine_fits_a_worker(self) -> None:
        """ClusterError unless some machine of the instance has ``threads_per_worker`` CPUs:
        Ray would otherwise hold every shard forever, waiting for one that does."""
        largest = max((node["Resources"].get("CPU", 0) for node in self._ray.nodes() if node["Alive"]), default=0)
        if largest < self.threads_per_worker:
            self.close()
            raise ClusterError(f"threads_per_worker={self.threads_per_worker} (--threads-per-worker), but the "
                               f"largest machine of the Ray instance has {largest:g} CPUs: no worker could start; "
                               "ask for fewer threads per worker")

    def shard_threads(self, shards: int) -> int:
        """The threads (and reserved CPUs) of each shard of a run of ``shards`` on Ray
        (:func:`shard_threads`; the CPUs are known only of a local instance started here)."""
        owned_local = self._owned and self.address is None
        return shard_threads(self.threads_per_worker, self._local_cpus() if owned_local else None, shards)

    def _runtime_env(self) -> dict:
        if self.working_dir is not None:
            return {"working_dir": self.working_dir}
        # The workers of a local instance start in Ray's own folder: give them this
        # process's current folder and PYTHONPATH, where `module:callable` bots are found.
        paths = [os.getcwd()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        return {"env_vars": {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}}

    def close(self) -> None:
        if self._ray is not None and self._owned:
            self._ray.shutdown()
        self._ray, self._owned = None, False

    def run(self, fn: Callable, jobs: Iterable, *, progress: Callable[[int], None] | None = None
            ) -> Iterator[tuple[int, object]]:
        """Yield ``(index, fn(job, report))`` for each job, in the order they finish (in
        job order here). ``fn`` is a module-level function (workers import it by name);
        ``report(done)`` tells how much of its job is done (any unit, e.g. games; a
        retried job starts again from 0); ``progress(total)`` is called in this process
        with the sum over all jobs whenever it moves."""
        jobs = list(jobs)
        if self.local:
            done = [0] * len(jobs)
            for index, job in enumerate(jobs):
                def report(n, index=index):
                    done[index] = n
                    if progress is not None:
                        progress(sum(done))
                yield index, fn(job, report)
            return
        self.start()
        yield from _run_on_ray(self._ray, fn, jobs, progress, self.shard_threads(len(jobs)))


def shard_threads(threads_per_worker: int, local_cpus: int | None, shards: int) -> int:
    """The threads (and reserved CPUs) of each of ``shards`` shards: ``threads_per_worker``,
    or the ``local_cpus`` of a one-machine instance shared among the shards when it has
    more CPUs than the run has shards (``local_cpus`` None: unknown, a cluster). Spare
    CPUs would stay idle, and one process running numba on every core would then beat
    the workers."""
    if local_cpus is None or shards < 1:
        return threads_per_worker
    return max(threads_per_worker, local_cpus // shards)


def _run_on_ray(ray, fn, jobs, progress, threads: int) -> Iterator[tuple[int, object]]:
    tracker = ray.remote(num_cpus=0)(_Progress).remote()
    task = ray.remote(num_cpus=threads, max_retries=MAX_RETRIES, retry_exceptions=False)(_run_job)
    pending = {task.remote(fn, job, index, tracker, threads): index for index, job in enumerate(jobs)}
    shown = -1
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            for ref in ready:
                index = pending.pop(ref)
                result = ray.get(ref)
                yield index, result
            if progress is not None:
                total = ray.get(tracker.total.remote())
                if total != shown:
                    progress(total)
                    shown = total
    finally:
        for ref in pending:  # the caller stopped early (an error): do not leave work running
            ray.cancel(ref, force=True)
        ray.kill(tracker)


def _run_job(fn, job, index, tracker, threads):
    def report(n):
        tracker.report.remote(index, n)
    use_threads(threads)
    return fn(job, report)


def use_threads(threads: int) -> int:
    """Run numba's parallel kernels and torch on ``threads`` threads in this thread of this
    process, capped at numba's pool (the machine's cores, or ``NUMBA_NUM_THREADS``);
    returns the count used. torch, if it is imported later, starts with that count too.

    What a Ray worker calls before each shard, with the CPUs Ray reserved for it. Each
    worker process would otherwise start numba's threads on every core of its machine,
    and torch its own, so that workers sharing a machine ran several threads per core."""
    if numba_available():
        import numba

        from startups_env.startups.numba_runtime import start_threads
        start_threads()  # (numba's threads start here, in a fresh worker: with the package's settings)
        threads = min(threads, numba.config.NUMBA_NUM_THREADS)
        numba.set_num_threads(threads)  # (numba's count is per calling thread)
    # torch reads these when it is first asked for its thread count.
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    return threads


class _Progress:
    """A Ray actor holding how much of each job is done; a retried job reports from 0 again,
    so its earlier, lost progress is replaced, not added."""

    def __init__(self):
        self.done: dict[int, int] = {}

    def report(self, index: int, n: int) -> None:
        self.done[index] = n

    def total(self) -> int:
        return sum(self.done.values())


def add_worker_arguments(parser) -> None:
    """The command-line flags of :class:`Workers`: ``--workers``, ``--threads-per-worker``,
    ``--ray-address``, ``--ray-working-dir``."""
    group = parser.add_argument_group("workers (Ray, the optional ray extra; docs/distributed.md)")
    group.add_argument("--workers", type=_worker_count, default=None,
                       help="play fixed-size shards on this many local Ray workers (1: the same shards in this "
                            "process, no Ray, on numba's threads); the same seed gives the same results for every "
                            "count")
    group.add_argument("--threads-per-worker", type=int, default=1,
                       help="CPUs Ray reserves for each worker, and the threads its numba kernels and torch run on "
                            "(default 1: --workers N uses N cores)")
    group.add_argument("--ray-address", default=None,
                       help="join the Ray cluster at HOST:PORT (what `ray start --head` prints) instead")
    group.add_argument("--ray-working-dir", default=None,
                       help="folder Ray ships to every worker and puts on their path (outside bots on a cluster)")


def _worker_count(text: str) -> int:
    """``--workers``: a positive int, else argparse's error in the command line's words."""
    import argparse

    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"must be a positive number of workers (1 plays the shards in this "
                                         f"process, without Ray), got {text!r}")
    return count


def workers_from_args(args) -> Workers:
    """The :class:`Workers` the flags of :func:`add_worker_arguments` ask for."""
    return Workers(args.workers, args.ray_address, threads_per_worker=args.threads_per_worker,
                   working_dir=args.ray_working_dir)


def progress_bar(total: int, desc: str, unit: str):
    """A tqdm bar on stderr, or None (with a note) when tqdm is not installed."""
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm comes with the train extra; the arena needs only the core install
        print(f"{desc}: no progress bar (tqdm is not installed)", file=sys.stderr)
        return None
    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr)
