"""tf.nn functions built from existing ops: `batch_norm_with_global_normalization`,
`compute_average_loss`, `scale_regularization_loss`, and the `depthwise_conv2d_backprop_*`
names TF1 gives the DepthwiseConv2dNative gradient ops.

`compute_average_loss` and `scale_regularization_loss` are tf.distribute helpers; tensorweave
has no distribution strategies, so the number of replicas in sync is always 1, as under TF's
default strategy.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.nn_conv_ops import (
    depthwise_conv2d_native_backprop_filter as depthwise_conv2d_backprop_filter,
)
from tensorweave.ops.nn_conv_ops import (
    depthwise_conv2d_native_backprop_input as depthwise_conv2d_backprop_input,
)
from tensorweave.ops.nn_normalize_ops import batch_normalization
from tensorweave.ops.reduction_ops import deprecated_argument_lookup

__all__ = ["batch_norm_with_global_normalization", "compute_average_loss",
           "scale_regularization_loss", "depthwise_conv2d_backprop_input",
           "depthwise_conv2d_backprop_filter"]


def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None,
                                         variance_epsilon=None, scale_after_normalization=None,
                                         name=None, input=None, mean=None,  # noqa: A002
                                         variance=None):
    """Batch normalization with given (global) statistics (TF1's deprecated form of
    `batch_normalization`).

    Args:
      t: A 4-D input Tensor (or `input`).
      m: The mean, a 1-D Tensor over the last dimension of t (or `mean`).
      v: The variance, a 1-D Tensor (or `variance`).
      beta: The offset added after normalizing.
      gamma: The scale, applied only when `scale_after_normalization`.
      variance_epsilon: A small float added to the variance.
      scale_after_normalization: Whether to multiply by `gamma`.
      name: A name scope (default "batchnorm").
      input: The new name of `t`.
      mean: The new name of `m`.
      variance: The new name of `v`.

    Returns:
      The normalized tensor, (t - m) * rsqrt(v + epsilon) [* gamma] + beta.

    Raises:
      ValueError: an argument given under both its names.
    """
    t = deprecated_argument_lookup("input", input, "t", t)
    m = deprecated_argument_lookup("mean", mean, "m", m)
    v = deprecated_argument_lookup("variance", variance, "v", v)
    return batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None,
                               variance_epsilon, name)


def _match_weight_rank(losses, weight):
    """TF's squeeze_or_expand_dimensions for sample weights: weights of one more dimension than
    the losses lose their last one, weights of one fewer gain one (statically when both ranks
    are known, else by conds on the run-time ranks)."""
    from tensorweave.ops.array_ops import expand_dims, rank, squeeze
    from tensorweave.ops.cond import cond
    from tensorweave.ops.math_ops import equal
    loss_rank, weight_rank = losses.shape.ndims, weight.shape.ndims
    if weight_rank == 0:
        return weight
    if loss_rank is not None and weight_rank is not None:
        if weight_rank - loss_rank == 1:
            return squeeze(weight, [-1])
        if loss_rank - weight_rank == 1:
            return expand_dims(weight, -1)
        return weight
    weight_rank_t = rank(weight)
    diff = weight_rank_t - rank(losses)

    def adjust():
        return cond(equal(diff, 1), lambda: squeeze(weight, [-1]),
                    lambda: cond(equal(diff, -1), lambda: expand_dims(weight, -1),
                                 lambda: weight))
    return cond(equal(weight_rank_t, 0), lambda: weight, adjust)


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """The sum of the (weighted) per-example losses over the global batch size.

    Args:
      per_example_loss: A Tensor of rank >= 1, one loss per example along axis 0.
      sample_weight: Optional weights, a scalar or a Tensor broadcastable to the losses (one
        extra trailing dimension of 1 is squeezed, one missing dimension is added). The
        weighted losses are computed in float32, as TF does, then cast back.
      global_batch_size: An integer scalar; default the size of axis 0 (times the number of
        replicas, 1 here).

    Returns:
      A scalar of per_example_loss's dtype (float64 for an integer loss): 0 when the global
      batch size is 0.

    Raises:
      ValueError: per_example_loss has static rank 0, or global_batch_size is not a scalar.
      TypeError: global_batch_size is not an integer.
      InvalidArgumentError (when run): per_example_loss of unknown static rank is a scalar.
    """
    from tensorweave.framework.scopes import control_dependencies
    from tensorweave.ops.array_ops import rank, shape
    from tensorweave.ops.check_ops import (
        assert_greater_equal,
        assert_integer,
        assert_non_negative,
        assert_scalar,
    )
    from tensorweave.ops.math_ops import div_no_nan, multiply
    from tensorweave.ops.math_unary_ops import cast
    from tensorweave.ops.reduction_ops import reduce_sum
    losses = convert_to_tensor(per_example_loss)
    input_dtype = losses.dtype
    message = "Invalid value passed for `per_example_loss`. Expected a tensor with at least rank 1."
    checks = []
    if losses.shape.ndims == 0:
        raise ValueError(f"{message} Received per_example_loss={losses} with rank 0")
    if losses.shape.ndims is None:
        checks = [assert_greater_equal(rank(losses), 1, message=message)]
    with control_dependencies(checks):
        if sample_weight is not None:
            weight = cast(convert_to_tensor(sample_weight), _dtypes.float32)
            losses = cast(losses, _dtypes.float32)
            losses = cast(multiply(losses, _match_weight_rank(losses, weight)), input_dtype)
        if global_batch_size is None:
            global_batch_size = shape(losses)[0]
        assert_scalar(global_batch_size, message="global_batch_size must be scalar.")
        assert_integer(global_batch_size, message="global_batch_size must be an integer.")
        assert_non_negative(global_batch_size, message="global_batch_size must be non-negative.")
        loss = reduce_sum(losses)
        if loss.dtype.is_integer:
            loss = cast(loss, _dtypes.float64)
        return div_no_nan(loss, cast(global_batch_size, loss.dtype))


def scale_regularization_loss(regularization_loss):
    """The regularization loss summed and divided by the number of replicas (1 here).

    Args:
      regularization_loss: A Tensor, or a list of same-shaped Tensors (stacked, then summed).

    Returns:
      A scalar: sum(regularization_loss) / 1.
    """
    from tensorweave.ops.reduction_ops import reduce_sum
    return reduce_sum(regularization_loss) / 1
