"""tf.data.experimental.get_structure and the legacy structure names (data/structures.py).

Expected values are TensorFlow 2.21's on the same programs.
"""
import pytest

import tensorweave as tf

D = tf.data.Dataset
E = tf.data.experimental

pytestmark = pytest.mark.usefixtures("graph")


def test_get_structure_of_a_dataset_and_an_iterator():
    assert E.get_structure(D.range(5)) == tf.TensorSpec([], tf.int64)
    ds = D.range(5).map(lambda x: (x, {"a": tf.sparse.SparseTensor([[0]], [1.0], [3])}))
    got = E.get_structure(tf.data.make_one_shot_iterator(ds))
    assert got[0] == tf.TensorSpec([], tf.int64)
    assert repr(got[1]["a"]) == "SparseTensorSpec(TensorShape([Dimension(3)]), tf.float32)"


@pytest.mark.parametrize("value", [3, "x"])
def test_get_structure_of_anything_else(value):
    with pytest.raises(TypeError, match="must be a `tf.data.Dataset` or tf.data.Iterator "
                                        "object, but got <class"):
        E.get_structure(value)


def test_legacy_names():
    assert E.TensorStructure(tf.int32, [2]) == tf.TensorSpec([2], tf.int32)
    sparse = E.SparseTensorStructure(tf.float32, [3])
    assert (sparse.dtype, sparse.shape.as_list()) == (tf.float32, [3])
    assert E.DatasetStructure is tf.data.DatasetSpec
    window = D.range(4).window(2).element_spec
    assert E.DatasetStructure(tf.TensorSpec([], tf.int64)) == window
    for spec in (tf.TensorSpec([], tf.int32), sparse, window):
        assert isinstance(spec, E.Structure)
    assert not isinstance(3, E.Structure)
