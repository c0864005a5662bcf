"""Kernels of SpaceToDepth, DepthToSpace, SpaceToBatchND and BatchToSpaceND
(ops/array_space_ops.py).

Each is one reshape-transpose-reshape: the spatial axes are split into (outer, block) pairs
and the block axes moved next to depth (SpaceToDepth) or in front of the batch
(SpaceToBatchND); the partner ops move them back. NCHW inputs are moved to channels-last and
back (TensorFlow has no CPU kernel for NCHW; its GPU kernels give the same result). Checks and
messages are TensorFlow's (spacetodepth_op.cc, spacetobatch_op.cc, batchtospace_op.cc), and so
are the dtypes: every type for the depth ops, real numbers for the batch ops. Where the
rearrangement moves no data (a block of 1, nothing cropped) NumPy returns a view of the input,
hence `returns_view` on DepthToSpace, SpaceToDepth and BatchToSpaceND.
"""
from __future__ import annotations

import math

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.conv import from_channels_last, to_channels_last
from tensorweave.kernels.registry import kernel


# --- SpaceToDepth, DepthToSpace ----------------------------------------------------------------
@kernel(("SpaceToDepth", "DepthToSpace"), returns_view=True)
class DepthKernel:
    """Block size and layout parsed once; the op type picks the direction."""

    def __init__(self, ctx):
        self.block = ctx.attrs["block_size"]
        fmt = ctx.attrs["data_format"]
        self.channels_first = (fmt.decode() if isinstance(fmt, bytes) else fmt) == "NCHW"
        self.to_depth = ctx.op_type == "SpaceToDepth"
        # TensorFlow's two kernels word their rank check differently.
        self.rank_message = "Input rank should be 4 instead of {}" if self.to_depth else \
            "Input rank should be: 4 instead of: {}"

    def compute(self, ctx, x):
        if np.ndim(x) != 4:
            raise invalid_argument(self.rank_message.format(np.ndim(x)))
        x = to_channels_last(x, self.channels_first)
        y = self._space_to_depth(x) if self.to_depth else self._depth_to_space(x)
        return from_channels_last(y, self.channels_first)

    def _space_to_depth(self, x):
        """[n, h, w, c] -> [n, h/b, w/b, (bi, bj, c)]."""
        n, h, w, c = x.shape
        b = self.block
        if w % b or h % b:
            raise invalid_argument(f"Image width {w} and height {h} should be divisible by "
                                   f"block_size: {b}")
        y = x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)
        return y.reshape(n, h // b, w // b, b * b * c)

    def _depth_to_space(self, x):
        """[n, h, w, (bi, bj, c)] -> [n, h*b, w*b, c]."""
        n, h, w, c = x.shape
        b = self.block
        if c % (b * b):
            raise invalid_argument(f"Input depth dimension {c} should be divisible by: {b * b}")
        y = x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5)
        return y.reshape(n, h * b, w * b, c // (b * b))


# --- SpaceToBatchND, BatchToSpaceND ------------------------------------------------------------
def _block_args(x, block_shape, amounts, what: str):
    """(block sizes, [(before, after)] per block dim) after TF's rank and shape checks."""
    block = np.ravel(block_shape).tolist()
    m = len(block)
    if np.ndim(x) < 1 + m:
        raise invalid_argument(f"input rank should be >= {1 + m} instead of {np.ndim(x)}")
    if np.shape(amounts) != (m, 2):
        raise invalid_argument(f"{what} should have shape [{m}, 2] instead of "
                               f"{dims_text(np.shape(amounts))}")
    product = math.prod(block)
    if product <= 0:
        raise invalid_argument(f"Product of block sizes must be positive, got {product}")
    if min(block, default=1) < 1:  # two negative sizes: a positive product, still invalid
        raise invalid_argument(f"Block sizes must be positive, got {dims_text(block)}")
    return block, [tuple(p) for p in np.asarray(amounts).tolist()]


@kernel("SpaceToBatchND", dtypes=_dtypes.REAL_NUMERIC)
def _space_to_batch(ctx, x, block_shape, paddings):
    block, pads = _block_args(x, block_shape, paddings, "paddings")
    m, shape = len(block), np.shape(x)
    outer = []
    for i, ((lo, hi), b) in enumerate(zip(pads, block)):
        if lo < 0 or hi < 0:
            raise invalid_argument("Paddings must be non-negative")
        padded = shape[i + 1] + lo + hi
        if padded % b:
            raise invalid_argument(f"padded_shape[{i}]={padded} is not divisible by "
                                   f"block_shape[{i}]={b}")
        outer.append(padded // b)
    rest = list(shape[m + 1:])
    x = ctx.xp.pad(x, [(0, 0), *pads] + [(0, 0)] * len(rest))
    # [n, o1, b1, ..., oM, bM, rest] -> [b1, ..., bM, n, o1, ..., oM, rest]
    split = x.reshape([shape[0], *(v for o, b in zip(outer, block) for v in (o, b)), *rest])
    perm = [*range(2, 2 * m + 1, 2), 0, *range(1, 2 * m, 2), *range(2 * m + 1, split.ndim)]
    return split.transpose(perm).reshape([shape[0] * math.prod(block), *outer, *rest])


@kernel("BatchToSpaceND", dtypes=_dtypes.REAL_NUMERIC, returns_view=True)
def _batch_to_space(ctx, x, block_shape, crops):
    block, cuts = _block_args(x, block_shape, crops, "crops")
    m, shape = len(block), np.shape(x)
    product = math.prod(block)
    if shape[0] % product:
        raise invalid_argument(f"Input batch dimension ({shape[0]}) is not divisible by product of "
                               f"block sizes ({product})")
    kept = []
    for i, ((lo, hi), b) in enumerate(zip(cuts, block)):
        if lo < 0 or hi < 0:
            raise invalid_argument("Crops must be non-negative")
        size = shape[i + 1] * b - lo - hi
        if size < 0:
            raise invalid_argument(f"cropped_shape[{i}]={size} must be non-negative")
        kept.append(slice(lo, lo + size))
    rest = list(shape[m + 1:])
    # [b1, ..., bM, n, d1, ..., dM, rest] -> [n, d1, b1, ..., dM, bM, rest]
    split = x.reshape([*block, shape[0] // product, *shape[1:]])
    perm = [m, *(a for i in range(m) for a in (m + 1 + i, i)), *range(2 * m + 1, split.ndim)]
    full = split.transpose(perm).reshape([shape[0] // product,
                                          *(d * b for d, b in zip(shape[1:m + 1], block)),
                                          *rest])
    return full[(slice(None), *kept)]
