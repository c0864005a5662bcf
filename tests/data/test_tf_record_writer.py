"""tf.data.experimental.TFRecordWriter: a dataset of scalar strings written as the records of a
TFRecord file (the DatasetToTFRecord op), which TensorFlow reads back; TF 2.21's messages."""
import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def test_tf_record_writer_writes_a_dataset_of_strings(tmp_path):
    dataset = tf.data.Dataset.from_tensor_slices([b"a", b"bb", b"ccc"])
    for compression, options in ((None, None), ("GZIP", tf.python_io.TFRecordOptions(
            tf.python_io.TFRecordCompressionType.GZIP))):
        path = str(tmp_path / f"out-{compression}.tfrecord")
        write = tf.data.experimental.TFRecordWriter(path, compression).write(dataset)
        assert write.type == "DatasetToTFRecord"
        with tf.Session() as sess:
            assert sess.run(write) is None
        assert list(tf.python_io.tf_record_iterator(path, options)) == [b"a", b"bb", b"ccc"]
        assert [r.tolist() if hasattr(r, "tolist") else r for r in drain_dataset(
            tf.data.TFRecordDataset(path, compression or ""))] == [b"a", b"bb", b"ccc"]


@pytest.mark.parametrize("dataset, described", [
    (lambda: tf.data.Dataset.range(3), "shapes () and types <dtype: 'int64'>"),
    (lambda: tf.data.Dataset.from_tensor_slices([[b"a"]]),
     "shapes (1,) and types <dtype: 'string'>"),
])
def test_tf_record_writer_takes_only_scalar_strings(dataset, described):
    writer = tf.data.experimental.TFRecordWriter("unused.tfrecord")
    with pytest.raises(TypeError) as info:
        writer.write(dataset())
    assert str(info.value) == ("Invalid `dataset`. Expected a`dataset` that produces scalar "
                               "`tf.string` elements, but got a dataset which produces "
                               f"elements with {described}.")
