"""TF1's tf.debugging.assert_shapes: shape and dimension-size relations across several tensors.

In: (tensor, spec) pairs. Out: a NoOp ("group_deps") that runs after the per-tensor rank checks
and depends on one Assert per size check that could not be decided while building. What the
static shapes already decide is checked now: a violation raises ValueError with TensorFlow's
text, a satisfied check adds nothing (rank checks leave a NoOp). Undecided checks fail
Session.run with InvalidArgumentError "assertion failed: [...]", as TensorFlow 2.21's graph
mode does. A scalar is read as shape [1]; a spec of one entry (or none) admits rank 0 or 1.

Departures from TensorFlow 2.21 (tf.compat.v1 with v2 behaviour disabled):
- A tf.TensorShape spec works (its Dimension entries read as int or None), as TF's docstring
  promises; TF's v1 behaviour raises TypeError "unhashable type: 'Dimension'" instead.
- A statically failing dict-form call raises assert_shapes' own ValueError; TF's dispatch layer
  replaces it with an unrelated ValueError from sorting the dict's tensor keys.
- The graph has no assert_type NoOps under the rank checks (nothing depends on them).
"""
from __future__ import annotations

from typing import Any, NamedTuple

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import Dimension
from tensorweave.ops.array_ops import rank as _rank
from tensorweave.ops.array_ops import shape as _shape
from tensorweave.ops.array_ops import size as _size
from tensorweave.ops.check_ops import message_prefix
from tensorweave.ops.cond import cond
from tensorweave.ops.constant_op import constant
from tensorweave.ops.control_flow_ops import group, no_op
from tensorweave.ops.logging_ops import Assert
from tensorweave.ops.math_ops import equal, greater_equal, logical_or
from tensorweave.ops.math_unary_ops import cast

__all__ = ["assert_shapes"]

_ANY_SIZE = (None, ".")
_ANY_OUTER_DIMS = (Ellipsis, "*")


class _Constraint(NamedTuple):
    """One tensor's spec, with its sizes: ints where static, else int32 tensors."""
    x: Tensor | SparseTensor
    innermost: bool  # the spec began with ... or '*': it constrains the inner-most dims
    sizes: Any  # a list (known rank) or a 1-D tensor (unknown rank); a scalar gives [1]
    spec: tuple  # the size entries after any leading ... / '*'; () is read as (1,)


def _tensor_name(x) -> str:
    """How messages name a tensor: its graph name, or shape and dtype for a SparseTensor."""
    if isinstance(x, SparseTensor):
        return f"shape={x.shape} dtype={x.dtype.name}"
    return x.name


def _shape_of(x) -> Tensor:
    return cast(x.dense_shape, _dtypes.int32) if isinstance(x, SparseTensor) else _shape(x)


def _rank_of(x) -> Tensor:
    return _size(x.dense_shape) if isinstance(x, SparseTensor) else _rank(x)


def _dimension_sizes(x):
    """x's sizes, a scalar counting as [1]: a list when the rank is static, else a tensor."""
    ndims = x.shape.ndims
    if ndims == 0:
        return [1]
    if ndims is not None:
        dims = x.shape.as_list()
        dynamic = _shape_of(x) if None in dims else None
        return [dynamic[i] if d is None else d for i, d in enumerate(dims)]
    dynamic = _shape_of(x)
    return cond(equal(_rank_of(x), 0), lambda: constant([1]), lambda: dynamic)


def _has_known_value(size) -> bool:
    """True for an explicit size: anything int() accepts ("3" and 3.0 too), not a tensor."""
    if size is None or isinstance(size, Tensor):
        return False
    try:
        int(size)
    except (TypeError, ValueError):
        return False
    return True


def _spec_entries(x, spec, prefix: str) -> tuple[bool, tuple]:
    """(innermost, size entries) of one spec; ValueError for a malformed spec."""
    if not (hasattr(spec, "__iter__") or hasattr(spec, "__getitem__")):
        raise ValueError(f"{prefix}Tensor {_tensor_name(x)}.  Specified shape must be an "
                         "iterable.  An iterable has the attribute `__iter__` or `__getitem__`.  "
                         f"Received specified shape: {spec}")
    entries = tuple(e.value if isinstance(e, Dimension) else e for e in spec)
    for i, entry in enumerate(entries):
        if entry in _ANY_OUTER_DIMS and i != 0:
            raise ValueError(f"{prefix}Tensor {_tensor_name(x)} specified shape index {i}.  "
                             "Symbol `...` or `*` for a variable number of unspecified "
                             "dimensions is only allowed as the first entry")
    innermost = bool(entries) and entries[0] in _ANY_OUTER_DIMS
    return innermost, (entries[1:] if innermost else entries) or (1,)


def _rank_check(c: _Constraint, data, summarize, message, name):
    """The rank check TF makes for one spec, or None: an innermost spec of n > 1 entries needs
    rank >= n; a plain one of n > 1 entries rank n, of one entry rank 0 or 1."""
    n = len(c.spec)
    if c.innermost:
        if n <= 1:
            return None
        words, ranks = "rank at least", (n,)
    else:
        words, ranks = ("rank in", (0, 1)) if n <= 1 else ("rank", (n,))
    prefix = message_prefix(message)
    # TF's rank checks name a SparseTensor "" (its size checks use shape and dtype).
    x_name = "" if isinstance(c.x, SparseTensor) else c.x.name
    with name_scope(name, "assert_" + words.replace(" ", "_"), [c.x]):
        ndims = c.x.shape.ndims
        if ndims is not None:
            ok = ndims >= n if c.innermost else ndims in ranks
            if not ok:
                wanted = ranks if words == "rank in" else n
                raise ValueError(f"{prefix}Tensor {x_name} must have {words} {wanted}.  "
                                 f"Received rank {ndims}, shape {c.x.shape}")
            return no_op(name="static_checks_determined_all_ok")
        if data is None:
            data = [prefix, f"Tensor {x_name} must have {words}", *ranks, "Received shape: ",
                    _shape_of(c.x)]
        actual = _rank_of(c.x)
        if c.innermost:
            condition = greater_equal(actual, n)
        else:
            condition = equal(actual, ranks[0])
            for r in ranks[1:]:
                condition = logical_or(condition, equal(actual, r))
        return Assert(condition, data, summarize=summarize)


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None) -> Operation:
    """Asserts the shapes of several tensors and the relations between their dimension sizes
    (tf.debugging.assert_shapes).

    Each size entry of a spec is an explicit size if int() accepts it (3, "3"), any size if it
    is None or '.', and otherwise a symbol: every dimension given the same symbol must have the
    same size, across all the tensors. A first entry `...` or '*' lets any number of outer
    dimensions precede the specified inner-most ones. A scalar tensor, and a spec with no size
    entries, both count as shape [1].

    ```python
    with tf.control_dependencies([tf.debugging.assert_shapes([
            (x, ('N', 'Q')), (y, ('N', 'D')), (param, ('Q',)), (scalar, ())])]):
        out = tf.matmul(x, y, transpose_a=True)
    ```

    Args:
      shapes: a list of (tensor, spec) pairs or a dict {tensor: spec}; a tensor may be any
        value convert_to_tensor accepts, or a SparseTensor; a spec is an iterable of size
        entries (a tuple, list, string, NumPy array or TensorShape), or None for no constraint.
      data: Tensors to print when a run-time check fails (default: a message naming the
        tensor, dimension, wanted size and actual shape).
      summarize: how many entries of each data tensor to print.
      message: a string put before the default message.
      name: a name scope for the checks (default "assert_shapes").

    Returns:
      A NoOp that depends on every check left for run time (and on the rank checks); with all
      checks static, a NoOp that depends only on rank-check NoOps.

    Raises:
      ValueError: if the static shapes violate a constraint, or a spec is not iterable or has
        `...` / '*' after its first entry.
    """
    if isinstance(shapes, dict):
        shapes = shapes.items()
    prefix = message_prefix(message)
    with name_scope(name, "assert_shapes", [shapes, data]):
        constraints = []
        for x, spec in [(x, s) for x, s in shapes if s is not None]:
            if not isinstance(x, SparseTensor):
                x = convert_to_tensor(x)
            constraints.append((x, spec))
        checked = []
        for x, spec in constraints:
            innermost, entries = _spec_entries(x, spec, prefix)
            checked.append(_Constraint(x, innermost, _dimension_sizes(x), entries))

        rank_checks = [op for op in (_rank_check(c, data, summarize, message, name)
                                     for c in checked) if op is not None]
        size_checks = []
        first_seen: dict[Any, tuple] = {}  # symbol -> (size, tensor, dim) where it first occurs
        for c in checked:
            for i, symbol in enumerate(c.spec):
                if symbol in _ANY_SIZE:
                    continue
                dim = i - len(c.spec) if c.innermost else i
                # A dynamic size is sliced only after the rank checks have passed.
                with control_dependencies(rank_checks):
                    size = c.sizes[dim]
                if not (symbol in first_seen or _has_known_value(symbol)):
                    first_seen[symbol] = (size, c.x, dim)
                    continue
                if _has_known_value(symbol):
                    wanted, source = int(symbol), "Specified explicitly"
                else:
                    wanted, by, at = first_seen[symbol]
                    source = f"Specified by tensor {_tensor_name(by)} dimension {at}"
                if _has_known_value(size) and _has_known_value(wanted):
                    if int(size) != int(wanted):
                        raise ValueError(f"{prefix}{source}.  Tensor {_tensor_name(c.x)} "
                                         f"dimension {dim} must have size {int(wanted)}.  "
                                         f"Received size {int(size)}, shape {c.x.shape}")
                    continue
                check_data = data
                if data is None:
                    check_data = [prefix, source, f"Tensor {_tensor_name(c.x)} dimension", dim,
                                  "must have size", wanted, "Received shape: ", _shape_of(c.x)]
                condition = equal(convert_to_tensor(size), convert_to_tensor(wanted))
                size_checks.append(Assert(condition, check_data, summarize=summarize))
    with control_dependencies(rank_checks):
        return group(*size_checks)
