"""Assert, check_numerics, Print, tf.print and tf.timestamp: behaviour, TensorFlow's text
formats, errors.

Expected strings were recorded from TensorFlow 2.x (compat.v1 graph mode).
"""
import os
import re
import sys
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.kernels.logging import summarize_v1, summarize_v2
from tensorweave.ops.logging_ops import CheckNumericsV2
from tensorweave.testing.op_case import OpCase, case_tests


def _randn(*shape):
    return lambda rng, dt: rng.randn(*shape).astype(dt)


def _after(x, op):
    """x, available only after `op` has run."""
    return tf.tuple([x], control_inputs=[op])[0]


_DEVNULL = "file://" + os.devnull

CASES = [
    OpCase("check_numerics", lambda x: tf.check_numerics(x, "bad"), lambda x: x,
           [_randn(3, 4)], dtypes=(tf.float16, tf.float32, tf.float64)),
    OpCase("check_numerics_v2", lambda x: apply_op(CheckNumericsV2, [x], {"message": "bad"}),
           lambda x: x, [_randn(3, 4)], dtypes=(tf.float32, tf.float64)),
    OpCase("print_identity", lambda x: tf.Print(x, [x, "text"], first_n=0), lambda x: x,
           [_randn(2, 3)], dtypes=(tf.float32, tf.int32, tf.float64)),
    OpCase("assert_passes", lambda x: _after(x, tf.Assert(True, [x, "never shown"])),
           lambda x: x, [_randn(5)], dtypes=(tf.float32, tf.int64)),
    OpCase("tf_print_runs", lambda x: _after(x, tf.print("x:", x, output_stream=_DEVNULL)),
           lambda x: x, [_randn(2, 2)], dtypes=(tf.float32, tf.int32)),
    OpCase("timestamp", tf.timestamp, lambda: np.float64(time.time()), [],
           dtypes=(tf.float64,), rtol=0, atol=60, grad=False),
]


test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


# --- text formats -------------------------------------------------------------------------
SAMPLES = [np.arange(10, dtype=np.int32), np.arange(12.0, dtype=np.float32).reshape(3, 4),
           np.float64(3.5), np.array([0.1, 1e-7, 1e10, -2.5, np.nan, np.inf], np.float32),
           np.array([True, False]), np.array([b"ab", b"c d"], dtype=object),
           np.zeros((0, 3), np.float32), np.arange(24, dtype=np.int64).reshape(2, 3, 4),
           np.array([1.5], np.float16), np.array([1 / 3]), np.array([1 / 3], np.float32),
           np.array([[1 + 2j]], np.complex64), np.array([255], np.uint8)]


def test_summarize_v1_matches_tf():
    assert " ".join(f"[{summarize_v1(v, 3)}]" for v in SAMPLES) == (
        "[0 1 2...] [[0 1 2...]...] [3.5] [0.1 1e-07 1e+10...] [1 0] [ab c d] [] "
        "[[[0 1 2...]]...] [1.5] [0.33333333333333331] [0.333333343] [?] [255]")
    assert " ".join(f"[{summarize_v1(v, 20)}]" for v in SAMPLES[:8]) == (
        "[0 1 2 3 4 5 6 7 8 9] [[0 1 2 3][4 5 6 7][8 9 10 11]] [3.5] "
        "[0.1 1e-07 1e+10 -2.5 nan inf] [1 0] [ab c d] [] "
        "[[[0 1 2 3][4 5 6 7][8 9 10 11]][[12 13 14 15][16 17 18 19]]...]")
    assert summarize_v1(SAMPLES[7], -1).endswith("[20 21 22 23]]")
    assert summarize_v1(np.ones((2, 3), np.complex64), 4) == "? ? ? ?..."


def test_summarize_v1_c_escapes_strings():
    """TensorFlow's Assert/Print text of strings is C-escaped (UTF-8 kept), not quoted."""
    strings = np.array(['a"b\n\tc\\d\'é'.encode(), b"x\x01y"], dtype=object)
    assert summarize_v1(strings, 3) == "a\\\"b\\n\\tc\\\\d\\'é x\\001y"


def test_summarize_v2_matches_tf():
    assert summarize_v2(np.arange(10), 3) == "[0 1 2 ... 7 8 9]"
    assert summarize_v2(np.arange(64).reshape(8, 8), 2) == (
        "[[0 1 ... 6 7]\n [8 9 ... 14 15]\n ...\n [48 49 ... 54 55]\n [56 57 ... 62 63]]")
    assert summarize_v2(np.arange(24).reshape(2, 3, 4), 3) == (
        "[[[0 1 2 3]\n  [4 5 6 7]\n  [8 9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n"
        "  [20 21 22 23]]]")
    assert summarize_v2(np.float64(3.5), 3) == "3.5"
    assert summarize_v2(np.array(["a\"b\n", "é"], dtype=object), 3) == '["a\\"b\\n" "é"]'
    assert summarize_v2(np.array([[]]), 2) == "[\n ...]"
    assert summarize_v2(np.arange(4), 0) == "[ ...]"
    assert summarize_v2(np.arange(4), -1) == "[0 1 2 3]"
    assert summarize_v2(np.ones((2, 3), np.complex64), 1) == "[?...]"
    assert summarize_v2(np.array([1, 2, 3, 4], np.float16) / np.float16(3), 1) == \
        "[0.333251953 ... 1.33300781]"


# --- Assert -----------------------------------------------------------------------------------
def test_assert_failure_message_and_summarize():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        ok = tf.placeholder(tf.bool, [])
        check = tf.Assert(ok, [x, "msg", tf.constant([1, 2, 3, 4])])
        full = tf.Assert(ok, [x], summarize=-1)
        with tf.Session() as sess:
            assert sess.run(check, {ok: True, x: [1.0]}) is None
            with pytest.raises(tf.errors.InvalidArgumentError) as e:
                sess.run(check, {ok: False, x: [1.0, -2.0, 3.0, 4.0]})
            assert e.value.message.startswith(
                "assertion failed: [1 -2 3...] [msg] [1 2 3...]")
            assert e.value.op is check
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"assertion failed: \[1 -2 3 4 5\]"):
                sess.run(full, {ok: False, x: [1, -2, 3, 4, 5]})


def test_assert_as_control_dependency():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        positive = tf.placeholder(tf.bool, [])
        with tf.control_dependencies([tf.Assert(positive, ["x must be positive", x])]):
            y = tf.check_numerics(x, "y")
        with tf.Session() as sess:
            assert sess.run(y, {x: 2.0, positive: True}) == 2.0
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"assertion failed: \[x must be positive\] \[-1\]"):
                sess.run(y, {x: -1.0, positive: False})


def test_assert_condition_must_be_scalar_at_run_time():
    with tf.Graph().as_default():
        check = tf.Assert(tf.constant([True, False]), ["x"])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"In\[0\] should be a "
                                                                     r"scalar: \[2\]"):
                sess.run(check)


def test_assert_names_and_construction_errors():
    with tf.Graph().as_default():
        op = tf.Assert(False, ["static", 3], name="st")
        assert isinstance(op, tf.Operation) and op.type == "Assert" and op.name == "st/Assert"
        assert [t.op.name for t in op.inputs] == ["st/Assert/condition", "st/Assert/data_0",
                                                 "st/Assert/data_1"]
        assert op.get_attr("summarize") == 3 and op.op_def.is_stateful
        assert tf.Assert(True, ["a"], summarize=7).get_attr("summarize") == 7
        assert tf.Assert(True, ["a"]).name == "Assert_1/Assert"
        with pytest.raises(TypeError, match="has type int32 that does not match expected "
                                            "type of bool"):
            tf.Assert(tf.constant(1), ["x"])
        with pytest.raises(ValueError, match="length 0 less than minimum 1"):
            tf.Assert(True, [])
        with pytest.raises(TypeError, match="values must be a sequence"):
            tf.Assert(True, tf.constant([1.0]))


# --- check_numerics ---------------------------------------------------------------------------
def test_check_numerics():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None])
        checked = tf.check_numerics(x, "bad x")
        assert checked.name == "CheckNumerics:0" and checked.shape.as_list() == [None]
        assert checked.op.get_attr("message") == b"bad x"
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(checked, {x: [1.0, -2.0]}), [1.0, -2.0])
            for value, what in (([1.0, np.nan], "NaN"), ([np.inf], "Inf"),
                                ([-np.inf, np.nan], "Inf and NaN")):
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match=f"bad x : Tensor had {what} values"):
                    sess.run(checked, {x: value})
        with pytest.raises(TypeError, match="DataType int32 not in list"):
            tf.check_numerics(tf.constant([1]), "m")


def test_check_numerics_v2_tells_the_infinities_apart():
    """TensorFlow 2.21's words for each mix (checked against it)."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        checked = apply_op(CheckNumericsV2, [x], {"message": "m"})
        with tf.Session() as sess:
            for value, what in (([np.inf, np.nan, 1], "+Inf and NaN"),
                                ([-np.inf, np.inf, 1], "-Inf and +Inf"),
                                ([-np.inf, np.inf, np.nan], "-Inf, +Inf, and NaN"),
                                ([np.nan, 1, 1], "NaN"), ([-np.inf, 1, 1], "-Inf")):
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match=re.escape(f"m : Tensor had {what} values")):
                    sess.run(checked, {x: value})


def test_the_gradient_of_a_check_is_checked_too():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        grad = tf.gradients(tf.sqrt(tf.check_numerics(x, "root")), x)[0]
        assert grad.op.type == "CheckNumerics"
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(grad, {x: [4.0, 1.0]}), [0.25, 0.5])
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="detected in gradient. root : Tensor had Inf values"):
                sess.run(grad, {x: [0.0, 1.0]})


# --- Print ------------------------------------------------------------------------------------
def test_print_writes_to_stderr_first_n_times(capfd):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        printed = tf.Print(x, [x, "hi", tf.constant(3)], message="MSG: ", first_n=2,
                           summarize=2)
        assert printed.name == "Print:0" and printed.op.type == "Print"
        assert [t.name for t in printed.op.inputs] == ["Placeholder:0", "Placeholder:0",
                                                       "Print/data_1:0", "Const:0"]
        with tf.Session() as sess:
            for value in ([1.0, 2.0, 3.0], [4.0, 5.0], [6.0]):
                np.testing.assert_array_equal(sess.run(printed, {x: value}), value)
        with tf.Session() as sess:
            sess.run(printed, {x: [7.0]})  # a new session counts again
    err = capfd.readouterr().err
    assert err.splitlines() == ["MSG: [1 2...][hi][3]", "MSG: [4 5][hi][3]", "MSG: [7][hi][3]"]


def test_print_errors():
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        with pytest.raises(TypeError, match="Expected list for 'data'"):
            tf.Print(x, x)
        assert tf.Print(x, []).op.get_attr("first_n") == -1


# --- tf.print ---------------------------------------------------------------------------------
def test_tf_print_formats_structures(capsys):
    with tf.Graph().as_default():
        x = tf.constant([1, 2, 3])
        op = tf.print("hello", x, [1, 2], {"b": x, "a": [x, 1.5, "s"]}, (1, x),
                      output_stream=sys.stdout, sep="|", end="!\n", summarize=1)
        assert isinstance(op, tf.Operation) and op.type == "PrintV2" and op.name == "PrintV2"
        fmt = op.inputs[0].op
        assert fmt.type == "StringFormat" and fmt.get_attr("summarize") == 1
        assert op.get_attr("output_stream") == b"stdout" and op.get_attr("end") == b"!\n"
        with tf.Session() as sess:
            assert sess.run(op) is None
    assert capsys.readouterr().out == (
        "hello|[1 ... 3]|[1, 2]|{'a': [[1 ... 3], 1.5, 's'], 'b': [1 ... 3]}|(1, [1 ... 3])!\n")


def test_tf_print_defaults_to_stderr(capfd):
    with tf.Graph().as_default():
        op = tf.print(tf.constant(np.arange(10)), tf.constant("s"))
        assert op.get_attr("output_stream") == b"stderr"
        with tf.Session() as sess:
            sess.run(op)
    assert capfd.readouterr().err == '[0 1 2 ... 7 8 9] "s"\n'


def test_tf_print_scalar_string_and_placeholder_clash(capsys):
    with tf.Graph().as_default():
        message = tf.constant("just this")
        direct = tf.print(message, output_stream=sys.stdout)
        assert direct.inputs[0] is message  # no StringFormat for a lone scalar string
        clash = tf.print("{}", tf.constant([1, 2]), output_stream=sys.stdout)
        assert clash.inputs[0].op.get_attr("placeholder") != "{}"
        empty = tf.print(output_stream=sys.stdout)
        with tf.Session() as sess:
            sess.run([direct])
            sess.run(clash)
            sess.run(empty)
    assert capsys.readouterr().out == "just this\n{} [1 2]\n\n"


def test_tf_print_to_file_and_log(tmp_path):
    path = tmp_path / "out.txt"
    with tf.Graph().as_default():
        op = tf.print("a", tf.constant(1.5), output_stream=f"file://{path}")
        logged = tf.print("to log", output_stream=tf.logging.info)
        assert logged.get_attr("output_stream") == b"log(info)"
        with tf.Session() as sess:
            sess.run(op)
            sess.run(op)
    assert path.read_text() == "a 1.5\na 1.5\n"


def test_tf_print_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Unsupported output stream"):
            tf.print("x", output_stream="stdout")
        with pytest.raises(ValueError, match="Unrecognized keyword arguments for tf.print"):
            tf.print("x", foo=1)
        from tensorweave.ops.logging_ops import string_format
        with pytest.raises(ValueError, match="The template expects 2 tensors, but the inputs "
                                             "only has 1"):
            string_format("{} {}", [tf.constant(1)])
        formatted = string_format("v={}", [tf.constant([1.5, 2.0])])
        assert formatted.dtype == tf.string and formatted.shape.as_list() == []
        with tf.Session() as sess:
            assert sess.run(formatted) == b"v=[1.5 2]"


# --- Timestamp --------------------------------------------------------------------------------
def test_timestamp_op_and_clock():
    with tf.Graph().as_default():
        ts = tf.timestamp()
        assert (ts.op.name, ts.op.type, ts.dtype, ts.shape.as_list()) == (
            "Timestamp", "Timestamp", tf.float64, [])
        assert list(ts.op.inputs) == [] and tf.timestamp(name="ts").op.name == "ts"
        assert ts.op.op_def.is_stateful and ts.op.op_def.not_differentiable   # as TensorFlow
        with tf.Session() as sess:
            before = time.time()
            first = sess.run(ts)
            time.sleep(0.02)
            second = sess.run(ts)
            after = time.time()
        assert isinstance(first, np.float64)
        assert before - 1e-6 <= first and second - first >= 0.015 and second <= after + 1e-6
        # Whole microseconds, as TensorFlow's EnvTime::NowMicros() / 1e6.
        assert first == round(first * 1e6) / 1e6 and second == round(second * 1e6) / 1e6


def test_timestamps_are_neither_folded_nor_merged():
    """With every graph optimization on, two Timestamp nodes stay two nodes and run each step."""
    from tensorweave.protos import config_pb2
    with tf.Graph().as_default():
        elapsed = tf.timestamp() - tf.timestamp()
        metadata = config_pb2.RunMetadata()
        with tf.Session() as sess:
            sess.run(elapsed, options=config_pb2.RunOptions(output_partition_graphs=True),
                     run_metadata=metadata)
            ops = [n.op for g in metadata.partition_graphs for n in g.node]
        assert ops.count("Timestamp") == 2 and "Const" not in ops

