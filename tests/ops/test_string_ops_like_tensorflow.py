"""String ops checked against TensorFlow 2.21's printed values: tf.substr (TF's UTF-8 walk,
broadcasting only to rank 2, its shape function and messages), tf.as_string (TF's checks and
formats for every kind of dtype), tf.reduce_join's axis rank and tf.compat.as_bytes/as_text."""
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors


def _run(t, feed=None):
    with tf.Session() as s:
        return np.asarray(s.run(t, feed_dict=feed), dtype=object).tolist()


def _error(t, feed=None):
    with tf.Session() as s:
        with pytest.raises(errors.OpError) as info:
            s.run(t, feed_dict=feed)
    return type(info.value), info.value.message.split("\n")[0]


@pytest.mark.parametrize("pos, length, expected", [
    (1, -1, [b"", b""]),                       # a negative length with pos >= 0: empty
    (-3, 0, [b"", b""]),
    (-5, 2, [b"he", b"h\xc3\xa9"]),
])
def test_substr_utf8_lengths(pos, length, expected):
    with tf.Graph().as_default():
        out = tf.substr(["hello", "héllo"], pos, length, unit="UTF8_CHAR")
        assert _run(out) == expected


def test_substr_utf8_walk_matches_tensorflow():
    with tf.Graph().as_default():
        lead = tf.constant([b"\x80\x80ab"])   # leading continuation bytes are one character
        assert _run(tf.substr(lead, 1, 1, unit="UTF8_CHAR")) == [b"a"]
        assert _run(tf.substr(lead, -3, 1, unit="UTF8_CHAR")) == [b"\x80\x80"]
        assert _run(tf.substr(["héllo"], 0, -2)) == [b"h\xc3\xa9llo"]   # BYTE: to the end


@pytest.mark.parametrize("build, cls, message", [
    (lambda: tf.substr(["héllo"], -3, -1, unit="UTF8_CHAR"), errors.InvalidArgumentError,
     "pos -3 out of range for string at index 0"),
    (lambda: tf.substr(["héllo"], 6, 1, unit="UTF8_CHAR"), errors.InvalidArgumentError,
     "pos 6 out of range for string at index 0"),
    (lambda: tf.substr([["ab", "c"], ["d", "e"]], [0, 2], [1, 1], unit="UTF8_CHAR"),
     errors.InvalidArgumentError, "pos 2 out of range for string at index 0"),
    (lambda: tf.substr([["abc", "de"], ["fgh", "ij"]], [1, 3], [1, 2]),
     errors.InvalidArgumentError, "pos 3 out of range for string b'de' at index (0, 1)"),
    (lambda: tf.substr("abc", [0, 5], [1, 1]), errors.InvalidArgumentError,
     "pos 5 out of range for string b'abc' at index 1"),
    (lambda: tf.substr("abc", [[[1, 0]]], [[[1, 2]]]), errors.UnimplementedError,
     "Substr broadcast not implemented for 3 dimensions"),
])
def test_substr_run_errors(build, cls, message):
    with tf.Graph().as_default():
        assert _error(build()) == (cls, message)


def test_substr_same_shape_needs_no_broadcasting_at_any_rank():
    with tf.Graph().as_default():
        out = tf.substr([[["abc", "de"]]], [[[1, 0]]], [[[1, 2]]])
        assert _run(out) == [[[b"b", b"de"]]]


def test_substr_pos_and_len_shapes_at_run_time():
    with tf.Graph().as_default():
        pos, length = tf.placeholder(tf.int32), tf.placeholder(tf.int32)
        out = tf.substr(["abc", "def"], pos, length)
        assert out.shape.ndims is None
        assert _error(out, {pos: [0, 1], length: [1]}) == (
            errors.InvalidArgumentError, "pos and len should have the same shape, got: [2] vs. [1]")


@pytest.mark.parametrize("pos, length, message", [
    (tf.placeholder, None, "pos and len shapes must match: [?] vs. [2]"),
    (None, tf.placeholder, "pos and len shapes must match: [2] vs. [?]"),
    (None, "unknown", "pos and len shapes must match: [2] vs. ?"),
    ("rank2", None, "Shape must be rank 1 but is rank 2"),
    (None, "scalar", "Shape must be rank 0 but is rank 1"),
])
def test_substr_static_shape_errors(pos, length, message):
    with tf.Graph().as_default():
        def arg(kind):
            if kind is tf.placeholder:
                return tf.placeholder(tf.int32, [None])
            return {None: [1, 1], "unknown": tf.placeholder(tf.int32), "rank2": [[1, 1]],
                    "scalar": 1}[kind]
        with pytest.raises(ValueError, match="^" + re.escape(message)):
            tf.substr(["abc", "def"], arg(pos), arg(length))


def test_substr_static_shape_with_unknown_pos_rank():
    with tf.Graph().as_default():
        assert tf.substr(["abc", "def"], tf.placeholder(tf.int32), [1, 1]).shape.ndims is None
        assert tf.substr([["a"], ["b"]], [0, 1], [1, 1]).shape.as_list() == [2, 2]


@pytest.mark.parametrize("dtype, values, kwargs, expected", [
    (tf.uint32, [0, 7, 200], {"fill": "+"}, [b"0", b"7", b"200"]),
    (tf.uint8, [0, 7, 200], {"width": 3, "fill": "+"}, [b"  0", b"  7", b"200"]),
    (tf.uint64, [0, 7, 200], {"fill": " "}, [b"0", b"7", b"200"]),
    (tf.int32, [0, -5, 42], {"width": 3, "fill": "+"}, [b" +0", b" -5", b"+42"]),
    (tf.string, ["ab", "c"], {"width": 8}, [b"      ab", b"       c"]),
    (tf.string, ["ab", "c"], {"width": 8, "fill": "0"}, [b"      ab", b"       c"]),
    (tf.string, ["ab", "c"], {"width": 8, "fill": "-"}, [b"ab      ", b"c       "]),
    (tf.string, ["ab", "c"], {"width": 3, "fill": "+"}, [b" ab", b"  c"]),
    (tf.string, ["ab", "c"], {"width": 10, "fill": "#", "precision": 0}, [b" " * 10] * 2),
    (tf.string, ["ab", "c"], {"precision": 0, "shortest": True}, [b"ab", b"c"]),
    (tf.string, ["é", "abcdef"], {"width": 4, "precision": 2}, [b"  \xc3\xa9", b"  ab"]),
])
def test_as_string_formats(dtype, values, kwargs, expected):
    with tf.Graph().as_default():
        assert _run(tf.as_string(tf.constant(values, dtype), **kwargs)) == expected


@pytest.mark.parametrize("dtype, values, kwargs, message", [
    (tf.int8, [1], {"scientific": True}, "scientific and shortest format not supported for "
     "datatype int8"),
    (tf.uint16, [1], {"shortest": True, "precision": 2}, "scientific and shortest format not "
     "supported for datatype uint16"),
    (tf.int64, [1], {"scientific": True, "shortest": True}, "scientific and shortest format "
     "not supported for datatype int64"),
    (tf.bool, [True], {"shortest": True}, "scientific and shortest format not supported for "
     "datatype bool"),
    (tf.bool, [True], {"precision": 1}, "precision not supported for datatype bool"),
    (tf.float32, [1.0], {"scientific": True, "shortest": True, "fill": "x"},
     "Cannot select both scientific and shortest notation"),
])
def test_as_string_attr_errors(dtype, values, kwargs, message):
    with tf.Graph().as_default():
        out = tf.as_string(tf.constant(values, dtype), **kwargs)
        assert _error(out) == (errors.InvalidArgumentError, message)


def test_reduce_join_axes_must_be_at_most_a_vector():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="^Shape must be at most rank 1 but is rank 2"):
            tf.reduce_join([["a", "b"]], [[0], [1]])


def test_compat_bytes_and_text():
    assert tf.compat.as_bytes("é") == b"\xc3\xa9"
    assert tf.compat.as_bytes(bytearray(b"ab")) == b"ab"
    assert tf.compat.as_text(b"\xc3\xa9") == "é"
    assert tf.compat.as_str("y") == "y"
    assert tf.compat.as_str_any(5) == "5"
    for fn in (tf.compat.as_bytes, tf.compat.as_text):
        with pytest.raises(TypeError, match="^Expected binary or unicode string, got 1$"):
            fn(1)
    with pytest.raises(UnicodeDecodeError):
        tf.compat.as_text(b"\xff")
