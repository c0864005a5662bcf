"""Kernels of CTCLoss, CTCGreedyDecoder and CTCBeamSearchDecoder.

CTCLoss runs the forward-backward recursions of Graves et al. (2006) in log space, vectorized
over the batch and the extended label positions (labels interleaved with blanks); only time is
a Python loop. Everything is computed in float64 and cast back, so float32 results agree with
TensorFlow's to rounding. Label validation follows TensorFlow's CTCLossCalculator, message for
message: a label >= num_classes - 1 ends a sequence, a non-blank after it is an error.
The beam search follows TensorFlow's CTCBeamSearchDecoder step for step (the same pruning,
the same order of expansion): each prefix's children are scored with one NumPy operation and
then admitted in label order, since an admission can push a sibling out of the beam.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.kernels.registry import kernel

_FLOAT = ("float32", "float64")


def _join(values) -> str:
    return ",".join(str(int(v)) for v in values)


def log_softmax(x: np.ndarray) -> np.ndarray:
    """log softmax over the last axis, in float64."""
    x = x.astype(np.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def check_sequence_length(seq_len, max_time: int, batch: int, error=invalid_argument) -> None:
    """TensorFlow's checks of `sequence_length` against the inputs (the decoders report
    them as FailedPreconditionError, the loss as InvalidArgumentError)."""
    if seq_len.ndim != 1:
        raise invalid_argument("sequence_length is not a vector")
    if len(seq_len) != batch:
        raise error(f"len(sequence_length) != batch_size.  len(sequence_length):  "
                    f"{len(seq_len)} batch_size: {batch}")
    over = np.nonzero(seq_len > max_time)[0]
    if len(over):
        raise error(f"sequence_length({over[0]}) <= {max_time}")


def _precondition(message: str) -> errors.FailedPreconditionError:
    return errors.FailedPreconditionError(None, None, message)


def _decoder_inputs(inputs, seq_len) -> None:
    """The decoders' checks of their inputs (TensorFlow's CTCDecodeHelper)."""
    if inputs.ndim != 3:
        raise invalid_argument("inputs is not a 3-Tensor")
    if inputs.size == 0:
        raise invalid_argument("inputs must not be empty")
    check_sequence_length(seq_len, inputs.shape[0], inputs.shape[1], _precondition)


# --- CTCLoss -----------------------------------------------------------------------------------
def _check_label_indices(indices, batch: int) -> None:
    """TensorFlow's SparseTensor::IndicesValid over the labels' [batch, max_len] shape: the
    first bad row is out of bounds, repeated or out of order (checked in that order)."""
    if not len(indices):
        return
    shape = np.array([batch, indices[:, 1].max() + 1])
    outside = ((indices < 0) | (indices >= shape)).any(axis=1)
    step = np.diff(indices, axis=0)
    lead = step[np.arange(len(step)), np.argmax(step != 0, axis=1)]   # first nonzero change
    repeated = np.concatenate([[False], lead == 0])
    backwards = np.concatenate([[False], lead < 0])
    bad = outside | repeated | backwards
    if not bad.any():
        return
    i = int(np.argmax(bad))
    where = f"indices[{i}] = [{','.join(str(v) for v in indices[i])}]"
    if outside[i]:
        problem = f"is out of bounds: need 0 <= index < [{batch},{shape[1]}]"
    elif repeated[i]:
        problem = "is repeated"
    else:
        problem = ("is out of order. Many sparse ops require sorted indices.\n    Use "
                   "`tf.sparse.reorder` to create a correctly ordered copy.\n\n")
    raise invalid_argument(f"label SparseTensor is not valid: {where} {problem}")


def _label_sequences(indices, values, batch: int) -> list[np.ndarray]:
    """The labels of each batch entry in index order (as TensorFlow's SparseTensor group)."""
    _check_label_indices(indices, batch)
    starts = np.searchsorted(indices[:, 0], np.arange(batch + 1))
    return [values[starts[b]:starts[b + 1]] for b in range(batch)]


def _target(label, b: int, num_classes: int, collapse: bool) -> np.ndarray:
    """One batch entry's target label sequence, validated as TensorFlow's PopulateLPrimes."""
    if not len(label):
        raise invalid_argument(f"Labels length is zero in batch {b}")
    if collapse:
        label = label[np.concatenate([[True], label[1:] != label[:-1]])]
    null = label >= num_classes - 1
    end = int(np.argmax(null)) if null.any() else len(label)
    if null[end:].size and not null[end:].all():
        raise invalid_argument("Saw a non-null label (index >= num_classes - 1) following a null "
                               f"label, batch: {b} num_classes: {num_classes} labels: "
                               f"{_join(label)} labels seen so far: {_join(label[:end])}")
    target = label[:end]
    if (target < 0).any():
        raise invalid_argument(f"All labels must be nonnegative integers, batch: {b} labels: "
                               f"{_join(target)}")
    return target


def _extended(targets, blank: int) -> tuple[np.ndarray, np.ndarray]:
    """[B, 2*U+1] labels interleaved with blanks (padded with blanks) and their lengths."""
    longest = max((len(t) for t in targets), default=0)
    ext = np.full((len(targets), 2 * longest + 1), blank, np.int64)
    for b, t in enumerate(targets):
        ext[b, 1:2 * len(t):2] = t
    return ext, 2 * np.array([len(t) for t in targets], np.int64) + 1


def _shift(a: np.ndarray, k: int, forward: bool) -> np.ndarray:
    """`a` moved k label positions later (forward) or earlier, filled with -inf."""
    out = np.full_like(a, -np.inf)
    if forward:
        out[:, k:] = a[:, :a.shape[1] - k]
    else:
        out[:, :a.shape[1] - k] = a[:, k:]
    return out


def _transitions(ext, blank, merge_repeated):
    """Which extended positions may stay (self loop) and skip the blank before them."""
    stay = (ext == blank) | merge_repeated
    skip = np.zeros(ext.shape, bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & ~(merge_repeated & (ext[:, 2:] == ext[:, :-2]))
    return stay, skip


def _step(prev, stay, skip, forward: bool):
    """logsumexp of the predecessors (forward) or successors of every extended position."""
    if forward:
        one, two, own_skip = _shift(prev, 1, True), _shift(prev, 2, True), skip
    else:
        one, two = _shift(prev, 1, False), _shift(prev, 2, False)
        own_skip = np.zeros_like(skip)
        own_skip[:, :-2] = skip[:, 2:]
    total = np.logaddexp(np.where(stay, prev, -np.inf), one)
    return np.logaddexp(total, np.where(own_skip, two, -np.inf))


def _forward_backward(logp, ext, ext_len, seq_len, blank, merge_repeated):
    """log alpha + log beta per (t, b, position) and log p(labels | inputs) per batch entry.

    `logp` is [T, B, C] log softmax; alpha includes the frame's own probability, beta does not
    (TensorFlow's convention), so alpha + beta - log p is a position's posterior occupancy.
    """
    steps, batch, _ = logp.shape
    rows = np.arange(batch)[:, None]
    obs = logp[:, rows, ext]                                  # [T, B, S]
    positions = np.arange(ext.shape[1])
    stay, skip = _transitions(ext, blank, merge_repeated)
    alpha = np.empty_like(obs)
    alpha[0] = np.where(positions < 2, obs[0], -np.inf)
    for t in range(1, steps):
        alpha[t] = _step(alpha[t - 1], stay, skip, True) + obs[t]
    last = (positions == ext_len[:, None] - 1) | (positions == ext_len[:, None] - 2)
    end = np.where(last, 0.0, -np.inf)
    beta = np.empty_like(obs)
    beta[-1] = end
    for t in range(steps - 2, -1, -1):
        inside = (t < seq_len - 1)[:, None]
        beta[t] = np.where(inside, _step(beta[t + 1] + obs[t + 1], stay, skip, False), end)
    final = alpha[np.maximum(seq_len - 1, 0), np.arange(batch)]
    log_p = np.logaddexp.reduce(np.where(last, final, -np.inf), axis=1)
    return alpha + beta, log_p


@kernel("CTCLoss", dtypes=_FLOAT)
class CTCLossKernel:
    """loss[b] = -log p(labels_b | inputs_b); gradient = softmax - posterior class occupancy."""

    def __init__(self, ctx):
        self.collapse = ctx.attrs["preprocess_collapse_repeated"]
        self.merge = ctx.attrs["ctc_merge_repeated"]
        self.ignore_longer = ctx.attrs["ignore_longer_outputs_than_inputs"]

    def compute(self, ctx, inputs, indices, values, seq_len):
        self._check(inputs, indices, values)
        steps, batch, classes = inputs.shape
        check_sequence_length(seq_len, steps, batch)
        labels = _label_sequences(indices, values, batch)
        negative = np.nonzero(seq_len < 0)[0]
        if len(negative):
            raise invalid_argument(f"seq_len({negative[0]}) < 0")
        targets = []
        for b, label in enumerate(labels):
            target = _target(label, b, classes, self.collapse)
            if not self.ignore_longer and len(label) > seq_len[b]:
                raise invalid_argument("Not enough time for target transition sequence (required: "
                                       f"{len(label)}, available: {seq_len[b]}){b}You can turn "
                                       "this error into a warning by using the flag "
                                       "ignore_longer_outputs_than_inputs")
            targets.append(target)
        # Entries CTC cannot score get zero loss and gradient (TensorFlow skips them).
        active = (seq_len > 0) & ~(self.ignore_longer &
                                   (np.array([len(lb) for lb in labels]) > seq_len))
        logp = log_softmax(inputs)
        ext, ext_len = _extended(targets, classes - 1)
        joint, log_p = _forward_backward(logp, ext, ext_len, seq_len, classes - 1,
                                         self.merge)
        valid = np.isfinite(log_p)
        occupancy = np.exp(joint - np.where(valid, log_p, 0.0)[None, :, None])
        onehot = ext[:, :, None] == np.arange(classes)        # [B, S, C]
        occupancy = np.einsum("tbs,bsc->tbc", occupancy, onehot)
        # No valid path: TensorFlow's gradient is the softmax itself.
        grad = np.exp(logp) - np.where(valid[None, :, None], occupancy, 0.0)
        grad *= ((np.arange(steps)[:, None] < seq_len) & active)[:, :, None]
        loss = np.where(active, -log_p, 0.0)
        return loss.astype(inputs.dtype), grad.astype(inputs.dtype)

    @staticmethod
    def _check(inputs, indices, values):
        if inputs.ndim != 3:
            raise invalid_argument("inputs is not a 3-Tensor")
        if indices.ndim != 2:
            raise invalid_argument("labels_indices is not a matrix")
        if indices.shape[1] <= 1:
            raise invalid_argument("labels_indices second dimension must be >= 1. Received "
                                   f"{indices.shape[1]}")
        if values.ndim != 1:
            raise invalid_argument("labels_values is not a vector")
        if indices.shape[1] != 2:   # the labels are a [batch, max_len] SparseTensor
            raise invalid_argument("Order length must be SparseTensor rank.")
        if inputs.shape[0] == 0:
            raise invalid_argument("Max time or first dimension of input cannot be 0.")
        if len(indices) != len(values):
            raise invalid_argument("labels_indices and labels_values must contain the same number "
                                   f"of rows, but saw shapes: [{len(indices)},{indices.shape[1]}] "
                                   f"vs. [{len(values)}]")
        if inputs.shape[1] == 0:
            raise invalid_argument("batch_size must not be 0")


# --- CTCGreedyDecoder --------------------------------------------------------------------------
@kernel("CTCGreedyDecoder", dtypes=_FLOAT)
class CTCGreedyDecoderKernel:
    """Best path: the arg-max class per frame, blanks dropped and (optionally) runs merged."""

    def __init__(self, ctx):
        self.merge = ctx.attrs["merge_repeated"]
        self.blank = ctx.attrs["blank_index"]

    def compute(self, ctx, inputs, seq_len):
        _decoder_inputs(inputs, seq_len)
        steps, batch, classes = inputs.shape
        blank = self.blank + classes if self.blank < 0 else self.blank
        if not 0 <= blank < classes:
            raise invalid_argument(f"blank_index expected to be between {-classes} and "
                                   f"{classes - 1} but was {self.blank}")
        best = inputs.argmax(axis=2).T                         # [B, T]
        in_seq = np.arange(steps) < seq_len[:, None]
        log_prob = 0.0 - np.where(in_seq, inputs.max(axis=2).T, 0).sum(axis=1, keepdims=True)
        keep = in_seq & (best != blank)
        if self.merge:
            keep[:, 1:] &= best[:, 1:] != best[:, :-1]
        rows, cols = np.nonzero(keep)
        counts = keep.sum(axis=1)
        position = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
        indices = np.stack([rows, position], axis=1).astype(np.int64)
        shape = np.array([batch, counts.max(initial=0)], np.int64)
        return (indices, best[rows, cols].astype(np.int64), shape,
                log_prob.astype(inputs.dtype))


def _decoded(paths: list[list[list[int]]], batch: int):
    """Per path rank: ([N, 2] indices, [N] values, [2] shape) of the batch's label lists."""
    out = []
    for rank in range(len(paths[0])):
        seqs = [paths[b][rank] for b in range(batch)]
        lengths = np.array([len(q) for q in seqs], np.int64)
        rows = np.repeat(np.arange(batch, dtype=np.int64), lengths)
        cols = np.arange(len(rows)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        values = np.array([v for q in seqs for v in q], np.int64)
        out.append((np.stack([rows, cols], axis=1).astype(np.int64), values,
                    np.array([batch, lengths.max(initial=0)], np.int64)))
    return out


# --- CTCBeamSearchDecoder ----------------------------------------------------------------------
_NEG_INF = -np.inf


class _Beam:
    """A label prefix: its last label, parent prefix, and (blank, label, total) log probs at
    the previous (`old`) and current (`new`) frame. Outside the beam `new` is all -inf."""

    __slots__ = ("label", "parent", "children", "old", "new")

    def __init__(self, label: int, parent):
        self.label, self.parent, self.children = label, parent, {}
        self.old = self.new = (_NEG_INF, _NEG_INF, _NEG_INF)

    def labels(self, merge_repeated: bool) -> list[int]:
        out, node, prev = [], self, -1
        while node.parent is not None:
            if not merge_repeated or node.label != prev:
                out.append(node.label)
            prev, node = node.label, node.parent
        return out[::-1]


def _admissible(total: float, leaves: list, width: int) -> bool:
    """Whether a prefix of log probability `total` may enter the beam (TF's is_candidate)."""
    return total > _NEG_INF and (len(leaves) < width or
                                 total > min(e.new[2] for e in leaves))


def _beam_step(beam: list, logp: np.ndarray, width: int) -> list:
    """One frame of TensorFlow's prefix beam search; returns the new beam."""
    blank = len(logp) - 1
    branches = sorted(beam, key=lambda e: -e.new[2])
    for b in branches:
        b.old = b.new
    for b in branches:               # extend each prefix in place by this frame
        label = b.new[1]
        if b.parent is not None:
            parent = b.parent
            if parent.new[2] != _NEG_INF:
                prev = parent.old[0] if b.label == parent.label else parent.old[2]
                label = np.logaddexp(label, prev)
            label += logp[b.label]
        blank_p = b.old[2] + logp[blank]
        b.new = (blank_p, label, np.logaddexp(blank_p, label))
    leaves = list(branches)
    labels = np.arange(blank)
    for b in branches:               # then grow children, best prefixes first
        if not _admissible(b.old[2], leaves, width):
            continue
        totals = logp[:blank] + np.where(labels == b.label, b.old[0], b.old[2])
        # Children are admitted one at a time, in label order, as TensorFlow does: an
        # admission may push out a sibling, which is then rescored like a new child.
        for c in sorted(set(np.nonzero(totals > _NEG_INF)[0].tolist()) | b.children.keys()):
            child = b.children.get(c)
            if child is not None and child.new[2] != _NEG_INF:
                continue
            if not _admissible(totals[c], leaves, width):
                if child is not None:   # TF forgets a rejected child's previous frame too,
                    child.old = child.new   # so it cannot grow later in this step
                continue
            if len(leaves) == width:
                bottom = min(leaves, key=lambda e: e.new[2])
                bottom.new = (_NEG_INF,) * 3              # pruned: no longer active
                leaves.remove(bottom)
            child = b.children.setdefault(c, _Beam(c, b))  # a pruned child keeps its subtree
            child.new = (_NEG_INF, totals[c], totals[c])
            leaves.append(child)
    return leaves


@kernel("CTCBeamSearchDecoder", dtypes=_FLOAT)
class CTCBeamSearchDecoderKernel:
    """Prefix beam search per batch entry; the top paths and their log probabilities."""

    def __init__(self, ctx):
        self.width = ctx.attrs["beam_width"]
        self.paths = ctx.attrs["top_paths"]
        self.merge = ctx.attrs["merge_repeated"]

    def compute(self, ctx, inputs, seq_len):
        _decoder_inputs(inputs, seq_len)
        batch = inputs.shape[1]
        if self.paths > self.width:
            raise invalid_argument("requested more paths than the beam width.")
        logp = log_softmax(inputs)
        paths, log_probs = [], np.zeros((batch, self.paths), inputs.dtype)
        for b in range(batch):
            root = _Beam(-1, None)
            root.new = (0.0, _NEG_INF, 0.0)
            beam = [root]
            for t in range(int(seq_len[b])):
                beam = _beam_step(beam, logp[t, b], self.width)
            if self.paths > len(beam):
                raise invalid_argument("Less leaves in the beam search than requested.")
            best = sorted(beam, key=lambda e: -e.new[2])[:self.paths]
            paths.append([e.labels(self.merge) for e in best])
            log_probs[b] = [e.new[2] for e in best]
        decoded = _decoded(paths, batch)
        return (*[d[0] for d in decoded], *[d[1] for d in decoded], *[d[2] for d in decoded],
                log_probs)
