"""One workload function run in a fresh interpreter of the same framework, for a setting that a
framework fixes once per process.

TensorFlow sizes its thread pools when the process's first session starts, and every later
session shares them, whatever its own ConfigProto asks (its documented behaviour; even
`use_per_session_threads` leaves the intra-op pool global): in one process, a session asking
for intra-op 1 / inter-op 1 after one with default threads ran on 1.65 cores, against 0.99 in
a process of its own. A measurement of a thread configuration therefore runs where that
configuration is the process's first, for every framework alike.

Usage (by `call`): python -m bench.isolated FRAMEWORK MODULE FUNCTION ARGS_JSON
prints the function's JSON-serializable result as one line.
"""
import importlib
import json
import subprocess
import sys

from bench import lockstep
from bench.frameworks import FRAMEWORKS

# The framework module a workload receives, by its __name__ -> the framework's name.
_FRAMEWORK_OF_MODULE = {"tensorweave": "tensorweave", "tensorflow.compat.v1": "tensorflow"}


def call(tf, function, *args, timeout: float = 600):
    """`function(tf, *args)` (a module-level function of a bench module) run in a new process
    of `tf`'s framework with this one's interpreter and environment, taking this worker's
    lockstep turns while it runs; its result."""
    framework = _FRAMEWORK_OF_MODULE[tf.__name__]
    out = subprocess.run(
        [sys.executable, "-m", "bench.isolated", framework, function.__module__,
         function.__name__, json.dumps(args)],
        capture_output=True, text=True, timeout=timeout, pass_fds=lockstep.fds_to_pass())
    if out.returncode:
        raise RuntimeError(f"{function.__name__}{args} failed in its own process:\n"
                           f"{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    framework, module, function, args = argv
    tf = FRAMEWORKS[framework].load()
    result = getattr(importlib.import_module(module), function)(tf, *json.loads(args))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
