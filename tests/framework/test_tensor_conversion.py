"""tf.register_tensor_conversion_function and tf.convert_to_tensor_or_indexed_slices, as in
TensorFlow 2.21: a registered function serves every later conversion of its type (ops' inputs
included), runs before others by priority, is checked as TF checks it; registrations TF refuses
are refused with its messages."""
import numpy as np
import pytest

import tensorweave as tf


class Meters:
    """A user type that converts to a tensor of its value."""

    def __init__(self, value):
        self.value = value


class Feet(Meters):
    pass


CALLS = []


def _meters_to_tensor(value, dtype=None, name=None, as_ref=False):
    CALLS.append((None if dtype is None else dtype.name, name, as_ref))
    return tf.constant(value.value, dtype=dtype, name=name or "meters")


tf.register_tensor_conversion_function(Meters, _meters_to_tensor)


def test_registered_function_converts_values_and_op_inputs():
    CALLS.clear()
    with tf.Graph().as_default():
        total = tf.add(Meters([1.0, 2.0]), 1.0)
        assert total.op.inputs[0].op.name == "Add/x"      # named after the op's argument
        plain = tf.convert_to_tensor(Meters([3, 4]))
        wide = tf.convert_to_tensor(Meters([3, 4]), dtype=tf.float64, name="m")
        hinted = tf.convert_to_tensor(Meters([3, 4]), preferred_dtype=tf.int64)
        unhinted = tf.convert_to_tensor(Meters([3.5, 4]), preferred_dtype=tf.int64)
        subclass = tf.convert_to_tensor(Feet(5))
        assert (plain.op.name, plain.dtype) == ("meters", tf.int32)
        assert (wide.op.name, wide.dtype) == ("m", tf.float64)
        assert hinted.dtype == tf.int64 and unhinted.dtype == tf.float32
        with tf.Session() as sess:
            assert sess.run(total).tolist() == [2.0, 3.0]
            assert sess.run(unhinted).tolist() == [3.5, 4.0] and sess.run(subclass) == 5
    # TensorFlow 2.21 calls the function with these (dtype, name, as_ref): the preferred dtype
    # is tried first and, when it fails, the conversion is retried without it.
    assert CALLS == [(None, "x", False), (None, None, False), ("float64", "m", False),
                     ("int64", None, False), ("int64", None, False), (None, None, False),
                     (None, None, False)]
    assert not tf.is_tensor(Meters(1))     # registered, but not a tensor (as in TensorFlow)


def test_priority_order_and_not_implemented():
    class Box:
        def __init__(self, value):
            self.value = value

    def declines(value, dtype=None, name=None, as_ref=False):
        return NotImplemented

    def late(value, dtype=None, name=None, as_ref=False):
        return tf.constant(value.value * 10, dtype=dtype, name=name)

    def early(value, dtype=None, name=None, as_ref=False):
        return tf.constant(value.value, dtype=dtype, name=name)

    tf.register_tensor_conversion_function(Box, late, priority=50)
    tf.register_tensor_conversion_function(Box, declines, priority=10)
    with tf.Graph().as_default():
        first = tf.convert_to_tensor(Box(2))
        tf.register_tensor_conversion_function(Box, early, priority=20)
        second = tf.convert_to_tensor(Box(2))
        with tf.Session() as sess:
            assert sess.run([first, second]) == [20, 2]


@pytest.mark.parametrize("base_type,message", [
    (int, "Cannot register conversions for Python numeric types and NumPy scalars and arrays."),
    (float, "Cannot register conversions for Python numeric types"),
    (bool, "Cannot register conversions for Python numeric types"),
    (np.ndarray, "Cannot register conversions for Python numeric types"),
    (np.float32, "Cannot register conversions for Python numeric types"),
    ("x", "Argument `base_type` must be a type or a tuple of types. Obtained: x"),
    ((Meters, 3), "Argument `base_type` must be a type or a tuple of types. Obtained: (<class"),
])
def test_refused_registrations(base_type, message):
    with pytest.raises(TypeError) as info:
        tf.register_tensor_conversion_function(base_type, _meters_to_tensor)
    assert message in str(info.value)


def test_conversion_function_must_be_callable():
    with pytest.raises(TypeError, match=r"Argument `conversion_func` must be callable. "
                                        r"Received 3."):
        tf.register_tensor_conversion_function(Meters, 3)


def test_bad_results_are_runtime_errors():
    class Listy:
        pass

    class Wrong:
        pass

    def to_list(value, dtype=None, name=None, as_ref=False):
        return [1, 2]

    def to_int(value, dtype=None, name=None, as_ref=False):
        return tf.constant(1)

    tf.register_tensor_conversion_function((Listy,), to_list)
    tf.register_tensor_conversion_function(Wrong, to_int)
    with tf.Graph().as_default():
        with pytest.raises(RuntimeError, match=r"Conversion function .*to_list.* for type "
                                               r"\(<class .*Listy'>,\) returned non-Tensor: "
                                               r"\[1, 2\]"):
            tf.convert_to_tensor(Listy())
        with pytest.raises(RuntimeError, match=r"^nm: Conversion function .*to_int.* returned "
                                               r"incompatible dtype: requested = float32, "
                                               r"actual = int32$"):
            tf.convert_to_tensor(Wrong(), dtype=tf.float32, name="nm")
        with pytest.raises(RuntimeError, match="requested = float32, actual = int32"):
            tf.convert_to_tensor(Wrong(), preferred_dtype=tf.float32)


def test_convert_to_tensor_or_indexed_slices():
    with tf.Graph().as_default():
        slices = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]), tf.constant([2, 1]))
        sparse = tf.SparseTensor([[0]], [1.0], [2])
        tensor = tf.constant([1.0])
        for value in (slices, sparse, tensor):
            assert tf.convert_to_tensor_or_indexed_slices(value) is value
            assert tf.convert_to_tensor_or_indexed_slices(value, dtype=tf.float32) is value
        with pytest.raises(ValueError) as info:
            tf.convert_to_tensor_or_indexed_slices(tensor, dtype=tf.int32)
        assert str(info.value) == (
            "Incompatible tensor conversion requested to `dtype` int32 for `value` "
            f"({tensor}) with dtype float32.")
        assert str(tensor).startswith('Tensor("Const')
        with pytest.raises(ValueError, match="requested to `dtype` int32 for `value` "
                                             r"\(IndexedSlices\("):
            tf.convert_to_tensor_or_indexed_slices(slices, dtype=tf.int32)
        made = tf.convert_to_tensor_or_indexed_slices([1, 2], dtype=tf.int64, name="nm")
        assert (made.op.name, made.dtype) == ("nm", tf.int64)
        variable = tf.convert_to_tensor_or_indexed_slices(tf.Variable([1.0]))
        assert isinstance(variable, tf.Tensor) and variable.dtype == tf.float32
        assert tf.convert_to_tensor_or_indexed_slices(Meters([2.0])).dtype == tf.float32
