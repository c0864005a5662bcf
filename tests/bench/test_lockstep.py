"""The benchmark runner's lockstep: workers take turns and never run at the same time."""
import sys
from pathlib import Path

from bench import lockstep

REPO = Path(__file__).resolve().parents[2]

# A worker that takes TURNS turns and prints, for each, when it started and ended it.
_WORKER = """
import sys, time
from bench import lockstep
from bench.lockstep import next_turn
lockstep.MIN_TURN_SECONDS = float(sys.argv[3])
name, turns, pause = sys.argv[1], int(sys.argv[2]), float(sys.argv[4])
for i in range(turns):
    next_turn()
    start = time.monotonic()
    time.sleep(pause)
    print(name, i, start, time.monotonic(), flush=True)
if name == "failing":
    sys.exit(3)
"""


def _command(name: str, turns: int, min_turn_seconds: float = 0.0, pause: float = 0.01):
    return ([sys.executable, "-c", _WORKER, name, str(turns), str(min_turn_seconds),
             str(pause)], {"PYTHONPATH": str(REPO)})


def _turns(finished):
    rows = [line.split() for line in finished.stdout.splitlines()]
    return [(name, int(i), float(a), float(b)) for name, i, a, b in rows]


def test_workers_alternate_and_never_overlap():
    commands = {"a": _command("a", 5), "b": _command("b", 3), "failing": _command("failing", 2)}
    finished = lockstep.run_round(commands, REPO, timeout=60)
    assert [finished[k].returncode for k in commands] == [0, 0, 3]
    turns = sorted((t for f in finished.values() for t in _turns(f)), key=lambda t: t[2])
    assert len(turns) == 10
    for (_, _, _, end), (_, _, start, _) in zip(turns, turns[1:]):
        assert end <= start   # one worker at a time
    order = [name for name, *_ in turns]
    assert order[:6] == ["a", "b", "failing"] * 2   # round-robin while all three run
    assert order[6:] == ["a", "b", "a", "a"]


def test_a_turn_lasts_at_least_min_turn_seconds():
    # 50 ms (and up to 24 more on a busy machine) between next_turn calls, 75 ms per turn:
    # every turn is 2 calls
    commands = {"a": _command("a", 4, 0.075, 0.05), "b": _command("b", 2, 0.075, 0.05)}
    finished = lockstep.run_round(commands, REPO, timeout=60)
    turns = sorted((t for f in finished.values() for t in _turns(f)), key=lambda t: t[2])
    assert [name for name, *_ in turns] == ["a", "a", "b", "b", "a", "a"]


def test_a_turn_over_the_timeout_kills_the_worker():
    slow = [sys.executable, "-c", "from bench.lockstep import next_turn; import time\n"
            "next_turn(); time.sleep(30)"], {"PYTHONPATH": str(REPO)}
    finished = lockstep.run_round({"slow": slow, "quick": _command("quick", 2)}, REPO,
                                  timeout=1.0)
    assert finished["slow"].timed_out
    assert not finished["quick"].timed_out and finished["quick"].returncode == 0
    assert len(_turns(finished["quick"])) == 2


def test_without_a_runner_next_turn_does_nothing(monkeypatch):
    monkeypatch.delenv(lockstep.ENV, raising=False)
    assert lockstep.next_turn() is False   # no turn taken, so nothing to settle
