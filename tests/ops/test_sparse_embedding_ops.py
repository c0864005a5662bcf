"""tf.nn.embedding_lookup_sparse and tf.nn.safe_embedding_lookup_sparse: combined embeddings
against NumPy (sum / mean / sqrtn, weights, shards, max_norm, invalid ids, empty rows, rank-3
ids), gradients for the table and the weights, and TensorFlow's graph structure."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

I64 = tf.int64
F32_64 = (tf.float32, tf.float64)
IND = np.array([[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]], np.int64)
SHAPE = np.array([4, 3], np.int64)   # rows 1 and 3 are empty
IDS = np.array([1, 3, 0, 1, 5], np.int64)


def _params(rng, dt):
    return rng.randn(6, 2)


def _weights(rng, dt):
    return rng.uniform(0.5, 2.0, 5)


def _combine(params, rows, ids, weights, combiner, n_rows, max_norm=None):
    """sum_k w_k e_k per row, / sum w_k (mean) or / sqrt(sum w_k^2) (sqrtn); 0 if no ids."""
    emb = params[ids].astype(np.float64)
    if max_norm is not None:
        norms = np.linalg.norm(emb, axis=1, keepdims=True)
        emb = emb * np.minimum(1.0, max_norm / np.maximum(norms, 1e-30))
    out = np.zeros((n_rows, params.shape[1]))
    np.add.at(out, rows, emb * weights[:, None])
    if combiner != "sum":
        norm = np.zeros(n_rows)
        np.add.at(norm, rows, weights if combiner == "mean" else weights ** 2)
        norm = norm if combiner == "mean" else np.sqrt(norm)
        out = np.divide(out, norm[:, None], out=np.zeros_like(out), where=norm[:, None] != 0)
    return out.astype(params.dtype)


def _lookup(combiner, weighted=False, **kw):
    def build(p, i, ids, *w):
        sp_w = tf.SparseTensor(i, w[0], SHAPE) if weighted else None
        params = [p[:3], p[3:]] if kw.get("sharded") else p
        return tf.nn.embedding_lookup_sparse(params, tf.SparseTensor(i, ids, SHAPE), sp_w,
                                             partition_strategy="div", combiner=combiner,
                                             max_norm=kw.get("max_norm"))

    def ref(p, i, ids, *w):
        weights = w[0] if weighted else np.ones(len(ids))
        return _combine(p, i[:, 0], ids, weights, combiner, int(i[-1, 0]) + 1,
                        kw.get("max_norm"))
    inputs = [_params, IND, IDS] + ([_weights] if weighted else [])
    return build, ref, inputs


def _lookup_case(name, combiner, weighted=False, **kw):
    build, ref, inputs = _lookup(combiner, weighted, **kw)
    return OpCase(name, build, ref, inputs, dtypes=F32_64, fixed_dtypes=(None, I64, I64))


def _safe_ref(p, i, ids, w, combiner, default_id=None, shape=SHAPE):
    """Flatten to rank 2, drop ids < 0 (and weights <= 0 unless "sum"), empty rows get zeros
    or default_id's embedding, leading dimensions restored."""
    flat_rows = np.ravel_multi_index(tuple(i[:, :-1].T), tuple(shape[:-1]))
    keep = ids >= 0
    if combiner != "sum":
        keep &= w > 0
    n_rows = int(np.prod(shape[:-1]))
    rows, kept_ids, weights = flat_rows[keep], ids[keep], w[keep]
    empty = np.setdiff1d(np.arange(n_rows), rows)
    if default_id is not None:
        rows = np.concatenate([rows, empty])
        kept_ids = np.concatenate([kept_ids, np.full(len(empty), default_id)])
        weights = np.concatenate([weights, np.ones(len(empty))])
    out = _combine(p, rows, kept_ids, weights, combiner, n_rows)
    return out.reshape(tuple(shape[:-1]) + (p.shape[1],))


SAFE_IDS = np.array([1, -1, 0, 1, 5], np.int64)
SAFE_W = np.array([1.0, 2.0, -0.5, 1.5, 2.0])
IND3 = np.array([[0, 0, 0], [0, 1, 1], [1, 1, 0]], np.int64)
SHAPE3 = np.array([2, 2, 2], np.int64)

CASES = [_lookup_case(f"embedding_lookup_sparse_{c}", c) for c in ("sum", "mean", "sqrtn")]
CASES += [_lookup_case(f"embedding_lookup_sparse_weighted_{c}", c, weighted=True)
          for c in ("sum", "mean", "sqrtn")]
CASES += [
    _lookup_case("embedding_lookup_sparse_sharded_max_norm", "mean", weighted=True,
                 sharded=True, max_norm=1.0),
    _lookup_case("embedding_lookup_sparse_max_norm", "sum", max_norm=1.5),
]
for _combiner in ("sum", "mean", "sqrtn"):
    CASES.append(OpCase(
        f"safe_embedding_lookup_sparse_{_combiner}",
        lambda p, i, ids, w, c=_combiner: tf.nn.safe_embedding_lookup_sparse(
            p, tf.SparseTensor(i, ids, SHAPE), tf.SparseTensor(i, w, SHAPE), combiner=c),
        lambda p, i, ids, w, c=_combiner: _safe_ref(p, i, ids, w, c),
        [_params, IND, SAFE_IDS, SAFE_W], dtypes=F32_64, fixed_dtypes=(None, I64, I64)))
CASES += [
    OpCase("safe_embedding_lookup_sparse_default_id",
           lambda p, i, ids: tf.nn.safe_embedding_lookup_sparse(
               [p[:3], p[3:]], tf.SparseTensor(i, ids, SHAPE), default_id=4),
           lambda p, i, ids: _safe_ref(p, i, ids, np.ones(len(ids)), "mean", default_id=4),
           [_params, IND, SAFE_IDS], dtypes=F32_64, fixed_dtypes=(None, I64, I64)),
    OpCase("safe_embedding_lookup_sparse_rank3",
           lambda p, i, ids: tf.nn.safe_embedding_lookup_sparse(
               p, tf.SparseTensor(i, ids, SHAPE3), combiner="sqrtn"),
           lambda p, i, ids: _safe_ref(p, i, ids, np.ones(len(ids)), "sqrtn", shape=SHAPE3),
           [_params, IND3, np.array([1, -1, 2], np.int64)], dtypes=F32_64,
           fixed_dtypes=(None, I64, I64)),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_graph_matches_tensorflow():
    with tf.Graph().as_default():
        params = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
        ids = tf.SparseTensor(IND, tf.constant(IDS), SHAPE)
        weights = tf.SparseTensor(IND, tf.ones([5]), SHAPE)
        fast = tf.nn.embedding_lookup_sparse(params, ids, None, combiner="sum")
        assert (fast.op.type, fast.op.name) == ("SparseSegmentSum", "embedding_lookup_sparse")
        assert fast.op.get_attr("sparse_gradient") is True
        assert fast.shape.as_list() == [None, 2]
        weighted = tf.nn.embedding_lookup_sparse(params, ids, weights)
        assert (weighted.op.type, weighted.op.name) == ("DivNoNan", "embedding_lookup_sparse_1")
        assert isinstance(tf.gradients(fast, params)[0], tf.IndexedSlices)
        safe = tf.nn.safe_embedding_lookup_sparse(params, ids)
        assert (safe.op.type, safe.op.name) == ("Reshape", "embedding_lookup/Reshape_2")
        assert safe.shape.as_list() == [4, 2]
        with_default = tf.nn.safe_embedding_lookup_sparse(params, ids, default_id=0)
        assert with_default.op.inputs[0].op.name == "embedding_lookup_1"
        assert with_default.op.inputs[0].op.type == "SparseSegmentMean"
        unknown = tf.nn.safe_embedding_lookup_sparse(params, tf.sparse_placeholder(tf.int64))
        assert unknown.shape.ndims is None
        rank3 = tf.nn.safe_embedding_lookup_sparse(
            params, tf.sparse_placeholder(tf.int64, [None, None, 3]))
        assert rank3.shape.as_list() == [None, None, 2]


def test_trains_only_looked_up_rows():
    """The sparse gradient reaches an optimizer, which updates only the rows used."""
    with tf.Graph().as_default():
        table = tf.get_variable("table", initializer=np.ones((6, 2), np.float32))
        ids = tf.SparseTensor(IND, tf.constant(IDS), SHAPE)
        loss = tf.reduce_sum(tf.nn.safe_embedding_lookup_sparse(table, ids, combiner="sqrtn"))
        step = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            got = sess.run(table)
    untouched = [2, 4]
    np.testing.assert_array_equal(got[untouched], np.ones((2, 2)))
    assert np.all(got[[0, 1, 3, 5]] < 1)
    # row 2 of ids holds 0, 1, 5: each gets 1 / sqrt(3); row 0 holds 1, 3: 1 / sqrt(2).
    np.testing.assert_allclose(got[1], 1 - 1 / np.sqrt(2) - 1 / np.sqrt(3), rtol=1e-6)


def test_argument_errors():
    with tf.Graph().as_default():
        params = tf.ones([6, 2])
        ids = tf.SparseTensor(IND, tf.constant(IDS), SHAPE)
        with pytest.raises(ValueError, match="combiner must be one of"):
            tf.nn.embedding_lookup_sparse(params, ids, None, combiner="max")
        with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
            tf.nn.embedding_lookup_sparse(params, ids.values, None)
        with pytest.raises(TypeError, match="sp_weights must be either None or SparseTensor"):
            tf.nn.embedding_lookup_sparse(params, ids, tf.ones([5]))
        with pytest.raises(ValueError, match="Missing embedding_weights"):
            tf.nn.safe_embedding_lookup_sparse(None, ids)
        with pytest.raises(ValueError, match="Missing embedding_weights"):
            tf.nn.safe_embedding_lookup_sparse([], ids)


def test_weighted_lookup_gradient_does_not_warn(caplog):
    """The gather of gathered rows densifies its incoming IndexedSlices silently, as TF's."""
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [10, 4])
        ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 3, 5], tf.int64), [2, 2])
        weights = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 2.0, 1.0], [2, 2])
        out = tf.nn.embedding_lookup_sparse(emb, ids, weights, combiner="sum")
        with caplog.at_level("WARNING"):
            grad = tf.gradients(tf.reduce_sum(out), emb)[0]
        assert isinstance(grad, tf.IndexedSlices)
        assert "Converting sparse IndexedSlices" not in caplog.text
