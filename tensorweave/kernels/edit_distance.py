"""Kernel of EditDistance: Levenshtein distances between the sequences of two SparseTensors.

A sequence is the values sharing all index coordinates but the last (in index order). Every
sequence pair is scored at once: values become integer codes, sequences are padded into
[groups, length] arrays and the dynamic program advances one truth position at a time over all
groups, each row's insert-chain resolved with a running minimum. Semantics follow TensorFlow's
EditDistanceOp, including its empty-sequence rules and error messages.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel


def _validate(h_idx, h_val, h_shape, t_idx, t_val, t_shape) -> None:
    """TensorFlow's ValidateShapes, check for check."""
    for name, a, rank in (("hypothesis_indices", h_idx, 2), ("truth_indices", t_idx, 2),
                          ("hypothesis_values", h_val, 1), ("truth_values", t_val, 1),
                          ("hypothesis_shape", h_shape, 1), ("truth_shape", t_shape, 1)):
        if a.ndim != rank:
            kind = "matrix" if rank == 2 else "vector"
            raise invalid_argument(f"{name} should be a {kind}, but got shape: "
                                   f"{dims_text(a.shape)}")
    for name, idx, val, shape in (("hypothesis", h_idx, h_val, h_shape),
                                  ("truth", t_idx, t_val, t_shape)):
        if val.size != idx.shape[0]:
            raise invalid_argument(f"Expected {name}_values.NumElements == #rows({name}_indices), "
                                   f"their shapes are: {dims_text(val.shape)} and "
                                   f"{dims_text(idx.shape)}")
        if shape.size != idx.shape[1]:
            raise invalid_argument(f"Expected {name}_shape.NumElements == #cols({name}_indices), "
                                   f"their shapes are: {dims_text(shape.shape)} and "
                                   f"{dims_text(idx.shape)}")
    if t_shape.size < 2:
        raise invalid_argument("Input SparseTensors must have rank at least 2, but truth_shape "
                               f"rank is: {t_shape.size}")
    if h_shape.size != t_shape.size:
        raise invalid_argument("Expected hypothesis_shape.NumElements == "
                               "truth_shape.NumElements(), their shapes are: "
                               f"{dims_text(h_shape.shape)} and {dims_text(t_shape.shape)}")


def _groups(indices, codes, out_shape, total: int):
    """Each sequence's flat output location, and its codes padded to [groups, longest]."""
    strides = np.cumprod((1,) + out_shape[:0:-1])[::-1]     # row-major, as TensorFlow
    loc = indices[:, :-1] @ strides
    outside = loc >= total
    if outside.any():
        raise errors.InternalError(
            None, None, f"Got an inner product {loc[np.argmax(outside)]} which would require "
            f"writing to outside of the buffer for the output tensor (max elements {total})")
    keys, lengths = np.unique(loc, return_counts=True)
    order = np.argsort(loc, kind="stable")
    position = np.arange(len(loc)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    padded = np.full((len(keys), lengths.max(initial=0)), -1, np.int64)
    padded[np.repeat(np.arange(len(keys)), lengths), position] = codes[order]
    return keys, padded, lengths


def _levenshtein(hyp, hyp_len, truth, truth_len) -> np.ndarray:
    """Distances of each row pair (valid entries only) by the row-by-row dynamic program."""
    cols = np.arange(hyp.shape[1] + 1)
    row = np.broadcast_to(cols, (len(hyp), len(cols))).astype(np.int64)
    rows = np.arange(len(hyp))
    out = row[rows, hyp_len].copy()
    for i in range(1, truth.shape[1] + 1):
        step = np.empty_like(row)
        step[:, 0] = i
        cost = hyp != truth[:, i - 1:i]
        step[:, 1:] = np.minimum(row[:, 1:] + 1, row[:, :-1] + cost)
        row = np.minimum.accumulate(step - cols, axis=1) + cols   # chains of insertions
        done = truth_len == i
        out[done] = row[rows[done], hyp_len[done]]
    return out


@kernel("EditDistance")
class EditDistanceKernel:
    """Distance per sequence location (normalized by the truth length if asked)."""

    def __init__(self, ctx):
        self.normalize = ctx.attrs["normalize"]

    def compute(self, ctx, h_idx, h_val, h_shape, t_idx, t_val, t_shape):
        _validate(h_idx, h_val, h_shape, t_idx, t_val, t_shape)
        out_shape = tuple(int(d) for d in np.maximum(h_shape, t_shape)[:-1])
        total = int(np.prod(out_shape))
        if total == 0:
            raise invalid_argument(f"Got output shape {dims_text(out_shape)} which has "
                                   "0 elements")
        _, codes = np.unique(np.concatenate([h_val, t_val]), return_inverse=True)
        h_keys, hyp, h_len = _groups(h_idx, codes[:len(h_val)], out_shape, total)
        t_keys, truth, t_len = _groups(t_idx, codes[len(h_val):], out_shape, total)
        out = np.zeros(total, np.float32)
        both, h_at, t_at = np.intersect1d(h_keys, t_keys, return_indices=True)
        dist = _levenshtein(hyp[h_at], h_len[h_at], truth[t_at], t_len[t_at])
        out[both] = dist / t_len[t_at] if self.normalize else dist
        only_t = np.setdiff1d(np.arange(len(t_keys)), t_at)
        out[t_keys[only_t]] = 1.0 if self.normalize else t_len[only_t]
        only_h = np.setdiff1d(np.arange(len(h_keys)), h_at)
        # An empty truth: normalizing divides a positive distance by zero (inf), as in TF.
        out[h_keys[only_h]] = np.inf if self.normalize else h_len[only_h]
        return out.reshape(out_shape)
