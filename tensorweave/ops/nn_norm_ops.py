"""Fused batch normalization (FusedBatchNorm, V2, V3 and their gradient ops) and local response
normalization (LRN, LRNGrad), with the TF1 wrappers fused_batch_norm and lrn.

FusedBatchNormV3 normalizes per channel in one kernel. Training mode uses the batch's
statistics and outputs the batch mean and the *unbiased* batch variance (for the moving-average
update; with `exponential_avg_factor` f != 1 the outputs are already the blended running
values (1 - f) * old + f * batch), and keeps the batch mean and the *biased* variance in the
reserve spaces for the gradient. Inference mode uses the given mean and variance. The gradient
is one FusedBatchNormGradV3 op; its own gradient (second derivatives) is built by
differentiating the same formula written with math ops, as TensorFlow does. The three op
versions differ only in dtype attrs and in V3's extra reserve space, so they are rows of one
table. float64 is accepted besides TF's float types (TF allows half, bfloat16 and float32 only)
so the numerical gradient checks can run in double precision.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_checks import merge_dim, shape_dims
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import zeros_like
from tensorweave.ops.constant_op import constant
from tensorweave.ops.nn_conv_ops import check_string_attr

__all__ = ["fused_batch_norm", "local_response_normalization", "lrn"]

TensorShape = _ts.TensorShape
_FORMATS = ("NHWC", "NCHW", "NDHWC", "NCDHW")
_T = _dtypes.FLOATING
_U = frozenset({_dtypes.float32, _dtypes.float64})


def layout(op_type: str, attrs: dict) -> tuple:
    """(rank, channel axis) of a batch-norm node's data_format; ValueError if unknown."""
    fmt = check_string_attr(op_type, "data_format", attrs["data_format"], _FORMATS)
    rank = 5 if "D" in fmt else 4
    return rank, 1 if fmt.startswith("NC") else rank - 1


def _vector(ctx, i: int, channels):
    """Input i must be a vector of `channels` elements."""
    return merge_dim(channels, shape_dims(ctx.input_shape(i), 1)[0])


def _fused_bn_shape(ctx):
    """y like x; batch statistics and reserve spaces [C]; V3's third reserve space unknown."""
    rank, axis = layout(ctx.op_type, ctx.attrs)
    dims = shape_dims(ctx.input_shape(0), rank)
    channels = dims[axis]
    uses_stats = not ctx.attrs["is_training"] or ctx.attrs["exponential_avg_factor"] != 1.0
    for i in (1, 2, 3, 4) if uses_stats else (1, 2):
        channels = _vector(ctx, i, channels)
    dims[axis] = channels
    vec = TensorShape([channels])
    extra = [_ts.unknown_shape()] if ctx.op_type == "FusedBatchNormV3" else []
    return [TensorShape(dims), vec, vec, vec, vec, *extra]


def _fused_bn_grad_shape(ctx):
    """x_backprop like x; scale/offset gradients [C]; the reserve-space outputs empty."""
    rank, axis = layout(ctx.op_type, ctx.attrs)
    dims = shape_dims(ctx.input_shape(0), rank)
    for d, other in enumerate(shape_dims(ctx.input_shape(1), rank)):
        dims[d] = merge_dim(dims[d], other)
    channels = dims[axis]
    for i in (2, 3, 4):
        channels = _vector(ctx, i, channels)
    dims[axis] = channels
    vec, empty = TensorShape([channels]), TensorShape([0])
    return [TensorShape(dims), vec, vec, empty, empty]


def _bn_attrs(forward: bool):
    attrs = [Attr("epsilon", "float", 0.0001), Attr("data_format", "string", "NHWC"),
             Attr("is_training", "bool", True)]
    if forward:
        attrs.insert(1, Attr("exponential_avg_factor", "float", 1.0))
    return attrs


def _define_versions():
    """FusedBatchNorm (all T), V2 (T and U) and V3 (plus reserve_space_3), with gradients."""
    table = {}
    for version, u, reserve3 in (("", "T", False), ("V2", "U", False), ("V3", "U", True)):
        types = [TypeAttr("T", _T)] + ([TypeAttr("U", _U)] if u == "U" else [])
        stats = [f"{n}: {u}" for n in ("batch_mean", "batch_variance", "reserve_space_1",
                                        "reserve_space_2")]
        forward = define_op(
            f"FusedBatchNorm{version}",
            ["x: T", *(f"{n}: {u}" for n in ("scale", "offset", "mean", "variance"))],
            ["y: T", *stats, *([f"reserve_space_3: {u}"] if reserve3 else [])],
            [*types, *_bn_attrs(True)], _fused_bn_shape)
        grad_outputs = ["x_backprop: T", f"scale_backprop: {u}", f"offset_backprop: {u}",
                        f"reserve_space_{4 if reserve3 else 3}: {u}",
                        f"reserve_space_{5 if reserve3 else 4}: {u}"]
        grad = define_op(
            f"FusedBatchNormGrad{version}",
            ["y_backprop: T", "x: T", f"scale: {u}", f"reserve_space_1: {u}",
             f"reserve_space_2: {u}", *([f"reserve_space_3: {u}"] if reserve3 else [])],
            grad_outputs, [*types, *_bn_attrs(False)], _fused_bn_grad_shape)
        table[forward.name] = (forward, grad)
    return table


_VERSIONS = _define_versions()
FusedBatchNorm, FusedBatchNormGrad = _VERSIONS["FusedBatchNorm"]
FusedBatchNormV2, FusedBatchNormGradV2 = _VERSIONS["FusedBatchNormV2"]
FusedBatchNormV3, FusedBatchNormGradV3 = _VERSIONS["FusedBatchNormV3"]


def _fused_bn_grad(op, grad_y, *unused_stat_grads):
    """One FusedBatchNormGrad op. Training mode reads the batch statistics the forward kept in
    its reserve spaces; inference mode the given population statistics. The statistics
    outputs get no gradient (they feed moving averages, like TensorFlow's)."""
    grad_op = _VERSIONS[op.type][1]
    training = op._attrs["is_training"]
    if training:
        stats = list(op.outputs[3:5])
    else:
        stats = [op.inputs[3], op.inputs[4]]
    if op.type == "FusedBatchNormV3":
        stats.append(op.outputs[5])
    attrs = {"epsilon": op._attrs["epsilon"], "data_format": op._attrs["data_format"],
             "is_training": training}
    dx, dscale, doffset = apply_op(grad_op, [grad_y, op.inputs[0], op.inputs[1], *stats],
                                   attrs)[:3]
    return [dx, dscale, doffset, None, None]


def _batch_norm_grad_formula(grad_y, x, scale, mean, variance, epsilon, data_format, training):
    """FusedBatchNormGrad written with differentiable math ops (for second derivatives)."""
    from tensorweave.ops.array_ops import reshape, stop_gradient
    from tensorweave.ops.math_ops import squared_difference
    from tensorweave.ops.math_unary_ops import reciprocal, rsqrt
    from tensorweave.ops.reduction_ops import reduce_mean, reduce_sum
    rank, axis = layout("FusedBatchNormGrad", {"data_format": data_format})
    axes = [a for a in range(rank) if a != axis]
    channels_first = axis == 1
    shape = [1, -1] + [1] * (rank - 2) if channels_first else [-1]
    as_b = (lambda v: reshape(v, shape)) if channels_first else (lambda v: v)
    scale_b = as_b(scale)
    keep = channels_first
    if training:
        mean_x = reduce_mean(x, axes, keepdims=keep)
        var_x = reduce_mean(squared_difference(x, stop_gradient(mean_x)), axes, keepdims=keep)
        x_offset = x - mean_x
        grad_y_offset = grad_y - reduce_mean(grad_y, axes, keepdims=keep)
        mean_term = reduce_mean(grad_y * x_offset, axes, keepdims=keep)
        inv = rsqrt(var_x + epsilon)
        grad_x = scale_b * inv * (grad_y_offset - reciprocal(var_x + epsilon) * mean_term *
                                  x_offset)
        grad_scale = inv * reduce_sum(grad_y * x_offset, axes, keepdims=keep)
        if channels_first:
            grad_scale = reshape(grad_scale, [-1])
    else:
        inv = rsqrt(as_b(variance) + epsilon)
        grad_x = grad_y * scale_b * inv
        grad_scale = reduce_sum(grad_y * (x - as_b(mean)) * inv, axes)
    return grad_x, grad_scale, reduce_sum(grad_y, axes)


def _fused_bn_grad_grad(op, *grads):
    """Differentiates the math-op form of the gradient: d(y_backprop), d(x), d(scale)."""
    from tensorweave.autodiff.gradients import gradients
    grad_y, x, scale, mean, variance = op.inputs[:5]
    attrs = op._attrs
    outs = _batch_norm_grad_formula(grad_y, x, scale, mean, variance, attrs["epsilon"],
                                    attrs["data_format"], attrs["is_training"])
    pairs = [(o, g) for o, g in zip(outs, grads[:3]) if g is not None]
    if not pairs:
        return [None] * len(op.inputs)
    seeds = gradients([o for o, _ in pairs], [grad_y, x, scale], grad_ys=[g for _, g in pairs])
    seeds = [zeros_like(t) if s is None else s for s, t in zip(seeds, (grad_y, x, scale))]
    return [*seeds] + [None] * (len(op.inputs) - 3)


for _forward, _grad in _VERSIONS.values():
    _forward.gradient(_fused_bn_grad)
    _grad.gradient(_fused_bn_grad_grad)


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None,
                     exponential_avg_factor=1.0):
    """Batch normalization in one op (FusedBatchNormV3).

    y = scale * (x - mean) / sqrt(variance + epsilon) + offset, per channel, with the batch's
    statistics when `is_training` else the given `mean` and `variance`.

    Args:
      x: A 4-D Tensor (5-D for NDHWC / NCDHW) of float16, bfloat16, float32 or float64.
      scale: A 1-D Tensor, one factor per channel.
      offset: A 1-D Tensor, one offset per channel.
      mean: A 1-D Tensor of population means: required for inference or when
        `exponential_avg_factor` != 1.
      variance: A 1-D Tensor of population variances, likewise.
      epsilon: Added to the variance, kept as given (TF 2.21 no longer raises small values
        to 1.001e-5; 0 or a negative value is accepted and may give inf or NaN).
      data_format: "NHWC" (default), "NCHW", "NDHWC" or "NCDHW".
      is_training: Use (and output) the batch statistics.
      name: A name for the operation (default "FusedBatchNormV3").
      exponential_avg_factor: f in running = (1 - f) * running + f * batch for the returned
        statistics in training mode.

    Returns:
      (y, batch_mean, batch_variance): in training mode the batch mean and unbiased variance
      (blended with `mean`/`variance` when f != 1); in inference mode `mean` and `variance`.

    Raises:
      ValueError: if `mean`/`variance` are needed but missing, or for incompatible shapes.
    """
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or
                                                               variance is None):
        raise ValueError("Both `mean` and `variance` must be a 1D tensor when `is_training` is "
                         "False or `exponential_avg_factor` != 1.0. Received: `mean` "
                         f"{mean!r} and `variance` {variance!r}")
    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    if mean is None:
        mean = constant([], dtype=scale.dtype.base_dtype)
    if variance is None:
        variance = constant([], dtype=scale.dtype.base_dtype)
    y, batch_mean, batch_var = apply_op(
        FusedBatchNormV3, [x, scale, offset, mean, variance],
        {"epsilon": float(epsilon), "exponential_avg_factor": float(exponential_avg_factor),
         "data_format": data_format, "is_training": bool(is_training)}, name=name)[:3]
    return y, batch_mean, batch_var


# --- LRN -----------------------------------------------------------------------------------------
def _lrn_attrs():
    return [Attr("depth_radius", "int", 5), Attr("bias", "float", 1.0),
            Attr("alpha", "float", 1.0), Attr("beta", "float", 0.5)]


def _rank4_unchanged(ctx):
    dims = [shape_dims(t._shape, 4) for t in ctx.inputs]
    out = dims[0]
    for other in dims[1:]:
        out = [merge_dim(a, b) for a, b in zip(out, other)]
    return TensorShape(out)


LRN = define_op("LRN", ["input: T"], ["output: T"],
                [TypeAttr("T", _T, _dtypes.float32), *_lrn_attrs()], _rank4_unchanged)
LRNGrad = define_op("LRNGrad", ["input_grads: T", "input_image: T", "output_image: T"],
                    ["output: T"], [TypeAttr("T", _T, _dtypes.float32), *_lrn_attrs()],
                    _rank4_unchanged)


@LRN.gradient
def _lrn_grad(op, grad):
    """One LRNGrad op from the gradient, the input and the output."""
    attrs = {k: op._attrs[k] for k in ("depth_radius", "bias", "alpha", "beta")}
    return [apply_op(LRNGrad, [grad, op.inputs[0], op.outputs[0]], attrs)]
# LRNGrad has no gradient in TensorFlow either: asking for one raises LookupError.


def lrn(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):  # noqa: A002
    """Local response normalization across channels (the last dimension).

    sqr_sum[a, b, c, d] = sum(input[a, b, c, d - depth_radius : d + depth_radius + 1] ** 2)
    output = input / (bias + alpha * sqr_sum) ** beta

    Args:
      input: A 4-D Tensor of float16, bfloat16, float32 (or float64).
      depth_radius: Half-width of the 1-D normalization window.
      bias: An offset (usually positive, to avoid dividing by 0).
      alpha: A scale factor.
      beta: An exponent.
      name: A name for the operation (default "LRN").

    Returns:
      A Tensor like `input`.
    """
    return apply_op(LRN, [input], {"depth_radius": depth_radius, "bias": bias, "alpha": alpha,
                                   "beta": beta}, name=name)


local_response_normalization = lrn
