"""ParseSequenceExampleV2 through tf.parse_single_sequence_example and
tf.io.parse_sequence_example: forward against a reference built from the same Python records
(TF 2.21 gives these outputs for them), static shapes, TF's graph structure and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests


def _feature(values):
    if values and isinstance(values[0], bytes):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    if values and isinstance(values[0], float):
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def sequence_example(context, lists) -> bytes:
    return tf.train.SequenceExample(
        context=tf.train.Features(feature={k: _feature(v) for k, v in context.items()}),
        feature_lists=tf.train.FeatureLists(feature_list={
            k: tf.train.FeatureList(feature=[_feature(x) for x in v])
            for k, v in lists.items()})).SerializeToString()


RECORDS = [({"c": [1, 2], "s": [b"a"], "cv": [0.5]},
            {"f": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "v": [[1], [], [2, 3]]}),
           ({"c": [5, 6]}, {"f": [[7.0, 8.0]], "v": [[4]]})]
SERIALIZED = np.array([sequence_example(*r) for r in RECORDS], dtype=object)


def _context():
    return {"c": tf.FixedLenFeature([2], tf.int64),
            "s": tf.FixedLenFeature([], tf.string, default_value="zz"),
            "cv": tf.VarLenFeature(tf.float32)}


def _sequence():
    return {"f": tf.FixedLenSequenceFeature([2], tf.float32),
            "v": tf.VarLenFeature(tf.int64),
            "m": tf.FixedLenSequenceFeature([], tf.int64, allow_missing=True)}


def _sparse(parts):
    return [parts.indices, parts.values, parts.dense_shape]


def _flat(context, lists):
    """Outputs in a fixed order: context cv (sparse), c, s; feature lists v (sparse), f, m."""
    return _sparse(context["cv"]) + [context["c"], context["s"]] + _sparse(lists["v"]) + \
        [lists["f"], lists["m"]]


def _flat_single(serialized):
    return _flat(*tf.parse_single_sequence_example(serialized, _context(), _sequence()))


def _flat_batch(serialized):
    context, lists, lengths = tf.io.parse_sequence_example(serialized, _context(), _sequence())
    return _flat(context, lists) + [lengths["f"], lengths["m"]]


def _reference(records):
    """The batch outputs, computed from the record dicts."""
    cv = [c.get("cv", []) for c, _ in records]
    v = [lists["v"] for _, lists in records]
    steps = [len(lists["f"]) for _, lists in records]
    f = np.zeros([len(records), max(steps), 2], np.float32)
    for i, (_, lists) in enumerate(records):
        f[i, :steps[i]] = lists["f"]
    v_indices = [[i, t, j] for i, r in enumerate(v) for t, step in enumerate(r)
                 for j in range(len(step))]
    return [np.array([[i, j] for i, r in enumerate(cv) for j in range(len(r))],
                     np.int64).reshape(-1, 2),
            np.array([x for r in cv for x in r], np.float32),
            np.array([len(records), max(len(r) for r in cv)], np.int64),
            np.array([c["c"] for c, _ in records], np.int64),
            np.array([c.get("s", [b"zz"])[0] for c, _ in records], dtype=object),
            np.array(v_indices, np.int64).reshape(-1, 3),
            np.array([x for r in v for step in r for x in step], np.int64),
            np.array([len(records), max(len(r) for r in v),
                      max(len(s) for r in v for s in r)], np.int64),
            f, np.zeros([len(records), 0], np.int64),
            np.array(steps, np.int64), np.zeros([len(records)], np.int64)]


def _single_reference(serialized):
    out = _reference(RECORDS[:1])
    for i in (0, 5):   # sparse indices lose the batch column, dense shapes the batch size
        out[i] = out[i][:, 1:]
        out[i + 2] = out[i + 2][1:]
    return out[:3] + [o[0] for o in out[3:5]] + out[5:8] + [o[0] for o in out[8:10]]


CASES = [
    OpCase("parse_single_sequence_example", _flat_single, _single_reference, [SERIALIZED[0]],
           dtypes=(tf.string,), grad=False),
    OpCase("parse_sequence_example", _flat_batch, lambda s: _reference(RECORDS), [SERIALIZED],
           dtypes=(tf.string,), grad=False),
]
test_forward, test_shapes = case_tests(CASES)


def test_graph_is_tensorflows():
    with tf.Graph().as_default() as g:
        context, lists = tf.parse_single_sequence_example(SERIALIZED[0], _context(),
                                                          _sequence())
        op = context["c"].op
        assert op.type == "ParseSequenceExampleV2"
        assert op.name == "ParseSingleSequenceExample/ParseSequenceExample/" \
            "ParseSequenceExampleV2"
        assert {o.type for o in g.get_operations()} == {"Const", "Reshape",
                                                        "ParseSequenceExampleV2"}
        assert context["c"].shape.as_list() == [2] and context["s"].shape.as_list() == []
        assert lists["f"].shape.as_list() == [None, 2]
        assert lists["v"].indices.shape.as_list() == [None, 2]
        assert op.get_attr("Nfeature_list_dense") == 2 and op.get_attr("Ncontext_sparse") == 1
    with tf.Graph().as_default():
        _, lists, lengths = tf.io.parse_sequence_example(tf.placeholder(tf.string, [3]),
                                                         _context(), _sequence())
        assert lists["f"].shape.as_list() == [3, None, 2]
        assert lengths["f"].shape.as_list() == [3]
        assert lists["v"].dense_shape.shape.as_list() == [3]


def _parse(serialized, context=None, sequence=None, names=None):
    with tf.Graph().as_default():
        out = tf.io.parse_sequence_example(serialized, context or _context(),
                                           sequence or _sequence(), example_names=names)
        with tf.Session() as sess:
            return sess.run(out)


@pytest.mark.parametrize("record,message", [
    (({"c": [1, 2]}, {"f": [[1.0, 2.0], [1.0]]}),
     "Name: e1, Key: f, Index: 1.  Number of values != expected.  values size: 1 but output "
     "shape: \\[2\\]"),
    (({"c": [1.0, 2.0]}, {"f": [[1.0, 2.0]]}),
     "Name: e1, Context feature: c.  Data types don't match. Expected type: int64"),
    (({"c": [1, 2]}, {"f": [[1.0, 2.0]], "v": [[1], [b"x"]]}),
     "Name: e1, Feature list: v, Index: 1.  Data types don't match. Expected type: int64"),
    (({"c": [1, 2]}, {}), "Name: e1, Feature list 'f' is required but could not be found."),
    (({"c": [1]}, {"f": []}),
     "Inconsistent max number of elements for feature c: expected 2, but found 1"),
    (({}, {"f": []}),
     "Inconsistent max number of elements for feature c: expected 2, but found 0"),
])
def test_run_time_errors(record, message):
    serialized = [SERIALIZED[0], sequence_example(*record)]
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        _parse(serialized, names=["e0", "e1"])


def test_undecodable_record():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Invalid protocol message input, example id: <unknown>"):
        _parse([b"garbage"])


@pytest.mark.parametrize("call,error,message", [
    (lambda: tf.parse_single_sequence_example(SERIALIZED[0]), ValueError,
     "Both context_features and sequence_features are None"),
    (lambda: tf.parse_single_sequence_example(SERIALIZED, _context(), _sequence()),
     ValueError, "Input serialized must be a scalar"),
    (lambda: tf.parse_single_sequence_example(
        SERIALIZED[0], {"x": tf.FixedLenFeature([None], tf.int64)}), ValueError,
     "First dimension of shape for feature x unknown"),
    (lambda: tf.parse_single_sequence_example(
        SERIALIZED[0], {"x": tf.FixedLenSequenceFeature([], tf.int64)}), ValueError,
     "Unsupported FixedLenSequenceFeature FixedLenSequenceFeature\\(shape=\\[\\], "
     "dtype=tf.int64, allow_missing=False, default_value=None\\) for key 'x'"),
    (lambda: tf.parse_single_sequence_example(
        SERIALIZED[0], None, {"x": tf.FixedLenFeature([], tf.int64)}), ValueError,
     "Unsupported FixedLenFeature FixedLenFeature\\(shape=\\[\\], dtype=tf.int64, "
     "default_value=None\\) for key 'x'"),
    (lambda: tf.parse_single_sequence_example(
        SERIALIZED[0], None, {"x": tf.FixedLenSequenceFeature([], tf.int64, default_value=3)}),
     ValueError, "Value feature_list.dense_defaults\\[x\\] must be None"),
    (lambda: tf.parse_single_sequence_example(
        SERIALIZED[0], {"c": tf.FixedLenFeature([2], tf.int32)}), TypeError,
     "Value passed to parameter 'context_dense_defaults' has DataType int32"),
])
def test_build_errors(call, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error, match=message):
            call()
