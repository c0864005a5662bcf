"""StringNGrams and tf.strings.ngrams (dense input): results, static shapes and errors as
TensorFlow 2.21's, recorded there; the op itself on ragged row splits (rows of different
lengths, int32 splits, padding and short-sequence rules, its run-time checks)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops.string_ngrams_ops import StringNGrams
from tensorweave.testing.op_case import (
    OpCase,
    case_tests,
    check_forward,
    check_shapes,
    parametrize,
)

WORDS = np.array([b"A", b"B", b"C", b"D"], dtype=object)
ROWS = np.array([[b"a", b"b", b"c"], [b"d", b"e", b"f"]], dtype=object)
CUBE = np.array([[[b"A", b"B", b"C"]], [[b"D", b"E", b"F"]]], dtype=object)
LETTERS = np.array([b"a", b"b", b"c", b"d", b"e", b"f"], dtype=object)


def _strings(value, shape=None):
    array = np.array(value, dtype=object)
    return lambda *inputs: array if shape is None else array.reshape(shape)


def _fixed(value):
    return lambda rng, dt: value


def _dense(name, build, data, expected, shape=None):
    return OpCase(name, build, _strings(expected, shape), [_fixed(data)], dtypes=(tf.string,),
                  grad=False, unknown_shapes=False)


def _raw(widths, left=b"", right=b"", pad_width=0, preserve=False, separator=" "):
    """The op itself on (data, splits)."""
    def build(data, splits):
        return apply_op(StringNGrams, [data, splits], {
            "separator": separator, "ngram_widths": widths, "left_pad": left,
            "right_pad": right, "pad_width": pad_width, "preserve_short_sequences": preserve})
    return build


def _raw_case(name, build, splits, grams, grams_splits, data=LETTERS, dtypes=(tf.int64,)):
    return OpCase(name, build, lambda d, s: [np.array(grams, dtype=object),
                                             np.array(grams_splits, s.dtype)],
                  [_fixed(data), lambda rng, dt: np.array(splits, dt)], dtypes=dtypes,
                  fixed_dtypes=(tf.string,), grad=False)


ngrams = tf.strings.ngrams
# Expected values: tf.strings.ngrams and tf.raw_ops.StringNGrams in TensorFlow 2.21.
CASES = [
    _dense("bigrams", lambda d: ngrams(d, 2), WORDS, [b"A B", b"B C", b"C D"]),
    _dense("unigrams_and_trigrams", lambda d: ngrams(d, [1, 3], separator="_"), WORDS,
           [b"A", b"B", b"C", b"D", b"A_B_C", b"B_C_D"]),
    _dense("padded", lambda d: ngrams(d, 3, pad_values="#"), WORDS,
           [b"# # A", b"# A B", b"A B C", b"B C D", b"C D #", b"D # #"]),
    _dense("padded_once", lambda d: ngrams(d, 3, pad_values=("<", ">"), padding_width=1),
           WORDS, [b"< A B", b"A B C", b"B C D", b"C D >"]),
    _dense("too_wide", lambda d: ngrams(d, 5), WORDS, []),
    _dense("too_wide_preserved", lambda d: ngrams(d, 5, preserve_short_sequences=True), WORDS,
           [b"A B C D"]),
    _dense("too_wide_padded_preserved",
           lambda d: ngrams(d, 6, pad_values=("<", ">"), padding_width=1,
                            preserve_short_sequences=True), WORDS, [b"< A B C D >"]),
    _dense("empty", lambda d: ngrams(d, 2, pad_values="#"), np.zeros([0], dtype=object), []),
    _dense("rows", lambda d: ngrams(d, 2), ROWS, [[b"a b", b"b c"], [b"d e", b"e f"]]),
    _dense("rows_padded_two_widths",
           lambda d: ngrams(d, [2, 3], pad_values=("<s>", "</s>"), separator=""), ROWS,
           [[b"<s>a", b"ab", b"bc", b"c</s>", b"<s><s>a", b"<s>ab", b"abc", b"bc</s>",
             b"c</s></s>"],
            [b"<s>d", b"de", b"ef", b"f</s>", b"<s><s>d", b"<s>de", b"def", b"ef</s>",
             b"f</s></s>"]]),
    _dense("rows_too_wide", lambda d: ngrams(d, 4), ROWS, [], shape=(2, 0)),
    _dense("rows_preserved", lambda d: ngrams(d, 4, preserve_short_sequences=True), ROWS,
           [[b"a b c"], [b"d e f"]]),
    _dense("no_rows", lambda d: ngrams(d, 2), np.zeros([0, 3], dtype=object), [],
           shape=(0, 1)),   # TensorFlow's Reshape of no values to [0, -1]
    _dense("empty_rows", lambda d: ngrams(d, 2, pad_values="#"), np.zeros([2, 0], dtype=object),
           [], shape=(2, 0)),
    _dense("rank3", lambda d: ngrams(d, [1, 2], pad_values="#"), CUBE,
           [[[b"A", b"B", b"C", b"# A", b"A B", b"B C", b"C #"]],
            [[b"D", b"E", b"F", b"# D", b"D E", b"E F", b"F #"]]]),
    _dense("bytes_pads", lambda d: ngrams(d, 2, pad_values=(b"a", b"b"), separator=b"|"),
           WORDS, [b"a|A", b"A|B", b"B|C", b"C|D", b"D|b"]),
    _raw_case("ragged", _raw([2]), [0, 2, 2, 6], [b"a b", b"c d", b"d e", b"e f"],
              [0, 1, 1, 4]),
    _raw_case("ragged_padded", _raw([1, 3], b"<", b">", -1), [0, 1, 3, 6],
              [b"a", b"< < a", b"< a >", b"a > >", b"b", b"c", b"< < b", b"< b c", b"b c >",
               b"c > >", b"d", b"e", b"f", b"< < d", b"< d e", b"d e f", b"e f >", b"f > >"],
              [0, 4, 10, 18], dtypes=(tf.int32, tf.int64)),
    _raw_case("ragged_preserved", _raw([4], b"<", b">", 1, True), [0, 1, 3, 6],
              [b"< a >", b"< b c >", b"< d e f", b"d e f >"], [0, 1, 2, 4]),
    _raw_case("ragged_preserved_unpadded", _raw([4], preserve=True), [0, 1, 3, 6],
              [b"a", b"b c", b"d e f"], [0, 1, 2, 3]),
    _raw_case("empty_row_padded", _raw([3], b"<", b">", 5, True), [0, 0, 6],
              [b"< < >", b"< > >", b"< < a", b"< a b", b"a b c", b"b c d", b"c d e", b"d e f",
               b"e f >", b"f > >"], [0, 2, 10]),
    _raw_case("empty_row_not_preserved", _raw([9], b"<", b">", 1, True), [0, 0, 6],
              [b"< a b c d e f >"], [0, 0, 1]),
    _raw_case("no_widths_preserved", _raw([], b"<", b">", 1, True), [0, 2, 6],
              [b"< a b >", b"< c d e f >"], [0, 1, 2]),
    _raw_case("empty_right_pad", _raw([3], b"", b">", 2), [0, 6],
              [b"  a", b" a b", b"a b c", b"b c d", b"c d e", b"d e f", b"e f >", b"f > >"],
              [0, 8]),
    _raw_case("no_splits", _raw([2]), [], [b""] * 6, []),   # shaped like the data
    _raw_case("no_data", _raw([2]), [0, 0], [], [0, 0], data=np.zeros([0], dtype=object)),
]

test_forward, _ = case_tests(CASES)


@parametrize([c for c in CASES if c.unknown_shapes])
def test_shapes(case, dtype):
    """Only the op's own rows: tf.strings.ngrams needs a known rank, as in TensorFlow."""
    check_shapes(case, dtype)


def test_dense_rows_of_unknown_length():
    case = _dense("fed_rows", lambda d: ngrams(tf.placeholder_with_default(d, [None, None]), 2),
                  ROWS, [[b"a b", b"b c"], [b"d e", b"e f"]])
    check_forward(case, tf.string)


def test_names_and_static_shapes():
    with tf.Graph().as_default():
        grams = ngrams(["A", "B", "C"], 2)
        assert (grams.op.name, grams.op.type, grams.shape.as_list()) == (
            "StringNGrams/StringNGrams", "StringNGrams", [None])
        assert grams.op.inputs[0].op.name == "StringNGrams/data"
        assert grams.op.get_attr("ngram_widths") == [2]
        assert grams.op.get_attr("pad_width") == 0
        assert grams.op.get_attr("Tsplits") == tf.int64
        assert ngrams(["A"], 2, pad_values="#").op.get_attr("pad_width") == -1
        rows = ngrams(ROWS, 2, name="grams")
        assert (rows.op.name, rows.op.type, rows.shape.as_list()) == ("grams/Reshape",
                                                                      "Reshape", [2, None])
        assert rows.op.inputs[0].op.name == "grams/StringNGrams"
        assert ngrams(tf.placeholder(tf.string, [3, 5]), 2).shape.as_list() == [3, None]
        assert ngrams(tf.placeholder(tf.string, [None, None, 4]), 2).shape.as_list() == \
            [None, None, None]
        op = apply_op(StringNGrams, [LETTERS, tf.placeholder(tf.int32, [4])], {
            "separator": "", "ngram_widths": [1], "left_pad": "", "right_pad": "",
            "pad_width": 0, "preserve_short_sequences": False})
        assert [t.shape.as_list() for t in op] == [[None], [4]] and op[1].dtype == tf.int32


@pytest.mark.parametrize("build,error,message", [
    (lambda: ngrams("abc", 2), ValueError, "Data must have rank>0"),
    (lambda: ngrams(tf.placeholder(tf.string), 2), ValueError, "Rank of data must be known."),
    (lambda: ngrams(WORDS, 0), ValueError, "All ngram_widths must be greater than 0. Got 0"),
    (lambda: ngrams(WORDS, [2, -1]), ValueError,
     "All ngram_widths must be greater than 0. Got [2, -1]"),
    (lambda: ngrams(WORDS, 2, pad_values="#", padding_width=0), ValueError,
     "padding_width must be greater than 0."),
    (lambda: ngrams(WORDS, 2, padding_width=1), ValueError,
     "pad_values must be provided if padding_width is set."),
    (lambda: ngrams(WORDS, 2, pad_values=3), TypeError,
     "pad_values must be a string, tuple of strings, or None."),
    (lambda: ngrams(WORDS, 2, pad_values=("a", 3)), TypeError,
     "pad_values must be a string, tuple of strings, or None."),
    (lambda: apply_op(StringNGrams, [[["a"]], tf.constant([0, 1], tf.int64)], {
        "separator": "", "ngram_widths": [1], "left_pad": "", "right_pad": "",
        "pad_width": 0, "preserve_short_sequences": False}), ValueError,
     "Shape must be rank 1 but is rank 2"),
])
def test_graph_construction_errors(build, error, message):
    with tf.Graph().as_default():
        with pytest.raises(error) as info:
            build()
        assert message in str(info.value)


@pytest.mark.parametrize("splits,kwargs,message", [
    ([1, 6], {}, "First split value must be 0, got 1"),
    ([0, 4, 3, 6], {}, "Invalid split value 3, must be in [4, 6]"),
    ([0, 4, 7], {}, "Invalid split value 7, must be in [4, 6]"),
    ([0, 4], {}, "Last split value must be data size. Expected 6, got 4"),
    ([0, 6], {"widths": [0]}, "ngram_widths must contain positive values"),
    ([0, 2, 6], {"widths": [], "left": b"<", "right": b">", "pad_width": -1,
                 "preserve": True},
     "Pad width should be >= 0 when preserve_short_sequences is True and ngram_widths are not "
     "provided, got -1"),
])
def test_run_time_errors(splits, kwargs, message):
    build = _raw(kwargs.pop("widths", [2]), **kwargs)
    with tf.Graph().as_default():
        grams, _ = build(LETTERS, tf.constant(splits, tf.int64))
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError) as info:
                sess.run(grams)
    assert message in str(info.value)
