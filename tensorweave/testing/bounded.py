"""Running a blocking call on a thread with a time limit, so a hang fails a test."""
from __future__ import annotations

import threading


def run_bounded(fn, seconds: float = 20.0):
    """fn() on a thread: its result, its exception re-raised here, or an AssertionError if it
    is still running after `seconds` (the thread is a daemon and is left behind)."""
    result = {}

    def target():
        try:
            result["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised on the caller's thread
            result["error"] = e
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the step hung"
    if "error" in result:
        raise result["error"]
    return result["value"]


def drain(sess, tensor, options=None) -> list:
    """Every value `sess.run(tensor)` yields until OutOfRangeError (a closed, empty input)."""
    from tensorweave.framework import errors
    out = []
    while True:
        try:
            out.append(sess.run(tensor, options=options))
        except errors.OutOfRangeError:
            return out
