"""tf.data.experimental.from_list (data/list_dataset.py).

Expected values, element specs and errors are TensorFlow 2.21's on the same programs (run with
/work/shared/programs/run_with_tf.py).
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain

D = tf.data.Dataset
E = tf.data.experimental


pytestmark = pytest.mark.usefixtures("graph")


def spec(shape, dtype):
    return tf.data.TensorSpec(shape, dtype)


def test_tuples_are_elements_not_columns():
    ds = E.from_list([(1, "a"), (2, "b"), (3, "c")])
    assert ds.element_spec == (spec([], tf.int32), spec([], tf.string))
    got = drain(ds)
    assert got == [(1, b"a"), (2, b"b"), (3, b"c")] and got[0][0].dtype == np.int32


def test_elements_may_differ_in_shape_and_rank():
    ds = E.from_list([[1], [2, 3]])
    assert ds.output_shapes.as_list() == [None]
    assert [v.tolist() for v in drain(ds)] == [[1], [2, 3]]
    ds = E.from_list([1, [2, 3]])
    assert ds.output_shapes.ndims is None
    assert [np.asarray(v).tolist() for v in drain(ds)] == [1, [2, 3]]


def test_nested_structures_and_tensors():
    ds = E.from_list([{"a": 1., "b": [1]}, {"a": 2., "b": [3, 4]}])
    assert ds.element_spec == {"a": spec([], tf.float32), "b": spec([None], tf.int32)}
    assert [(e["a"], e["b"].tolist()) for e in drain(ds)] == [(1.0, [1]), (2.0, [3, 4])]
    assert E.from_list([(1, (2., "x"))]).element_spec == \
        (spec([], tf.int32), (spec([], tf.float32), spec([], tf.string)))
    assert E.from_list([[(1, 2)], [(3, 4)]]).element_spec == spec([1, 2], tf.int32)
    assert E.from_list([np.array([1, 2], np.int16), np.array([3], np.int16)]).element_spec \
        == spec([None], tf.int16)
    got = drain(E.from_list([tf.constant([1., 2.]), tf.constant([3.])]))
    assert [v.tolist() for v in got] == [[1., 2.], [3.]]


def test_cardinality():
    with tf.Session() as sess:
        assert sess.run(E.cardinality(E.from_list([1, 2, 3]))) == 3


def test_errors():
    with pytest.raises(ValueError, match=r"`elements` should not be empty. If you want an "
                                         r"empty dataset, use `tf.data.Dataset.range\(0\)`."):
        E.from_list([])
    with pytest.raises(ValueError, match="`elements` must be a list."):
        E.from_list((1, 2))
    with pytest.raises(ValueError, match="The two structures don't have the same nested "
                                         "structure."):
        E.from_list([(1, 2), (1, 2, 3)])
    with pytest.raises(TypeError, match="Element 1 has a component of type tf.float32"):
        E.from_list([1, 2.5])   # TensorFlow fails here too, with an AttributeError
