"""Lockstep: the workers of one round take turns, so exactly one of them runs at any moment.

This machine's speed drifts by 20-40% over seconds (other tenants, clocks): one process measured
alone, then another, compares two different machines. So the runner starts every framework's
worker of a round at once and lets them run one turn at a time, round-robin: a turn is a worker's
start-up, or the batches of `bench.timing.per_call_us` (with whatever the workload does between
them: graph building, checks) for at least MIN_TURN_SECONDS, which begin with SETTLE_SECONDS of
untimed calls. Batches of TensorFlow and tensorweave are then measured a second or two apart, a
drift hits both alike, and no timed batch shares the cores with another worker's kernels or its
spinning threads. (A paused worker's own background threads, e.g. a QueueRunner refilling its
queue, still run; every framework's do.)

The turn protocol runs over two pipes per worker, whose file descriptors the worker finds in
`TW_BENCH_LOCKSTEP` ("READ_FD,WRITE_FD"): the worker writes one byte when it wants a turn and
blocks reading one byte; the runner answers when every other worker is blocked too. A worker
that exits (normally or not) closes its pipe, which ends its part of the round. Without the
variable (a workload run by hand, or a probe) `next_turn` does nothing.
"""
from __future__ import annotations

import os
import select
import subprocess
import tempfile
import time
from dataclasses import dataclass

ENV = "TW_BENCH_LOCKSTEP"
_WANT, _GO = b"w", b"g"

# A turn lasts at least this long (few switches), and begins with this long of untimed calls:
# a process that just gave up the cores leaves threads spinning for a while (OpenBLAS's for
# about 130 ms after its last call, Eigen's pool), which would slow the next worker's batches.
MIN_TURN_SECONDS = 1.0
SETTLE_SECONDS = 0.2

_fds: tuple[int, int] | None = None
_turn_start = float("-inf")


def next_turn() -> bool:
    """Ends this worker's turn, if it has lasted MIN_TURN_SECONDS, and blocks until the runner
    gives it the next one; True if it did (the caller should settle before timing)."""
    global _fds, _turn_start
    if _fds is None:
        spec = os.environ.get(ENV)
        if not spec:
            return False
        _fds = tuple(int(fd) for fd in spec.split(","))
    if time.monotonic() - _turn_start < MIN_TURN_SECONDS:
        return False
    read_fd, write_fd = _fds
    os.write(write_fd, _WANT)
    if os.read(read_fd, 1) != _GO:
        raise SystemExit("bench runner went away")   # the runner died: nothing to report to
    _turn_start = time.monotonic()
    return True


def fds_to_pass() -> tuple[int, ...]:
    """This worker's turn pipes, for a child process that measures on its behalf while it
    waits (bench/isolated.py): the child inherits the environment variable naming them and
    takes the turns in its place; () outside a lockstep run."""
    spec = os.environ.get(ENV)
    return tuple(int(fd) for fd in spec.split(",")) if spec else ()


@dataclass
class Finished:
    """How one worker of a round ended."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False


class _Worker:
    """A started worker: its process, its end of the turn pipes, its output files."""

    def __init__(self, argv: list[str], env: dict, cwd):
        go_read, self.go = os.pipe()        # runner -> worker
        self.want, want_write = os.pipe()   # worker -> runner
        self.out = tempfile.TemporaryFile("w+")
        self.err = tempfile.TemporaryFile("w+")
        env = {**env, ENV: f"{go_read},{want_write}"}
        try:
            self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=self.out,
                                         stderr=self.err, pass_fds=(go_read, want_write),
                                         text=True)
        finally:
            os.close(go_read)
            os.close(want_write)

    def wait_for_request(self, timeout: float) -> bool | None:
        """True: it wants a turn; False: it exited; None: neither within `timeout` seconds."""
        ready, _, _ = select.select([self.want], [], [], timeout)
        if not ready:
            return None
        return os.read(self.want, 1) == _WANT

    def give_turn(self) -> bool:
        """Lets it run; False if it is gone (killed from outside between two turns)."""
        try:
            os.write(self.go, _GO)
        except BrokenPipeError:
            return False
        return True

    def finish(self, timed_out: bool = False) -> Finished:
        if timed_out:
            self.proc.kill()
        self.proc.wait()
        for fd in (self.go, self.want):
            os.close(fd)
        outputs = []
        for f in (self.out, self.err):
            f.seek(0)
            outputs.append(f.read())
            f.close()
        return Finished(self.proc.returncode, *outputs, timed_out=timed_out)


def run_round(commands: dict[str, tuple[list[str], dict]], cwd, timeout: float
              ) -> dict[str, Finished]:
    """Runs every command (key -> (argv, env)) in turns until all have exited.

    `timeout` bounds each turn; a worker that overruns it is killed and reported timed out."""
    workers = {key: _Worker(argv, env, cwd) for key, (argv, env) in commands.items()}
    done: dict[str, Finished] = {}
    queue: list[str] = []   # the workers blocked on a request, in turn order

    def settle(key: str, wants: bool | None) -> None:
        if wants:
            queue.append(key)
        else:
            done[key] = workers[key].finish(timed_out=wants is None)

    for key, worker in workers.items():   # each asks for its first turn before importing
        settle(key, worker.wait_for_request(timeout))
    while queue:
        key = queue.pop(0)
        settle(key, workers[key].wait_for_request(timeout) if workers[key].give_turn() else False)
    return {key: done[key] for key in commands}
