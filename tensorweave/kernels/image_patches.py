"""Kernels of ExtractImagePatches and ExtractVolumePatches (ops/image_patches_ops.py).

The input is zero-padded once (SAME), its dilated windows are viewed, without copying, as
[batch, *out spatial, *ksize, depth] and copied out flattened: the layout TensorFlow gives.
Attr checks happen once, when the kernel is built, with TensorFlow's error types
(extract_image_patches_op.cc, extract_volume_patches_op.cc); images may also be complex, as on
TensorFlow's CPU.
"""
from __future__ import annotations

import math

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.conv import pad_spatial
from tensorweave.kernels.conv3d import patches_nd
from tensorweave.kernels.registry import kernel
from tensorweave.ops.image_patches_ops import (
    SPATIAL_RANK,
    WINDOW_ATTRS,
    window_attrs,
    window_size,
)


class _PatchesKernel:
    """Window sizes, strides, rates and padding of the op's spatial dimensions, parsed once."""

    def __init__(self, ctx):
        op_type = ctx.op_type
        spec = window_attrs(op_type, ctx.attrs)
        for name in WINDOW_ATTRS[op_type]:
            values = spec[name]
            if values[0] != 1 or values[-1] != 1:
                raise errors.UnimplementedError(None, None, f"Only support {name} across space.")
            if min(values[1:-1]) < 1:
                raise errors.OutOfRangeError(None, None, f"{name} is out of range.")
        self.rank = SPATIAL_RANK[op_type]
        self.ksize = tuple(spec["ksizes"][1:-1])
        self.strides = tuple(spec["strides"][1:-1])
        self.rates = tuple(spec["rates"][1:-1])
        self.padding = spec["padding"]

    def compute(self, ctx, x):
        if np.ndim(x) != self.rank + 2:
            raise errors.InvalidArgumentError(
                None, None, f"input must be {self.rank + 2}-dimensional{dims_text(np.shape(x))}")
        try:
            windows = [window_size(size, k, s, r, self.padding) for size, k, s, r in
                       zip(x.shape[1:-1], self.ksize, self.strides, self.rates)]
        except ValueError as e:
            raise errors.InvalidArgumentError(None, None, str(e)) from None
        out = tuple(w[0] for w in windows)
        shape = (x.shape[0], *out, math.prod(self.ksize) * x.shape[-1])
        if 0 in shape:
            return np.zeros(shape, x.dtype)
        padded = pad_spatial(x, [w[1:] for w in windows])
        return patches_nd(padded, out, self.ksize, self.strides, self.rates).reshape(shape)


@kernel("ExtractImagePatches", dtypes=_dtypes.REAL_NUMERIC | _dtypes.COMPLEX)
class ExtractImagePatchesKernel(_PatchesKernel):
    """[batch, rows, cols, depth] -> [batch, out_rows, out_cols, ksize_r * ksize_c * depth]."""


@kernel("ExtractVolumePatches", dtypes=_dtypes.REAL_NUMERIC)
class ExtractVolumePatchesKernel(_PatchesKernel):
    """[batch, planes, rows, cols, depth] -> [batch, *out, prod(ksizes) * depth]."""
