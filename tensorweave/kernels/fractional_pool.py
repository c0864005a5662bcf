"""FractionalMaxPool, FractionalAvgPool and their gradient kernels (NHWC).

The pooling sequences are TensorFlow's `GeneratePoolingSequence` (fractional_pool_common.cc),
drawn bit for bit: each run seeds a fresh `PhiloxStream` with the op's seeds, and the row
sequence, then the column one, reserve their blocks from it. With `pseudo_random`, window
starts are ceil(alpha * (i + u)) for alpha = L / n and one RandDouble u scaled into
[0, u_max) (u_max keeps every window length at k = L // n or k + 1); otherwise L % n windows
of length k + 1 then the rest of length k, shuffled by TF's RandomShuffle. A window of the
cumulative sequence `cum` spans [cum[i], cum[i + 1]) (with `overlapping`, cum[i + 1] too,
clipped to the input).

Windows are index arrays padded by repeating their last element: the max is separable (rows,
then columns), averages are two products with 0/1 window matrices, and the max gradient takes
each 2-D window's first maximum in scan order (the padding repeats come last, so never win),
TF's rule.
"""
from __future__ import annotations

import math

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.philox import op_seeds, philox_blocks
from tensorweave.kernels.random_philox import PhiloxStream, shuffled_order
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.stateless_random import uint64_to_double
from tensorweave.ops.nn_fractional_pool_ops import check_pooling_ratio


def pooling_sequence(stream: PhiloxStream, length: int, n: int,
                     pseudo_random: bool) -> np.ndarray:
    """n + 1 int64 window boundaries from 0 to `length`, each window k or k + 1 long, drawn
    from `stream` as TF draws them (it reserves words even when n divides `length`)."""
    k = length // n
    if pseudo_random:
        # ReserveSamples32(2), one block; SimplePhilox's RandDouble takes its first two words.
        x0, x1 = philox_blocks(*stream.reserve_blocks(1), [0])[0, :2]
        alpha = length / n
        u_max = min((k + 2) / alpha - 1, (length + 1 - k) / alpha - (n - 1))
        u = float(uint64_to_double(x0, x1)) * u_max
        starts = np.ceil(alpha * (np.arange(1, n) + u)).astype(np.int64)
        diff = np.diff(np.concatenate([[1], starts, [length + 1]]))
    else:
        # ReserveSamples32(n), then TF's RandomShuffle of the window lengths.
        order = shuffled_order(stream, n, n)
        diff = np.where(order < length % n, k + 1, k)
    return np.concatenate([[0], np.cumsum(diff)]).astype(np.int64)


class _Windows:
    """The windows of one axis: padded index array [n, w], 0/1 matrix [n, length], counts."""

    def __init__(self, cum: np.ndarray, n: int, length: int, overlapping: bool):
        starts = cum[:n]
        ends = np.minimum(cum[1:n + 1] - (0 if overlapping else 1), length - 1)
        offsets = starts[:, None] + np.arange(max(int((ends - starts).max(initial=0)) + 1, 1))
        self.index = np.clip(np.minimum(offsets, ends[:, None]), 0, max(length - 1, 0))
        positions = np.arange(length)
        self.matrix = ((positions >= starts[:, None]) & (positions <= ends[:, None]))
        self.count = self.matrix.sum(axis=1)


def _divide(total: np.ndarray, count: np.ndarray) -> np.ndarray:
    """total / count in total's dtype; integers truncate toward zero, as C++ does."""
    if total.dtype.kind in "iu":
        return (np.sign(total) * (np.abs(total) // count)).astype(total.dtype)
    return (total / count).astype(total.dtype)


def _window_sum(x: np.ndarray, rows: _Windows, cols: _Windows) -> np.ndarray:
    """Sum of each window of x [batch, height, width, channels]."""
    m_r, m_c = rows.matrix.astype(x.dtype), cols.matrix.astype(x.dtype)
    return np.einsum("ih,bhwc,jw->bijc", m_r, x, m_c)


class _PoolKernel:
    """Attrs and seeds fixed once (TF's constructor checks); the sequences drawn per run."""

    def __init__(self, ctx):
        a = ctx.attrs
        self.ratio = list(a["pooling_ratio"])
        self.pseudo_random, self.overlapping = a["pseudo_random"], a["overlapping"]
        self.error = None
        try:
            check_pooling_ratio(self.ratio)
        except ValueError as e:
            self.error = invalid_argument(str(e))
        if self.error is None and (self.ratio[0] != 1 or self.ratio[3] != 1):
            self.error = errors.UnimplementedError(
                None, None, "Fractional max pooling is not yet supported on the batch nor "
                "channel dimension.")
        # TF's constructor: a deterministic op with seeds (0, 0) picks its random pair once;
        # a nondeterministic one must leave them 0, and each run then draws a new pair.
        seed, seed2 = a["seed"], a["seed2"]
        if a["deterministic"]:
            self.seeds = op_seeds(seed, seed2)
        else:
            if seed != 0 or seed2 != 0:
                self.error = invalid_argument("Both seed and seed2 should be 0 if deterministic is "
                                              "false.")
            self.seeds = (0, 0)

    def compute(self, ctx, x):
        if self.error is not None:
            raise self.error
        if x.ndim != 4:
            raise invalid_argument(f"tensor_in must be 4-dimensional, got shape {list(x.shape)}")
        for i, (size, r) in enumerate(zip(x.shape, self.ratio)):
            if size < r:
                raise invalid_argument("Pooling ratio is higher than input dimension size for "
                                       f"dimension {i}. Input dim size: {size} pooling ratio: "
                                       f"{r:g}")
        out = [math.floor(size / r) for size, r in zip(x.shape, self.ratio)]
        stream = PhiloxStream(*self.seeds)   # each run starts a fresh generator, as TF's
        seqs = [pooling_sequence(stream, x.shape[i], out[i], self.pseudo_random) for i in (1, 2)]
        rows = _Windows(seqs[0], out[1], x.shape[1], self.overlapping)
        cols = _Windows(seqs[1], out[2], x.shape[2], self.overlapping)
        return self.pool(x, rows, cols), seqs[0], seqs[1]


@kernel("FractionalMaxPool", expensive=True)
class FractionalMaxPoolKernel(_PoolKernel):
    def pool(self, x, rows, cols):
        """Max over the rows of each window, then over its columns."""
        by_rows = x[:, rows.index].max(axis=2)
        return by_rows[:, :, cols.index].max(axis=3)


@kernel("FractionalAvgPool", expensive=True)
class FractionalAvgPoolKernel(_PoolKernel):
    def pool(self, x, rows, cols):
        """Window sums over the window sizes."""
        count = (rows.count[:, None] * cols.count[None, :])[None, :, :, None]
        return _divide(_window_sum(x, rows, cols), count)


def _grad_windows(ctx, out_shape, in_shape, row_seq, col_seq):
    """The windows the forward op used, from its sequences; TF's length check."""
    for seq, n, what in ((row_seq, out_shape[1], "row"), (col_seq, out_shape[2], "col")):
        if np.size(seq) <= n:
            raise invalid_argument(f"Given out_backprop shape {list(out_shape)}, {what}_seq_tensor "
                                   f"must have at least {n + 1} elements, but got {np.size(seq)}")
    overlapping = ctx.attrs["overlapping"]
    return (_Windows(np.asarray(row_seq, np.int64), out_shape[1], in_shape[1], overlapping),
            _Windows(np.asarray(col_seq, np.int64), out_shape[2], in_shape[2], overlapping))


@kernel("FractionalMaxPoolGrad", expensive=True)
def _fractional_max_pool_grad(ctx, x, y, dy, row_seq, col_seq):
    """dy scattered to each window's first maximum (recomputed from the input)."""
    if x.ndim != 4 or y.ndim != 4 or dy.shape != y.shape:
        raise invalid_argument(f"orig_input and orig_output must be 4-dimensional and out_backprop "
                               f"shaped like orig_output, got {list(x.shape)}, {list(y.shape)}, "
                               f"{list(dy.shape)}")
    rows, cols = _grad_windows(ctx, y.shape, x.shape, row_seq, col_seq)
    n_r, w_r = rows.index.shape
    n_c, w_c = cols.index.shape
    patches = x[:, rows.index[:, :, None, None], cols.index[None, None], :]
    patches = patches.transpose(0, 1, 3, 5, 2, 4).reshape(*x.shape[:1], n_r, n_c, -1, w_r * w_c)
    first = patches.argmax(axis=-1)
    if not np.array_equal(np.take_along_axis(patches, first[..., None], -1)[..., 0], y):
        raise invalid_argument("tensor_out_dup is not the same as tensor_out")
    b, i, j, c = np.indices(first.shape, sparse=True)
    r = rows.index[i, first // w_c]
    col = cols.index[j, first % w_c]
    dx = np.zeros_like(x)
    np.add.at(dx, (b, r, col, c), dy)
    return dx


@kernel("FractionalAvgPoolGrad", expensive=True)
def _fractional_avg_pool_grad(ctx, orig_shape, dy, row_seq, col_seq):
    """dy / window size spread over each window (a transposed window sum), in float64 and
    then cast to dy's type (integers truncate), as TF accumulates it."""
    shape = [int(d) for d in np.ravel(orig_shape)]
    if np.ndim(orig_shape) != 1 or len(shape) != 4:
        raise invalid_argument("original input tensor shape must be1-dimensional and 4 elements")
    if dy.ndim != 4:
        raise invalid_argument(f"out_backprop must be 4-dimensional, got shape {list(dy.shape)}")
    rows, cols = _grad_windows(ctx, dy.shape, shape, row_seq, col_seq)
    count = (rows.count[:, None] * cols.count[None, :])[None, :, :, None]
    share = dy.astype(np.float64) / count
    m_r, m_c = rows.matrix.astype(np.float64), cols.matrix.astype(np.float64)
    return np.einsum("ih,bijc,jw->bhwc", m_r, share, m_c).astype(dy.dtype)
