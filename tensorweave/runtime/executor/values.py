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


def storage_fetch_indices(executors) -> tuple[int, ...]:
    """The fetches of a plan that are, or may share memory with, a variable's storage (a
    dereferenced ref, or a view of one): their retvals hold that source, copied by
    `copy_storage_fetches` when the step has ended. So a fetch shows every update the step
    made, as in TensorFlow, whose fetched tensor aliases the variable's buffer (`_, step =
    sess.run([train_op, global_step])` gives the incremented step), and no later step can
    change it."""
    return tuple(sorted(it.index for ex in executors for it in ex.items
                        if it.kind == "_Retval" and (it.deref[0] or it.copy_out)))


def copy_storage_fetches(rets: list, indices) -> None:
    """Replaces each storage fetch of a finished step's results with its copy."""
    for i in indices:
        source = rets[i]
        if source is not None:   # (a dead fetch has already failed the step)
            rets[i] = np.array(deref(source) if isinstance(source, VariableRef) else source,
                               copy=True)
