"""MatchingFiles, WriteFile, EncodeBase64, DecodeBase64 and DecodeCompressed against Python's
glob, base64 and zlib (checked against TF 2.21's outputs), match_filenames_once, and TF's
build-time and run-time errors."""
import base64
import gzip
import os
import tempfile
import zlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

DIR = tempfile.mkdtemp(prefix="tw_file_io_")
for _name in ("a.txt", "b.txt", "c.bin", ".hidden.txt"):
    with open(os.path.join(DIR, _name), "wb") as _f:
        _f.write(_name.encode())
BYTES = np.array([[b"hello?>", b""], [b"\xff\xfe\x00", b"abcd"]], dtype=object)


def _strings(values):
    return np.array(values, dtype=object)


def _b64(values, pad=False):
    out = [base64.urlsafe_b64encode(v) for v in np.ravel(values)]
    return _strings([v if pad else v.rstrip(b"=") for v in out]).reshape(np.shape(values))


def _write_then_read(path, contents):
    with tf.control_dependencies([tf.io.write_file(path, contents)]):
        return tf.read_file(path)


def _patterns(*patterns):
    return _strings([os.path.join(DIR, p).encode() for p in patterns])


def _matches(*names):
    return _strings([os.path.join(DIR, n).encode() for n in names])


CASES = [
    OpCase("matching_files", tf.io.matching_files,
           lambda p: _matches(".hidden.txt", "a.txt", "b.txt", "c.bin"),
           [_patterns("*")], dtypes=(tf.string,), grad=False),
    # TF sorts the matches of all the patterns together, not pattern by pattern.
    OpCase("matching_files_several_patterns", tf.matching_files,
           lambda p: _matches("a.txt", "b.txt", "c.bin"),
           [_patterns("b*", "a*", "*.bin", "none*")], dtypes=(tf.string,), grad=False),
    OpCase("matching_files_scalar_no_match", tf.matching_files, lambda p: _strings([]),
           [_patterns("zz*")[0]], dtypes=(tf.string,), grad=False),
    OpCase("write_file", _write_then_read, lambda p, c: c,
           [os.path.join(DIR, "out", "sub", "w.txt").encode(), b"written\x00"],
           dtypes=(tf.string,), grad=False),
    OpCase("encode_base64", tf.io.encode_base64, _b64, [BYTES], dtypes=(tf.string,),
           grad=False),
    OpCase("encode_base64_pad", lambda x: tf.encode_base64(x, pad=True),
           lambda x: _b64(x, pad=True), [BYTES], dtypes=(tf.string,), grad=False),
    OpCase("decode_base64", tf.io.decode_base64, lambda x: BYTES, [_b64(BYTES)],
           dtypes=(tf.string,), grad=False),
    OpCase("decode_base64_padded", tf.decode_base64, lambda x: _strings([b"a", b"ab", b""]),
           [_strings([b"YQ==", b"YWI=", b""])], dtypes=(tf.string,), grad=False),
    OpCase("decode_compressed_zlib", lambda x: tf.io.decode_compressed(x, "ZLIB"),
           lambda x: BYTES, [_strings([[zlib.compress(v) for v in r] for r in BYTES])],
           dtypes=(tf.string,), grad=False),
    OpCase("decode_compressed_gzip", lambda x: tf.io.decode_compressed(x, "GZIP"),
           lambda x: BYTES[0], [_strings([gzip.compress(v) for v in BYTES[0]])],
           dtypes=(tf.string,), grad=False),
    OpCase("decode_compressed_none", tf.decode_compressed, lambda x: x, [BYTES],
           dtypes=(tf.string,), grad=False),
]
test_forward, test_shapes = case_tests(CASES)


def _run(build):
    with tf.Graph().as_default():
        out = build()
        with tf.Session() as sess:
            return sess.run(out)


def test_op_types_names_and_shapes_are_tensorflows():
    with tf.Graph().as_default():
        files = tf.io.matching_files("*.txt")
        write = tf.io.write_file("f", "x")
        encoded = tf.io.encode_base64(["a"])
        decoded = tf.io.decode_compressed("x", compression_type="ZLIB")
    assert (files.op.type, files.op.name, files.shape.as_list()) == \
        ("MatchingFiles", "MatchingFiles", [None])
    assert (write.type, write.name, list(write.outputs)) == ("WriteFile", "WriteFile", [])
    assert encoded.op.get_attr("pad") is False and encoded.op.type == "EncodeBase64"
    assert decoded.op.get_attr("compression_type") == b"ZLIB"


def test_match_filenames_once_is_a_local_variable():
    with tf.Graph().as_default():
        files = tf.train.match_filenames_once(os.path.join(DIR, "*.txt"))
        assert files.op.name == "matching_filenames" and files.op.type == "VariableV2"
        assert files in tf.local_variables() and files not in tf.global_variables()
        assert files.shape.ndims is None
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            got = sess.run(files)
    assert got.tolist() == _matches(".hidden.txt", "a.txt", "b.txt").tolist()


@pytest.mark.parametrize("build,message", [
    (lambda: tf.matching_files([["*"]]), "Shape must be at most rank 1 but is rank 2"),
    (lambda: tf.write_file(["a"], "b"), "Shape must be rank 0 but is rank 1"),
    (lambda: tf.write_file("a", tf.constant(["b"])), "Shape must be rank 0 but is rank 1"),
])
def test_build_errors(build, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=message):
            build()


@pytest.mark.parametrize("build,error,message", [
    (lambda: tf.io.decode_base64("a$$"), tf.errors.InvalidArgumentError,
     "Invalid character found in base64."),
    (lambda: tf.io.decode_base64("aGVsbG8/Pg"), tf.errors.InvalidArgumentError,
     "Invalid character found in base64."),   # the standard alphabet is not web-safe
    (lambda: tf.io.decode_base64("YQ="), tf.errors.InvalidArgumentError,
     "Invalid character found in base64."),   # padding only ends a whole group
    (lambda: tf.io.decode_base64("YQ==="), tf.errors.InvalidArgumentError,
     "Invalid character found in base64."),
    (lambda: tf.io.decode_base64(["YQ", "aGVsb"]), tf.errors.InvalidArgumentError,
     "Base64 string length cannot be 1 modulo 4."),
    (lambda: tf.io.decode_compressed(b"garbage", "ZLIB"), tf.errors.DataLossError,
     "inflate\\(\\) failed with error -3: incorrect header check"),
    (lambda: tf.io.decode_compressed(b"garbage", "GZIP"), tf.errors.DataLossError,
     "inflate\\(\\) failed with error -3: incorrect header check"),
    (lambda: tf.io.decode_compressed(b"x", "BZ"), tf.errors.InvalidArgumentError,
     "Only ZLIB, ZSTD, GZIP or NONE are supported compressions"),
    (lambda: tf.io.write_file(os.path.join(DIR, "a.txt", "under_a_file"), "x"),
     tf.errors.FailedPreconditionError, "under_a_file; Not a directory"),
    (lambda: tf.io.write_file(DIR, "x"), tf.errors.FailedPreconditionError,
     "Is a directory"),
])
def test_run_time_errors(build, error, message):
    with pytest.raises(error, match=message):
        _run(build)


def test_queue_namespaces_match_tensorflow():
    assert tf.queue.FIFOQueue is tf.FIFOQueue and tf.queue.QueueBase is tf.QueueBase
    assert tf.queue.PaddingFIFOQueue is tf.io.PaddingFIFOQueue is tf.PaddingFIFOQueue
    assert tf.io.PriorityQueue is tf.PriorityQueue
    assert tf.io.RandomShuffleQueue is tf.RandomShuffleQueue and tf.io.QueueBase is tf.QueueBase
    assert not hasattr(tf.io, "FIFOQueue")   # as in TF 2.21's compat.v1
