"""TF 1.x's math, nn, image and random ops that newer ops replaced, kept so their GraphDefs import.

TF 1.x graphs carry TopK and InTopK (k an attr, before TopKV2 / InTopKV2 took it as an input),
BiasAddV1 (BiasAdd without data_format), Inv and InvGrad (Reciprocal's old names), NonMaxSuppression
(iou_threshold an attr) and NonMaxSuppressionV2, SelfAdjointEig (eigenvalues and eigenvectors in one
[..., N+1, N] output, removed at GraphDef version 11), Bincount (what tf.math.bincount built before
DenseBincount), ApproximateEqual, and MaxPoolV2 / MaxPoolGradV2 / MaxPoolGradGradV2 (what
tf.nn.max_pool built when ksize or strides were tensors), Conv3DBackpropInput and
Conv3DBackpropFilter (before the V2s took the input's or filter's shape instead of the tensor, and
with no data_format), RandomPoisson (RandomPoissonV2 with the output typed like the rate) and
AdjustContrast (float output clipped to [min_value, max_value]). Each has TensorFlow 2.21's raw-op
signature and its registered gradient; ops TF leaves without one stay without one. Kernels:
kernels/legacy_math.py, which run the newer ops' kernels.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_fns import ShapeContext
from tensorweave.ops.array_creation_ops import zeros_like
from tensorweave.ops.image_nms_ops import nms_shape as _nms_v3_shape
from tensorweave.ops.linalg_decomp_ops import LINALG_TYPES
from tensorweave.ops.math_unary_ops import (
    FLOAT_COMPLEX,
    define_elementwise,
    reciprocal_grad,
    reciprocal_grad_grad,
    unary_op,
)
from tensorweave.ops.nn_ops import BiasAddGrad, bias_add_shape
from tensorweave.ops.nn_pool_ops import MaxPool
from tensorweave.ops.nn_top_k_ops import top_k_grad
from tensorweave.ops.random_gamma_ops import RandomPoissonV2

__all__: list[str] = []


def _top_k_shape(ctx):
    """The input's shape with its last dimension replaced by the attr k."""
    shape = ctx.input_shape(0).with_rank_at_least(1)
    k = ctx.attr("k")
    if k < 0:
        raise ValueError(f"Need k >= 0, got {k}")
    if shape.ndims is None:
        return [_ts.unknown_shape()] * 2
    last = shape.as_list()[-1]
    if last is not None and last < k:
        raise ValueError(f"input must have last dimension >= k = {k} but is {last}")
    out = _ts.TensorShape(shape.as_list()[:-1] + [k])
    return [out, out]


TopK = define_op(
    "TopK", inputs=["input: T"], outputs=["values: T", "indices: int32"],
    attrs=[Attr("k", "int", minimum=0), Attr("sorted", "bool", True),
           TypeAttr("T", _dtypes.REAL_NUMERIC)],
    shape_fn=_top_k_shape, doc="TF 1.x's tf.nn.top_k op, k an attr (TopKV2 takes an input).")


@TopK.gradient
def _top_k_v1_grad(op, grad, _):
    """TopKV2's gradient for the one input. TF registers TopKV2's function itself, whose second
    entry (for k) makes tf.gradients fail on TopK ("Num gradients 2 ... do not match num
    inputs 1"); the input's gradient is the same."""
    return top_k_grad(op, grad, _)[:1]


def _in_top_k_shape(ctx):
    """[batch]: predictions [batch, classes], targets [batch]."""
    return ctx.input_shape(0).with_rank(2)[:1].merge_with(ctx.input_shape(1).with_rank(1))


InTopK = define_op(
    "InTopK", inputs=["predictions: float32", "targets: T"], outputs=["precision: bool"],
    attrs=[Attr("k", "int"), TypeAttr("T", _dtypes.INDEX, _dtypes.int32)],
    shape_fn=_in_top_k_shape, doc="TF 1.x's tf.nn.in_top_k op, k an attr.")


def _bias_add_v1_shape(ctx):
    """BiasAdd's shape rule with the channel axis last (the only layout V1 knows)."""
    return bias_add_shape(ShapeContext(ctx.inputs, {**ctx.attrs, "data_format": "NHWC"},
                                        "BiasAdd", ctx.blind))


BiasAddV1 = define_op(
    "BiasAddV1", inputs=["value: T", "bias: T"], outputs=["output: T"],
    attrs=[TypeAttr("T", _dtypes.NUMERIC)], shape_fn=_bias_add_v1_shape,
    doc="TF 1.x's bias_add_v1: value + bias along the last axis.")


@BiasAddV1.gradient
def _bias_add_v1_grad(op, grad):
    """The value gets the gradient; the bias its sum over all axes but the last."""
    return [grad, apply_op(BiasAddGrad, [grad], {"data_format": "NHWC"})]


Inv = unary_op("Inv", FLOAT_COMPLEX)
Inv.gradient(lambda op, grad: [reciprocal_grad(op.outputs[0], grad)])
InvGrad = define_elementwise("InvGrad", ["y: T", "dy: T"], FLOAT_COMPLEX,
                             shape_fn=shape_fns.merged)
InvGrad.gradient(reciprocal_grad_grad)


ApproximateEqual = define_op(
    "ApproximateEqual", inputs=["x: T", "y: T"], outputs=["z: bool"],
    attrs=[TypeAttr("T", _dtypes.NUMERIC), Attr("tolerance", "float", 1e-5)],
    shape_fn=shape_fns.merged, not_differentiable=True,
    doc="|x - y| < tolerance element-wise, for x and y of one shape.")


def _eig_v1_shape(ctx):
    """[..., N, N] -> [..., N + 1, N]: a row of eigenvalues over the eigenvector matrix."""
    shape = ctx.input_shape(0).with_rank_at_least(2)
    if shape.ndims is None:
        return _ts.unknown_shape()
    dims = shape.as_list()
    n = _ts.Dimension(dims[-2]).merge_with(dims[-1]).value
    return _ts.TensorShape(dims[:-2] + [None if n is None else n + 1, n])


SelfAdjointEig = define_op(
    "SelfAdjointEig", inputs=["input: T"], outputs=["output: T"],
    attrs=[TypeAttr("T", LINALG_TYPES & _dtypes.FLOATING)], shape_fn=_eig_v1_shape,
    doc="TF 1.x's tf.self_adjoint_eig op: eigenvalues (first row) and eigenvectors (columns "
        "of the remaining rows) of self-adjoint matrices.")


def _nms_shape(ctx):
    """NonMaxSuppressionV3's rule (boxes [n, 4], scores [n], scalars -> [?]) over the scalar
    inputs this version has."""
    return _nms_v3_shape(ShapeContext(ctx.inputs, ctx.attrs, "NonMaxSuppressionV3", ctx.blind),
                         scalars=len(ctx.inputs) - 2)


_NMS_TYPES = {_dtypes.float16, _dtypes.float32}
NonMaxSuppression = define_op(
    "NonMaxSuppression",
    inputs=["boxes: float32", "scores: float32", "max_output_size: int32"],
    outputs=["selected_indices: int32"], attrs=[Attr("iou_threshold", "float", 0.5)],
    shape_fn=_nms_shape, not_differentiable=True,
    doc="TF 1.x's tf.image.non_max_suppression op, iou_threshold an attr.")
NonMaxSuppressionV2 = define_op(
    "NonMaxSuppressionV2",
    inputs=["boxes: T", "scores: T", "max_output_size: int32", "iou_threshold: T_threshold"],
    outputs=["selected_indices: int32"],
    attrs=[TypeAttr("T", _NMS_TYPES, _dtypes.float32),
           TypeAttr("T_threshold", _NMS_TYPES, _dtypes.float32)],
    shape_fn=_nms_shape, not_differentiable=True,
    doc="TF 1.x's non_max_suppression op with iou_threshold an input (no score threshold).")


def _bincount_shape(ctx):
    """[size] when size is known statically; TF checks it is a scalar."""
    ctx.input_shape(1).with_rank(0)
    size = ctx.static_value(1)
    return _ts.TensorShape([None if size is None else int(size)])


Bincount = define_op(
    "Bincount", inputs=["arr: int32", "size: int32", "weights: T"], outputs=["bins: T"],
    attrs=[TypeAttr("T", {_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64})],
    shape_fn=_bincount_shape,
    doc="TF 1.x's tf.math.bincount op: counts (or summed weights) of each value below size.")


def _window_input(ctx, i: int):
    """The static value of ksize or strides (input i, a 4-vector), or None when unknown."""
    ctx.input_shape(i).with_rank(1).merge_with(_ts.TensorShape([4]))
    value = ctx.static_value(i)
    return None if value is None else [int(v) for v in value]


def _max_pool_v2_shape(ctx):
    """MaxPool's rule with ksize and strides read from the last two inputs' static values;
    unknown (TF's rule) while either is unknown. Also MaxPoolGradGradV2's (shaped like the
    pooled orig_input)."""
    ctx.input_shape(0).with_rank(4)
    n = len(ctx.inputs)
    ksize, strides = _window_input(ctx, n - 2), _window_input(ctx, n - 1)
    if ksize is None or strides is None:
        return _ts.unknown_shape()
    attrs = {**ctx.attrs, "ksize": ksize, "strides": strides}
    return MaxPool.shape_fn(ShapeContext(ctx.inputs[:1], attrs, "MaxPool", ctx.blind))


def _max_pool_grad_v2_shape(ctx):
    """orig_input's shape, rank 4; ksize and strides 4-vectors."""
    _window_input(ctx, 3)
    _window_input(ctx, 4)
    return ctx.input_shape(0).with_rank(4)


_POOL_ATTRS = [Attr("padding", "string"), Attr("data_format", "string", "NHWC")]
_POOL_INPUTS = ["orig_input: T", "orig_output: T", "grad: T", "ksize: int32", "strides: int32"]
MaxPoolV2 = define_op(
    "MaxPoolV2", inputs=["input: T", "ksize: int32", "strides: int32"], outputs=["output: T"],
    attrs=[TypeAttr("T", _dtypes.REAL_NUMERIC - {_dtypes.uint32, _dtypes.uint64},
                    _dtypes.float32), *_POOL_ATTRS],
    shape_fn=_max_pool_v2_shape, doc="MaxPool with ksize and strides as int32 inputs.")
MaxPoolGradV2 = define_op(
    "MaxPoolGradV2", inputs=_POOL_INPUTS, outputs=["output: T"],
    attrs=[*_POOL_ATTRS, TypeAttr("T", _dtypes.REAL_NUMERIC, _dtypes.float32)],
    shape_fn=_max_pool_grad_v2_shape, doc="MaxPoolGrad with ksize and strides as inputs.")
MaxPoolGradGradV2 = define_op(
    "MaxPoolGradGradV2", inputs=_POOL_INPUTS, outputs=["output: T"],
    attrs=[*_POOL_ATTRS, TypeAttr("T", _dtypes.REAL_NUMERIC)],
    shape_fn=_max_pool_v2_shape, doc="MaxPoolGradGrad with ksize and strides as inputs.")


def _pool_attrs(op) -> dict:
    return {"padding": op.get_attr("padding"), "data_format": op.get_attr("data_format")}


@MaxPoolV2.gradient
def _max_pool_v2_grad(op, grad):
    """TF's _MaxPoolGradV2: MaxPoolGradV2 routes grad to each window's first maximum."""
    x, ksize, strides = op.inputs
    return [apply_op(MaxPoolGradV2, [x, op.outputs[0], grad, ksize, strides], _pool_attrs(op)),
            None, None]


@MaxPoolGradV2.gradient
def _max_pool_grad_v2_grad(op, grad):
    """TF's _MaxPoolGradGradV2: linear in grad, so its gradient gathers at the maxima."""
    x, y, _, ksize, strides = op.inputs
    return [zeros_like(x), zeros_like(y),
            apply_op(MaxPoolGradGradV2, [x, y, grad, ksize, strides], _pool_attrs(op)),
            None, None]


_CONV3D_V1_ATTRS = [TypeAttr("T", {_dtypes.float16, _dtypes.float32, _dtypes.float64}),
                    Attr("strides", "list(int)", minimum=5), Attr("padding", "string"),
                    Attr("dilations", "list(int)", [1, 1, 1, 1, 1])]
Conv3DBackpropInput = define_op(
    "Conv3DBackpropInput", inputs=["input: T", "filter: T", "out_backprop: T"],
    outputs=["output: T"], attrs=_CONV3D_V1_ATTRS,
    shape_fn=lambda ctx: ctx.input_shape(0).with_rank(5),
    doc="Conv3D's input gradient, shaped like the given input tensor (NDHWC only).")
Conv3DBackpropFilter = define_op(
    "Conv3DBackpropFilter", inputs=["input: T", "filter: T", "out_backprop: T"],
    outputs=["output: T"], attrs=_CONV3D_V1_ATTRS,
    shape_fn=lambda ctx: ctx.input_shape(1).with_rank(5),
    doc="Conv3D's filter gradient, shaped like the given filter tensor (NDHWC only).")

RandomPoisson = define_op(
    "RandomPoisson", inputs=["shape: S", "rate: dtype"], outputs=["output: dtype"],
    attrs=[Attr("seed", "int", 0), Attr("seed2", "int", 0), TypeAttr("S", _dtypes.INDEX),
           TypeAttr("dtype", {_dtypes.float16, _dtypes.float32, _dtypes.float64})],
    shape_fn=RandomPoissonV2.shape_fn, is_stateful=True,
    doc="Poisson(rate) samples typed like rate, `shape` of them for each entry of rate.")


def _adjust_contrast_shape(ctx):
    """The images' shape (rank >= 3); factor, min and max scalars."""
    for i in (1, 2, 3):
        ctx.input_shape(i).with_rank(0)
    return ctx.input_shape(0).with_rank_at_least(3)


AdjustContrast = define_op(
    "AdjustContrast",
    inputs=["images: T", "contrast_factor: float32", "min_value: float32",
            "max_value: float32"],
    outputs=["output: float32"],
    attrs=[TypeAttr("T", {_dtypes.uint8, _dtypes.int8, _dtypes.int16, _dtypes.int32,
                          _dtypes.int64, _dtypes.float32, _dtypes.float64})],
    shape_fn=_adjust_contrast_shape,
    doc="AdjustContrastv2 on the images as float32, clipped to [min_value, max_value].")
