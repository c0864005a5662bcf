"""Helpers of the distributed runtime's tests: free loopback ports, runs that block."""
import socket
import threading
import time

_given: set[int] = set()   # the ports free_port returned in this process


def free_port() -> int:
    """A port of 127.0.0.1 nobody listens on now, and not one returned before: the kernel
    may hand out a port it just freed again (about once in 14,000 calls here), which would
    give a cluster two tasks on one address."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _given:
            _given.add(port)
            return port


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
