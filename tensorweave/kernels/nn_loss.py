"""Kernels of Softmax, LogSoftmax, the fused softmax cross-entropies and L2Loss.

Everything subtracts the row maximum before exponentiating (log-sum-exp), so logits of 1000 give
finite results; a row whose maximum is infinite gives NaN, as in TensorFlow. The cross-entropy
kernels compute the loss and its gradient (softmax - labels) from one exponentiation, reusing
their buffers in place. With few classes (the usual classifier head) the dense cross-entropy
is one compiled pass per row instead of a dozen NumPy calls on tiny rows: on [128, 10] it took
19 us against 41 (the step's Python and NumPy overhead is what costs there, and each call
costs about three times as much right after a large product has flushed the caches).
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.jit import LOOP_DTYPES, compiled
from tensorweave.kernels.registry import register_pure

# Up to this many classes the compiled row loop wins; with more, NumPy's vectorized exp does
# (at 100 classes they were even, at 1000 NumPy took half the time).
ROW_LOOP_MAX_CLASSES = 32


def _shifted(x):
    """x minus its maximum along the last axis (a new array)."""
    return x - x.max(axis=-1, keepdims=True)


def _softmax(x):
    if x.shape[-1] == 0:
        return x.copy()
    e = _shifted(x)
    np.exp(e, out=e)
    e /= e.sum(axis=-1, keepdims=True)
    return e


def _log_softmax(x):
    if x.shape[-1] == 0:
        return x.copy()
    shifted = _shifted(x)
    shifted -= np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return shifted


def _check_matrix(features, what="logits") -> None:
    if features.ndim != 2:
        raise invalid_argument(f"{what} must be 2-dimensional, got {dims_text(features.shape)}")
    if features.shape[1] == 0 and features.shape[0] > 0:
        raise invalid_argument(f"Must have at least one class, but got {what} shape "
                               f"{dims_text(features.shape)}")


def _softmax_xent(features, labels):
    """loss = sum(labels * (log(sum(e)) - shifted)), backprop = softmax - labels, per row;
    labels may broadcast against features (TF 2.x)."""
    _check_matrix(features)
    if labels.ndim != 2:
        raise invalid_argument(f"labels must be 2-dimensional, got {dims_text(labels.shape)}")
    if features.shape != labels.shape:
        try:
            shape = np.broadcast_shapes(features.shape, labels.shape)
        except ValueError:
            raise invalid_argument("logits and labels must be broadcastable: logits_size="
                                   f"{dims_text(features.shape)} labels_size="
                                   f"{dims_text(labels.shape)}") from None
        features = np.broadcast_to(features, shape)
        labels = np.broadcast_to(labels, shape)
    if features.size == 0:
        return (np.zeros(features.shape[0], features.dtype),
                np.zeros(features.shape, features.dtype))
    if features.shape[1] <= ROW_LOOP_MAX_CLASSES and features.dtype in LOOP_DTYPES and \
            labels.dtype == features.dtype and features.flags.c_contiguous and \
            labels.flags.c_contiguous:
        loss = np.empty(features.shape[0], features.dtype)
        backprop = np.empty_like(features)
        compiled(_softmax_xent_rows)(features, labels, loss, backprop, features.dtype.type(0))
        return loss, backprop
    shifted = _shifted(features)
    e = np.exp(shifted)
    total = e.sum(axis=1, keepdims=True)
    log_total = np.log(total)
    # shifted becomes log_total - shifted = -log_softmax, then the loss terms
    np.subtract(log_total, shifted, out=shifted)
    shifted *= labels
    loss = shifted.sum(axis=1)
    e /= total
    e -= labels
    return loss, e


def _softmax_xent_rows(features, labels, loss, backprop, zero):
    """`_softmax_xent`'s arithmetic row by row, in the arrays' dtype (a NaN in a row makes its
    maximum NaN, as NumPy's max does); the sums add in order rather than pairwise."""
    rows, classes = features.shape
    for i in range(rows):
        top = features[i, 0]
        for j in range(1, classes):
            v = features[i, j]
            if v > top or v != v:
                top = v
        total = zero
        for j in range(classes):
            e = np.exp(features[i, j] - top)
            backprop[i, j] = e
            total += e
        log_total = np.log(total)
        terms = zero
        for j in range(classes):
            terms += labels[i, j] * (log_total - (features[i, j] - top))
        loss[i] = terms
        for j in range(classes):
            backprop[i, j] = backprop[i, j] / total - labels[i, j]


def _sparse_softmax_xent(features, labels):
    """loss = log(sum(e)) - shifted[label], backprop = softmax - onehot(label), per row."""
    _check_matrix(features)
    if labels.ndim != 1:
        raise invalid_argument(f"labels must be 1-D, but got shape {dims_text(labels.shape)}")
    batch, classes = features.shape
    if labels.shape[0] != batch:
        raise invalid_argument("logits and labels must have the same first dimension, got logits "
                               f"shape {dims_text(features.shape)} and labels shape "
                               f"{dims_text(labels.shape)}")
    if batch == 0:
        return np.zeros(0, features.dtype), np.zeros(features.shape, features.dtype)
    bad = (labels < 0) | (labels >= classes)
    if bad.any():
        value = labels[np.argmax(bad)]
        raise invalid_argument(f"Received a label value of {value} which is outside the valid "
                               f"range of [0, {classes}).  Label values: "
                               f"{' '.join(str(v) for v in labels)}")
    rows = np.arange(batch)
    shifted = _shifted(features)
    picked = shifted[rows, labels]
    e = np.exp(shifted, out=shifted)
    total = e.sum(axis=1)
    loss = np.log(total)
    loss -= picked
    e /= total[:, None]
    e[rows, labels] -= 1
    return loss, e


def _l2_loss(t):
    """sum(t ** 2) / 2 as a scalar of t's dtype (a dot product on BLAS)."""
    flat = t.reshape(-1)
    return np.dot(flat, flat) * t.dtype.type(0.5)


for _op_type, _fn in (
        ("Softmax", _softmax), ("LogSoftmax", _log_softmax),
        ("SoftmaxCrossEntropyWithLogits", _softmax_xent),
        ("SparseSoftmaxCrossEntropyWithLogits", _sparse_softmax_xent), ("L2Loss", _l2_loss)):
    register_pure(_op_type, _fn)
