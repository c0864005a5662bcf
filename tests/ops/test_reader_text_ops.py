"""TextLineReaderV2 and FixedLengthRecordReaderV2: records and keys against a Python reading
of the same files (TF 2.21's outputs for these files), attrs as TF sets them, and errors."""
import os
import tempfile
import zlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

BOUNDED = tf.RunOptions(timeout_in_ms=5000)
DIR = tempfile.mkdtemp(prefix="tw_reader_text_")
TEXT = os.path.join(DIR, "a.txt")          # header, CRLF line, empty line, no final newline
BINARY = os.path.join(DIR, "c.bin")        # 2 header bytes, 10 data bytes, 2 footer bytes
ZIPPED = os.path.join(DIR, "c.z")
with open(TEXT, "wb") as _f:
    _f.write(b"h1\nline1\nline2\r\n\nlast")
with open(BINARY, "wb") as _f:
    _f.write(b"HHabcdefghijFF")
with open(ZIPPED, "wb") as _f:
    _f.write(zlib.compress(b"HHabcdefghijFF"))


def _read_all(reader, files):
    """Every record of `files` in one step: fill and close a queue, then read_up_to."""
    queue = tf.FIFOQueue(10, [tf.string], shapes=[[]])
    with tf.control_dependencies([queue.enqueue_many([files])]):
        with tf.control_dependencies([queue.close()]):
            return list(reader.read_up_to(queue, 100))


def _keyed(path, values, first):
    keys = np.array([b"%s:%d" % (path.encode(), first + i) for i in range(len(values))],
                    dtype=object)
    return [keys, np.array(values, dtype=object)]


def _lines(skip):
    with open(TEXT, "rb") as f:
        lines = [line.rstrip(b"\r") for line in f.read().split(b"\n")]
    return _keyed(TEXT, lines[skip:], skip + 1)


def _records(path, record, hop, compressed=False):
    with open(path, "rb") as f:
        data = f.read()
    body = (zlib.decompress(data) if compressed else data)[2:-2]
    return _keyed(path, [body[s:s + record] for s in range(0, len(body) - record + 1, hop)], 0)


def _fixed(record, hop=None, encoding=None):
    return tf.FixedLengthRecordReader(record, header_bytes=2, footer_bytes=2, hop_bytes=hop,
                                      encoding=encoding)


def _files(path):
    return np.array([path.encode()], dtype=object)


CASES = [
    OpCase("text_line_reader", lambda f: _read_all(tf.TextLineReader(), f),
           lambda f: _lines(0), [_files(TEXT)], dtypes=(tf.string,), grad=False),
    OpCase("text_line_reader_skip_header",
           lambda f: _read_all(tf.TextLineReader(skip_header_lines=1), f),
           lambda f: _lines(1), [_files(TEXT)], dtypes=(tf.string,), grad=False),
    OpCase("fixed_length_reader", lambda f: _read_all(_fixed(3), f),
           lambda f: _records(BINARY, 3, 3), [_files(BINARY)], dtypes=(tf.string,),
           grad=False),
    OpCase("fixed_length_reader_partial_record_dropped", lambda f: _read_all(_fixed(4), f),
           lambda f: _records(BINARY, 4, 4), [_files(BINARY)], dtypes=(tf.string,),
           grad=False),
    OpCase("fixed_length_reader_hop", lambda f: _read_all(_fixed(3, hop=2), f),
           lambda f: _records(BINARY, 3, 2), [_files(BINARY)], dtypes=(tf.string,),
           grad=False),
    OpCase("fixed_length_reader_zlib", lambda f: _read_all(_fixed(3, encoding="ZLIB"), f),
           lambda f: _records(ZIPPED, 3, 3, compressed=True), [_files(ZIPPED)],
           dtypes=(tf.string,), grad=False),
]
test_forward, test_shapes = case_tests(CASES)


def test_reader_ops_and_attrs_are_tensorflows():
    with tf.Graph().as_default():
        text = tf.TextLineReader(skip_header_lines=2)
        fixed = tf.FixedLengthRecordReader(4, hop_bytes=1, encoding="GZIP", name="fl")
    assert text.reader_ref.op.type == "TextLineReaderV2"
    assert text.reader_ref.op.name == "TextLineReaderV2"
    assert text.reader_ref.op.get_attr("skip_header_lines") == 2
    op = fixed.reader_ref.op
    assert (op.type, op.name) == ("FixedLengthRecordReaderV2", "fl")
    assert [op.get_attr(a) for a in ("record_bytes", "header_bytes", "footer_bytes",
                                     "hop_bytes", "encoding")] == [4, 0, 0, 1, b"GZIP"]


def test_read_with_string_input_producer_and_counters():
    with tf.Graph().as_default():
        queue = tf.train.string_input_producer([TEXT], num_epochs=1, shuffle=False)
        reader = tf.TextLineReader(skip_header_lines=1)
        key, value = reader.read(queue)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            got = [sess.run([key, value], options=BOUNDED) for _ in range(4)]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(value, options=BOUNDED)
            counts = sess.run([reader.num_records_produced(),
                               reader.num_work_units_completed()])
            coord.request_stop()
            coord.join(threads)
    assert got == [[b"%s:%d" % (TEXT.encode(), i + 2), v]
                   for i, v in enumerate([b"line1", b"line2", b"", b"last"])]
    assert counts == [4, 1]


@pytest.mark.parametrize("make,message", [
    (lambda: tf.TextLineReader(skip_header_lines=-1), "skip_header_lines must be >= 0 not -1"),
    (lambda: tf.FixedLengthRecordReader(-1), "record_bytes must be >= 0 not -1"),
    (lambda: tf.FixedLengthRecordReader(3, hop_bytes=-1), "hop_bytes must be >= 0 not -1"),
])
def test_negative_sizes_fail_at_run_time(make, message):
    with tf.Graph().as_default():
        keys, _ = _read_all(make(), [BINARY])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                sess.run(keys, options=BOUNDED)


@pytest.mark.parametrize("make,path,error,message", [
    (lambda: tf.TextLineReader(), os.path.join(DIR, "missing"), tf.errors.NotFoundError,
     "missing; No such file or directory"),
    (lambda: _fixed(3), os.path.join(DIR, "missing"), tf.errors.NotFoundError,
     "No such file"),
    (lambda: _fixed(3, encoding="ZLIB"), BINARY, tf.errors.DataLossError,
     "inflate\\(\\) failed with error -3: incorrect header check"),
    (lambda: _fixed(3, encoding="GZIP"), ZIPPED, tf.errors.DataLossError,
     "inflate\\(\\) failed with error -3: incorrect header check"),
    (lambda: _fixed(20), BINARY, tf.errors.OutOfRangeError, "is closed"),
])
def test_read_errors(make, path, error, message):
    with tf.Graph().as_default():
        keys, _ = _read_all(make(), [path])
        with tf.Session() as sess:
            with pytest.raises(error, match=message):
                sess.run(keys, options=BOUNDED)


def test_unknown_encoding_reads_the_file_raw():
    with tf.Graph().as_default():
        _, values = _read_all(_fixed(5, encoding="XX"), [BINARY])
        with tf.Session() as sess:
            assert sess.run(values, options=BOUNDED).tolist() == [b"abcde", b"fghij"]
