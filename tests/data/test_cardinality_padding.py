"""tf.data.experimental.pad_to_cardinality (data/cardinality_padding.py).

Expected elements, cardinalities and errors are TensorFlow 2.21's in graph mode on the same
programs (run with /work/shared/programs/run_with_tf.py).
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain

D = tf.data.Dataset
E = tf.data.experimental


pytestmark = pytest.mark.usefixtures("graph")


def cardinality(ds):
    with tf.Session() as sess:
        return sess.run(E.cardinality(ds))


def plain(elements):
    return [{k: np.asarray(v).tolist() for k, v in e.items()} for e in elements]


def test_pads_with_zeros_marked_invalid():
    ds = D.from_tensor_slices({"a": [1, 2], "b": [[1., 2.], [3., 4.]]}).apply(
        E.pad_to_cardinality(4))
    assert ds.element_spec == {"a": tf.data.TensorSpec([], tf.int32),
                               "b": tf.data.TensorSpec([2], tf.float32),
                               "valid": tf.data.TensorSpec([], tf.bool)}
    assert plain(drain(ds)) == [
        {"a": 1, "b": [1., 2.], "valid": True}, {"a": 2, "b": [3., 4.], "valid": True},
        {"a": 0, "b": [0., 0.], "valid": False}, {"a": 0, "b": [0., 0.], "valid": False}]
    assert cardinality(ds) == E.UNKNOWN_CARDINALITY   # TF1's map loses the count


def test_mask_key_strings_and_no_padding_needed():
    assert plain(drain(D.from_tensor_slices({"a": [1, 2]}).apply(
        E.pad_to_cardinality(3, mask_key="m")))) == \
        [{"a": 1, "m": True}, {"a": 2, "m": True}, {"a": 0, "m": False}]
    assert plain(drain(D.from_tensor_slices({"s": ["x", "y"]}).apply(
        E.pad_to_cardinality(3)))) == \
        [{"s": b"x", "valid": True}, {"s": b"y", "valid": True}, {"s": b"", "valid": False}]
    assert plain(drain(D.from_tensor_slices({"a": [1, 2]}).apply(E.pad_to_cardinality(2)))) \
        == [{"a": 1, "valid": True}, {"a": 2, "valid": True}]
    assert plain(drain(D.from_tensor_slices({"valid": [5, 6]}).apply(
        E.pad_to_cardinality(3)))) == [{"valid": True}, {"valid": True}, {"valid": False}]


def test_graph_mode_does_not_check_the_input_cardinality():
    longer = D.from_tensor_slices({"a": [1, 2]}).apply(E.pad_to_cardinality(1))
    assert cardinality(longer) == E.INFINITE_CARDINALITY   # repeat(-1) of the filler
    assert [e["valid"] for e in drain(longer.take(5))] == [True, True, False, False, False]
    unknown = D.from_tensor_slices({"a": [1, 2, 3]}).filter(lambda x: x["a"] > 1).apply(
        E.pad_to_cardinality(4))
    assert [e["a"] for e in drain(unknown)] == [2, 3] + [0] * 6   # 4 - (-2) fillers


def test_errors():
    with pytest.raises(ValueError, match="requires its input dataset to be a dictionary."):
        D.range(3).apply(E.pad_to_cardinality(3))
    with pytest.raises(ValueError, match=r"Cannot convert a partially known TensorShape \(\?,\)"):
        D.from_tensor_slices({"a": [1, 2]}).map(
            lambda x: {"a": tf.fill([x["a"]], 1)}).apply(E.pad_to_cardinality(3))
