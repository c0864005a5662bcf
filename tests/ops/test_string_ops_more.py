"""String ops: AsString, StringJoin, ReduceJoin, StringLength, StringLower/Upper, StringStrip,
Substr and the regex ops, against Python references and values printed by TensorFlow 2.21."""
import re

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests


def _s(*values):
    return np.array([v.encode() if isinstance(v, str) else v for v in values], dtype=object)


def _map(fn):
    return lambda s: np.array([fn(x) for x in s.ravel()], dtype=object).reshape(s.shape)


WORDS = _s("", "abc", "héllo", "日本", "  A b\t\n", "MiXeD")
GRID = np.array([[b"a", b"b", b"c"], [b"d", b"e", b"f"]], dtype=object)
FLOATS = np.array([0.5, -1.25, 123456.789, np.nan, -np.inf, 0.0, -0.0], np.float32)
STR = (tf.string,)

CASES = [
    OpCase("as_string_float", tf.as_string, _map(lambda v: b"%f" % v), [FLOATS]),
    OpCase("as_string_int_width_fill", lambda x: tf.as_string(x, width=5, fill="0"),
           _map(lambda v: b"%05d" % v), [np.array([[3, -42], [0, 12345]], np.int32)],
           dtypes=(tf.int32, tf.int64), grad=False),
    OpCase("string_join", lambda a, b: tf.strings.join([a, "-", b], separator="|"),
           lambda a, b: np.array([x + b"|-|" + y for x, y in zip(a, b)], dtype=object),
           [WORDS, WORDS[::-1].copy()], dtypes=STR, grad=False),
    OpCase("reduce_join_axis1", lambda s: tf.strings.reduce_join(s, axis=1, separator=","),
           lambda s: np.array([b",".join(row) for row in s], dtype=object), [GRID], dtypes=STR,
           grad=False),
    OpCase("reduce_join_all_keepdims", lambda s: tf.reduce_join(s, keep_dims=True),
           lambda s: np.array([[b"".join(s.ravel())]], dtype=object), [GRID], dtypes=STR,
           grad=False),
    OpCase("string_length", tf.strings.length,
           lambda s: np.array([len(x) for x in s], np.int32), [WORDS], dtypes=STR,
           grad=False),
    OpCase("string_length_utf8", lambda s: tf.strings.length(s, unit="UTF8_CHAR"),
           lambda s: np.array([len(x.decode()) for x in s], np.int32), [WORDS], dtypes=STR,
           grad=False),
    OpCase("string_lower", tf.strings.lower, _map(lambda x: x.lower()), [WORDS], dtypes=STR,
           grad=False),
    OpCase("string_upper_utf8", lambda s: tf.strings.upper(s, encoding="utf-8"),
           _map(lambda x: x.decode().upper().encode()), [WORDS], dtypes=STR, grad=False),
    OpCase("string_strip", tf.string_strip, _map(bytes.strip), [WORDS], dtypes=STR,
           grad=False),
    OpCase("substr", lambda s, p, n: tf.substr(s, p, n),
           lambda s, p, n: np.array([x[a:a + b] for x, a, b in zip(s, p, n)], dtype=object),
           [_s("hello", "world", "ab"), np.array([1, 0, 2]), np.array([3, 10, 0])],
           dtypes=STR, fixed_dtypes=(None, tf.int32, tf.int32), grad=False),
    OpCase("unsorted_segment_join",
           lambda s, ids: tf.strings.unsorted_segment_join(s, ids, 3, separator=":"),
           lambda s, ids: np.array([[b":".join(s[ids == k, j]) for j in range(s.shape[1])]
                                    for k in range(3)], dtype=object),
           [GRID, np.array([2, 0])], dtypes=STR, fixed_dtypes=(None, tf.int32), grad=False),
    OpCase("regex_full_match_static", lambda s: tf.strings.regex_full_match(s, r"[a-z]+"),
           lambda s: np.array([re.fullmatch(rb"[a-z]+", x) is not None for x in s]), [WORDS],
           dtypes=STR, grad=False),
    OpCase("regex_full_match_tensor",
           lambda s: tf.strings.regex_full_match(s, tf.constant(r".*b.*")),
           lambda s: np.array([re.fullmatch(rb".*b.*", x) is not None for x in s]), [WORDS],
           dtypes=STR, grad=False),
    OpCase("regex_replace_static", lambda s: tf.strings.regex_replace(s, r"([a-c])", r"<\1>"),
           _map(lambda x: re.sub(rb"([a-c])", rb"<\1>", x)), [WORDS], dtypes=STR,
           grad=False),
    OpCase("regex_replace_tensor",
           lambda s: tf.regex_replace(s, tf.constant("l+"), tf.constant("L"),
                                      replace_global=False),
           _map(lambda x: re.sub(rb"l+", b"L", x, count=1)), [WORDS], dtypes=STR, grad=False),
]

test_forward, test_shapes = case_tests(CASES)


def _run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


# Values printed by TensorFlow 2.21 (tf.compat.v1) for the same calls.
@pytest.mark.parametrize("kwargs,expected", [
    ({}, [b"0.500000", b"-1.250000", b"123456.789062", b"nan", b"-inf", b"0.000000",
          b"-0.000000"]),
    ({"precision": 2}, [b"0.50", b"-1.25", b"123456.79", b"nan", b"-inf", b"0.00", b"-0.00"]),
    ({"precision": 3, "scientific": True},
     [b"5.000e-01", b"-1.250e+00", b"1.235e+05", b"nan", b"-inf", b"0.000e+00", b"-0.000e+00"]),
    ({"shortest": True}, [b"0.5", b"-1.25", b"123457", b"nan", b"-inf", b"0", b"-0"]),
    ({"width": 12, "fill": "0"},
     [b"00000.500000", b"-0001.250000", b"123456.789062", b"         nan", b"        -inf",
      b"00000.000000", b"-0000.000000"]),
    ({"width": 12, "fill": " ", "precision": 1},
     [b"         0.5", b"        -1.2", b"    123456.8", b"         nan", b"        -inf",
      b"         0.0", b"        -0.0"]),
])
def test_as_string_float_formats_match_tensorflow(kwargs, expected):
    with tf.Graph().as_default():
        assert list(_run(tf.as_string(FLOATS, **kwargs))) == expected


def test_as_string_other_types_match_tensorflow():
    with tf.Graph().as_default():
        got = _run([tf.as_string([True, False]),
                    tf.as_string(np.array([1 + 2j, -0.5 - 1j], np.complex64)),
                    tf.as_string(np.array([5, -5], np.int32), width=4, fill="-"),
                    tf.as_string(np.array([5], np.int32), width=4, fill="+"),
                    tf.as_string(np.array([2**64 - 1], np.uint64)),
                    tf.as_string(np.array([0.1], np.float16)),
                    tf.as_string(np.array([0.1, 1e20, 1 / 3, 1e6], np.float32), shortest=True)])
    assert [list(g) for g in got] == [
        [b"true", b"false"], [b"(1.000000,2.000000)", b"(-0.500000,-1.000000)"],
        [b"5   ", b"-5  "], [b"  +5"], [b"18446744073709551615"], [b"0.099976"],
        [b"0.1", b"1e+20", b"0.333333", b"1e+06"]]


@pytest.mark.parametrize("kwargs,dtype,message", [
    ({"fill": "x", "width": 3}, np.float32, 'Fill argument not supported: "x"'),
    ({"fill": "ab"}, np.float32, "Fill string must be one or fewer characters"),
    ({"scientific": True, "shortest": True}, np.float32,
     "Cannot select both scientific and shortest notation"),
    ({"precision": 2}, np.int32, "precision not supported for datatype int32"),
])
def test_as_string_errors(kwargs, dtype, message):
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(message)):
            _run(tf.as_string(np.array([1], dtype), **kwargs))


def test_string_join_shapes_and_errors():
    with tf.Graph().as_default():
        assert _run(tf.strings.join([])) == b""
        assert _run(tf.string_join(["a", "b"], separator=", ")) == b"a, b"
        joined = tf.strings.join([tf.placeholder(tf.string, [None, 3]), "x",
                                  tf.placeholder(tf.string, [2, None])], name="j")
        assert joined.shape.as_list() == [2, 3] and joined.op.inputs[1].op.name == "j/inputs_1"
        with pytest.raises(ValueError, match="Shapes must be equal rank, but are 2 and 1"):
            tf.strings.join([[["a"], ["b"]], ["x", "y"]])
        with pytest.raises(ValueError, match=r"Dimension 0 in both shapes must be equal, but "
                                             r"are 2 and 3\. Shapes are \[2\] and \[3\]\."):
            tf.strings.join([["a", "b"], ["x", "y", "z"]])
        a, b = tf.placeholder(tf.string, [None]), tf.placeholder(tf.string, [None])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"Input shapes do not match: \[2\] vs\. \[3\]"):
            _run(tf.strings.join([a, b]), {a: ["a", "b"], b: ["a", "b", "c"]})


def test_reduce_join_axis_order_names_and_errors():
    with tf.Graph().as_default():
        grid = [["a", "b"], ["c", "d"]]
        got = _run([tf.strings.reduce_join(grid, axis=[0, 1]),
                    tf.strings.reduce_join(grid, axis=[1, 0]),
                    tf.strings.reduce_join(grid, axis=-1),
                    tf.strings.reduce_join(np.zeros([2, 0], object), axis=1),
                    tf.strings.reduce_join("a")])
        assert got[:2] == [b"acbd", b"abcd"] and list(got[2]) == [b"ab", b"cd"]
        assert list(got[3]) == [b"", b""] and got[4] == b"a"
    with tf.Graph().as_default():
        joined = tf.strings.reduce_join(tf.placeholder(tf.string, [2, 3]))
        assert joined.op.name == "ReduceJoin/ReduceJoin" and joined.shape.as_list() == []
        assert joined.op.inputs[1].op.name == "ReduceJoin/Const"
        np.testing.assert_array_equal(_run(joined.op.inputs[1]), [1, 0])
        assert tf.strings.reduce_join(tf.placeholder(tf.string, [None, 3, None]), axis=[0, 2],
                                      keepdims=True).shape.as_list() == [1, 3, 1]
        axis = tf.placeholder(tf.int32, [])
        assert tf.strings.reduce_join(tf.placeholder(tf.string, [2, 3]), axis=axis,
                                      keepdims=True).shape.as_list() == [None, None]
        assert tf.strings.reduce_join(tf.placeholder(tf.string, None)).shape.ndims is None
        with pytest.raises(ValueError, match="Invalid reduction dimension 2 for input with 2 "
                                             "dimensions."):
            tf.strings.reduce_join([["a", "b"]], axis=2)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Duplicate reduction dimension 1"):
            _run(tf.strings.reduce_join([["a", "b"]], axis=[1, 1]))
        with pytest.raises(tf.errors.OutOfRangeError,
                           match=r"Invalid reduction dimension -3 for input with 2 dimension\(s\)"):
            _run(tf.strings.reduce_join([["a"]], axis=axis), {axis: -3})


def test_substr_tensorflow_cases():
    with tf.Graph().as_default():
        got = _run([tf.strings.substr(["hello"], -3, 2),
                    tf.strings.substr(["hello"], 1, -1),
                    tf.strings.substr(["hello"], 5, 2),
                    tf.strings.substr(["héllo", "日本語"], 1, 2, unit="UTF8_CHAR"),
                    tf.strings.substr(["héllo"], -4, 2, unit="UTF8_CHAR"),
                    tf.strings.substr([["ab", "bc", "cd"]], [[0], [1]], [[1], [1]]),
                    tf.strings.substr(["hello"], tf.constant(1, tf.int64),
                                      tf.constant(2, tf.int64))])
        assert [g.tolist() for g in got] == [
            [b"ll"], [b"ello"], [b""], ["é".encode() + b"l", "本語".encode()],
            ["é".encode() + b"l"], [[b"a", b"b", b"c"], [b"b", b"c", b"d"]], [b"el"]]
        for args, message in [((["hello", "hi"], 3, 1), "pos 3 out of range for string b'hi' "
                                                         "at index 1"),
                              ((["hello"], -6, 2), "pos -6 out of range for string b'hello' "
                                                   "at index 0")]:
            with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(message)):
                _run(tf.strings.substr(*args))
        with pytest.raises(ValueError, match=r"pos and len shapes must match: \[2\] vs\. \[1\]"):
            tf.strings.substr(["hello"], [1, 2], [2])
        with pytest.raises(ValueError, match="Attr 'unit' of 'Substr' Op passed string 'X'"):
            tf.strings.substr(["hello"], 1, 2, unit="X")
        assert tf.strings.substr(tf.placeholder(tf.string, [3]), tf.placeholder(tf.int32, [2, 3]),
                                 tf.placeholder(tf.int32, [2, 3])).shape.as_list() == [2, 3]


def test_case_length_strip_tensorflow_cases():
    with tf.Graph().as_default():
        got = _run([tf.strings.lower(["HéLLo ÀB"]), tf.strings.lower(["HéLLo ÀB"], "utf-8"),
                    tf.strings.upper(["ßx"], encoding="utf-8"),
                    tf.strings.upper([b"\xffa"], encoding="utf-8"),
                    tf.strings.length([b"\xff\xfea", b"\xc3"], unit="UTF8_CHAR"),
                    tf.strings.strip(["\x0b\x0cx\r", "\xa0y", "\u2003a"])])
        assert [g.tolist() for g in got] == [
            ["hé".encode() + b"llo " + "À".encode() + b"b"], ["héllo àb".encode()], [b"SSX"],
            [b"\xef\xbf\xbdA"], [3, 1], [b"x", "\xa0y".encode(), "\u2003a".encode()]]
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="only utf-8 or '' \\(no encoding\\) is supported, received "
                                 "latin1"):
            _run(tf.strings.lower(["a"], encoding="latin1"))
        with pytest.raises(ValueError, match="Attr 'unit' of 'StringLength' Op passed string "
                                             "'CHAR' not in"):
            tf.strings.length(["a"], unit="CHAR")


def test_regex_tensorflow_cases():
    with tf.Graph().as_default():
        got = _run([tf.strings.regex_full_match(["abc", "ab", "", "é"], "a.c|."),
                    tf.strings.regex_replace(["aaa bab", "", "héé"], "a|é", "X"),
                    tf.strings.regex_replace(["john smith"], r"(\w+) (\w+)", r"\2, \1 \0 \\"),
                    tf.strings.regex_replace(["abc"], "", "-"),
                    tf.strings.regex_replace(["abc"], "(a)", r"\2")])
        assert [g.tolist() for g in got] == [
            [True, False, False, True], [b"XXX bXb", b"", b"hXX"],
            [b"smith, john john smith \\"], [b"-a-b-c-"], [b"abc"]]
        ops = [op.type for op in tf.get_default_graph().get_operations()]
        assert "StaticRegexFullMatch" in ops and "StaticRegexReplace" in ops
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Invalid pattern: a\("):
            _run(tf.strings.regex_full_match(["abc"], "a("))
        pattern = tf.placeholder(tf.string, [])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Invalid pattern: \("):
            _run(tf.strings.regex_replace(["a"], pattern, "b"), {pattern: "("})
        with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
            tf.strings.regex_replace(["a"], tf.placeholder(tf.string, [2]), "b")


def test_to_number_and_namespace():
    with tf.Graph().as_default():
        np.testing.assert_array_equal(_run(tf.strings.to_number(["1.5", "-2"])), [1.5, -2.0])
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="StringToNumberOp could not correctly convert string: x"):
            _run(tf.strings.to_number(["x"]))
    assert tf.strings.as_string is tf.as_string and tf.strings.substr is tf.substr
    assert tf.strings.reduce_join is tf.reduce_join and tf.strings.join is tf.string_join


def test_string_ops_have_no_gradient():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        assert tf.gradients(tf.strings.length(tf.as_string(x)), x) == [None]


def test_unsorted_segment_join_values_shapes_and_errors():
    """Values and messages printed by TensorFlow 2.21's tf.strings.unsorted_segment_join."""
    with tf.Graph().as_default():
        rows = [["Y", "q", "c"], ["Y", "6", "6"], ["p", "G", "a"]]
        joined = tf.strings.unsorted_segment_join(rows, [1, 0, 1], 2, separator=":")
        assert joined.op.name == "UnsortedSegmentJoin" and joined.shape.as_list() == [2, 3]
        got = _run([joined, tf.strings.unsorted_segment_join(["a", "b", "c", "d"],
                                                             [2, 0, 2, 0], 4),
                    tf.strings.unsorted_segment_join([["a", "b"], ["c", "d"]],
                                                     [[0, 1], [1, 1]], 3, separator="-")])
        np.testing.assert_array_equal(got[0], [[b"Y", b"6", b"6"], [b"Y:p", b"q:G", b"c:a"]])
        np.testing.assert_array_equal(got[1], [b"bd", b"", b"ac", b""])
        np.testing.assert_array_equal(got[2], [b"a", b"b-c-d", b""])
        count = tf.placeholder(tf.int32, [])
        assert tf.strings.unsorted_segment_join(
            tf.placeholder(tf.string, [4, 5]), [0, 1, 0, 1], count).shape.as_list() == [None, 5]
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="segment_ids are not allowed to exceed num_segments or to "
                                 "have negative values."):
            _run(tf.strings.unsorted_segment_join(["a", "b"], [0, 2], 2))
        with pytest.raises(ValueError, match="Shape must be at least rank 2 but is rank 1"):
            tf.strings.unsorted_segment_join(["a", "b"], [[0]], 2)
