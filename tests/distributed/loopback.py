"""Helpers of the distributed runtime's tests: free loopback ports, runs that block."""
import socket
import threading
import time


def free_port() -> int:
    """A port of 127.0.0.1 nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def errors_of_blocked_run(run, interrupt, seconds: float = 15) -> list:
    """The OpErrors of `run()` started on a thread, after `interrupt()` 0.3 s later; fails
    if the run is still blocked `seconds` after that."""
    import tensorweave as tf
    failures = []

    def blocked():
        try:
            run()
        except tf.errors.OpError as e:
            failures.append(e)
    thread = threading.Thread(target=blocked)
    thread.start()
    time.sleep(0.3)
    interrupt()
    thread.join(seconds)
    assert not thread.is_alive(), "the run is still blocked"
    return failures
