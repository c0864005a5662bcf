"""Sums over sorted segments in the order TensorFlow's CPU kernels add, so results round alike.

TF's SegmentSum/SegmentMean reduce each run of equal ids with an Eigen reduction over the
run's rows (measured against TF 2.21, every float dtype):
- a run of one row is copied (a -0.0 stays -0.0);
- a longer run adds its rows one after another, starting from +0.0;
- SegmentSum only: in a run of 16 or more rows, the columns that fill whole SIMD packets
  (8 float32 or float16 lanes, 4 float64 ones) are summed in four interleaved accumulators
  (row j into accumulator j % 4, over the first 4 * (rows // 4) rows), which are then added
  in order, and the leftover rows after them. The columns past the last packet stay
  sequential.
NumPy's reduceat instead adds long contiguous runs pairwise, which differs by an ulp or so.
"""
from __future__ import annotations

import numpy as np

_PACKET_LANES = {np.dtype(np.float32): 8, np.dtype(np.float16): 8, np.dtype(np.float64): 4}
_INTERLEAVED_FROM_ROWS = 16
_ACCUMULATORS = 4


def segment_sums(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                 interleaved: bool) -> np.ndarray:
    """The sum of rows starts[i] .. starts[i] + lengths[i] - 1 of `data` for each i, in TF's
    order; `interleaved` for SegmentSum's packet rule (SegmentMean adds sequentially)."""
    shape = data.shape
    data = data.reshape(shape[0], -1)   # TF reduces [rows, inner] with inner flattened
    short = lengths < _INTERLEAVED_FROM_ROWS
    out = _short_run_sums(data, starts, np.where(short, lengths, 0))
    lanes = _PACKET_LANES.get(data.dtype, 0) if interleaved else 0
    packed = data.shape[1] // lanes * lanes if lanes else 0
    for i in np.flatnonzero(~short):
        rows = data[starts[i]:starts[i] + lengths[i]]
        out[i] = _sequential_sum(rows)
        if packed:
            out[i, :packed] = _interleaved_sum(rows[:, :packed])
    out[lengths > 1] += 0   # TF's sum starts from +0.0: a -0.0 total of several rows is +0.0
    single = lengths == 1
    out[single] = data[starts[single]]   # copied, so a -0.0 stays
    return out.reshape((len(starts),) + shape[1:])


def _short_run_sums(data, starts, lengths):
    """Sequential sums of the runs with a nonzero length here (the others give zeros): the
    runs' rows laid out as [position in run, run, inner] over zeros, summed over axis 0
    (NumPy adds whole rows along an outer axis one after another), or, when that layout would
    be mostly padding, one vectorized add per position."""
    longest = int(lengths.max(initial=0))
    if longest * len(starts) <= 4 * len(data):
        runs = np.repeat(np.arange(len(starts)), lengths)
        positions = np.arange(len(runs)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        laid_out = np.zeros((longest, len(starts), data.shape[1]), data.dtype)
        laid_out[positions, runs] = data[starts[runs] + positions]
        return np.add.reduce(laid_out, axis=0)
    out = np.zeros((len(starts), data.shape[1]), data.dtype)
    for k in range(longest):
        runs = np.flatnonzero(lengths > k)
        out[runs] += data[starts[runs] + k]
    return out


def _sequential_sum(rows: np.ndarray) -> np.ndarray:
    """rows[0] + rows[1] + ... in order (NumPy's 1-D reduce would add pairwise)."""
    if rows.shape[1] == 1:
        return np.add.accumulate(rows[:, 0])[-1:]
    return np.add.reduce(rows, axis=0)


def _interleaved_sum(rows: np.ndarray) -> np.ndarray:
    """Four interleaved sequential accumulators added in order, then the leftover rows."""
    whole = len(rows) // _ACCUMULATORS * _ACCUMULATORS
    total = _sequential_sum(rows[0:whole:_ACCUMULATORS])
    for k in range(1, _ACCUMULATORS):
        total = total + _sequential_sum(rows[k:whole:_ACCUMULATORS])
    for row in rows[whole:]:
        total = total + row
    return total
