"""CTC ops: the loss and its gradient against brute-force enumeration of every alignment, the
decoders against brute-force best paths and TensorFlow 2.21's recorded outputs, the label
helpers against NumPy, and TensorFlow's construction-time and run-time errors."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import ctc_ops
from tensorweave.testing.op_case import OpCase, case_tests

FLOAT = (tf.float32, tf.float64)
I32 = tf.int32


def _randn(*shape, scale=1.0):
    return lambda rng, dt: (rng.randn(*shape) * scale).astype(dt)


def _value(v):
    return lambda rng, dt: np.asarray(v).astype(dt)


def _log_softmax(x):
    x = x.astype(np.float64)
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def _collapse(path, blank, merge=True):
    """The labeling a frame path stands for: runs merged (if `merge`), blanks removed."""
    out, prev = [], None
    for c in path:
        if c != blank and not (merge and c == prev):
            out.append(c)
        prev = c
    return tuple(out)


def _alignments(logp, length, blank, merge=True):
    """{labeling: [(path, log prob)]} over every path of `length` frames (brute force)."""
    table = {}
    for path in itertools.product(range(logp.shape[-1]), repeat=length):
        lp = sum(logp[t, c] for t, c in enumerate(path))
        table.setdefault(_collapse(path, blank, merge), []).append((path, lp))
    return table


def _ctc_ref(labels, merge=True):
    """Loss and gradient of CTCLoss by enumerating every alignment of every batch entry."""
    def ref(x, seq_len):
        logp = _log_softmax(x)
        steps, batch, classes = x.shape
        loss, grad = np.zeros(batch), np.zeros(x.shape)
        for b in range(batch):
            n = int(seq_len[b])
            paths = _alignments(logp[:n, b], n, classes - 1, merge).get(tuple(labels[b]), [])
            log_p = np.logaddexp.reduce([lp for _, lp in paths])
            loss[b] = -log_p
            grad[:n, b] = np.exp(logp[:n, b])
            for path, lp in paths:
                grad[np.arange(n), b, list(path)] -= np.exp(lp - log_p)
        return [loss.astype(x.dtype), grad.astype(x.dtype)]
    return ref


def _sparse(labels):
    idx = [[b, t] for b, row in enumerate(labels) for t in range(len(row))]
    vals = [v for row in labels for v in row]
    return tf.SparseTensor(np.array(idx, np.int64).reshape(-1, 2), np.array(vals, np.int32),
                           [len(labels), max(len(r) for r in labels)])


def _ctc_op(labels, **attrs):
    def build(x, seq_len):
        sp = _sparse(labels)
        return list(apply_op(ctc_ops.CTCLoss, [x, sp.indices, sp.values, seq_len], attrs))
    return build


_LABELS = [[0, 1], [1], [1, 1]]
_SEQ = _value([4, 3, 4])


def _loss_only(ref):
    return lambda *a: ref(*a)[0]


def _greedy_ref(merge, blank=-1):
    def ref(x, seq_len):
        steps, batch, classes = x.shape
        b_idx = blank % classes
        seqs, log_prob = [], np.zeros((batch, 1), x.dtype)
        for b in range(batch):
            n = int(seq_len[b])
            best = x[:n, b].argmax(axis=1)
            log_prob[b] = -x[:n, b].max(axis=1).sum() if n else 0
            seqs.append(_collapse(best, b_idx, merge))
        return [*_to_sparse(seqs), log_prob]
    return ref


def _to_sparse(seqs):
    idx = [[b, t] for b, s in enumerate(seqs) for t in range(len(s))]
    return (np.array(idx, np.int64).reshape(-1, 2), np.array([v for s in seqs for v in s],
                                                             np.int64),
            np.array([len(seqs), max((len(s) for s in seqs), default=0)], np.int64))


def _beam_ref(paths, merge):
    """The `paths` most probable labelings (exact: the beam is wide enough to keep all)."""
    def ref(x, seq_len):
        logp = _log_softmax(x)
        batch, classes = x.shape[1], x.shape[2]
        best, log_probs = [], np.zeros((batch, paths), x.dtype)
        for b in range(batch):
            n = int(seq_len[b])
            table = _alignments(logp[:n, b], n, classes - 1)
            scored = sorted(((np.logaddexp.reduce([lp for _, lp in v]), k)
                             for k, v in table.items()), reverse=True)[:paths]
            log_probs[b] = [s for s, _ in scored]
            best.append([_collapse(k, -1, merge) for _, k in scored])
        decoded = [_to_sparse([best[b][j] for b in range(batch)]) for j in range(paths)]
        return [d[k] for k in range(3) for d in decoded] + [log_probs]
    return ref


def _beam_build(decoder, width, paths, **kw):
    def build(x, seq_len):
        decoded, log_probs = decoder(x, seq_len, beam_width=width, top_paths=paths, **kw)
        return [sp.indices for sp in decoded] + [sp.values for sp in decoded] + \
            [sp.dense_shape for sp in decoded] + [log_probs]
    return build


def _greedy_build(**kw):
    def build(x, seq_len):
        (sp,), log_prob = tf.nn.ctc_greedy_decoder(x, seq_len, **kw)
        return [sp.indices, sp.values, sp.dense_shape, log_prob]
    return build


def _collapse_ref(labels, seq_len):
    rows = [_collapse(r[:n], None) for r, n in zip(labels, seq_len)]
    width = max(len(r) for r in rows)
    out = np.zeros((len(rows), width), labels.dtype)
    for b, r in enumerate(rows):
        out[b, :len(r)] = r
    return [out, np.array([len(r) for r in rows], seq_len.dtype)]


def _unique_ref(labels):
    ys, idxs = [], []
    for row in labels:
        uniq = list(dict.fromkeys(row.tolist()))
        ys.append(uniq + [0] * (len(row) - len(uniq)))
        idxs.append([uniq.index(v) for v in row])
    return [np.array(ys, np.int64), np.array(idxs, np.int32)]


def _dense_v2(x, seq_len):
    labels = tf.constant([[1, 2, 0], [2, 0, 0], [2, 2, 0]])
    return tf.nn.ctc_loss_v2(labels, x, [2, 1, 2], seq_len, blank_index=0)


def _dense_v2_ref(x, seq_len):
    # Blank 0 moved last: labels 1, 2 become 0, 1.
    moved = np.concatenate([x[:, :, 1:], x[:, :, :1]], axis=2)
    return _ctc_ref(_LABELS)(moved, seq_len)[0]


X = _randn(4, 3, 3, scale=2)
CASES = [
    # --- CTCLoss (loss and gradient outputs), then through tf.nn.ctc_loss
    OpCase("ctc_loss_op", _ctc_op(_LABELS), _ctc_ref(_LABELS), [X, _SEQ], dtypes=FLOAT,
           fixed_dtypes=(None, I32), grad=False),
    OpCase("ctc_loss_op_no_merge", _ctc_op(_LABELS, ctc_merge_repeated=False),
           _ctc_ref(_LABELS, merge=False), [X, _SEQ], fixed_dtypes=(None, I32), grad=False),
    OpCase("ctc_loss_op_collapse", _ctc_op([[0, 0, 1], [1, 1], [1, 1]],
                                           preprocess_collapse_repeated=True),
           _ctc_ref([[0, 1], [1], [1]]), [X, _SEQ], fixed_dtypes=(None, I32), grad=False),
    OpCase("ctc_loss_op_blank_ends_labels", _ctc_op([[0, 2, 2], [1, 2], [1, 2]]),
           _ctc_ref([[0], [1], [1]]), [X, _value([4, 2, 2])], fixed_dtypes=(None, I32),
           grad=False),
    OpCase("ctc_loss", lambda x, n: tf.nn.ctc_loss(_sparse(_LABELS), x, n),
           _loss_only(_ctc_ref(_LABELS)), [X, _SEQ], dtypes=FLOAT, fixed_dtypes=(None, I32)),
    OpCase("ctc_loss_batch_major",
           lambda x, n: tf.nn.ctc_loss(_sparse(_LABELS), logits=x, sequence_length=n,
                                       time_major=False),
           lambda x, n: _ctc_ref(_LABELS)(x.transpose(1, 0, 2), n)[0],
           [_randn(3, 4, 3), _SEQ], fixed_dtypes=(None, I32)),
    OpCase("ctc_loss_longer_ignored",
           lambda x, n: tf.nn.ctc_loss(_sparse([[0, 1, 0], [1], [1, 1]]), x, n,
                                       ignore_longer_outputs_than_inputs=True),
           lambda x, n: _ctc_ref([[0], [1], [1, 1]])(x, n)[0] * [0, 1, 1],
           [X, _value([2, 3, 4])], fixed_dtypes=(None, I32)),
    OpCase("ctc_loss_v2_dense", _dense_v2, _dense_v2_ref, [X, _SEQ], dtypes=FLOAT,
           fixed_dtypes=(None, I32)),
    OpCase("ctc_loss_v2_sparse",
           lambda x, n: tf.nn.ctc_loss_v2(_sparse([[0, 2], [2], [2, 2]]), x, None, n,
                                          blank_index=1),
           lambda x, n: _ctc_ref(_LABELS)(x[:, :, [0, 2, 1]], n)[0],
           [X, _SEQ], fixed_dtypes=(None, I32)),
    # --- decoders
    OpCase("ctc_greedy", _greedy_build(), _greedy_ref(True),
           [_randn(6, 3, 4), _value([6, 0, 4])], dtypes=FLOAT, fixed_dtypes=(None, I32),
           grad=False),
    OpCase("ctc_greedy_no_merge_blank_0", _greedy_build(merge_repeated=False, blank_index=0),
           _greedy_ref(False, 0), [_value(np.eye(3)[[0, 1, 1, 2, 0, 2]][:, None]),
                                   _value([6])], fixed_dtypes=(None, I32), grad=False),
    OpCase("ctc_beam_exact", _beam_build(tf.nn.ctc_beam_search_decoder, 64, 3),
           _beam_ref(3, True),
           [_randn(4, 2, 3), _value([4, 3])], dtypes=FLOAT, fixed_dtypes=(None, I32),
           grad=False),
    OpCase("ctc_beam_v2_exact", _beam_build(tf.nn.ctc_beam_search_decoder_v2, 64, 2),
           _beam_ref(2, False),
           [_randn(4, 2, 3, scale=0.5), _value([3, 4])], fixed_dtypes=(None, I32),
           grad=False),
    # --- label helpers
    OpCase("collapse_repeated", lambda x, n: list(tf.nn.collapse_repeated(x, n)),
           _collapse_ref, [_value([[1, 1, 2, 2, 1], [3, 4, 4, 0, 0], [5, 5, 5, 5, 5]]),
                           _value([5, 3, 4])], dtypes=(tf.int32, tf.int64), grad=False),
    OpCase("ctc_unique_labels", lambda x: list(tf.nn.ctc_unique_labels(x)), _unique_ref,
           [_value([[3, 4, 4, 3], [1, 1, 0, 0], [5, 6, 7, 8]])], dtypes=(tf.int32, tf.int64),
           grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


# --- TensorFlow 2.21's beam search with a narrow beam (pruning order matters) -------------------
_X7 = (np.random.RandomState(7).randn(6, 3, 4) * 2).astype(np.float32)


@pytest.mark.parametrize("decoder,width,expected", [
    (tf.nn.ctc_beam_search_decoder, 2,
     ([[-0.897, -2.0032], [-2.6437, -2.6497], [-0.8832, -2.1022]],
      [([[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [2, 0], [2, 1]], [0, 2, 1, 0, 2, 0, 1],
        [3, 3]),
       ([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [2, 0]], [0, 1, 2, 2, 0, 2, 1],
        [3, 3])])),
    (tf.nn.ctc_beam_search_decoder_v2, 3,
     ([[-0.897, -2.0032], [-1.9768, -2.3977], [-0.8303, -2.1022]],
      [([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1]], [0, 2, 2, 0, 0, 1], [3, 2]),
       ([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [2, 0], [2, 1]],
        [0, 1, 2, 2, 0, 2, 1, 1], [3, 3])])),
])
def test_beam_search_matches_tensorflow(decoder, width, expected):
    with tf.Graph().as_default():
        decoded, log_probs = decoder(_X7, [6, 4, 5], beam_width=width, top_paths=2)
        with tf.Session() as sess:
            got, lp = sess.run([decoded, log_probs])
    np.testing.assert_allclose(lp, expected[0], atol=1e-4)
    for sp, (indices, values, shape) in zip(got, expected[1]):
        assert sp.indices.tolist() == indices
        assert sp.values.tolist() == values
        assert sp.dense_shape.tolist() == shape


# --- values TensorFlow gives where enumeration has nothing to say -------------------------------
def _run(fetch):
    with tf.Session() as sess:
        return sess.run(fetch)


def test_infeasible_repeats_give_inf_loss_and_softmax_gradient():
    """[2, 2] needs 3 frames; with 2 frames there is no path: loss inf, gradient softmax."""
    x = np.random.RandomState(0).randn(2, 1, 4)
    with tf.Graph().as_default():
        xt = tf.constant(x)
        loss = tf.nn.ctc_loss(_sparse([[2, 2]]), xt, [2])
        loss_v, grad = _run([loss, tf.gradients(loss, xt)[0]])
    assert loss_v.tolist() == [np.inf]
    np.testing.assert_allclose(grad, np.exp(_log_softmax(x)))


def test_default_names_and_types():
    with tf.Graph().as_default():
        x = tf.zeros([3, 2, 4])
        loss = tf.nn.ctc_loss(_sparse([[0], [1]]), x, [3, 3])
        (greedy,), _ = tf.nn.ctc_greedy_decoder(x, [3, 3])
        (beam,), log_probs = tf.nn.ctc_beam_search_decoder(x, [3, 3])
        dense = tf.nn.ctc_loss_v2([[1], [2]], x, [1, 1], [3, 3])
    assert (loss.op.type, loss.op.name, loss.shape.as_list()) == ("CTCLoss", "CTCLoss", [2])
    assert greedy.indices.op.type == "CTCGreedyDecoder"
    assert beam.indices.op.type == "CTCBeamSearchDecoder"
    assert log_probs.shape.as_list() == [2, 1] and beam.indices.shape.as_list() == [None, 2]
    assert dense.op.name.startswith("ctc_loss_dense/")


# --- errors ------------------------------------------------------------------------------------
def test_build_time_errors():
    x = np.zeros((3, 2, 4), np.float32)
    with tf.Graph().as_default():
        sp = _sparse([[0], [1]])
        with pytest.raises(TypeError, match="to be a SparseTensor"):
            tf.nn.ctc_loss([[1]], x, [3, 3])
        with pytest.raises(ValueError, match="Cannot specify both 'inputs' and 'logits'"):
            tf.nn.ctc_loss(sp, x, [3, 3], logits=x)
        with pytest.raises(ValueError, match="None values not supported"):
            tf.nn.ctc_loss(sp, None, [3, 3])
        with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
            tf.nn.ctc_loss(sp, x[0], [3, 3])
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
            tf.nn.ctc_loss(sp, x, [3, 3, 3])
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.nn.ctc_loss(sp, x.astype(np.int32), [3, 3])
        with pytest.raises(ValueError, match="`blank_index` must be provided"):
            tf.nn.ctc_loss_v2(sp, x, None, [3, 3])
        with pytest.raises(ValueError, match="'beam_width' of 'CTCBeamSearchDecoder' Op "
                                             "passed 0 less than minimum 1"):
            tf.nn.ctc_beam_search_decoder(x, [3, 3], beam_width=0)
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
            tf.nn.ctc_greedy_decoder(x, [3, 3, 3])


_X = np.random.RandomState(2).randn(3, 2, 4).astype(np.float32)


@pytest.mark.parametrize("build,error,message", [
    (lambda: tf.nn.ctc_loss(_sparse([[1, 1], [0, 1, 2]]), _X, [3, 2]),
     tf.errors.InvalidArgumentError,
     r"Not enough time for target transition sequence \(required: 3, available: 2\)1You can"),
    (lambda: tf.nn.ctc_loss(_sparse([[3, 1], [0]]), _X, [3, 2]),
     tf.errors.InvalidArgumentError,
     "Saw a non-null label .* following a null label, batch: 0 num_classes: 4 labels: 3,1 "
     "labels seen so far: \n"),
    (lambda: tf.nn.ctc_loss(_sparse([[-1, 1], [0]]), _X, [3, 2]),
     tf.errors.InvalidArgumentError, "All labels must be nonnegative integers, batch: 0 "
                                     "labels: -1,1"),
    (lambda: tf.nn.ctc_loss(_sparse([[1], [0]]), _X, [4, 2]),
     tf.errors.InvalidArgumentError, r"sequence_length\(0\) <= 3"),
    (lambda: tf.nn.ctc_loss(_sparse([[1], [0]]), _X, [-1, 2]),
     tf.errors.InvalidArgumentError, r"seq_len\(0\) < 0"),
    (lambda: tf.nn.ctc_loss(tf.SparseTensor([[0, 1], [0, 0], [1, 0]], [1, 1, 1], [2, 2]),
                            _X, [3, 3]),
     tf.errors.InvalidArgumentError, r"label SparseTensor is not valid: indices\[1\] = \[0,0\] "
                                     "is out of order. Many sparse ops require sorted indices"),
    (lambda: tf.nn.ctc_loss(tf.SparseTensor([[0, 0], [0, 0], [1, 0]], [1, 1, 1], [2, 2]),
                            _X, [3, 3]),
     tf.errors.InvalidArgumentError, r"indices\[1\] = \[0,0\] is repeated"),
    (lambda: tf.nn.ctc_loss(tf.SparseTensor([[0, 0], [2, 0]], [1, 1], [3, 1]), _X, [3, 3]),
     tf.errors.InvalidArgumentError,
     r"indices\[1\] = \[2,0\] is out of bounds: need 0 <= index < \[2,1\]"),
    (lambda: tf.nn.ctc_loss(tf.SparseTensor([[0, 0], [0, 2]], [1, 1], [2, 3]), _X, [3, 3]),
     tf.errors.InvalidArgumentError, "Labels length is zero in batch 1"),
    (lambda: tf.nn.ctc_greedy_decoder(_X, [4, 3]), tf.errors.FailedPreconditionError,
     r"sequence_length\(0\) <= 3"),
    (lambda: tf.nn.ctc_greedy_decoder(_X, [3, 3], blank_index=4),
     tf.errors.InvalidArgumentError, "blank_index expected to be between -4 and 3 but was 4"),
    (lambda: tf.nn.ctc_greedy_decoder(np.zeros((0, 2, 3), np.float32), [0, 0]),
     tf.errors.InvalidArgumentError, "inputs must not be empty"),
    (lambda: tf.nn.ctc_beam_search_decoder(_X, [3, 3], beam_width=2, top_paths=3),
     tf.errors.InvalidArgumentError, "requested more paths than the beam width."),
    (lambda: tf.nn.ctc_beam_search_decoder(_X, [0, 3], beam_width=3, top_paths=2),
     tf.errors.InvalidArgumentError, "Less leaves in the beam search than requested."),
])
def test_run_time_errors(build, error, message):
    with tf.Graph().as_default():
        out = build()
        with pytest.raises(error, match=message):
            _run(out)
