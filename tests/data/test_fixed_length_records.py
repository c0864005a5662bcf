"""tf.data.FixedLengthRecordDataset against TensorFlow 2.21's outputs on the same files."""
import gzip
import zlib

import pytest

import tensorweave as tf
from tensorweave.testing.datasets import drain_dataset as drain
from tensorweave.testing.datasets import file_writer

BODY = bytes(range(12))
FILE = b"HH" + BODY + b"FFF"          # 2 header bytes, 3 footer bytes
RAGGED = b"HH" + bytes(range(13)) + b"FFF"
MESSAGE = ("Excluding the header \\(2 bytes\\) and footer \\(3 bytes\\), input file \".*{}\" has "
           "body length 13 bytes, which is not an exact multiple of the record length "
           "\\(4 bytes\\).")


pytestmark = pytest.mark.usefixtures("graph")


def test_records_between_header_and_footer(tmp_path):
    files = file_writer(tmp_path)
    ds = tf.data.FixedLengthRecordDataset(files("r.bin", FILE), 4, header_bytes=2,
                                          footer_bytes=3)
    assert ds.output_types == tf.string and ds.output_shapes == tf.TensorShape([])
    assert drain(ds) == [BODY[0:4], BODY[4:8], BODY[8:12]]


def test_several_files_and_no_header(tmp_path):
    files = file_writer(tmp_path)
    path = files("r.bin", FILE)
    ds = tf.data.FixedLengthRecordDataset([path, path], 6, 2, 3)
    assert drain(ds) == [BODY[:6], BODY[6:]] * 2
    assert drain(tf.data.FixedLengthRecordDataset(path, 17)) == [FILE]
    empty = files("empty.bin", b"")
    assert drain(tf.data.FixedLengthRecordDataset(empty, 3)) == []


@pytest.mark.parametrize("compression, pack", [("GZIP", gzip.compress),
                                               ("ZLIB", zlib.compress)])
def test_compressed(tmp_path, compression, pack):
    files = file_writer(tmp_path)
    ds = tf.data.FixedLengthRecordDataset(files("r.z", pack(FILE)), 4, header_bytes=2,
                                          footer_bytes=3, compression_type=compression)
    assert drain(ds) == [BODY[0:4], BODY[4:8], BODY[8:12]]


def test_body_not_a_multiple_of_the_record_length(tmp_path):
    files = file_writer(tmp_path)
    good, bad = files("r.bin", FILE), files("r2.bin", RAGGED)
    before = []
    with pytest.raises(tf.errors.InvalidArgumentError, match=MESSAGE.format("r2.bin")):
        drain(tf.data.FixedLengthRecordDataset([good, bad, good], 4, 2, 3), before)
    assert before == [BODY[0:4], BODY[4:8], BODY[8:12]]   # nothing of the ragged file
    # Compressed: the whole records are read before the error, a DataLossError.
    packed = files("r2.gz", gzip.compress(RAGGED))
    before = []
    with pytest.raises(tf.errors.DataLossError, match=MESSAGE.format("r2.gz")):
        drain(tf.data.FixedLengthRecordDataset(packed, 4, 2, 3, compression_type="GZIP"),
              before)
    assert before == [BODY[0:4], BODY[4:8], BODY[8:12]]


def test_errors(tmp_path):
    files = file_writer(tmp_path)
    path = files("r.bin", FILE)
    with pytest.raises(tf.errors.InvalidArgumentError, match="`record_bytes` must be > 0"):
        drain(tf.data.FixedLengthRecordDataset(path, 0))
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        drain(tf.data.FixedLengthRecordDataset(path + ".missing", 3))
    with pytest.raises(tf.errors.DataLossError, match="not a valid GZIP stream"):
        drain(tf.data.FixedLengthRecordDataset(path, 3, compression_type="GZIP"))
    # TF 2.21 refuses it when each file's dataset is made, at run time.
    dataset = tf.data.FixedLengthRecordDataset(path, 3, compression_type="BZ2")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"^Unsupported compression_type\."):
        drain(dataset)


def test_cardinality_is_unknown(tmp_path):
    files = file_writer(tmp_path)
    ds = tf.data.FixedLengthRecordDataset(files("r.bin", FILE), 4, 2, 3)
    with tf.Session() as sess:
        assert sess.run(tf.data.experimental.cardinality(ds)) == -2
