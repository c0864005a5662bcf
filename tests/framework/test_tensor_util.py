"""Python values that are neither numbers nor text, converted to tensors (framework/tensor_util.py):
the error classes and messages TensorFlow 2.21 gives (tf.compat.v1 graph mode). Its
make_tensor_proto turns None away with ValueError; any other object makes NumPy an object
array, which TensorFlow takes for strings and then fails to encode: a TypeError."""
import re

import numpy as np
import pytest

import tensorweave as tf

OBJ = object()
_NOT_CONVERTIBLE = ("Failed to convert elements of {} to Tensor. Consider casting elements to a "
                    "supported type. See https://www.tensorflow.org/api_docs/python/tf/dtypes "
                    "for supported TF dtypes.")


def _function():
    return 1


@pytest.mark.parametrize("convert,value", [
    (tf.constant, OBJ),
    (tf.convert_to_tensor, OBJ),
    (lambda v: tf.convert_to_tensor(v, preferred_dtype=tf.int32), OBJ),
    (tf.constant, {"a": 1}),
    (tf.constant, {1, 2}),
    (tf.constant, _function),
    (tf.constant, [1, OBJ]),
    (tf.constant, [[1], [OBJ]]),
    (tf.constant, [1, None]),
    (tf.constant, [1, "a"]),      # NumPy makes strings of both; 1 is not text
    (lambda v: tf.add(v, 1), OBJ),
    (lambda v: tf.add(tf.constant(1), v), OBJ),
], ids=["constant", "convert_to_tensor", "preferred_dtype", "dict", "set", "function",
        "list_with_object", "nested_list_with_object", "list_with_none", "int_and_str",
        "op_input", "second_op_input"])
def test_objects_without_a_dtype_are_a_type_error(convert, value):
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match=f"^{re.escape(_NOT_CONVERTIBLE.format(value))}$"):
            convert(value)


@pytest.mark.parametrize("dtype", [tf.int32, tf.float32, tf.bool, tf.string])
def test_objects_with_a_dtype_are_a_type_error(dtype):
    """TensorFlow's words are "Expected int32, but got <object ...> of type 'object'."; ours
    keep the project's "Expected int32, got <object ...> of type 'object' instead."."""
    with tf.Graph().as_default():
        for value in (OBJ, [1, OBJ]):
            with pytest.raises(TypeError, match=f"^Expected {dtype.name}, got "):
                tf.constant(value, dtype=dtype)
        with pytest.raises(TypeError, match=f"^Expected {dtype.name}, got "):
            tf.convert_to_tensor(OBJ, dtype=dtype)


@pytest.mark.parametrize("convert", [
    tf.constant, tf.convert_to_tensor, lambda v: tf.constant(v, dtype=tf.int32),
    lambda v: tf.add(v, 1), lambda v: tf.add(tf.constant(1), v),
], ids=["constant", "convert_to_tensor", "with_dtype", "op_input", "second_op_input"])
def test_none_is_a_value_error(convert):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"^None values not supported\.$"):
            convert(None)


@pytest.mark.parametrize("array", [np.array([OBJ]), np.array(OBJ),
                                   np.array(["a", OBJ], dtype=object)],
                         ids=["vector", "scalar", "with_text"])
def test_object_arrays_of_non_text_are_a_type_error(array):
    """An object array converts to strings, so every element must be text (TensorFlow:
    "Expected binary or unicode string, got <object ...>")."""
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match=f"got {re.escape(str(OBJ))}"):
            tf.constant(array)


def test_object_arrays_of_text_still_convert():
    with tf.Graph().as_default():
        texts = tf.constant(np.array([b"a", "b\u00e9"], dtype=object))
        raw = tf.constant(np.array([b"x\x00"], dtype=object))
        with tf.Session() as sess:
            assert sess.run(texts).tolist() == [b"a", "b\u00e9".encode()]
            assert sess.run(raw).tolist() == [b"x\x00"]
