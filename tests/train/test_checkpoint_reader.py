"""Reading checkpoints without a graph: NewCheckpointReader, list_variables, load_variable."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.train import checkpoint_format as fmt


@pytest.fixture
def prefix(tmp_path):
    path = str(tmp_path / "model-3")
    fmt.write_checkpoint(path, ["w", "b", "step", "name"],
                         [np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros(1, np.float64),
                          np.int64(3), np.array(b"hi", dtype=object)],
                         [tf.float32, tf.float64, tf.int64, tf.string])
    tf.train.update_checkpoint_state(str(tmp_path), path)
    return path


def test_reader_maps_and_tensors(prefix):
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map() == {"w": [2, 3], "b": [1], "step": [],
                                                  "name": []}
    assert reader.get_variable_to_dtype_map() == {"w": tf.float32, "b": tf.float64,
                                                  "step": tf.int64, "name": tf.string}
    assert reader.has_tensor("w") and reader.has_tensor(b"b") and not reader.has_tensor("x")
    np.testing.assert_array_equal(reader.get_tensor("w"), np.arange(6).reshape(2, 3))
    assert reader.get_tensor("step") == 3 and reader.get_tensor("name") == b"hi"
    assert reader.debug_string() == (b"b (DT_DOUBLE) [1]\nname (DT_STRING) []\n"
                                     b"step (DT_INT64) []\nw (DT_FLOAT) [2,3]\n")
    with pytest.raises(tf.errors.NotFoundError, match=r"Key ww not found.*'w'"):
        reader.get_tensor("ww")


def test_list_and_load_from_prefix_or_directory(prefix, tmp_path):
    expected = [("b", [1]), ("name", []), ("step", []), ("w", [2, 3])]
    assert tf.train.list_variables(prefix) == expected
    assert tf.train.list_variables(str(tmp_path)) == expected
    assert tf.train.load_variable(str(tmp_path), "step:0") == 3
    assert tf.train.load_checkpoint(prefix).has_tensor("w")


def test_missing_checkpoint(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tf.train.NewCheckpointReader(str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.list_variables(str(tmp_path))


def test_scalars_read_back_as_numpy_scalars(tmp_path):
    """TF returns a 0-d tensor from a checkpoint as a NumPy scalar (bytes for a string)."""
    with tf.Graph().as_default():
        tf.Variable(1.5, name="a")
        tf.Variable(3, name="i")
        tf.Variable([1.0], name="v")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"))
    reader = tf.train.NewCheckpointReader(path)
    a, i, v = (reader.get_tensor(n) for n in ("a", "i", "v"))
    assert type(a) is np.float32 and a == 1.5 and type(i) is np.int32 and i == 3
    assert isinstance(v, np.ndarray) and v.shape == (1,)
    assert type(tf.train.load_variable(path, "a")) is np.float32
