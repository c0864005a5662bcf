"""Readers: WholeFileReaderV2, TFRecordReaderV2, IdentityReaderV2, ReaderReadV2,
ReaderReadUpToV2, ReaderNumRecordsProducedV2, ReaderNumWorkUnitsCompletedV2, ReaderResetV2,
ReaderSerializeStateV2 and ReaderRestoreStateV2 fed by a queue of file names, and ReadFile.
"""
import os
import threading

import pytest

import tensorweave as tf

BOUNDED = tf.RunOptions(timeout_in_ms=5000)


@pytest.fixture
def files(tmp_path):
    texts, records = [], []
    for i in range(3):
        path = tmp_path / f"f{i}.txt"
        path.write_bytes(b"content%d" % i)
        texts.append(str(path))
        rec = str(tmp_path / f"r{i}.tfrecord")
        with tf.python_io.TFRecordWriter(rec) as w:
            for j in range(i + 1):
                w.write(b"rec%d_%d" % (i, j))
        records.append(rec)
    return texts, records


def _filled_queue(names):
    q = tf.FIFOQueue(10, [tf.string], shapes=[[]])
    return q, q.enqueue_many([names]), q.close()


def test_whole_file_reader_reads_each_file_then_out_of_range(files):
    texts, _ = files
    with tf.Graph().as_default() as g:
        q, fill, close = _filled_queue(texts)
        reader = tf.WholeFileReader()
        key, value = reader.read(q)
        produced, completed = reader.num_records_produced(), reader.num_work_units_completed()
        reset = reader.reset()
    assert reader.reader_ref.op.type == "WholeFileReaderV2" and key.op.type == "ReaderReadV2"
    assert key.shape.as_list() == [] and produced.op.type == "ReaderNumRecordsProducedV2"
    with tf.Session(graph=g) as sess:
        sess.run(fill)
        sess.run(close)
        got = [sess.run([key, value], options=BOUNDED) for _ in range(3)]
        assert got == [[t.encode(), b"content%d" % i] for i, t in enumerate(texts)]
        with pytest.raises(tf.errors.OutOfRangeError, match="is closed"):
            sess.run(key, options=BOUNDED)
        assert sess.run([produced, completed]) == [3, 3]
        sess.run(reset)
        assert sess.run(produced) == 0


def test_tf_record_reader_read_up_to_ends_with_each_file(files):
    _, records = files
    with tf.Graph().as_default():
        q, fill, close = _filled_queue(records)
        reader = tf.TFRecordReader()
        keys, values = reader.read_up_to(q, 4)
        assert keys.shape.as_list() == [None] and keys.op.type == "ReaderReadUpToV2"
        with tf.Session() as sess:
            sess.run(fill)
            sess.run(close)
            # As TF's: a batch ends with its file once it has records.
            batches = [sess.run([keys, values], options=BOUNDED) for _ in range(3)]
            assert [v.tolist() for _, v in batches] == [
                [b"rec0_0"], [b"rec1_0", b"rec1_1"], [b"rec2_0", b"rec2_1", b"rec2_2"]]
            assert batches[1][0][1] == records[1].encode() + b":22"   # the record's offset
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(values, options=BOUNDED)


def test_compressed_tf_records_and_identity_reader(tmp_path):
    path = str(tmp_path / "z.tfrecord")
    options = tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)
    with tf.python_io.TFRecordWriter(path, options) as w:
        w.write(b"zipped")
    with tf.Graph().as_default():
        q, fill, _ = _filled_queue([path, "unit"])
        zipped = tf.TFRecordReader(options=options)
        assert zipped.reader_ref.op.get_attr("compression_type") == b"GZIP"
        _, value = zipped.read(q)
        ident_key, ident_value = tf.IdentityReader().read(q)
        with tf.Session() as sess:
            sess.run(fill)
            assert sess.run(value, options=BOUNDED) == b"zipped"
            assert sess.run([ident_key, ident_value], options=BOUNDED) == [b"unit", b"unit"]


def test_read_waits_for_file_names_without_holding_a_thread(files):
    texts, _ = files
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.string], shapes=[[]])
        name = tf.placeholder(tf.string, [])
        push = q.enqueue(name)
        _, value = tf.WholeFileReader().read(q)
        with tf.Session() as sess:
            got = []
            reader = threading.Thread(
                target=lambda: got.append(sess.run(value, options=BOUNDED)), daemon=True)
            reader.start()
            reader.join(0.2)
            assert reader.is_alive()
            sess.run(push, {name: texts[1]})
            reader.join(10)
            assert got == [b"content1"]


def test_missing_file_and_read_file(files, tmp_path):
    texts, _ = files
    with tf.Graph().as_default():
        q, fill, _ = _filled_queue([str(tmp_path / "missing.txt")])
        _, value = tf.WholeFileReader().read(q)
        contents = tf.read_file(texts[2])
        fed = tf.placeholder(tf.string, [])
        assert contents.op.type == "ReadFile" and contents.shape.as_list() == []
        with tf.Session() as sess:
            sess.run(fill)
            with pytest.raises(tf.errors.NotFoundError, match="missing.txt"):
                sess.run(value, options=BOUNDED)
            assert sess.run(contents) == b"content2"
            with pytest.raises(tf.errors.NotFoundError):
                sess.run(tf.read_file(fed), {fed: os.fspath(tmp_path / "nope")})


def test_whole_file_reader_state_round_trips_as_tensorflow_writes_it(files):
    texts, _ = files
    with tf.Graph().as_default() as g:
        q, fill, _ = _filled_queue(texts)
        reader = tf.WholeFileReader()
        key, value = reader.read(q)
        state = reader.serialize_state()
        fed = tf.placeholder(tf.string)
        restore = reader.restore_state(fed)
        counts = [reader.num_records_produced(), reader.num_work_units_completed()]
    assert reader.supports_serialize and state.op.type == "ReaderSerializeStateV2"
    assert state.shape.as_list() == [] and restore.type == "ReaderRestoreStateV2"
    with tf.Session(graph=g) as sess:
        sess.run(fill)
        assert sess.run(key, options=BOUNDED) == texts[0].encode()
        saved = sess.run(state)
        # TensorFlow 2.21's bytes for the same position: work_started 1, work_finished 1,
        # num_records_produced 1, current_work the file name (a file's unit ends with its record).
        assert saved == b"\x08\x01\x10\x01\x18\x01\"" + bytes([len(texts[0])]) + \
            texts[0].encode()
        sess.run(key, options=BOUNDED)
        assert sess.run(counts) == [2, 2]
        sess.run(restore, {fed: saved})
        assert sess.run(counts) == [1, 1]
        assert sess.run([key, value], options=BOUNDED) == [texts[2].encode(), b"content2"]
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Could not parse state for WholeFileReader "
                                 "'WholeFileReaderV2': garbage"):
            sess.run(restore, {fed: b"garbage"})
        with pytest.raises(tf.errors.InvalidArgumentError, match="work_finished > work_started"):
            sess.run(restore, {fed: b"\x08\x01\x10\x02"})


def test_identity_reader_restores_and_others_refuse(files):
    _, records = files
    with tf.Graph().as_default() as g:
        q, fill, _ = _filled_queue(["a", "b", "c"])
        identity = tf.IdentityReader()
        key, _ = identity.read(q)
        saved = identity.serialize_state()
        restore = identity.restore_state(saved)
        others = [tf.TFRecordReader(), tf.TextLineReader(),
                  tf.FixedLengthRecordReader(record_bytes=4)]
        refused = [(r.serialize_state(), r.restore_state(saved)) for r in others]
    assert not any(r.supports_serialize for r in others)
    with tf.Session(graph=g) as sess:
        sess.run(fill)
        assert sess.run(key, options=BOUNDED) == b"a"
        sess.run(restore)
        assert sess.run(key, options=BOUNDED) == b"b"
        for serialize, restore_other in refused:
            with pytest.raises(tf.errors.UnimplementedError, match="Reader SerializeState"):
                sess.run(serialize)
            with pytest.raises(tf.errors.UnimplementedError, match="Reader RestoreState"):
                sess.run(restore_other)
