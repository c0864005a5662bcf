"""Turns an exception raised by a kernel into TensorFlow's error naming the node and its site."""
from __future__ import annotations

import re

from tensorweave.framework import errors
from tensorweave.framework.shape_text import dims_text

_CLASS_FOR = (
    (MemoryError, errors.ResourceExhaustedError),
    (NotImplementedError, errors.UnimplementedError),
    ((ValueError, IndexError, TypeError, ArithmeticError, KeyError), errors.InvalidArgumentError),
)


def node_error(exc: BaseException, node, graph=None) -> errors.OpError:
    """An OpError of the right class whose message names the op, its type, device and site."""
    if isinstance(exc, errors.OpError) and getattr(exc, "_tw_located", False):
        return exc
    if isinstance(exc, errors.OpError):
        cls, message = type(exc), exc.message
    else:
        cls = next((c for types, c in _CLASS_FOR if isinstance(exc, types)),
                   errors.UnknownError)
        message = _tensorflow_words(str(exc)) or type(exc).__name__
    file, line = node.creation_site
    message = (f"{message}\n\t [[node {node.name} (op {node.op}) on device {node.device}, "
               f"defined at {file}:{line}]]")
    user_op = None
    if graph is not None:
        user_op = graph._ops_by_name.get(node.name)
    node_def = user_op.node_def if user_op is not None else None
    err = cls(node_def, user_op, message)
    err._tw_located = True
    err.__cause__ = exc if not isinstance(exc, errors.OpError) else exc.__cause__
    return err


_NUMPY_BROADCAST = re.compile(r"^operands could not be broadcast together with shapes "
                              r"\(([\d, ]*)\) \(([\d, ]*)\)\s*$")


def _tensorflow_words(message: str) -> str:
    """A NumPy message a kernel let through, in TensorFlow's words where they differ: two
    operands that do not broadcast are "Incompatible shapes: [2,3] vs. [1,2]"."""
    match = _NUMPY_BROADCAST.match(message)
    if match is None:
        return message
    a, b = ([int(d) for d in group.replace(" ", "").split(",") if d] for group in
            match.groups())
    return f"Incompatible shapes: {dims_text(a)} vs. {dims_text(b)}"
