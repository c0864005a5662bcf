"""The tf.data file readers and tf.io.matching_files as TensorFlow 2.21 behaves.

TextLineDataset, TFRecordDataset and FixedLengthRecordDataset read their files one after
another, or with `num_parallel_reads` interleave that many files a record at a time; text
lines lose every "\\r"; matching_files sorts the matches of all its patterns together; bad file
names are TypeErrors when the dataset is built and a bad compression type an error when it is
read. Every expected value below is what TensorFlow 2.21 (tf.compat.v1, graph mode) printed
for the same program.
"""
import gzip
import pathlib

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.data import readers
from tensorweave.testing.datasets import drain_dataset, file_writer

pytestmark = pytest.mark.usefixtures("graph")

AUTOTUNE = tf.data.experimental.AUTOTUNE


def outcomes(dataset, limit=20) -> list:
    """What successive get_next calls give: values, the class names of errors, then "EOF"."""
    nxt = tf.data.make_one_shot_iterator(dataset).get_next()
    out = []
    with tf.Session() as sess:
        while len(out) < limit:
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                return out + ["EOF"]
            except tf.errors.OpError as e:
                out.append(type(e).__name__)
    return out


@pytest.fixture
def abc(tmp_path):
    """Three files of each reader's format: a with 3 records, b with 2, c with 4."""
    write = file_writer(tmp_path)
    counts = {"a": 3, "b": 2, "c": 4}
    text = [write(f"{n}.txt", "".join(f"{n}{i}\n" for i in range(1, k + 1)))
            for n, k in counts.items()]
    fixed = [write(f"{n}.bin", "".join(f"{n}{i}" for i in range(k))) for n, k in counts.items()]
    records = []
    for n, k in counts.items():
        path = str(tmp_path / f"{n}.tfr")
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(k):
                writer.write(f"{n}{i}".encode())
        records.append(path)
    return {"text": text, "tfrecord": records, "fixed": fixed}


READERS = {
    "text": lambda files, **kw: tf.data.TextLineDataset(files, **kw),
    "tfrecord": lambda files, **kw: tf.data.TFRecordDataset(files, **kw),
    "fixed": lambda files, **kw: tf.data.FixedLengthRecordDataset(files, 2, **kw),
}

# TF 2.21's orders; the text lines count from 1, the other records from 0.
ORDERS = {
    None: "a1 a2 a3 b1 b2 c1 c2 c3 c4",
    1: "a1 a2 a3 b1 b2 c1 c2 c3 c4",
    2: "a1 b1 a2 b2 a3 c1 c2 c3 c4",
    3: "a1 b1 c1 a2 b2 c2 a3 c3 c4",
    5: "a1 b1 c1 a2 b2 c2 a3 c3 c4",
}


def _expected(order: str, reader: str) -> list:
    shift = 0 if reader == "text" else 1
    return [f"{w[0]}{int(w[1:]) - shift}".encode() for w in order.split()]


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("num_parallel_reads", sorted(ORDERS, key=str))
def test_num_parallel_reads_interleaves_files_a_record_at_a_time(abc, reader,
                                                                  num_parallel_reads):
    dataset = READERS[reader](abc[reader], num_parallel_reads=num_parallel_reads)
    assert drain_dataset(dataset) == _expected(ORDERS[num_parallel_reads], reader)
    assert (dataset.output_types, dataset.output_shapes) == (tf.string, tf.TensorShape([]))


def test_two_files_read_in_parallel(tmp_path):
    """r09: TF gives a1 b1 a2 b2 a3 (and the records likewise), not a's lines then b's."""
    write = file_writer(tmp_path)
    files = [write("a.txt", "a1\na2\na3\n"), write("b.txt", "b1\nb2\n")]
    assert drain_dataset(tf.data.TextLineDataset(files, num_parallel_reads=2)) == \
        [b"a1", b"b1", b"a2", b"b2", b"a3"]


@pytest.mark.parametrize("cpus, order", [
    # TF 2.21 on 2 CPUs: one file after another.
    (2, "a1 a2 a3 b1 b2 c1 c2 c3 c4"),
    # TF's ComputeCycleLength: ceil(CPUs / 3) files at a time.
    (4, "a1 b1 a2 b2 a3 c1 c2 c3 c4"),
    (7, "a1 b1 c1 a2 b2 c2 a3 c3 c4"),
])
def test_autotune_reads_ceil_cpus_over_3_files_at_a_time(abc, monkeypatch, cpus, order):
    monkeypatch.setattr(readers, "schedulable_cpus", lambda: cpus)
    dataset = tf.data.TextLineDataset(abc["text"], num_parallel_reads=AUTOTUNE)
    assert drain_dataset(dataset) == _expected(order, "text")


def test_file_names_in_other_forms(abc, tmp_path):
    a, b, c = abc["text"]
    interleaved = _expected(ORDERS[2], "text")
    assert drain_dataset(tf.data.TextLineDataset(tf.constant([a, b, c]),
                                                 num_parallel_reads=np.int64(2))) == interleaved
    assert drain_dataset(tf.data.TextLineDataset(tf.data.Dataset.from_tensor_slices([a, b, c]),
                                                 num_parallel_reads=2)) == interleaved
    # Names of any shape are flattened: [[a, b], [b, c]] reads a, b, b, c.
    assert drain_dataset(tf.data.TextLineDataset([[a, b], [b, c]], num_parallel_reads=2)) == \
        [b"a1", b"b1", b"a2", b"b2", b"a3", b"b1", b"c1", b"b2", b"c2", b"c3", b"c4"]
    assert drain_dataset(tf.data.TextLineDataset([pathlib.Path(b)])) == [b"b1", b"b2"]
    assert drain_dataset(tf.data.TextLineDataset(a, num_parallel_reads=2)) == \
        [b"a1", b"a2", b"a3"]
    # True is a cycle of 1.
    assert drain_dataset(tf.data.TextLineDataset([a, b], num_parallel_reads=True)) == \
        [b"a1", b"a2", b"a3", b"b1", b"b2"]


def test_bad_num_parallel_reads(abc):
    for n in (0, -2):   # accepted when built; the iterator fails
        dataset = tf.data.TextLineDataset(abc["text"], num_parallel_reads=n)
        with pytest.raises(tf.errors.InvalidArgumentError, match="^`cycle_length` must be > 0"):
            drain_dataset(dataset)
    with pytest.raises(TypeError, match=r"^Expected int64, but got 2\.0 of type 'float'\.$"):
        tf.data.TextLineDataset(abc["text"], num_parallel_reads=2.0)


def test_a_missing_file_fails_in_its_turn(abc, tmp_path):
    a, b, _ = abc["text"]
    names = [a, str(tmp_path / "nope"), b]
    assert outcomes(tf.data.TextLineDataset(names, num_parallel_reads=2), 2) == \
        [b"a1", "NotFoundError"]
    assert outcomes(tf.data.TextLineDataset(names), 4) == [b"a1", b"a2", b"a3", "NotFoundError"]


# --- text lines: every "\r" is dropped ------------------------------------------------------

CARRIAGE_RETURNS = [
    (b"a\rb\r\nc\n", [b"ab", b"c"]),
    (b"a\r\n", [b"a"]),
    (b"a\r", [b"a"]),
    (b"\r", []),
    (b"a\n\r", [b"a"]),
    (b"a\r\r\n", [b"a"]),
    (b"\r\n", [b""]),
    (b"a\rb", [b"ab"]),
    (b"a\r\rb\n", [b"ab"]),
    (b"\r\r\n\r", [b""]),
    (b"a\n\rb", [b"a", b"b"]),
    (b"x\n\r\n\r", [b"x", b""]),
    (b"\n", [b""]),
    (b"", []),
    (b"a\n\n", [b"a", b""]),
    (b"a\n\r\r", [b"a"]),
    (b"a\r\n\r\nb", [b"a", b"", b"b"]),
    (b"a\r\r", [b"a"]),
]


@pytest.mark.parametrize("data, lines", CARRIAGE_RETURNS)
def test_text_lines_drop_every_carriage_return(tmp_path, data, lines):
    path = file_writer(tmp_path)("f.txt", data)
    assert drain_dataset(tf.data.TextLineDataset(path)) == lines


def test_compressed_text_lines_drop_carriage_returns_too(tmp_path):
    path = file_writer(tmp_path)("g.txt.gz", gzip.compress(b"a\rb\r\nc\r"))
    assert drain_dataset(tf.data.TextLineDataset(path, compression_type="GZIP")) == \
        [b"ab", b"c"]


# --- matching_files and list_files: one sorted list -----------------------------------------

@pytest.fixture
def tree(tmp_path):
    (tmp_path / "sub").mkdir()
    for name in ["f0", "f1", "g0", "F2", "_h", ".dot", "sub/f9", "f10"]:
        (tmp_path / name).write_text("x")
    root = str(tmp_path)
    return lambda *patterns: [f"{root}/{p}" for p in patterns], \
        lambda names: [n.decode().replace(root + "/", "") for n in names]


MATCHES = [
    (["g*", "f*"], ["f0", "f1", "f10", "g0"]),
    (["f*", "f0"], ["f0", "f0", "f1", "f10"]),
    (["g*", "F*", "_*", "sub/*", ".*"], [".dot", "F2", "_h", "g0", "sub/f9"]),
    (["g*", "zz*"], ["g0"]),
    (["*"], [".dot", "F2", "_h", "f0", "f1", "f10", "g0", "sub"]),
]


@pytest.mark.parametrize("patterns, names", MATCHES)
def test_matching_files_sorts_the_matches_of_all_patterns(tree, patterns, names):
    paths, relative = tree
    with tf.Session() as sess:
        assert relative(sess.run(tf.io.matching_files(paths(*patterns)))) == names
        assert relative(sess.run(tf.matching_files(paths(*patterns)))) == names


def test_list_files_without_shuffle_is_the_sorted_list(tree):
    paths, relative = tree
    assert relative(drain_dataset(tf.data.Dataset.list_files(paths("g*", "f*"),
                                                             shuffle=False))) == \
        ["f0", "f1", "f10", "g0"]
    assert relative(drain_dataset(tf.data.Dataset.list_files(paths("g*", "f*", "F*"),
                                                             shuffle=False))) == \
        ["F2", "f0", "f1", "f10", "g0"]


@pytest.mark.parametrize("seed, names", [
    (0, ["f1", "f10", "f0", "g0", "F2"]),
    (1, ["F2", "g0", "f10", "f0", "f1"]),
    (7, ["f1", "g0", "F2", "f10", "f0"]),
    (42, ["F2", "g0", "f0", "f10", "f1"]),
])
def test_list_files_shuffles_the_sorted_list(tree, seed, names):
    """The shuffle starts from the sorted list, so the patterns' order does not matter."""
    paths, relative = tree
    for patterns in (("g*", "f*", "F*"), ("F*", "f*", "g*")):
        assert relative(drain_dataset(tf.data.Dataset.list_files(paths(*patterns),
                                                                 seed=seed))) == names


def test_list_files_with_graph_and_op_seeds(tree):
    paths, relative = tree
    tf.set_random_seed(3)
    assert relative(drain_dataset(tf.data.Dataset.list_files(paths("g*", "f*"), seed=5))) == \
        ["f0", "f10", "g0", "f1"]


# --- validation: names when built, compression when read ------------------------------------

@pytest.mark.parametrize("reader", sorted(READERS))
def test_file_names_must_be_strings(reader):
    make = READERS[reader]
    for names, dtype in ([tf.constant([1]), "tf.int32"], [[1, 2], "tf.int32"],
                         [1.5, "tf.float32"]):
        with pytest.raises(TypeError, match=rf"^The `filenames` argument must contain "
                                            rf"`tf.string` elements. Got `{dtype}` elements\.$"):
            make(names)
    with pytest.raises(TypeError, match=r"Got a dataset of `tf.int64` elements\.$"):
        make(tf.data.Dataset.range(3))
    with pytest.raises(TypeError, match=r"of shape \[\] \(i\.e\. scalars\)\. Got a dataset of "
                                        r"element shape TensorShape\(\[Dimension\(3\)\]\)\.$"):
        make(tf.data.Dataset.from_tensors(["a", "b", "c"]))


@pytest.mark.parametrize("reader", ["text", "fixed"])
def test_unsupported_compression_fails_each_file_when_read(abc, reader):
    for compression in ("BZ2", "gzip"):   # the names are case-sensitive
        dataset = READERS[reader](abc[reader], compression_type=compression)
        assert outcomes(dataset) == ["InvalidArgumentError"] * 3 + ["EOF"]
        assert outcomes(READERS[reader](abc[reader], compression_type=compression,
                                        num_parallel_reads=2)) == \
            ["InvalidArgumentError"] * 3 + ["EOF"]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"^Unsupported compression_type\."):
        drain_dataset(READERS[reader](abc[reader], compression_type="BZ2"))
    # No file, no error.
    assert outcomes(READERS[reader](tf.constant([], tf.string), compression_type="BZ2")) == \
        ["EOF"]


def test_unsupported_tf_record_compression_reads_uncompressed(abc):
    for compression in ("BZ2", "gzip"):
        assert drain_dataset(tf.data.TFRecordDataset(abc["tfrecord"],
                                                     compression_type=compression)) == \
            _expected(ORDERS[None], "tfrecord")
    assert drain_dataset(tf.data.TFRecordDataset(abc["tfrecord"], compression_type="BZ2",
                                                 num_parallel_reads=2)) == \
        _expected(ORDERS[2], "tfrecord")


def test_compression_type_may_be_a_tensor(abc):
    assert drain_dataset(tf.data.TextLineDataset(abc["text"],
                                                 compression_type=tf.constant(""))) == \
        _expected(ORDERS[None], "text")
    assert drain_dataset(tf.data.FixedLengthRecordDataset(
        abc["fixed"], 2, compression_type=tf.constant(""))) == _expected(ORDERS[None], "fixed")


def test_csv_compression_is_checked_when_the_iterator_starts(abc):
    dataset = tf.data.experimental.CsvDataset(abc["text"][0], [tf.string],
                                              compression_type="BZ2")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"^Unsupported compression_type: BZ2\."):
        drain_dataset(dataset)
