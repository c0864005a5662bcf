"""Partitioned variables: partitioners, get_variable's parts, PartitionedVariable as a tensor,
training and embedding lookups through the parts. Expected counts, names and messages are
TensorFlow 2.21's (tf.compat.v1), recorded from running the same calls there."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.sliced_variables import PartitionedVariable, PartitionInfo, SaveSliceInfo

# (shape, dtype, partitioner, TF 2.21's partitions)
PARTITIONER_CASES = [
    ([10, 5], tf.float32, tf.fixed_size_partitioner(3), [3, 1]),
    ([10, 5], tf.float32, tf.fixed_size_partitioner(20), [10, 1]),
    ([7, 2], tf.float32, tf.fixed_size_partitioner(2, axis=1), [1, 2]),
    ([3, 4], tf.float32, tf.fixed_size_partitioner(2, axis=-1), [1, 2]),
    ([10, 5], tf.float32, tf.variable_axis_size_partitioner(100, max_shards=4), [2, 1]),
    ([10, 5], tf.float64, tf.variable_axis_size_partitioner(100, max_shards=4), [4, 1]),
    ([10, 5], tf.int8, tf.variable_axis_size_partitioner(100, max_shards=4), [1, 1]),
    ([10, 5], tf.string, tf.variable_axis_size_partitioner(33, bytes_per_string_element=3),
     [5, 1]),
    ([1000, 7], tf.float32, tf.variable_axis_size_partitioner(1000), [29, 1]),
    ([1000, 7], tf.string, tf.variable_axis_size_partitioner(1000), [125, 1]),
    ([100, 3, 4], tf.float32, tf.variable_axis_size_partitioner(1000), [5, 1, 1]),
    ([3, 100000], tf.float32, tf.variable_axis_size_partitioner(1000), [3, 1]),
    ([1024, 1024], tf.float32, tf.min_max_variable_partitioner(8), [8, 1]),
    ([1024, 1024], tf.int8, tf.min_max_variable_partitioner(8), [4, 1]),
    ([3, 100000], tf.int8, tf.min_max_variable_partitioner(8), [2, 1]),
    ([100, 3, 4], tf.int8, tf.min_max_variable_partitioner(100, min_slice_size=64),
     [19, 1, 1]),
    ([100, 3, 4], tf.string, tf.min_max_variable_partitioner(100, min_slice_size=64),
     [100, 1, 1]),
    ([7], tf.float64, tf.min_max_variable_partitioner(4, axis=0, min_slice_size=10), [4]),
    ([3, 4], tf.float32, tf.min_max_variable_partitioner(2, axis=-1, min_slice_size=1),
     [1, 2]),
]


@pytest.mark.parametrize("shape,dtype,partitioner,expected", PARTITIONER_CASES)
def test_partitioner_counts_match_tensorflow(shape, dtype, partitioner, expected):
    assert list(partitioner(shape=tf.TensorShape(shape), dtype=dtype)) == expected


def test_partitioner_argument_errors():
    with pytest.raises(ValueError, match="max_shard_bytes is 0 andbytes_per_string_element"):
        tf.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="bytes_per_string_element is 0"):
        tf.variable_axis_size_partitioner(10, 0, 0)
    with pytest.raises(ValueError, match="max_shards must be positive"):
        tf.variable_axis_size_partitioner(10, max_shards=-1)
    with pytest.raises(ValueError, match=r"shape is not fully defined: \(\?, 4\)"):
        tf.variable_axis_size_partitioner(10)(shape=tf.TensorShape([None, 4]),
                                              dtype=tf.float32)
    with pytest.raises(ValueError, match=r"shape is not a TensorShape: \[3, 4\]"):
        tf.variable_axis_size_partitioner(10)(shape=[3, 4], dtype=tf.float32)
    with pytest.raises(ValueError, match=r"Cannot partition variable along axis 2 when shape "
                                         r"is only \(3, 4\)"):
        tf.min_max_variable_partitioner(2, axis=2)(shape=tf.TensorShape([3, 4]),
                                                   dtype=tf.float32)


# --- get_variable ----------------------------------------------------------------------------
def test_parts_names_uneven_split_collections_and_slice_info():
    with tf.Graph().as_default():
        with tf.variable_scope("s", partitioner=tf.fixed_size_partitioner(3)):
            v = tf.get_variable("v", [10, 5], initializer=tf.constant_initializer(1.0))
        assert isinstance(v, PartitionedVariable)
        assert (v.name, v.shape.as_list(), v.get_shape().as_list(), v.dtype) == \
            ("s/v", [10, 5], [10, 5], tf.float32)
        assert len(v) == 3 and v._get_partitions() == [3, 1]
        parts = list(v)
        assert parts == v._get_variable_list()
        assert [p.name for p in parts] == ["s/v/part_0:0", "s/v/part_1:0", "s/v/part_2:0"]
        assert [p.shape.as_list() for p in parts] == [[4, 5], [3, 5], [3, 5]]
        infos = [p._save_slice_info for p in parts]
        assert [(i.full_name, i.full_shape, i.var_offset, i.var_shape) for i in infos] == [
            ("s/v", [10, 5], [0, 0], [4, 5]), ("s/v", [10, 5], [4, 0], [3, 5]),
            ("s/v", [10, 5], [7, 0], [3, 5])]
        assert [i.spec for i in infos] == ["10 5 0,4:0,5", "10 5 4,3:0,5", "10 5 7,3:0,5"]
        assert tf.global_variables() == parts and tf.trainable_variables() == parts
        assert parts[1].initializer.inputs[1].op.name == "s/v/part_1/Initializer/Const"


def test_split_along_axis_one_and_single_part():
    with tf.Graph().as_default():
        z = tf.get_variable("z", [7, 5], partitioner=tf.fixed_size_partitioner(3, axis=1))
        one = tf.get_variable("one", [1, 3], partitioner=tf.fixed_size_partitioner(3))
        assert [p.shape.as_list() for p in z] == [[7, 2], [7, 2], [7, 1]]
        assert [p._save_slice_info.var_offset for p in z] == [[0, 0], [0, 2], [0, 4]]
        assert [p.name for p in one] == ["one/part_0:0"]
        t = one.as_tensor()
        assert (t.name, t.op.type) == ("one:0", "Identity")


def test_scalar_shape_with_a_partitioner_is_a_plain_variable():
    with tf.Graph().as_default():
        v = tf.get_variable("s", [], partitioner=tf.fixed_size_partitioner(3))
        assert isinstance(v, tf.Variable) and v.name == "s:0"


def test_initializers_get_the_part_shape_and_partition_info():
    calls = []

    def with_info(shape, dtype=None, partition_info=None):
        calls.append((shape, partition_info.full_shape, partition_info.var_offset,
                      partition_info.single_offset(shape)))
        return tf.zeros(shape, dtype)

    def without_info(shape, dtype=None):
        calls.append((shape, dtype))
        return tf.ones(shape, dtype)

    with tf.Graph().as_default():
        tf.get_variable("d", [9, 2], initializer=with_info,
                        partitioner=tf.fixed_size_partitioner(2))
        tf.get_variable("e", [9, 2], initializer=without_info,
                        partitioner=tf.fixed_size_partitioner(2))
    assert calls == [([5, 2], [9, 2], [0, 0], 0), ([4, 2], [9, 2], [5, 0], 5),
                     ([5, 2], tf.float32), ([4, 2], tf.float32)]


def test_tensor_and_value_initializers_are_sliced():
    value = np.arange(12.0).reshape(6, 2)
    with tf.Graph().as_default():
        c = tf.get_variable("c", initializer=tf.constant(value),
                            partitioner=tf.fixed_size_partitioner(4))
        n = tf.get_variable("n", [6, 2], initializer=value,
                            partitioner=tf.fixed_size_partitioner(2, axis=1))
        with pytest.raises(ValueError, match="must be fully defined, but instead was "
                                             "<unknown>"):
            tf.get_variable("m", initializer=value, partitioner=tf.fixed_size_partitioner(2))
        assert c.dtype == tf.float64 and n.dtype == tf.float32
        assert [p.shape.as_list() for p in c] == \
            [[2, 2], [2, 2], [1, 2], [1, 2]]
        assert [p.initial_value.op.name for p in c][:2] == \
            ["c/part_0/PartitionedInitializer/Slice", "c/part_1/PartitionedInitializer/Slice"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(c.as_tensor()), value)
            np.testing.assert_array_equal(sess.run(list(n))[1], value[:, 1:])


def test_regularizer_runs_per_part():
    with tf.Graph().as_default():
        with tf.variable_scope("r", partitioner=tf.fixed_size_partitioner(3),
                               regularizer=tf.nn.l2_loss):
            tf.get_variable("w", [5, 2])
        losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        assert [t.name for t in losses] == ["r/w/part_0/Regularizer/L2Loss:0",
                                            "r/w/part_1/Regularizer/L2Loss:0",
                                            "r/w/part_2/Regularizer/L2Loss:0"]


def test_reuse_returns_the_same_partitioned_variable():
    with tf.Graph().as_default():
        with tf.variable_scope("s", partitioner=tf.fixed_size_partitioner(3)):
            v = tf.get_variable("v", [10, 5])
        with tf.variable_scope("s", reuse=True):
            assert tf.get_variable("v") is v     # without repeating the partitioner
        with tf.variable_scope("s", reuse=True, partitioner=tf.fixed_size_partitioner(3)):
            assert tf.get_variable("v", [10, 5]) is v
        with tf.variable_scope("a", partitioner=tf.fixed_size_partitioner(2),
                               reuse=tf.AUTO_REUSE):
            assert tf.get_variable("a", [4, 2]) is tf.get_variable("a", [4, 2])
        local = tf.get_local_variable("l", [4], partitioner=tf.fixed_size_partitioner(2))
        assert tf.local_variables() == list(local)
        frozen = tf.get_variable("f", [4], trainable=False,
                                 partitioner=tf.fixed_size_partitioner(2))
        assert not set(frozen) & set(tf.trainable_variables())


@pytest.mark.parametrize("reuse,make,match", [
    (True, lambda: tf.get_variable("s/v", [10, 5], partitioner=tf.fixed_size_partitioner(2)),
     r"Trying to reuse partitioned variable s/v, but specified partitions \[2, 1\] and found "
     r"partitions \[3, 1\]\."),
    (True, lambda: tf.get_variable("s/v", [10, 6], partitioner=tf.fixed_size_partitioner(3)),
     r"Trying to reuse partitioned variable s/v, but specified shape \(10, 6\) and found "
     r"shape \(10, 5\)\."),
    (True, lambda: tf.get_variable("nope", [4], partitioner=tf.fixed_size_partitioner(2)),
     "PartitionedVariable nope does not exist, or was not created with tf.get_variable"),
    (None, lambda: tf.get_variable("s/v", [10, 5], partitioner=tf.fixed_size_partitioner(3)),
     "Partitioned variable with name s/v already exists. Did you mean to set reuse=True"),
    (True, lambda: tf.get_variable("s/v", [10, 5], dtype=tf.float64),
     "Trying to reuse partitioned variable s/v, but specified dtype float64 and found dtype "
     "float32"),
    (None, lambda: (tf.get_variable("w/part_0", [2]),
                    tf.get_variable("w", [4], partitioner=tf.fixed_size_partitioner(2))),
     "Partitioner returned a different partitioning than what was already found.  Partitioner "
     "returned 2 shards, and shard w/part_0 was found, but w/part_1 was not."),
    (None, lambda: ([tf.get_variable(f"w/part_{i}", [2]) for i in range(3)],
                    tf.get_variable("w", [4], partitioner=tf.fixed_size_partitioner(2))),
     "shard w/part_0 was found, but so was the extra shard w/part_2."),
    (None, lambda: tf.get_variable("s/v", [10, 5]),
     "No partitioner was provided, but a partitioned version of the variable was found: "
     "s/v/part_0"),
    (None, lambda: tf.get_variable("plain", [4], partitioner=tf.fixed_size_partitioner(2)),
     "A partitioner was provided, but an unpartitioned version of the variable was found: "
     "plain"),
    (None, lambda: tf.get_variable("u", [None, 3], partitioner=tf.fixed_size_partitioner(3)),
     r"Shape of a new partitioned variable must be fully defined, but instead was \(\?, 3\)"),
    (None, lambda: tf.get_variable("u", partitioner=tf.fixed_size_partitioner(3)),
     "must be fully defined, but instead was <unknown>"),
    (None, lambda: tf.get_variable("u", [4, 4], partitioner=lambda shape, dtype: [2, 2]),
     r"Can only slice a variable along one dimension: shape: \(4, 4\), partitioning: "
     r"\[2, 2\]"),
    (None, lambda: tf.get_variable("u", [4, 4], partitioner=lambda shape, dtype: [2]),
     r"does not match the Variable's rank: \[2\] vs. \(4, 4\)"),
    (None, lambda: tf.get_variable("u", [4, 4], partitioner=lambda shape, dtype: [0, 1]),
     r"Partitioner returned zero partitions for some axes: \[0, 1\]"),
    (None, lambda: tf.get_variable("u", [4, 4], partitioner=lambda shape, dtype: 3),
     "Partitioner must return a sequence, but saw: 3"),
    (None, lambda: tf.get_variable("u", [4, 4], partitioner=3),
     "Partitioner must be callable, but received: 3"),
])
def test_get_variable_errors(reuse, make, match):
    with tf.Graph().as_default():
        tf.get_variable("s/v", [10, 5], partitioner=tf.fixed_size_partitioner(3))
        tf.get_variable("plain", [4])
        with tf.variable_scope("", reuse=reuse):
            with pytest.raises(ValueError, match=match):
                make()


def test_custom_getter_sees_the_scope_partitioner_and_set_partitioner():
    seen = []

    def getter(getter, name, *args, **kwargs):
        seen.append((name, kwargs["partitioner"] is not None))
        return getter(name, *args, **kwargs)

    with tf.Graph().as_default():
        with tf.variable_scope("cg", custom_getter=getter,
                               partitioner=tf.fixed_size_partitioner(2)):
            assert isinstance(tf.get_variable("c", [4]), PartitionedVariable)
        with tf.variable_scope("sp", partitioner=tf.fixed_size_partitioner(2)) as scope:
            scope.set_partitioner(None)
            assert isinstance(tf.get_variable("q", [4]), tf.Variable)
    assert seen == [("cg/c", True)]


def test_create_partitioned_variables():
    with tf.Graph().as_default():
        parts = tf.create_partitioned_variables([6, 2], [3, 1], tf.constant_initializer(2.0))
        named = tf.create_partitioned_variables([6, 2], [1, 2], np.arange(12.0).reshape(6, 2),
                                                name="pv")
        with tf.variable_scope("", reuse=True):
            again = tf.create_partitioned_variables([6, 2], [1, 2], np.zeros((6, 2)),
                                                    name="pv")
        assert [p.name for p in parts] == ["PartitionedVariable/part_0:0",
                                           "PartitionedVariable/part_1:0",
                                           "PartitionedVariable/part_2:0"]
        assert [a is b for a, b in zip(named, again)] == [True, True]
        with pytest.raises(ValueError, match="must have the length"):
            tf.create_partitioned_variables([6, 2], [3], tf.zeros_initializer())
        with pytest.raises(ValueError, match="must have rank at least 1"):
            tf.create_partitioned_variables([], [], tf.zeros_initializer())
        with tf.variable_scope("g", custom_getter=lambda getter, *a, **k: getter(*a, **k)):
            with pytest.raises(ValueError, match="Private access to _get_partitioned_variable "
                                                 "is not allowed when a custom getter is set"):
                tf.create_partitioned_variables([6, 2], [3, 1], tf.zeros_initializer())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(named)
        np.testing.assert_array_equal(np.concatenate(got, axis=1), np.arange(12.0).reshape(6, 2))


# --- the PartitionedVariable as a tensor -------------------------------------------------------
def _partitioned(value, parts, axis=0, name="v"):
    return tf.get_variable(name, np.shape(value), initializer=np.asarray(value, np.float32),
                           partitioner=tf.fixed_size_partitioner(parts, axis))


def test_conversion_concatenates_the_parts():
    value = np.arange(12.0).reshape(6, 2)
    with tf.Graph().as_default():
        v = _partitioned(value, 4)
        t = tf.convert_to_tensor(v)
        assert (t.name, t.op.type) == ("v:0", "Identity")
        assert t.op.inputs[0].name == "v/ConcatPartitions/concat:0"
        assert v.as_tensor().op.inputs[0].op.type == "ConcatV2"
        y = tf.matmul(tf.ones([1, 6]), v)
        with pytest.raises(ValueError, match="Incompatible type conversion requested to type "
                                             "'int32' for variable of type 'float32'"):
            tf.convert_to_tensor(v, dtype=tf.int32)
        with pytest.raises(NotImplementedError, match="doesn't support being used as a "
                                                      "reference"):
            tf.gradients(tf.reduce_sum(v.as_tensor()), v)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(t), value)
            np.testing.assert_allclose(sess.run(y), value.sum(0, keepdims=True))
            with pytest.raises(TypeError, match="PartitionedVariable"):
                sess.run(v)


def test_as_tensor_ignores_control_dependencies():
    with tf.Graph().as_default():
        v = _partitioned(np.ones((4, 2)), 2)
        marker = tf.no_op(name="marker")
        with tf.control_dependencies([marker]):
            t = v.as_tensor()
            c = v._concat()

    def controls(tensor):
        """The control inputs of the ops the concatenation was built from."""
        concat = tensor.op.inputs[0].op
        ops = [concat] + [i.op for i in concat.inputs]
        return {ctrl for op in ops for ctrl in op.control_inputs}

    assert marker not in controls(t)
    assert marker in controls(c)


def test_assign_splits_the_value_over_the_parts():
    value = np.arange(14.0).reshape(7, 2).astype(np.float32)
    with tf.Graph().as_default():
        v = _partitioned(np.zeros((7, 2)), 3)
        assign = v.assign(value)
        add = v.assign_add(np.ones((7, 2), np.float32))
        sub_ops = v.assign_sub([np.ones(p.shape.as_list(), np.float32) * 2 for p in v],
                               read_value=False)
        assert len(assign) == 3 and all(isinstance(op, tf.Operation) for op in sub_ops)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(assign)
            sess.run(add)
            sess.run(sub_ops)
            np.testing.assert_array_equal(sess.run(v.as_tensor()), value - 1)


def test_optimizer_trains_the_parts():
    x = np.arange(18.0, dtype=np.float32).reshape(3, 6)
    w0 = np.ones((6, 2), np.float32)
    with tf.Graph().as_default():
        v = _partitioned(w0, 2)
        loss = tf.reduce_sum(tf.matmul(tf.constant(x), v))
        grads = tf.gradients(loss, list(v))
        opt = tf.train.GradientDescentOptimizer(0.1)
        assert [var for _, var in opt.compute_gradients(loss)] == list(v)
        train = opt.minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            g = sess.run(grads)
            sess.run(train)
            got = sess.run(v.as_tensor())
    expected_grad = np.repeat(x.sum(0)[:, None], 2, axis=1)
    np.testing.assert_allclose(np.concatenate(g), expected_grad)
    np.testing.assert_allclose(got, w0 - 0.1 * expected_grad, rtol=1e-6)


@pytest.mark.parametrize("strategy,rows", [
    # "mod" (TF's default) puts id i in part i % 2 at row i // 2 although the parts hold
    # contiguous rows: id 3 reads part 1's row 1, which is full row 4 (as in TensorFlow).
    ("mod", [0, 4, 5]),
    ("div", [0, 3, 5]),
])
def test_embedding_lookup_over_the_parts(strategy, rows):
    table = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    with tf.Graph().as_default():
        v = _partitioned(table, 2)
        emb = tf.nn.embedding_lookup(v, [0, 3, 5], partition_strategy=strategy)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(emb), table[rows])


def test_dense_layer_kernel_from_a_scope_partitioner():
    x = np.arange(12.0, dtype=np.float32).reshape(2, 6)
    with tf.Graph().as_default():
        with tf.variable_scope("m", partitioner=tf.fixed_size_partitioner(2)):
            layer = tf.layers.Dense(4, kernel_initializer=tf.ones_initializer())
            y = layer(tf.constant(x))
        assert isinstance(layer.kernel, PartitionedVariable)
        assert [p.name for p in tf.trainable_variables()] == [
            "m/dense/kernel/part_0:0", "m/dense/kernel/part_1:0",
            "m/dense/bias/part_0:0", "m/dense/bias/part_1:0"]
        train = tf.train.GradientDescentOptimizer(0.5).minimize(tf.reduce_sum(y))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(y), np.repeat(x.sum(1)[:, None], 4, 1))
            sess.run(train)
            np.testing.assert_allclose(sess.run(layer.kernel.as_tensor()),
                                       1 - 0.5 * np.repeat(x.sum(0)[:, None], 4, 1))


# --- the bookkeeping classes -------------------------------------------------------------------
def test_partition_info_checks():
    info = PartitionInfo([9, 4], [5, 0])
    assert info.single_slice_dim([4, 4]) == 0 and info.single_offset([4, 4]) == 5
    assert PartitionInfo([9, 4], [0, 0]).single_slice_dim([9, 4]) is None
    with pytest.raises(TypeError, match="`full_shape` must be a sequence"):
        PartitionInfo(9, [0])
    with pytest.raises(ValueError, match="Expected equal length"):
        PartitionInfo([9, 4], [0])
    with pytest.raises(ValueError, match="Expected 0 <= offset < shape but found offset=9"):
        PartitionInfo([9, 4], [9, 0])
    with pytest.raises(ValueError, match="would exceed self.full_shape"):
        info.single_slice_dim([5, 4])
    with pytest.raises(ValueError, match="since slice dim could be either dimension 1 or 0"):
        PartitionInfo([9, 4], [0, 0]).single_slice_dim([4, 2])


def test_partitioned_variable_constructor_checks():
    with tf.Graph().as_default():
        plain = tf.get_variable("p", [4])
        parts = list(_partitioned(np.zeros((4, 2)), 2))
        with pytest.raises(ValueError, match="variable_list may not be empty"):
            PartitionedVariable("v", [4, 2], tf.float32, [], [2, 1])
        with pytest.raises(ValueError, match="must have a save_slice_info"):
            PartitionedVariable("v", [4], tf.float32, [plain], [1])
        with pytest.raises(ValueError, match="full shapes must match shape"):
            PartitionedVariable("v", [5, 2], tf.float32, parts, [2, 1])
        with pytest.raises(ValueError, match="partition values must be positive"):
            PartitionedVariable("v", [4, 2], tf.float32, parts, [0, 1])
        with pytest.raises(TypeError, match="partitions is not a list or tuple"):
            PartitionedVariable("v", [4, 2], tf.float32, parts, 2)
        # Parts are kept in offset order whatever order they are given in.
        assert list(PartitionedVariable("v", [4, 2], tf.float32, parts[::-1], [2, 1])) == parts


def test_save_slice_info_proto_round_trip():
    info = SaveSliceInfo("outer/v", [10, 5], [4, 0], [3, 5])
    proto = info.to_proto(export_scope="outer")
    assert (proto.full_name, list(proto.full_shape), list(proto.var_offset),
            list(proto.var_shape)) == ("v", [10, 5], [4, 0], [3, 5])
    assert info.to_proto(export_scope="other") is None
    back = SaveSliceInfo(save_slice_info_def=proto, import_scope="new")
    assert (back.full_name, back.full_shape, back.var_offset, back.var_shape, back.spec) == \
        ("new/v", [10, 5], [4, 0], [3, 5], "10 5 4,3:0,5")


def test_meta_graph_keeps_the_parts_slice_info():
    with tf.Graph().as_default():
        tf.get_variable("v", [10, 5], partitioner=tf.fixed_size_partitioner(2))
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default():
        tf.train.import_meta_graph(meta)
        parts = tf.global_variables()
        assert [p._get_save_slice_info().spec for p in parts] == ["10 5 0,5:0,5",
                                                                   "10 5 5,5:0,5"]
        assert tf.Variable.SaveSliceInfo is SaveSliceInfo


def test_slots_are_slices_of_the_full_slot():
    with tf.Graph().as_default():
        v = tf.get_variable("v", [4, 3], partitioner=tf.fixed_size_partitioner(2))
        opt = tf.train.AdamOptimizer()
        opt.minimize(tf.reduce_sum(tf.convert_to_tensor(v)))
        m = opt.get_slot(list(v)[1], "m")
        info = m._get_save_slice_info()
        assert (m.op.name, info.full_name, info.spec) == ("v/part_1/Adam", "v/Adam",
                                                          "4 3 2,2:0,3")
        assert all(s._get_save_slice_info() is None
                   for s in tf.global_variables() if s.shape.ndims == 0)


def test_variance_scaling_scales_parts_as_the_full_variable():
    calls = []

    class Recording(tf.glorot_uniform_initializer):
        def __call__(self, shape, dtype=None, partition_info=None):
            calls.append(partition_info.full_shape)
            return super().__call__(shape, dtype, partition_info)

    with tf.Graph().as_default():
        v = tf.get_variable("v", [400, 4], initializer=Recording(seed=1),
                            partitioner=tf.fixed_size_partitioner(4))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = np.concatenate(sess.run(list(v)))
    limit = np.sqrt(6.0 / (400 + 4))   # the full shape's fans, not a part's (100 + 4)
    assert calls == [[400, 4]] * 4
    assert np.abs(values).max() <= limit and np.abs(values).max() > 0.9 * limit


def test_sampled_softmax_takes_a_partitioned_weight():
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        weights = tf.get_variable("w", [10, 3], partitioner=tf.fixed_size_partitioner(2))
        biases = tf.zeros([10])
        loss = tf.nn.sampled_softmax_loss(weights, biases, tf.constant([[1], [7]], tf.int64),
                                          tf.ones([2, 3]), num_sampled=4, num_classes=10)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(loss).shape == (2,)
