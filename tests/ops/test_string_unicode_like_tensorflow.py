"""tf.strings.unicode_transcode as TensorFlow 2.21 (ICU) computes it: one replacement per
maximal invalid subsequence, the errors policies, control-character replacement, BOM handling
and the attr errors. Expected bytes are TF 2.21's outputs."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

_WORDS = np.array(["", "abc", "héllo", "日本", "a😀"], dtype=object)
_WORDS = np.array([w.encode() for w in _WORDS], dtype=object)


def _map(fn):
    return lambda s: np.array([fn(x) for x in s.ravel()], dtype=object).reshape(s.shape)


CASES = [
    OpCase("unicode_transcode_utf16",
           lambda s: tf.strings.unicode_transcode(s, "UTF-8", "UTF-16-BE"),
           _map(lambda x: x.decode().encode("utf-16-be")), [_WORDS], dtypes=(tf.string,),
           grad=False),
]
test_forward, test_shapes = case_tests(CASES)

_BAD_UTF8 = [b"a\xffb", b"\xe2\x82", b"x\xe2\x82y", b"\xed\xa0\x80", b"\xc0\xaf",
             b"\xf4\x90\x80\x80", b"a\x01\x1fb\x7f", b"", "hé😀".encode()]
_R = b"\xef\xbf\xbd"   # U+FFFD in UTF-8


def _run(t):
    with tf.Session() as s:
        return list(np.asarray(s.run(t), dtype=object).ravel())


@pytest.mark.parametrize("kwargs, expected", [
    ({}, [b"a" + _R + b"b", _R, b"x" + _R + b"y", _R * 3, _R * 2, _R * 4, b"a\x01\x1fb\x7f",
          b"", b"h\xc3\xa9\xf0\x9f\x98\x80"]),
    ({"errors": "ignore"}, [b"ab", b"", b"xy", b"", b"", b"", b"a\x01\x1fb\x7f", b"",
                            b"h\xc3\xa9\xf0\x9f\x98\x80"]),
    ({"replacement_char": 63}, [b"a?b", b"?", b"x?y", b"???", b"??", b"????", b"a\x01\x1fb\x7f",
                                b"", b"h\xc3\xa9\xf0\x9f\x98\x80"]),
    ({"replace_control_characters": True},
     [b"a" + _R + b"b", _R, b"x" + _R + b"y", _R * 3, _R * 2, _R * 4, b"a" + _R * 2 + b"b\x7f",
      b"", b"h\xc3\xa9\xf0\x9f\x98\x80"]),
    ({"replace_control_characters": True, "errors": "ignore"},
     [b"ab", b"", b"xy", b"", b"", b"", b"ab\x7f", b"", b"h\xc3\xa9\xf0\x9f\x98\x80"]),
])
def test_invalid_utf8(kwargs, expected):
    with tf.Graph().as_default():
        out = tf.strings.unicode_transcode(tf.constant(_BAD_UTF8), "UTF-8", "UTF-8", **kwargs)
        assert _run(out) == expected


def test_output_encodings():
    with tf.Graph().as_default():
        x = tf.constant([b"a\xffb", "hé😀".encode()])
        u16 = tf.strings.unicode_transcode(x, "UTF-8", "UTF-16-BE")
        u32 = tf.strings.unicode_transcode(x, "UTF-8", "UTF-32-BE")
        assert _run(u16) == [b"\x00a\xff\xfd\x00b", b"\x00h\x00\xe9\xd8=\xde\x00"]
        assert _run(u32) == [b"\x00\x00\x00a\x00\x00\xff\xfd\x00\x00\x00b",
                             b"\x00\x00\x00h\x00\x00\x00\xe9\x00\x01\xf6\x00"]
        grid = tf.strings.unicode_transcode(tf.constant([["ab"], ["c"]]), "UTF-8", "UTF-32-BE")
        assert grid.shape.as_list() == [2, 1]
        assert _run(grid) == [b"\x00\x00\x00a\x00\x00\x00b", b"\x00\x00\x00c"]


@pytest.mark.parametrize("encoding, data, expected", [
    ("UTF-16-BE", ["hé😀".encode("utf-16-be"), b"\xd8\x00\x00a", b"\x00a\x00", b"\xdc\x00"],
     [b"h\xc3\xa9\xf0\x9f\x98\x80", _R + b"a", b"a" + _R, _R]),
    ("UTF-32-BE", ["hé😀".encode("utf-32-be"), b"\x00\x11\x00\x00", b"\x00\x00\xd8\x00",
                   b"\x00\x00\x00"],
     [b"h\xc3\xa9\xf0\x9f\x98\x80", _R, _R, _R]),
    ("ISO-8859-1", [b"caf\xe9"], [b"caf\xc3\xa9"]),
    ("UTF-16LE", ["hé".encode("utf-16-le")], [b"h\xc3\xa9"]),
    ("UTF-16", [b"\xfe\xff\x00a", b"\x00b"], [b"a", b"b"]),      # BOM dropped; else big-endian
    ("UTF-16-BE", [b"\xfe\xff\x00a"], [b"\xef\xbb\xbfa"]),         # BOM kept as U+FEFF
    ("UTF-8", [b"\xef\xbb\xbfa", b"a\x00b"], [b"\xef\xbb\xbfa", b"a\x00b"]),
])
def test_input_encodings(encoding, data, expected):
    with tf.Graph().as_default():
        out = tf.strings.unicode_transcode(tf.constant(data), encoding, "UTF-8")
        assert _run(out) == expected


def test_replacement_char_edge_cases():
    with tf.Graph().as_default():
        x = tf.constant([b"\x80"])
        surrogate = tf.strings.unicode_transcode(x, "UTF-8", "UTF-8", replacement_char=0xD800)
        assert _run(surrogate) == [_R]
        ctrl = tf.strings.unicode_transcode(tf.constant(["a\x00b"]), "UTF-8", "UTF-16-BE",
                                            replace_control_characters=True)
        assert _run(ctrl) == [b"\x00a\xff\xfd\x00b"]
        scalar = tf.strings.unicode_transcode(tf.constant("ab"), "UTF-8", "UTF-16-BE")
        assert scalar.shape.as_list() == []
        with tf.Session() as s:
            assert s.run(scalar) == b"\x00a\x00b"


@pytest.mark.parametrize("kwargs", [
    {"input_encoding": "UTF-8", "output_encoding": "UTF-8", "errors": "strict"},
    {"input_encoding": "FOO", "output_encoding": "UTF-8"},
    {"input_encoding": "UTF-8", "output_encoding": "UTF-8", "replacement_char": 0x110000},
])
def test_run_time_errors(kwargs):
    with tf.Graph().as_default():
        out = tf.strings.unicode_transcode(tf.constant([b"a\xffb"]), **kwargs)
        with pytest.raises(tf.errors.InvalidArgumentError):
            _run(out)


def test_strict_accepts_valid_input():
    with tf.Graph().as_default():
        out = tf.strings.unicode_transcode(tf.constant(["hé😀".encode("utf-16-be")]),
                                           "UTF-16-BE", "UTF-8", errors="strict")
        assert _run(out) == [b"h\xc3\xa9\xf0\x9f\x98\x80"]


@pytest.mark.parametrize("kwargs", [{"output_encoding": "ISO-8859-1"}, {"errors": "x"}])
def test_static_attr_errors(kwargs):
    args = {"input_encoding": "UTF-8", "output_encoding": "UTF-8", **kwargs}
    with tf.Graph().as_default(), pytest.raises(ValueError):
        tf.strings.unicode_transcode(tf.constant(["a"]), **args)
