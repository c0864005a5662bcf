"""Weights broadcast to values, checked as TF's weights_broadcast_ops check them.

Weights are valid for values when they are a scalar, or have the values' rank with every
dimension 1 or equal to the values'. Static shapes decide at once (a ValueError); otherwise an
Assert op checks the run-time shapes and reports them in TF's words.
"""
from __future__ import annotations

from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import ones_like
from tensorweave.ops.array_ops import rank, shape
from tensorweave.ops.cond import cond
from tensorweave.ops.control_flow_ops import no_op
from tensorweave.ops.logging_ops import Assert
from tensorweave.ops.math_ops import equal, logical_or, multiply
from tensorweave.ops.reduction_ops import reduce_all

_PREFIX = "weights can not be broadcast to values."


def _static_check(weights, values, weights_rank, values_rank, weights_shape, values_shape):
    """The verdict from static ranks and shapes: a NoOp if they settle it, else None.

    Raises:
      ValueError: if the static ranks or dimensions rule broadcasting out.
    """
    if weights_rank is None or values_rank is None:
        return None
    if weights_rank == 0:
        return no_op(name="static_scalar_check_success")
    if weights_rank != values_rank:
        raise ValueError(f"{_PREFIX} values.rank={values_rank}. weights.rank={weights_rank}. "
                         f"values.shape={values.shape}. weights.shape={weights.shape}. "
                         f"Received weights={weights}, values={values}")
    w_dims, v_dims = static_value(weights_shape), static_value(values_shape)
    if w_dims is None or v_dims is None:
        return None
    for i, (w, v) in enumerate(zip(w_dims.tolist(), v_dims.tolist())):
        if w not in (1, v):
            raise ValueError(f"{_PREFIX} Mismatch at dim {i}. values.shape={v_dims}, "
                             f"weights.shape={w_dims}. Received weights={weights}, "
                             f"values={values}")
    return no_op(name="static_dims_check_success")


def assert_broadcastable(weights, values):
    """Asserts that `weights` can be broadcast to `values` (TF's
    weights_broadcast_ops.assert_broadcastable).

    Args:
      weights: A Tensor of weights.
      values: The Tensor they weigh.

    Returns:
      A NoOp when static shapes settle it, else an Assert op checking the run-time shapes.

    Raises:
      ValueError: if static shapes show that the weights cannot be broadcast.
    """
    with name_scope(None, "assert_broadcastable", (weights, values)) as scope:
        with name_scope(None, "weights", (weights,)) as weights_scope:
            weights = convert_to_tensor(weights, name=weights_scope)
            weights_shape = shape(weights, name="shape")
            weights_rank = rank(weights, name="rank")
        with name_scope(None, "values", (values,)) as values_scope:
            values = convert_to_tensor(values, name=values_scope)
            values_shape = shape(values, name="shape")
            values_rank = rank(values, name="rank")
        checked = _static_check(weights, values, weights.shape.ndims, values.shape.ndims,
                                weights_shape, values_shape)
        if checked is not None:
            return checked
        is_scalar = equal(0, weights_rank, name="is_scalar")

        def valid_dims():
            # Each weights dimension is 1 or the values'; only compared when ranks agree.
            return reduce_all(logical_or(equal(weights_shape, values_shape),
                                         equal(weights_shape, 1)))

        def valid_nonscalar():
            same_rank = equal(values_rank, weights_rank, name="is_same_rank")
            return cond(same_rank, valid_dims, lambda: same_rank,
                        name="has_valid_nonscalar_shape")

        is_valid = cond(is_scalar, lambda: is_scalar, valid_nonscalar, name="is_valid_shape")
        data = [_PREFIX, "weights.shape=", weights.name, weights_shape, "values.shape=",
                values.name, values_shape, "is_scalar=", is_scalar]
        return Assert(is_valid, data, name=scope)


def broadcast_weights(weights, values):
    """`weights` broadcast to the shape of `values` (TF's weights_broadcast_ops.broadcast_weights).

    Weights already of the values' (fully known) shape are returned as they are; otherwise
    they are multiplied by ones shaped like the values, after `assert_broadcastable`.

    Args:
      weights: A Tensor of weights, converted to the values' dtype.
      values: The Tensor they weigh.

    Returns:
      A Tensor of weights with the shape of `values`.

    Raises:
      ValueError: if static shapes show that the weights cannot be broadcast.
    """
    with name_scope(None, "broadcast_weights", (weights, values)) as scope:
        values = convert_to_tensor(values, name="values")
        weights = convert_to_tensor(weights, dtype=values.dtype.base_dtype, name="weights")
        w_shape, v_shape = weights.shape, values.shape
        if (w_shape.is_fully_defined() and v_shape.is_fully_defined()
                and w_shape.is_compatible_with(v_shape)):
            return weights
        with control_dependencies((assert_broadcastable(weights, values),)):
            return multiply(weights, ones_like(values), name=scope)
