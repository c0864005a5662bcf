"""tf.nn.embedding_lookup (one table or shards, "mod"/"div", max_norm) and the routing ops
DynamicPartition / (Parallel)DynamicStitch: OpCase rows with gradients, TF's graph structure,
sparse (IndexedSlices) gradients and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.ops.partition_ops import parallel_dynamic_stitch
from tensorweave.testing.op_case import (
    OpCase,
    case_tests,
)

F32_64 = (tf.float32, tf.float64)
I32 = tf.int32


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


def _ints(values):
    return lambda rng, dt: np.array(values, np.int32)


def _shard_ids(n_total, ids, n_shards, strategy):
    """(shard, row) of each id for the partition strategies, the NumPy way."""
    ids = np.asarray(ids)
    if strategy == "mod":
        return ids % n_shards, ids // n_shards
    per, extra = divmod(n_total, n_shards)
    bounds = np.cumsum([0] + [per + (1 if i < extra else 0) for i in range(n_shards)])
    shard = np.searchsorted(bounds, ids, side="right") - 1
    return shard, ids - bounds[shard]


def _lookup_ref(strategy, max_norm=None):
    def ref(*arrays):
        *shards, ids = arrays
        total = sum(s.shape[0] for s in shards)
        shard, row = _shard_ids(total, ids, len(shards), strategy)
        out = np.stack([shards[s][r] for s, r in zip(shard.reshape(-1), row.reshape(-1))])
        out = out.reshape(ids.shape + shards[0].shape[1:])
        if max_norm is not None:
            axes = tuple(range(ids.ndim, out.ndim))
            norm = np.sqrt(np.sum(out.astype(np.float64) ** 2, axis=axes, keepdims=True))
            out = (out * max_norm / np.maximum(norm, max_norm)).astype(out.dtype)
        return out
    return ref


def _lookup(strategy, max_norm=None):
    def build(*inputs):
        *shards, ids = inputs
        params = shards[0] if len(shards) == 1 else shards
        return tf.nn.embedding_lookup(params, ids, partition_strategy=strategy,
                                      max_norm=max_norm)
    return build


IDS_2D = _ints([[0, 8], [4, 5], [2, 2]])

EMBEDDING_CASES = [
    OpCase("lookup_one_table", _lookup("mod"), _lookup_ref("mod"), [_randn(9, 3), IDS_2D],
           F32_64, fixed_dtypes=[None, I32]),
    OpCase("lookup_max_norm", _lookup("mod", 1.0), _lookup_ref("mod", 1.0),
           [_randn(9, 3), IDS_2D], F32_64, fixed_dtypes=[None, I32]),
    OpCase("lookup_mod_shards", _lookup("mod"), _lookup_ref("mod"),
           [_randn(3, 2), _randn(3, 2), _randn(3, 2), IDS_2D], F32_64,
           fixed_dtypes=[None, None, None, I32]),
    OpCase("lookup_div_shards", _lookup("div"), _lookup_ref("div"),
           [_randn(5, 2), _randn(4, 2), IDS_2D], F32_64, fixed_dtypes=[None, None, I32]),
    OpCase("lookup_div_shards_max_norm", _lookup("div", 0.5), _lookup_ref("div", 0.5),
           [_randn(5, 2), _randn(4, 2), _ints([8, 0, 4, 5])], F32_64,
           fixed_dtypes=[None, None, I32]),
    OpCase("lookup_1d_table", _lookup("mod"), _lookup_ref("mod"), [_randn(6), _ints([5, 1])],
           F32_64, fixed_dtypes=[None, I32]),
]


def _partition_ref(n):
    def ref(data, parts):
        flat = parts.reshape(-1)
        rows = data.reshape((flat.size,) + data.shape[parts.ndim:])
        return [rows[flat == i] for i in range(n)]
    return ref


def _stitch_ref(i0, i1, d0, d1):
    rows = max(i0.max(), i1.max()) + 1
    out = np.zeros((rows,) + d0.shape[i0.ndim:], d0.dtype)
    out[i0.reshape(-1)] = d0.reshape((i0.size,) + d0.shape[i0.ndim:])
    out[i1.reshape(-1)] = d1.reshape((i1.size,) + d1.shape[i1.ndim:])
    return out


PARTS = _ints([1, 0, 2, 1, 1])
ROUTING_CASES = [
    OpCase("dynamic_partition", lambda d, p: tf.dynamic_partition(d, p, 3), _partition_ref(3),
           [_randn(5, 2), PARTS], (tf.float32, tf.int32, tf.float64),
           fixed_dtypes=[None, I32], grad=False),
    OpCase("dynamic_partition_grad",
           lambda d, p: [tf.reshape(o, [n, 2]) for o, n in
                         zip(tf.dynamic_partition(d, p, 3), (1, 3, 1))],
           _partition_ref(3), [_randn(5, 2), PARTS], F32_64, fixed_dtypes=[None, I32]),
    OpCase("dynamic_partition_2d", lambda d, p: tf.dynamic_partition(d, p, 2),
           _partition_ref(2), [_randn(2, 2, 3), _ints([[0, 1], [1, 1]])], F32_64,
           fixed_dtypes=[None, I32], grad=False),
    OpCase("dynamic_stitch", lambda i0, i1, d0, d1: tf.dynamic_stitch([i0, i1], [d0, d1]),
           _stitch_ref, [_ints([0, 2]), _ints([[1, 3], [4, 2]]), _randn(2, 3), _randn(2, 2, 3)],
           (tf.float32, tf.int64), fixed_dtypes=[I32, I32, None, None], grad=False),
    # TensorFlow's gradient gathers for every input, so its row has no repeated index.
    OpCase("dynamic_stitch_grad",
           lambda i0, i1, d0, d1: tf.reshape(tf.dynamic_stitch([i0, i1], [d0, d1]), [6, 3]),
           _stitch_ref, [_ints([0, 2]), _ints([[1, 3], [4, 5]]), _randn(2, 3), _randn(2, 2, 3)],
           F32_64, fixed_dtypes=[I32, I32, None, None]),
    OpCase("parallel_dynamic_stitch",
           lambda i0, i1, d0, d1: tf.reshape(parallel_dynamic_stitch([i0, i1], [d0, d1]),
                                             [4, 3]),
           _stitch_ref, [_ints([0, 2]), _ints([1, 3]), _randn(2, 3), _randn(2, 3)], F32_64,
           fixed_dtypes=[I32, I32, None, None]),
]
CASES = EMBEDDING_CASES + ROUTING_CASES


test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_single_table_graph_and_sparse_gradient():
    with tf.Graph().as_default() as g:
        p = tf.Variable(np.arange(15, dtype=np.float32).reshape(5, 3), name="p")
        ids = tf.placeholder(tf.int32, [None, 2])
        e = tf.nn.embedding_lookup(p, ids)
        assert e.name == "embedding_lookup/Identity:0" and e.shape.as_list() == [None, 2, 3]
        gather = g.get_operation_by_name("embedding_lookup")
        assert gather.type == "GatherV2" and gather.get_attr("_class") == [b"loc:@p"]
        assert "_class" not in e.op.node_def.attr
        (grad,) = tf.gradients(tf.reduce_sum(e), p)
        assert isinstance(grad, tf.IndexedSlices)
        with tf.Session() as sess:
            sess.run(p.initializer)
            dense = sess.run(tf.convert_to_tensor(grad), {ids: [[0, 4], [4, 1]]})
    np.testing.assert_array_equal(dense[:, 0], [1, 1, 0, 0, 2])


def test_sharded_graph_matches_tensorflow_structure():
    with tf.Graph().as_default() as g:
        shards = [tf.Variable(np.ones((5, 3), np.float32), name="s0"),
                  tf.Variable(np.ones((4, 3), np.float32), name="s1")]
        e = tf.nn.embedding_lookup(shards, tf.placeholder(tf.int32, [None, 2]),
                                   partition_strategy="div")
        assert e.name == "embedding_lookup/Reshape_1:0" and e.shape.as_list() == [None, 2, 3]
        types = [op.type for op in g.get_operations() if op.name.startswith("embedding")]
        assert types.count("DynamicPartition") == 2 and "ParallelDynamicStitch" in types
        assert g.get_operation_by_name("embedding_lookup/Const").type == "Const"  # 9 ids
        assert g.get_operation_by_name("embedding_lookup/GatherV2_1").get_attr("_class") == \
            [b"loc:@s1"]


def test_optimizer_updates_only_looked_up_rows():
    with tf.Graph().as_default():
        table = tf.Variable(np.zeros((6, 2), np.float32), name="table")
        ids = tf.constant([1, 4, 1])
        loss = tf.reduce_sum(tf.nn.embedding_lookup(table, ids))
        train = tf.train.AdagradOptimizer(1.0).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            got = sess.run(table)
    # rows 1 (gradient 2, summed) and 4 (gradient 1); accumulators start at 0.1
    np.testing.assert_allclose(got[:, 0], [0, -2 / np.sqrt(4.1), 0, 0, -1 / np.sqrt(1.1), 0],
                               rtol=1e-6)


def test_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Need at least one param"):
            tf.nn.embedding_lookup([], [0])
        with pytest.raises(ValueError, match="params must be specified"):
            tf.nn.embedding_lookup(None, [0])
        with pytest.raises(ValueError, match="Unrecognized partition strategy: x"):
            tf.nn.embedding_lookup([tf.ones([2, 2]), tf.ones([2, 2])], [0],
                                   partition_strategy="x")
        part = tf.dynamic_partition(tf.ones([3]), tf.constant([0, 3, 1]), 2)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=r"partitions\[1\] = 3 is not "
                                                                  r"in \[0, 2\)"):
                sess.run(part)
