"""bench/isolated.py: a workload function measured in a fresh process of the same framework,
taking its parent's lockstep turns."""
import sys
from pathlib import Path

import tensorweave
from bench import isolated, lockstep
from bench.workloads import multi_device

REPO = Path(__file__).resolve().parents[2]

_PARENT = """
import tensorweave
from bench import isolated
from bench.workloads import multi_device
print(isolated.call(tensorweave, multi_device._chain_us, 0), flush=True)
"""

_OTHER = """
import time
from bench.lockstep import next_turn
for _ in range(6):
    next_turn()
    time.sleep(0.01)
print("other done", flush=True)
"""


def test_the_function_runs_in_another_process_and_returns_its_value():
    us = isolated.call(tensorweave, multi_device._chain_us, 0)
    assert isinstance(us, float) and 0 < us < 10_000


def test_the_child_takes_the_parents_turns_in_a_lockstep_round():
    env = {"PYTHONPATH": str(REPO)}
    finished = lockstep.run_round({"parent": ([sys.executable, "-c", _PARENT], env),
                                   "other": ([sys.executable, "-c", _OTHER], env)},
                                  REPO, timeout=300)
    assert finished["parent"].returncode == 0, finished["parent"].stderr
    assert float(finished["parent"].stdout.strip()) > 0
    assert finished["other"].stdout.strip() == "other done"
