"""The TF 1.x ops kept so imported graphs run: ParseExample / ParseSingleExample (what TF 1.15's
parsers and Estimator serving graphs contain) give tf.parse_example's values,
ParseSingleSequenceExample TF 2.21's values and static shapes for the same node; MatrixDiag,
MatrixDiagPart and MatrixSetDiag against NumPy, with gradients and shapes."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops import legacy_ops
from tensorweave.testing.op_case import OpCase, case_tests


def _example(age, tags):
    return tf.train.Example(features=tf.train.Features(feature={
        "age": tf.train.Feature(float_list=tf.train.FloatList(value=[age])),
        "tags": tf.train.Feature(int64_list=tf.train.Int64List(value=tags)),
    })).SerializeToString()


RECORDS = [_example(3.0, [1, 2]), _example(5.0, [7])]


def _v1_parse(serialized):
    """The ParseExample node TF 1.15's tf.parse_example made for these features."""
    keys = [tf.constant("tags"), tf.constant("age")]
    return apply_op(legacy_ops.ParseExample,
                    [serialized, tf.constant([], tf.string), keys[:1], keys[1:],
                     [tf.constant([], tf.float32)]],
                    {"sparse_types": [tf.int64], "dense_shapes": [tf.TensorShape([1])]})


def test_parse_example_v1_gives_parse_examples_values():
    with tf.Graph().as_default():
        serialized = tf.placeholder(tf.string, [None])
        indices, values, shape, age = _v1_parse(serialized)
        assert indices.op.type == "ParseExample" and age.shape.as_list() == [None, 1]
        modern = tf.parse_example(serialized, {"age": tf.FixedLenFeature([1], tf.float32),
                                               "tags": tf.VarLenFeature(tf.int64)})
        with tf.Session() as sess:
            got = sess.run([indices, values, shape, age], {serialized: RECORDS})
            want = sess.run(modern, {serialized: RECORDS})
    np.testing.assert_array_equal(got[0], want["tags"].indices)
    np.testing.assert_array_equal(got[1], want["tags"].values)
    np.testing.assert_array_equal(got[2], want["tags"].dense_shape)
    np.testing.assert_array_equal(got[3], want["age"])


def test_parse_single_example_v1_and_an_imported_graph():
    with tf.Graph().as_default() as g:
        serialized = tf.placeholder(tf.string, [], name="record")
        outputs = apply_op(legacy_ops.ParseSingleExample, [serialized, [tf.constant(-1.0)]],
                           {"num_sparse": 1, "sparse_keys": ["tags"], "dense_keys": ["age"],
                            "sparse_types": [tf.int64], "dense_shapes": [tf.TensorShape([])]},
                           name="parsed")
        assert outputs[0].op.type == "ParseSingleExample"
        graph_def = g.as_graph_def()
    with tf.Graph().as_default():   # as a GraphDef from elsewhere would arrive
        record = tf.placeholder(tf.string, [], name="in")
        indices, values, shape, age = tf.import_graph_def(
            graph_def, input_map={"record:0": record},
            return_elements=["parsed:0", "parsed:1", "parsed:2", "parsed:3"])
        with tf.Session() as sess:
            got = sess.run([indices, values, shape, age], {record: RECORDS[0]})
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(age, {record: b"not an example"})
    np.testing.assert_array_equal(got[0], [[0], [1]])
    np.testing.assert_array_equal(got[1], [1, 2])
    np.testing.assert_array_equal(got[2], [2])
    assert got[3] == 3.0


def _sequence_example():
    example = tf.train.SequenceExample()
    example.context.feature["tags"].int64_list.value.extend([4, 9])
    example.context.feature["age"].float_list.value.append(3.5)
    lists = example.feature_lists.feature_list
    for words in ([b"a", b"b"], [], [b"c"]):
        lists["words"].feature.add().bytes_list.value.extend(words)
    for frame in ([1.0, 2.0], [3.0, 4.0]):
        lists["frames"].feature.add().float_list.value.extend(frame)
    return example.SerializeToString()


def _single_sequence_parse(serialized, dense_lists=("frames", "missing"), debug_name="rec0",
                           assumed_empty=("missing",)):
    """The ParseSingleSequenceExample node TF 1.15's parse_single_sequence_example made: keys
    as scalar inputs; the dense feature lists in `assumed_empty` may be absent."""
    c = tf.constant
    types = {"frames": tf.float32, "missing": tf.int64}
    shapes = {"frames": tf.TensorShape([2]), "missing": tf.TensorShape([])}
    return apply_op(legacy_ops.ParseSingleSequenceExample,
                    [serialized, c(list(assumed_empty), tf.string), [c("tags")],
                     [c("age"), c("height")], [c("words")], [c(k) for k in dense_lists],
                     [c([], tf.float32), c([7], tf.int64)], debug_name],
                    {"context_sparse_types": [tf.int64],
                     "context_dense_shapes": [tf.TensorShape([]), tf.TensorShape([1])],
                     "feature_list_sparse_types": [tf.string],
                     "feature_list_dense_types": [types[k] for k in dense_lists],
                     "feature_list_dense_shapes": [shapes[k] for k in dense_lists]})


def test_parse_single_sequence_example_gives_tfs_values_and_shapes():
    with tf.Graph().as_default():
        serialized = tf.placeholder(tf.string, [])
        outputs = _single_sequence_parse(serialized)
        assert [t.shape.as_list() for t in outputs] == [
            [None, 1], [None], [1], [], [1], [None, 2], [None], [2], [None, 2], [None]]
        required = _single_sequence_parse(serialized, ["missing"], "", assumed_empty=())
        with tf.Session() as sess:
            got = sess.run(outputs, {serialized: _sequence_example()})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Name: , Feature list 'missing' is required"):
                sess.run(required, {serialized: _sequence_example()})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Invalid protocol message input"):
                sess.run(outputs, {serialized: b"garbage"})
        with pytest.raises(ValueError, match="rank 0"):
            _single_sequence_parse(tf.placeholder(tf.string, [2]))
    want = [[[0], [1]], [4, 9], [2], 3.5, [7], [[0, 0], [0, 1], [2, 0]], [b"a", b"b", b"c"],
            [3, 2], [[1.0, 2.0], [3.0, 4.0]], []]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert got[-1].dtype == np.int64


def _randn(*shape):
    return lambda rng, dt: rng.standard_normal(shape).astype(dt)


def _diag_ref(d):
    out = np.zeros(d.shape + d.shape[-1:], d.dtype)
    i = np.arange(d.shape[-1])
    out[..., i, i] = d
    return out


def _set_diag_ref(m, d):
    out = m.copy()
    i = np.arange(min(m.shape[-2:]))
    out[..., i, i] = d
    return out


def _build(op_def):
    return lambda *xs: apply_op(op_def, list(xs))


CASES = [
    OpCase("matrix_diag_v1", _build(legacy_ops.MatrixDiag), _diag_ref, [_randn(2, 3)]),
    OpCase("matrix_diag_part_v1", _build(legacy_ops.MatrixDiagPart),
           lambda m: np.diagonal(m, axis1=-2, axis2=-1), [_randn(2, 3, 4)]),
    OpCase("matrix_set_diag_v1", _build(legacy_ops.MatrixSetDiag), _set_diag_ref,
           [_randn(2, 4, 3), _randn(2, 3)]),
    OpCase("accumulate_n_v2", lambda a, b, c: apply_op(legacy_ops.AccumulateNV2, [[a, b, c]],
                                                       {"shape": tf.TensorShape([2, 3])}),
           lambda a, b, c: a + b + c, [_randn(2, 3)] * 3),
    OpCase("prevent_gradient_forward",
           lambda x: apply_op(legacy_ops.PreventGradient, [x]), lambda x: x, [_randn(4)],
           grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_prevent_gradient_passes_values_and_refuses_gradients():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        y = apply_op(legacy_ops.PreventGradient, [x * 3.0], {"message": "no second order"})
        with pytest.raises(LookupError, match="Gradient explicitly disabled. Reason: "
                                              "no second order"):
            tf.gradients(y, x)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y), [3.0, 6.0])

