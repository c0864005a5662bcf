"""Kernel of ExtractImagePatches (ops/image_patches_ops.py).

The input is zero-padded once (SAME), its windows are viewed with `kernels.conv.patches` as
[batch, out_rows, out_cols, ksize_rows, ksize_cols, depth] and copied out flattened: the
layout TensorFlow gives. Attr checks happen once, when the kernel is built, with TensorFlow's
error types (extract_image_patches_op.cc); real and complex dtypes, as on TensorFlow's CPU.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.kernels.conv import pad_spatial, patches
from tensorweave.kernels.registry import kernel
from tensorweave.ops.image_patches_ops import WINDOW_ATTRS, window_attrs, window_size


@kernel("ExtractImagePatches", dtypes=_dtypes.REAL_NUMERIC | _dtypes.COMPLEX)
class ExtractImagePatchesKernel:
    """Window sizes, strides, rates (rows, cols) and padding, parsed once."""

    def __init__(self, ctx):
        spec = window_attrs(ctx.attrs)
        for name in WINDOW_ATTRS:
            values = spec[name]
            if values[0] != 1 or values[3] != 1:
                raise errors.UnimplementedError(None, None, f"Only support {name} across space.")
            if values[1] < 1 or values[2] < 1:
                raise errors.OutOfRangeError(None, None, f"{name} is out of range.")
        self.ksize = tuple(spec["ksizes"][1:3])
        self.strides = tuple(spec["strides"][1:3])
        self.rates = tuple(spec["rates"][1:3])
        self.padding = spec["padding"]

    def compute(self, ctx, x):
        if np.ndim(x) != 4:
            raise errors.InvalidArgumentError(
                None, None, "input must be 4-dimensional[" +
                ",".join(str(d) for d in np.shape(x)) + "]")
        try:
            windows = [window_size(size, k, s, r, self.padding) for size, k, s, r in
                       zip(x.shape[1:3], self.ksize, self.strides, self.rates)]
        except ValueError as e:
            raise errors.InvalidArgumentError(None, None, str(e)) from None
        out_hw = tuple(w[0] for w in windows)
        shape = (x.shape[0], *out_hw, self.ksize[0] * self.ksize[1] * x.shape[3])
        if 0 in shape:
            return np.zeros(shape, x.dtype)
        padded = pad_spatial(x, [w[1:] for w in windows])
        return patches(padded, out_hw, self.ksize, self.strides, self.rates).reshape(shape)
