"""Op callbacks: functions that see every op a wrapper makes and may replace its outputs.

TensorFlow's `op_callbacks` mechanism, per thread as there: `tf.debugging.enable_check_numerics`
is one (ops/check_numerics_callback.py). A callback is `fn(op) -> outputs or None`; apply_op
hands the wrapper the outputs the last callback returned (None keeps them). Ops the callbacks
make themselves are not shown to them again.
"""
from __future__ import annotations

import threading

_state = threading.local()


def _callbacks() -> list:
    if not hasattr(_state, "callbacks"):
        _state.callbacks, _state.busy = [], False
    return _state.callbacks


def add_op_callback(fn) -> None:
    """Adds `fn` for ops made on this thread (once: adding it again changes nothing)."""
    callbacks = _callbacks()
    if fn not in callbacks:
        callbacks.append(fn)


def remove_op_callback(fn) -> None:
    """Removes `fn`; KeyError if it was not added on this thread."""
    callbacks = _callbacks()
    if fn not in callbacks:
        raise KeyError(f"The op callback {fn!r} has not been registered on this thread")
    callbacks.remove(fn)


def active() -> bool:
    return bool(getattr(_state, "callbacks", None)) and not _state.busy


def invoke(op, outputs: list) -> list:
    """The outputs the wrapper of `op` returns after every callback had its say."""
    _state.busy = True
    try:
        for fn in list(_state.callbacks):
            replaced = fn(op)
            if replaced is not None:
                outputs = list(replaced)
    finally:
        _state.busy = False
    return outputs
