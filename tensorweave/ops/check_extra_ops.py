"""More TF1 checks: tf.assert_rank_in, tf.assert_same_float_dtype, tf.assert_proper_iterable
and tf.add_check_numerics_ops.

assert_rank_in decides statically when x's rank and every allowed rank are known (a NoOp, or a
ValueError), else builds an Assert on rank(x) being one of them, as TensorFlow's check_ops
does. add_check_numerics_ops puts a CheckNumerics on every float output of the graph so far,
chained by control dependencies in graph order.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.check_ops import assert_rank, assert_type, message_prefix

__all__ = ["add_check_numerics_ops", "assert_proper_iterable", "assert_rank_in",
           "assert_same_float_dtype"]

_CHECKED_FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """Asserts that x's rank is one of `ranks` (tf.assert_rank_in, tf.debugging).

    Args:
      x: a Tensor.
      ranks: a list of scalar int32 ranks (numbers or Tensors).
      data: the Assert's data (default: a message naming x, the ranks and x's shape).
      summarize: how many entries of each data tensor to print.
      message: a string put before the default message.
      name: a name scope (default "assert_rank_in").

    Returns:
      A NoOp when every rank is known, else the Assert Operation.

    Raises:
      ValueError: if the ranks are known and x's static rank is not among them, or a rank is
        not a scalar.
      TypeError: if a rank is not int32.
    """
    from tensorweave.ops.array_ops import rank, shape
    from tensorweave.ops.control_flow_ops import no_op, with_dependencies
    from tensorweave.ops.logging_ops import Assert
    from tensorweave.ops.math_ops import equal, logical_or
    with name_scope(name, "assert_rank_in", [x, *ranks, *(data or [])]):
        x = convert_to_tensor(x, name="x")
        ranks = tuple(convert_to_tensor(r, name="rank") for r in ranks)
        message = message_prefix(message)
        if data is None:
            data = [message, f"Tensor {x.name} must have rank in", *ranks,
                    "Received shape: ", shape(x)]
        for r in ranks:
            assert_type(r, _dtypes.int32)
        static = tuple(static_value(r) for r in ranks)
        if all(s is not None for s in static):
            if any(np.ndim(s) != 0 for s in static):
                raise ValueError("Rank must be a scalar.")
            actual = x.shape.ndims
            if actual is not None:
                allowed = tuple(int(s) for s in static)
                if actual not in allowed:
                    raise ValueError(f"{message}Tensor {x.name} must have rank in {allowed}.  "
                                     f"Received rank {actual}, shape {x.shape}")
                return no_op(name="static_checks_determined_all_ok")
        x_rank = rank(x)
        condition = convert_to_tensor(False) if not ranks else equal(ranks[0], x_rank)
        for r in ranks[1:]:
            condition = logical_or(condition, equal(r, x_rank))
        for r, s in zip(ranks, static):
            if s is None:  # catches assert_rank_in(x, [[n]]) at run time
                condition = with_dependencies([_assert_scalar_rank(r)], condition)
        return Assert(condition, data, summarize=summarize)


def _assert_scalar_rank(r):
    """assert_rank(r, 0) with TensorFlow's "Rank must be a scalar" data."""
    from tensorweave.ops.array_ops import rank
    from tensorweave.ops.logging_ops import Assert
    from tensorweave.ops.math_ops import equal
    if r.shape.ndims is not None:
        return assert_rank(r, 0)
    with name_scope(None, "assert_rank", [r]):
        return Assert(equal(rank(r), 0), ["Rank must be a scalar. Received rank: ", r])


def assert_same_float_dtype(tensors=None, dtype=None):
    """Checks that `tensors` share one float dtype, `dtype` if given
    (tf.assert_same_float_dtype).

    Args:
      tensors: Tensors (None entries are skipped), or None.
      dtype: the expected dtype, or None.

    Returns:
      The common dtype: `dtype`, else the tensors', else float32.

    Raises:
      ValueError: if the dtypes differ or are not floating point.
    """
    if tensors:
        dtype = _same_base_type(tensors, dtype)
    if not dtype:
        return _dtypes.float32
    if not dtype.is_floating:
        raise ValueError(f"Expected floating point type, got {dtype}.")
    return dtype


def _same_base_type(items, expected):
    """The one base dtype of `items` (and `expected`), ValueError naming the first mismatch."""
    first_name = None
    for item in items:
        if item is None:
            continue
        item_type = item.dtype.base_dtype
        if not expected:
            expected, first_name = item_type, getattr(item, "name", str(item))
        elif expected != item_type:
            as_first = f" as {first_name}" if first_name else ""
            raise ValueError(f"{getattr(item, 'name', str(item))}, type={item_type}, must be of "
                             f"the same type ({expected}){as_first}.")
    return expected


def assert_proper_iterable(values):
    """Raises TypeError unless `values` is an iterable other than a Tensor, an ndarray or a
    string (tf.assert_proper_iterable): those iterate, but almost never as intended.

    Args:
      values: the object to check.

    Raises:
      TypeError: as described.
    """
    if isinstance(values, (Tensor, np.ndarray, bytes, str)):
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: '
                        f"{type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def add_check_numerics_ops():
    """Adds a CheckNumerics op for every float16/32/64 output in the default graph
    (tf.add_check_numerics_ops); each check depends on the previous one.

    Returns:
      A NoOp ("group_deps") that runs all the checks; running it fails with
      InvalidArgumentError "<op>:<index> : Tensor had NaN values" (or Inf) for a bad value.

    Raises:
      ValueError: if the graph has control-flow (cond, while_loop) ops.
    """
    from tensorweave.ops.control_flow_ops import group
    from tensorweave.ops.logging_ops import check_numerics
    checks = []
    # get_operations() lists producers before consumers, so checks follow the data order.
    for op in get_default_graph().get_operations():
        for output in op.outputs:
            if output.dtype not in _CHECKED_FLOATS:
                continue
            if op._control_flow_context is not None:
                raise ValueError("`tf.add_check_numerics_ops() is not compatible with "
                                 "TensorFlow control flow operations such as `tf.cond()` or "
                                 "`tf.while_loop()`.")
            with control_dependencies(checks):
                checks = [check_numerics(output, message=f"{op.name}:{output.value_index}")]
    return group(*checks)
