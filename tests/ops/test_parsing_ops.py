"""ParseExampleV2 through tf.parse_example / tf.parse_single_example: forward against a Python
reference built from the same feature dicts, static shapes, TF's graph structure and errors, and
a TFRecord file of Examples written and parsed by real TensorFlow (tests/fixtures)."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "fixtures")
RECORDS = [
    {"a": [3.0, 4.0], "b": [1, 2, 3], "c": [b"x"], "d": [1, 2, 3, 4]},
    {"c": [b"y\x00"]},
    {"b": [5], "c": [b"z"], "d": [7, 8], "unused": [1.5]},
]


def _feature(values):
    if isinstance(values[0], bytes):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))
    if isinstance(values[0], float):
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def example(**features) -> bytes:
    return tf.train.Example(features=tf.train.Features(
        feature={k: _feature(v) for k, v in features.items()})).SerializeToString()


SERIALIZED = np.array([example(**r) for r in RECORDS], dtype=object)


def _features():
    return {"a": tf.FixedLenFeature([2], tf.float32, default_value=[1.0, 2.0]),
            "b": tf.VarLenFeature(tf.int64),
            "c": tf.FixedLenFeature([], tf.string),
            "d": tf.FixedLenSequenceFeature([2], tf.int64, allow_missing=True)}


def _flat(parsed):
    """Outputs in a fixed order: the SparseTensor's three parts, then the dense tensors."""
    b = parsed["b"]
    return [b.indices, b.values, b.dense_shape, parsed["a"], parsed["c"], parsed["d"]]


def _reference(records):
    """What parsing `records` must give, computed from the feature dicts themselves."""
    b = [r.get("b", []) for r in records]
    indices = [[i, j] for i, v in enumerate(b) for j in range(len(v))]
    d = [np.reshape(r.get("d", []), [-1, 2]) for r in records]
    rows = max(len(x) for x in d)
    d_out = np.zeros([len(records), rows, 2], np.int64)
    for i, x in enumerate(d):
        d_out[i, :len(x)] = x
    return [np.array(indices, np.int64).reshape(-1, 2),
            np.array([x for v in b for x in v], np.int64),
            np.array([len(records), max(len(v) for v in b)], np.int64),
            np.array([r.get("a", [1.0, 2.0]) for r in records], np.float32),
            np.array([r["c"][0] for r in records], dtype=object), d_out]


def _single_reference(serialized):
    out = _reference([RECORDS[0]])
    out[0] = out[0][:, 1:]
    out[2] = out[2][1:]
    return out[:3] + [o[0] for o in out[3:]]


CASES = [
    OpCase("parse_example", lambda s: _flat(tf.parse_example(s, _features())),
           lambda s: _reference(RECORDS), [SERIALIZED], dtypes=(tf.string,), grad=False),
    OpCase("parse_single_example",
           lambda s: _flat(tf.parse_single_example(s, _features())), _single_reference,
           [SERIALIZED[0]], dtypes=(tf.string,), grad=False),
]


test_forward, test_shapes = case_tests(CASES)


def test_graph_matches_tensorflow():
    """The node TF 2.21's compat.v1 parse_example builds: sorted key constants, typed defaults."""
    with tf.Graph().as_default() as g:
        out = tf.parse_example(tf.placeholder(tf.string, [None]), _features())
        op = out["a"].op
        assert op.type == "ParseExampleV2" and op.name == "ParseExample/ParseExampleV2"
        assert [t.op.name for t in op.inputs] == [
            "Placeholder", "ParseExample/ParseExampleV2/names",
            "ParseExample/ParseExampleV2/sparse_keys", "ParseExample/ParseExampleV2/dense_keys",
            "ParseExample/ParseExampleV2/ragged_keys", "ParseExample/Reshape",
            "ParseExample/Const", "ParseExample/Const_1"]
        assert g.get_operation_by_name("ParseExample/key_a").type == "Const"
        assert op.get_attr("num_sparse") == 1
        assert op.get_attr("sparse_types") == [tf.int64]
        assert op.get_attr("Tdense") == [tf.float32, tf.string, tf.int64]
        assert [s.as_list() for s in op.get_attr("dense_shapes")] == [[2], [], [None, 2]]
        assert [t.name for t in _flat(out)] == [
            f"ParseExample/ParseExampleV2:{i}" for i in (0, 1, 2, 3, 4, 5)]
        node = op.node_def
        assert node.attr["dense_shapes"].list.shape[2].dim[0].size == -1
        with tf.Session() as sess:
            keys = sess.run([op.inputs[2], op.inputs[3], op.inputs[6], op.inputs[7]])
        assert list(keys[0]) == [b"b"] and list(keys[1]) == [b"a", b"c", b"d"]
        assert keys[2].shape == (0,) and keys[3] == 0


def test_static_shapes():
    with tf.Graph().as_default():
        known = tf.parse_example(tf.placeholder(tf.string, [4]), _features())
        assert known["a"].shape.as_list() == [4, 2] and known["c"].shape.as_list() == [4]
        assert known["d"].shape.as_list() == [4, None, 2]
        assert known["b"].indices.shape.as_list() == [None, 2]
        assert known["b"].dense_shape.shape.as_list() == [2]
        assert known["b"].values.dtype == tf.int64
        unknown = tf.parse_example(tf.placeholder(tf.string), _features())
        assert unknown["a"].shape.ndims is None
        assert unknown["b"].indices.shape.as_list() == [None, None]
        single = tf.parse_single_example(tf.placeholder(tf.string, []), _features())
        assert single["a"].shape.as_list() == [2] and single["c"].shape.as_list() == []
        assert single["b"].indices.shape.as_list() == [None, 1]
        assert single["d"].shape.as_list() == [None, 2]


def test_empty_batch_and_empty_features():
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [None])
        out = tf.parse_example(s, {"v": tf.VarLenFeature(tf.float32),
                                   "f": tf.FixedLenFeature([3], tf.int64, default_value=[1, 2, 3]),
                                   "q": tf.FixedLenSequenceFeature([], tf.string,
                                                                   allow_missing=True,
                                                                   default_value="pad")})
        with tf.Session() as sess:
            empty = sess.run(out, {s: []})
            blank = sess.run(out, {s: [b"", example(q=[b"x", b"y"])]})
    assert empty["v"].indices.shape == (0, 2) and list(empty["v"].dense_shape) == [0, 0]
    assert empty["f"].shape == (0, 3) and empty["q"].shape == (0, 0)
    assert list(blank["v"].dense_shape) == [2, 0] and blank["v"].values.dtype == np.float32
    np.testing.assert_array_equal(blank["f"], [[1, 2, 3], [1, 2, 3]])
    assert blank["q"].tolist() == [[b"pad", b"pad"], [b"x", b"y"]]


def test_feature_without_kind_counts_as_missing():
    empty = tf.train.Example(features=tf.train.Features(
        feature={"a": tf.train.Feature(), "b": tf.train.Feature()})).SerializeToString()
    with tf.Graph().as_default():
        out = tf.parse_single_example(empty, {"a": tf.FixedLenFeature([2], tf.float32, [5, 6]),
                                              "b": tf.VarLenFeature(tf.int64)})
        with tf.Session() as sess:
            got = sess.run(out)
    np.testing.assert_array_equal(got["a"], [5.0, 6.0])
    assert got["b"].indices.shape == (0, 1) and list(got["b"].dense_shape) == [0]


@pytest.mark.parametrize("record,features,message", [
    (example(a=[1.0]), {"a": tf.FixedLenFeature([2], tf.float32)},
     "Name: <unknown>, Key: a, Index: 0.  Number of float values != expected.  Values size: 1 "
     "but output shape: [2]"),
    (example(a=[1, 2]), {"a": tf.FixedLenFeature([2], tf.float32)},
     "Name: <unknown>, Key: a, Index: 0.  Data types don't match. Data type: int64 but "
     "expected type: float"),
    (example(a=[1.0]), {"c": tf.FixedLenFeature([], tf.string)},
     "Name: <unknown>, Feature: c (data type: string) is required but could not be found."),
    (example(d=[1, 2, 3]), {"d": tf.FixedLenSequenceFeature([2], tf.int64, True)},
     "Name: <unknown>, Key: d, Index: 0.  Number of int64 values is not a multiple of stride "
     "length. Saw 3 values but output shape is: [?,2]"),
    (example(b=[1, 2]), {"b": tf.VarLenFeature(tf.float32)},
     "Name: <unknown>, Key: b, Index: 0.  Data types don't match. Expected type: float, "
     "Actual type: int64"),
    (b"abc", {"b": tf.VarLenFeature(tf.float32)}, "Could not parse example input, value: 'abc'"),
])
def test_runtime_errors_name_the_feature(record, features, message):
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [None])
        out = tf.parse_example(s, features)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(out, {s: [example(), record] if "Index: 0" not in message
                               else [record]})
    assert message in info.value.message
    assert "ParseExampleV2" in str(info.value)


def test_error_messages_use_example_names_and_single_prefix():
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [None])
        out = tf.parse_example(s, {"a": tf.FixedLenFeature([2], tf.int64)},
                               example_names=["first", "second"])
        single = tf.parse_single_example(example(a=[b"p"]),
                                         {"a": tf.FixedLenFeature([1], tf.int64)})
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Name: second, Key: a, "
                               "Index: 1.  Number of int64 values"):
                sess.run(out, {s: [example(a=[1, 2]), example(a=[1])]})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Key: a.  Data types don't match. Data type: string but "
                               "expected type: int64"):
                sess.run(single)


@pytest.mark.parametrize("features,error,message", [
    ({"q": tf.FixedLenSequenceFeature([2], tf.int64)}, ValueError,
     "FixedLenSequenceFeature requires allow_missing to be True"),
    ({"q": tf.FixedLenFeature([None], tf.int64)}, ValueError,
     "First dimension of shape for feature q unknown"),
    ({"q": tf.FixedLenFeature([2], tf.int32)}, TypeError,
     "DataType int32 not in list of allowed values: float32, int64, string"),
    ({}, ValueError, "Argument `features` cannot be None or falsy"),
])
def test_graph_construction_errors(features, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error, match=message):
            tf.parse_example(tf.placeholder(tf.string, [None]), features)


def test_rank_checks():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Input serialized must be a scalar"):
            tf.parse_single_example(tf.placeholder(tf.string, [3]), _features())
        with pytest.raises(ValueError, match="ParseExampleV2"):
            tf.parse_example(tf.placeholder(tf.string, [None, 2]), _features())


def test_not_differentiable():
    with tf.Graph().as_default():
        default = tf.constant([1.0, 2.0])
        out = tf.parse_single_example(example(), {"a": tf.FixedLenFeature([2], tf.float32,
                                                                          default)})
        assert tf.gradients(out["a"], default) == [None]


def _expected(entry):
    if "indices" in entry:
        return entry
    if "hex" in entry:
        return np.array([bytes.fromhex(h) for h in entry["hex"]],
                        dtype=object).reshape(entry["shape"])
    return np.array(entry["values"], dtype=entry["dtype"]).reshape(entry["shape"])


def _fixture_features(spec):
    out = {}
    for key, (kind, dtype, shape, default) in spec.items():
        if kind == "fixed":
            out[key] = tf.io.FixedLenFeature(shape, tf.as_dtype(dtype), default)
        elif kind == "varlen":
            out[key] = tf.io.VarLenFeature(tf.as_dtype(dtype))
        else:
            out[key] = tf.io.FixedLenSequenceFeature(shape, tf.as_dtype(dtype), True, default)
    return out


def _assert_matches_tf(got, expected):
    assert sorted(got) == sorted(expected)
    for key, entry in expected.items():
        if "indices" in entry:
            np.testing.assert_array_equal(got[key].indices, np.reshape(
                entry["indices"], (-1, len(entry["dense_shape"]))), err_msg=key)
            np.testing.assert_array_equal(got[key].values, _expected(entry["values"]), key)
            np.testing.assert_array_equal(got[key].dense_shape, entry["dense_shape"], key)
        else:
            want = _expected(entry)
            value = got[key]   # a scalar string fetch is bytes, as in TF
            value = np.array(value, dtype=object) if isinstance(value, bytes) else \
                np.asarray(value)
            assert value.shape == want.shape and value.dtype == want.dtype, key
            np.testing.assert_array_equal(value, want, err_msg=key)


def test_tensorflow_written_records_parse_like_tensorflow():
    with open(os.path.join(FIXTURES, "tf_examples.json")) as f:
        manifest = json.load(f)
    records = list(tf.python_io.tf_record_iterator(os.path.join(FIXTURES, manifest["file"])))
    assert len(records) == 4
    features = _fixture_features(manifest["features"])
    with tf.Graph().as_default():
        batch = tf.parse_example(tf.constant(np.array(records, dtype=object)), features)
        single = tf.io.parse_single_example(records[1], features)
        with tf.Session() as sess:
            got_batch, got_single = sess.run([batch, single])
    _assert_matches_tf(got_batch, manifest["parse_example"])
    _assert_matches_tf(got_single, manifest["parse_single_example_1"])


def test_tensorflow_graph_of_parse_example_imports_and_runs():
    with open(os.path.join(FIXTURES, "tf_examples.json")) as f:
        manifest = json.load(f)
    records = list(tf.python_io.tf_record_iterator(os.path.join(FIXTURES, manifest["file"])))
    with open(os.path.join(FIXTURES, manifest["graph"]), "rb") as f:
        graph_def = tf.GraphDef.FromString(f.read())
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        outputs = {}
        for key, names in manifest["graph_outputs"].items():
            outputs[key] = tf.SparseTensor(*[g.get_tensor_by_name(n) for n in names]) \
                if isinstance(names, list) else g.get_tensor_by_name(names)
        assert outputs["pixels"].op.type == "ParseExampleV2"
        assert outputs["steps"].shape.as_list() == [None, None, 2]
        with tf.Session() as sess:
            got = sess.run(outputs, {"serialized:0": records})
    _assert_matches_tf(got, manifest["parse_example"])


def test_examples_written_by_tensorweave_round_trip(tmp_path):
    path = str(tmp_path / "examples.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for record in SERIALIZED:
            writer.write(record)
    records = np.array(list(tf.io.tf_record_iterator(path)), dtype=object)
    with tf.Graph().as_default():
        out = _flat(tf.io.parse_example(records, _features()))
        with tf.Session() as sess:
            got = sess.run(out)
    for g, e in zip(got, _reference(RECORDS)):
        np.testing.assert_array_equal(g, e)


def _indexed_example(ix, vals, ix2=None) -> bytes:
    feature = {"ix": tf.train.Feature(int64_list=tf.train.Int64List(value=ix)),
               "val": tf.train.Feature(float_list=tf.train.FloatList(value=vals))}
    if ix2 is not None:
        feature["ix2"] = tf.train.Feature(int64_list=tf.train.Int64List(value=ix2))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def test_sparse_feature_merges_index_and_value_features():
    """TensorFlow 2.21's results: indices sorted, the dense shape [batch, size...]; a key only
    the SparseFeature reads is not returned, one also asked for is."""
    records = [_indexed_example([3, 1], [0.5, 1.5], [0, 2]), _indexed_example([0], [2.0], [1])]
    with tf.Graph().as_default(), tf.Session() as sess:
        batch = tf.parse_example(records, {"sp": tf.io.SparseFeature("ix", "val", tf.float32, 5),
                                           "val": tf.VarLenFeature(tf.float32)})
        single = tf.parse_single_example(records[0], {
            "sp": tf.SparseFeature("ix", "val", tf.float32, 5)})
        two_d = tf.parse_example(records, {
            "sp": tf.SparseFeature(["ix", "ix2"], "val", tf.float32, [5, 3])})
        assert sorted(batch) == ["sp", "val"] and sorted(two_d) == ["sp"]
        assert (batch["sp"].shape.as_list(), single["sp"].shape.as_list(),
                two_d["sp"].shape.as_list()) == ([None, 5], [5], [None, 5, 3])
        got = sess.run([batch["sp"], single["sp"], two_d["sp"]])
    assert got[0].indices.tolist() == [[0, 1], [0, 3], [1, 0]]
    assert got[0].values.tolist() == [1.5, 0.5, 2.0] and got[0].dense_shape.tolist() == [2, 5]
    assert got[1].indices.tolist() == [[1], [3]] and got[1].dense_shape.tolist() == [5]
    assert got[2].indices.tolist() == [[0, 1, 2], [0, 3, 0], [1, 0, 1]]
    assert got[2].dense_shape.tolist() == [2, 5, 3]
