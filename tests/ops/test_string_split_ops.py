"""StringSplit (tf.string_split) and StringSplitV2 (tf.strings.split): OpCase rows whose
expected SparseTensors were recorded from TensorFlow 2.21 on the same inputs (empty strings and
tokens, delimiter sets, single bytes, whitespace runs, maxsplit, scalars and rank-2/3 inputs),
shape functions with unknown dimensions, and TensorFlow's names and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.testing.op_case import OpCase, case_tests, check_shapes, parametrize

SRC = ["hello world", "a  b c", "", " lead", "trail ", "x", "d\xe9 f"]
WS = ["hello world", " a  b\tc\n", "", "x\x0by\x0cz\rw", "\xa0u v", "   ", "a b "]
SEP = ["1<>2<><>3", "<>", "", "abc", "<><>x"]

# name -> (indices, values, dense_shape) that TensorFlow 2.21 returned.
TF_RESULTS = {
    "ss_default": (
        [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [3, 0], [4, 0], [5, 0], [6, 0], [6, 1]],
        [b'hello', b'world', b'a', b'b', b'c', b'lead', b'trail', b'x', b'd\xc3\xa9', b'f'],
        [7, 3]),
    "ss_keep_empty": (
        [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [1, 3], [3, 0], [3, 1], [4, 0], [4, 1], [5, 0],
         [6, 0], [6, 1]],
        [b'hello', b'world', b'a', b'', b'b', b'c', b'', b'lead', b'trail', b'', b'x',
         b'd\xc3\xa9', b'f'],
        [7, 4]),
    "ss_set": ([[0, 0], [0, 1], [0, 2], [1, 0]], [b'a', b'b', b'c', b'x'], [3, 3]),
    "ss_set_keep": (
        [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1], [1, 2]],
        [b'a', b'b', b'', b'c', b'', b'x', b''],
        [3, 4]),
    "ss_bytes": (
        [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1], [2, 2]],
        [b'a', b'b', b'c', b'd', b'\xc3', b'\xa9'],
        [3, 3]),
    "ss_empty_input": ([], [], [0, 0]),
    "sv2_ws": (
        [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [3, 0], [3, 1], [3, 2], [3, 3], [4, 0], [4, 1],
         [6, 0], [6, 1]],
        [b'hello', b'world', b'a', b'b', b'c', b'x', b'y', b'z', b'w', b'\xc2\xa0u', b'v', b'a',
         b'b'],
        [7, 4]),
    "sv2_sep": (
        [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1], [2, 0], [3, 0], [4, 0], [4, 1], [4, 2]],
        [b'1', b'2', b'', b'3', b'', b'', b'', b'abc', b'', b'', b'x'],
        [5, 4]),
    "sv2_max1_ws": (
        [[0, 0], [0, 1], [1, 0], [1, 1], [3, 0], [3, 1], [4, 0], [4, 1], [6, 0], [6, 1]],
        [b'hello', b'world', b'a', b'b\tc\n', b'x', b'y\x0cz\rw', b'\xc2\xa0u', b'v', b'a', b'b '],
        [7, 2]),
    "sv2_max2_ws": (
        [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [3, 0], [3, 1], [3, 2], [4, 0], [4, 1],
         [4, 2], [6, 0], [6, 1], [6, 2]],
        [b'hello', b'world', b'', b'a', b'b', b'c\n', b'x', b'y', b'z\rw', b'\xc2\xa0u', b'v', b'',
         b'a', b'b', b''],
        [7, 3]),
    "sv2_max0": (
        [[0, 0], [1, 0], [2, 0], [3, 0], [4, 0], [5, 0], [6, 0]],
        [b'hello world', b' a  b\tc\n', b'', b'x\x0by\x0cz\rw', b'\xc2\xa0u v', b'   ', b'a b '],
        [7, 1]),
    "sv2_max1_sep": (
        [[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [3, 0], [4, 0], [4, 1]],
        [b'1', b'2<><>3', b'', b'', b'', b'abc', b'', b'<>x'],
        [5, 2]),
    "sv2_scalar": ([[0, 0], [0, 1], [0, 2]], [b'a', b'b', b'c'], [1, 3]),
    "sv2_rank2": (
        [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 1, 0], [1, 1, 1], [1, 1, 2], [2, 0, 0]],
        [b'a', b'b', b'c', b'd', b'e', b'f', b'g'],
        [3, 2, 3]),
    "sv2_rank3": (
        [[0, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0]],
        [b'a', b'b', b'c', b'd', b''],
        [2, 2, 1, 2]),
    "sv2_rank2_empty": ([], [], [0, 0, 0]),
}


def _strings(values):
    flat = np.array([v.encode() if isinstance(v, str) else v for v in np.ravel(values)],
                    dtype=object)
    return lambda rng, dt: flat.reshape(np.shape(values))


def _recorded(name):
    """The reference: TensorFlow's SparseTensor parts for the row (inputs are fixed)."""
    indices, values, shape = TF_RESULTS[name]
    expected = [np.array(indices, np.int64).reshape(-1, len(shape)),
                np.array(values, dtype=object).reshape(-1), np.array(shape, np.int64)]
    return lambda *arrays: expected


def _parts(sparse):
    return [sparse.indices, sparse.values, sparse.dense_shape]


def _row(name, split, inputs, unknown_shapes=True):
    return OpCase(name, lambda *t: _parts(split(*t)), _recorded(name),
                  [_strings(x) for x in inputs], dtypes=(tf.string,), grad=False,
                  unknown_shapes=unknown_shapes)


CASES = [
    _row("ss_default", tf.string_split, [SRC]),
    _row("ss_keep_empty", lambda s, d: tf.string_split(s, d, skip_empty=False), [SRC, " "]),
    _row("ss_set", lambda s, d: tf.string_split(s, sep=d), [["a,b;;c", ";x,", ""], ",;"]),
    _row("ss_set_keep", lambda s, d: tf.string_split(s, delimiter=d, skip_empty=False),
         [["a,b;;c", ";x,", ""], ",;"]),
    _row("ss_bytes", tf.string_split, [["abc", "", "d\xe9"], ""]),
    _row("ss_empty_input", tf.string_split, [np.array([], dtype=object)]),
    _row("sv2_ws", tf.strings.split, [WS]),
    _row("sv2_sep", tf.strings.split, [SEP, "<>"]),
    _row("sv2_max1_ws", lambda s: tf.strings.split(s, maxsplit=1), [WS]),
    _row("sv2_max2_ws", lambda s: tf.strings.split(s, maxsplit=2), [WS]),
    _row("sv2_max0", lambda s: tf.strings.split(s, maxsplit=0), [WS]),
    _row("sv2_max1_sep", lambda s, d: tf.strings.split(s, d, maxsplit=1), [SEP, "<>"]),
    # An input of unknown rank is split as a vector (as in TensorFlow): these rows need theirs.
    _row("sv2_scalar", tf.strings.split, ["a b c"], unknown_shapes=False),
    _row("sv2_rank2", tf.strings.split, [[["a b", "c"], ["", "d e f"], ["g", ""]]],
         unknown_shapes=False),
    _row("sv2_rank3", tf.strings.split, [[[["a b"], ["c"]], [["d"], [""]]], " "],
         unknown_shapes=False),
    _row("sv2_rank2_empty", tf.strings.split, [np.zeros((0, 3), dtype=object)],
         unknown_shapes=False),
]


test_forward, _ = case_tests(CASES)


@parametrize([c for c in CASES if c.unknown_shapes])
def test_shapes(case, dtype):
    check_shapes(case, dtype)


def test_higher_rank_with_unknown_dimensions():
    words = np.array([["a b", "c"], ["", "d e f"], ["g", ""]], dtype=object)
    with tf.Graph().as_default():
        holder = tf.placeholder(tf.string, [None, None])
        st = tf.strings.split(holder)
        assert st.indices.shape.as_list() == [None, 3]
        assert st.dense_shape.shape.as_list() == [3]
        with tf.Session() as sess:
            got = sess.run(st, {holder: words})
    indices, values, shape = TF_RESULTS["sv2_rank2"]
    np.testing.assert_array_equal(got.indices, indices)
    assert got.values.tolist() == values and got.dense_shape.tolist() == shape


def test_names_static_shapes_and_types():
    with tf.Graph().as_default() as graph:
        st = tf.string_split(["a b"])
        assert [op.name for op in graph.get_operations()] == [
            "StringSplit/Const", "StringSplit/Const_1", "StringSplit/StringSplit"]
        assert st.indices.op.type == "StringSplit"
        assert st.indices.shape.as_list() == [None, 2] and st.indices.dtype == tf.int64
        assert st.values.shape.as_list() == [None] and st.values.dtype == tf.string
        assert st.dense_shape.shape.as_list() == [2]
        assert st.indices.op.get_attr("skip_empty") is True
        v2 = tf.strings.split(["a b"], name="words")
        assert v2.values.op.name == "words/StringSplitV2"
        assert v2.values.op.inputs[0].op.name == "words/input"
        assert v2.values.op.get_attr("maxsplit") == -1


@pytest.mark.parametrize("build,error,message", [
    (lambda: tf.string_split("a b"), ValueError, "Shape must be rank 1 but is rank 0"),
    (lambda: tf.string_split([["a b"]]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: tf.string_split(["a b"], delimiter=tf.constant([" "])), ValueError,
     "Shape must be rank 0 but is rank 1"),
    (lambda: tf.string_split(["a b"], sep=" ", delimiter=" "), ValueError,
     "Cannot specify both 'delimiter' and 'sep'."),
    (lambda: tf.strings.split(["a b"], source=["a"]), ValueError,
     "Cannot specify both 'source' and 'input'."),
    (lambda: tf.strings.split(["a b"], sep=tf.constant([" "])), ValueError,
     "Shape must be rank 0 but is rank 1"),
    (lambda: tf.string_split(["a b"], result_type="Dense"), ValueError,
     "result_type must be 'RaggedTensor' or 'SparseTensor'."),
    (lambda: tf.strings.split(["a b"], result_type="RaggedTensor"), NotImplementedError,
     "RaggedTensor"),
    (lambda: tf.string_split([1, 2]), TypeError, "Expected string"),
])
def test_graph_construction_errors(build, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error) as info:
            build()
        assert message in str(info.value)


@pytest.mark.parametrize("split,strings,separator,message", [
    (tf.string_split, [["a b"]], " ", "input must be a vector, got shape: [1,1]"),
    (tf.string_split, ["a b"], [" "], "delimiter must be a scalar, got shape: [1]"),
    (tf.strings.split, [["a b"]], " ", "input must be a vector, got shape: [1,1]"),
    (tf.strings.split, ["a b"], [" "], "sep must be a scalar, got shape: [1]"),
])
def test_runtime_errors(split, strings, separator, message):
    with tf.Graph().as_default():
        s, d = tf.placeholder(tf.string), tf.placeholder(tf.string)
        st = split(s, d)
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=message.replace("[", r"\[")):
                sess.run(st, {s: strings, d: separator})
