"""What flows on edges besides arrays: variable storage (the value of a ref edge, or of a
resource variable's handle) and how executors read it."""
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

    def uninitialized_error(self) -> errors.OpError:
        """What using the variable before its first assignment raises."""
        return errors.FailedPreconditionError(
            None, None, f"Attempting to use uninitialized value {self.name}")

    def __repr__(self) -> str:
        return f"VariableRef({self.name!r})"


class ResourceVariableRef(VariableRef):
    """A resource variable's storage, which a VarHandleOp's DT_RESOURCE handle carries to the
    ops reading and updating it. Until the first assignment TensorFlow has no `Var` resource to
    find, so using it then is a NotFoundError naming the resource."""

    __slots__ = ("container",)

    def __init__(self, name: str, container: str):
        super().__init__(name)
        self.container = container

    def uninitialized_error(self) -> errors.OpError:
        return errors.NotFoundError(
            None, None, f"Resource {self.container}/{self.name}/N10tensorflow3VarE does not "
            "exist.")


def deref(ref: VariableRef):
    """The variable's current value; its `uninitialized_error` if it was never assigned."""
    value = ref.value
    if value is None:
        raise ref.uninitialized_error()
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
    """Replaces each storage fetch of a finished step's results with its copy, and any other
    read-only array (a slice of a constant, which a queue passes on without copying) too, so
    every array the user gets is theirs to write, as TensorFlow's are."""
    for i in indices:
        source = rets[i]
        if source is not None:   # (a dead fetch has already failed the step)
            rets[i] = np.array(deref(source) if isinstance(source, VariableRef) else source,
                               copy=True)
    for i, value in enumerate(rets):
        if value.__class__ is np.ndarray and not value.flags.writeable:
            rets[i] = value.copy()
