"""Kernels of ops/legacy_math_ops.py, each its successor's kernel with the old attrs mapped.

TopK runs TopKV2's with k, BiasAddV1 BiasAdd's in NHWC, SelfAdjointEig V2's with eigenvectors,
Bincount DenseBincount's on the flattened input, NonMaxSuppression(V2) V3's without a score
threshold, MaxPoolV2 / MaxPoolGradV2 / MaxPoolGradGradV2 MaxPool's, MaxPoolGrad's and
MaxPoolGradGrad's with the window read from their inputs, Conv3DBackpropInput / Filter the V2s'
with the given tensor's shape in NDHWC, AdjustContrast AdjustContrastv2's then the clip; Inv,
InvGrad and RandomPoisson are Reciprocal's, ReciprocalGrad's and RandomPoissonV2's registrations;
ApproximateEqual is its own.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels import math_unary, random_gamma  # noqa: F401 - registered first
from tensorweave.kernels.conv3d import Conv3DBackpropFilterKernel, Conv3DBackpropInputKernel
from tensorweave.kernels.counting import DenseBincountKernel
from tensorweave.kernels.image import adjust_contrast
from tensorweave.kernels.image_nms import nms_v3
from tensorweave.kernels.legacy_reuse import newer_kernel
from tensorweave.kernels.linalg_decomp import SelfAdjointEigKernel
from tensorweave.kernels.nn import BiasAddKernel, in_top_k_rows
from tensorweave.kernels.pool import MaxPoolGradGradKernel, MaxPoolGradKernel, MaxPoolKernel
from tensorweave.kernels.reduction import TopKKernel
from tensorweave.kernels.registry import kernel, register_as

register_as("Inv", "Reciprocal")
register_as("InvGrad", "ReciprocalGrad")
register_as("RandomPoisson", "RandomPoissonV2")


@kernel("TopK")
class TopKV1Kernel:
    """TopKV2's kernel with k from the attr and int32 indices."""

    def __init__(self, ctx):
        self.k = ctx.attrs["k"]
        self.top_k = newer_kernel(TopKKernel, ctx, "TopKV2", index_type=_dtypes.int32)

    def compute(self, ctx, x):
        return self.top_k.compute(ctx, x, self.k)


@kernel("InTopK")
def _in_top_k_v1(ctx, predictions, targets):
    """InTopKV2's rule with k from the attr."""
    return in_top_k_rows(predictions, targets, ctx.attrs["k"])


@kernel("BiasAddV1")
class BiasAddV1Kernel:
    """BiasAdd's kernel in NHWC, the only layout V1 knows."""

    def __init__(self, ctx):
        self.bias_add = newer_kernel(BiasAddKernel, ctx, "BiasAdd", data_format="NHWC")

    def compute(self, ctx, value, bias):
        return self.bias_add.compute(ctx, value, bias)


@kernel("ApproximateEqual")
class ApproximateEqualKernel:
    """|x - y| < tolerance, computed in T (as TF's functor does)."""

    def __init__(self, ctx):
        self.tolerance = ctx.attrs["tolerance"]

    def compute(self, ctx, x, y):
        if np.shape(x) != np.shape(y):
            raise invalid_argument(f"x and y must be of the same shape. x shape: "
                                   f"{dims_text(np.shape(x))}. y shape: {dims_text(np.shape(y))}")
        return ctx.xp.abs(x - y) < self.tolerance


@kernel("SelfAdjointEig", expensive=True)
class SelfAdjointEigV1Kernel:
    """SelfAdjointEigV2's eigenvalues stacked as the first row over its eigenvector matrix."""

    def __init__(self, ctx):
        self.eig = newer_kernel(SelfAdjointEigKernel, ctx, "SelfAdjointEigV2", compute_v=True)

    def compute(self, ctx, x):
        e, v = self.eig.compute(ctx, x)
        return np.concatenate([e[..., None, :], v], axis=-2)


@kernel("NonMaxSuppression")
def _nms_v1(ctx, boxes, scores, max_output_size):
    """NonMaxSuppressionV3 with the attr's IoU threshold and no score threshold."""
    return nms_v3(ctx, boxes, scores, max_output_size,
                   np.float32(ctx.attrs["iou_threshold"]), np.float32(-np.inf))


@kernel("NonMaxSuppressionV2", dtypes=(np.float16, np.float32))
def _nms_v2(ctx, boxes, scores, max_output_size, iou_threshold):
    """NonMaxSuppressionV3 without a score threshold."""
    return nms_v3(ctx, boxes, scores, max_output_size, iou_threshold, np.float32(-np.inf))


@kernel("Bincount")
class BincountKernel:
    """DenseBincount's count over the flattened input (V1 takes any rank; weights, when not
    empty, of the input's shape)."""

    def __init__(self, ctx):
        self.count = newer_kernel(DenseBincountKernel, ctx, "DenseBincount",
                                  binary_output=False)

    def compute(self, ctx, arr, size, weights):
        arr, weights = np.asarray(arr), np.asarray(weights)
        if weights.size and weights.shape != arr.shape:
            raise invalid_argument("`weights` must be the same shape as `arr` or a length-0 "
                                   "`Tensor`, in which case it acts as all weights equal to 1. "
                                   f"Received {dims_text(weights.shape)}")
        return self.count.compute(ctx, arr.ravel(), size, weights.ravel())


class _WindowFromInputs:
    """A V2 pooling op: the newer op's kernel (`newer`, of op type `newer_type`) built per
    distinct ksize / strides input value, as that op with those attrs; most graphs feed one
    constant pair. The window inputs are the last two; the others go to the newer kernel."""

    newer: type
    newer_type: str

    def __init__(self, ctx):
        self.ctx = ctx
        self.kernels: dict = {}

    def compute(self, ctx, *inputs):
        *data, ksize, strides = inputs
        return self._kernel(ksize, strides).compute(ctx, *data)

    def _kernel(self, ksize, strides):
        ksize, strides = np.ravel(ksize).tolist(), np.ravel(strides).tolist()
        if len(ksize) != 4:
            raise invalid_argument("Sliding window ksize field must specify 4 dimensions")
        if len(strides) != 4:
            raise invalid_argument("Sliding window stride field must specify 4 dimensions")
        key = (tuple(ksize), tuple(strides))
        found = self.kernels.get(key)
        if found is None:
            found = newer_kernel(self.newer, self.ctx, self.newer_type, ksize=ksize,
                                 strides=strides, explicit_paddings=[])
            if len(self.kernels) < 16:
                self.kernels[key] = found
        return found


for _op_type, _newer in (("MaxPoolV2", MaxPoolKernel), ("MaxPoolGradV2", MaxPoolGradKernel),
                         ("MaxPoolGradGradV2", MaxPoolGradGradKernel)):
    kernel(_op_type, expensive=True)(type(f"{_op_type}Kernel", (_WindowFromInputs,), {
        "newer": _newer, "newer_type": _op_type[:-2],
        "__doc__": f"{_op_type[:-2]}'s kernel with the window from the ksize and strides "
                   "inputs."}))


@kernel("Conv3DBackpropInput", expensive=True)
class Conv3DBackpropInputV1Kernel:
    """Conv3DBackpropInputV2's kernel in NDHWC with input_sizes the given input's shape."""

    def __init__(self, ctx):
        self.v2 = newer_kernel(Conv3DBackpropInputKernel, ctx, "Conv3DBackpropInputV2",
                               data_format="NDHWC")

    def compute(self, ctx, x, w, dy):
        return self.v2.compute(ctx, np.asarray(np.shape(x), np.int64), w, dy)


@kernel("Conv3DBackpropFilter", expensive=True)
class Conv3DBackpropFilterV1Kernel:
    """Conv3DBackpropFilterV2's kernel in NDHWC with filter_sizes the given filter's shape."""

    def __init__(self, ctx):
        self.v2 = newer_kernel(Conv3DBackpropFilterKernel, ctx, "Conv3DBackpropFilterV2",
                               data_format="NDHWC")

    def compute(self, ctx, x, w, dy):
        return self.v2.compute(ctx, x, np.asarray(np.shape(w), np.int32), dy)


@kernel("AdjustContrast", dtypes=(np.uint8, np.int8, np.int16, np.int32, np.float32,
                                  np.float64))
def _adjust_contrast_v1(ctx, images, factor, min_value, max_value):
    """AdjustContrastv2 on the images cast to float32, then min(., max_value) and
    max(., min_value) in that order (TF's functor), with TF's checks."""
    if images.ndim < 3:
        raise invalid_argument(f"input must be at least 3-D, got shape{dims_text(images.shape)}")
    for name, value in (("contrast_factor", factor), ("min_value", min_value),
                        ("max_value", max_value)):
        if np.ndim(value) != 0:
            raise invalid_argument(f"{name} must be scalar: {dims_text(np.shape(value))}")
    adjusted = adjust_contrast(ctx, images.astype(np.float32), factor)
    return np.maximum(np.minimum(adjusted, max_value), min_value)
