"""What flows on edges besides arrays: variable references and how executors read them."""
from __future__ import annotations

import threading

import numpy as np

from tensorweave.framework import errors


class VariableRef:
    """A ref-typed value: the variable's storage, read by consumers and updated by assigns."""

    __slots__ = ("name", "value", "lock")

    def __init__(self, name: str):
        self.name = name
        self.value = None
        self.lock = threading.Lock()

    @property
    def initialized(self) -> bool:
        return self.value is not None

    def __repr__(self) -> str:
        return f"VariableRef({self.name!r})"


def deref(ref: VariableRef):
    """The variable's current value; FailedPreconditionError if it was never assigned."""
    value = ref.value
    if value is None:
        raise errors.FailedPreconditionError(
            None, None, f"Attempting to use uninitialized value {ref.name}")
    return value


class StorageFetch:
    """A fetch that is, or may share memory with, a variable's storage: copied when the step
    has ended (`finish_fetches`). So it shows every update the step made, as in TensorFlow,
    whose fetched tensor aliases the variable's buffer (`_, step = sess.run([train_op,
    global_step])` gives the incremented step), and no later step can change it."""

    __slots__ = ("source",)

    def __init__(self, source):
        self.source = source    # a VariableRef, or an array (a view of a variable's storage)

    def value(self) -> np.ndarray:
        source = self.source
        if isinstance(source, VariableRef):
            source = deref(source)
        return np.array(source, copy=True)


def finish_fetches(rets: list) -> None:
    """Replaces each StorageFetch of a finished step's results with its copy."""
    for i, value in enumerate(rets):
        if type(value) is StorageFetch:
            rets[i] = value.value()
