"""tf.data iterators in the graph: lifecycle, re-initialization, handles, sessions and files."""
import json
import os
import threading

import pytest

import tensorweave as tf

D = tf.data.Dataset
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")


def drain(sess, nxt, limit=1000):
    out = []
    for _ in range(limit):
        try:
            out.append(sess.run(nxt))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError("iterator did not end")


def test_op_types_and_names_match_tensorflow():
    with tf.Graph().as_default() as g:
        it = D.range(3).make_initializable_iterator()
        nxt = it.get_next()
        handle = it.string_handle()
        types = {op.type for op in g.get_operations()}
        assert {"DatasetPipeline", "IteratorV2", "MakeIterator", "IteratorGetNext",
                "IteratorToStringHandle"} <= types
        assert nxt.name == "IteratorGetNext:0" and it.initializer.type == "MakeIterator"
        assert handle.dtype == tf.string and handle.shape.as_list() == []
        tf.data.make_one_shot_iterator(D.range(2))
        # TensorFlow makes an iterator's string handle op with the iterator.
        assert [op.type for op in g.get_operations()[-2:]] == ["OneShotIterator",
                                                               "IteratorToStringHandle"]
        # The GraphDef stays serializable: the pipeline is a JSON string attr.
        graph_def = g.as_graph_def()
        node = next(n for n in graph_def.node if n.op == "DatasetPipeline")
        assert json.loads(node.attr["pipeline"].s)["root"]["kind"] == "range"


def test_uninitialized_get_next_and_end_of_sequence():
    with tf.Graph().as_default():
        it = D.range(2).make_initializable_iterator()
        nxt = it.get_next()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
                sess.run(nxt)
            sess.run(it.initializer)
            assert drain(sess, nxt) == [0, 1]
            with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
                sess.run(nxt)
            sess.run(it.initializer)   # restarts from the beginning
            assert sess.run(nxt) == 0


def test_reinitialization_with_new_feeds_and_captured_placeholders():
    with tf.Graph().as_default():
        data = tf.placeholder(tf.int64, [None])
        scale = tf.placeholder(tf.int64, [])
        it = D.from_tensor_slices(data).map(lambda x: x * scale).make_initializable_iterator()
        nxt = it.get_next()
        with tf.Session() as sess:
            sess.run(it.initializer, {data: [1, 2], scale: 10})
            assert drain(sess, nxt) == [10, 20]
            sess.run(it.initializer, {data: [3], scale: -1})
            assert drain(sess, nxt) == [-3]


def test_one_shot_iterator_restarts_in_each_session():
    with tf.Graph().as_default():
        nxt = D.range(3).make_one_shot_iterator().get_next()
        with tf.Session() as a, tf.Session() as b:
            assert a.run(nxt) == 0 and a.run(nxt) == 1
            assert drain(b, nxt) == [0, 1, 2]
            assert drain(a, nxt) == [2]


def test_one_shot_iterator_refuses_placeholders():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.int64, [None])
        with pytest.raises(ValueError, match="Cannot capture a placeholder"):
            D.from_tensor_slices(p).make_one_shot_iterator()


def test_reinitializable_iterator_from_structure():
    with tf.Graph().as_default():
        it = tf.data.Iterator.from_structure((tf.int64, tf.string), (tf.TensorShape([]), []))
        words = D.from_tensor_slices([b"x", b"y", b"z"])
        to_a = it.make_initializer(D.zip((D.range(3), words)))
        to_b = it.make_initializer(D.zip((D.range(5, 6), words)))
        nxt = it.get_next()
        assert isinstance(nxt, tuple) and nxt[1].dtype == tf.string
        with pytest.raises(TypeError, match="Expected output types"):
            it.make_initializer(D.range(3))
        with pytest.raises(ValueError, match="does not have an initializer"):
            it.initializer  # noqa: B018 - the property raises
        with tf.Session() as sess:
            sess.run(to_a)
            assert [(int(a), b) for a, b in drain(sess, nxt)] == [(0, b"x"), (1, b"y"),
                                                                  (2, b"z")]
            sess.run(to_b)
            assert [(int(a), b) for a, b in drain(sess, nxt)] == [(5, b"x")]


def test_feedable_iterator_switches_by_string_handle():
    with tf.Graph().as_default():
        train = D.range(100).make_one_shot_iterator()
        valid = D.range(-3, 0).make_initializable_iterator()
        handle = tf.placeholder(tf.string, [])
        it = tf.data.Iterator.from_string_handle(handle, tf.int64, tf.TensorShape([]))
        nxt = it.get_next()
        assert it._resource.op.type == "IteratorFromStringHandleV2"
        with tf.Session() as sess:
            th, vh = sess.run([train.string_handle(), valid.string_handle()])
            sess.run(valid.initializer)
            assert [sess.run(nxt, {handle: th}) for _ in range(2)] == [0, 1]
            assert sess.run(nxt, {handle: vh}) == -3
            assert sess.run(nxt, {handle: th}) == 2
            # TensorFlow 2.21: a string that is no handle is an invalid argument; a handle
            # naming no iterator of this session (here: of another session) is not found.
            for bogus in (b"bogus", b"", b"no/such-iterator"):
                with pytest.raises(tf.errors.InvalidArgumentError,
                                   match="Could not parse string_handle"):
                    sess.run(nxt, {handle: bogus})
        with tf.Session() as other:
            other.run(valid.initializer)   # this session's iterator of the same node
            assert other.run(nxt, {handle: other.run(valid.string_handle())}) == -3
            with pytest.raises(tf.errors.NotFoundError, match="does not exist"):
                other.run(nxt, {handle: vh})


def test_string_handle_and_make_initializer_ops_are_named_as_in_tensorflow():
    with tf.Graph().as_default() as g:
        it = tf.data.Iterator.from_structure(tf.int64, tf.TensorShape([]))
        assert [op.type for op in g.get_operations()] == ["IteratorV2",
                                                          "IteratorToStringHandle"]
        init = it.make_initializer(D.range(3))
        assert (init.name, init.type) == ("make_initializer", "MakeIterator")
        assert it.make_initializer(D.range(3), name="restart").name == "restart"
        first, second = it.string_handle(), it.string_handle()
        assert first is second and first.name == "IteratorToStringHandle:0"
        assert it.string_handle(name="named").name == "named:0"
        later = D.range(3).make_initializable_iterator()
        assert later.string_handle().name == "IteratorToStringHandle_1:0"
        assert g.get_operations()[-2].type == "MakeIterator"


def test_get_next_from_several_threads_yields_each_element_once():
    with tf.Graph().as_default():
        nxt = D.range(400).make_one_shot_iterator().get_next()
        seen, lock = [], threading.Lock()
        with tf.Session() as sess:
            def worker():
                for v in drain(sess, nxt):
                    with lock:
                        seen.append(int(v))
            threads = [threading.Thread(target=worker) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=30)
            assert not any(t.is_alive() for t in threads)
    assert sorted(seen) == list(range(400))


def test_text_line_dataset_strips_terminators(tmp_path):
    plain, packed = tmp_path / "a.txt", tmp_path / "b.txt.gz"
    plain.write_bytes(b"a\r\nb\n\nc")
    import gzip
    packed.write_bytes(gzip.compress(b"x\ny\n"))
    with tf.Graph().as_default():
        nxt = tf.data.TextLineDataset([str(plain)]).make_one_shot_iterator().get_next()
        gz = tf.data.TextLineDataset(str(packed), compression_type="GZIP") \
            .make_one_shot_iterator().get_next()
        missing = tf.data.TextLineDataset(str(tmp_path / "none")) \
            .make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert drain(sess, nxt) == [b"a", b"b", b"", b"c"]   # as TensorFlow 2.21
            assert drain(sess, gz) == [b"x", b"y"]
            with pytest.raises(tf.errors.NotFoundError, match="No such file"):
                sess.run(missing)


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_tfrecord_dataset_round_trip(tmp_path, compression):
    path = str(tmp_path / "r.tfrecord")
    records = [b"", b"one", bytes(range(256))]
    with tf.python_io.TFRecordWriter(path, tf.python_io.TFRecordOptions(compression)) as w:
        for r in records:
            w.write(r)
    with tf.Graph().as_default():
        nxt = tf.data.TFRecordDataset(path, compression_type=compression) \
            .make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert drain(sess, nxt) == records


def test_tfrecord_dataset_reads_files_written_by_tensorflow():
    with open(os.path.join(FIXTURES, "tf_records.json")) as f:
        expected = [bytes.fromhex(h) for h in json.load(f)["records_hex"]]
    with tf.Graph().as_default():
        plain = tf.data.TFRecordDataset(os.path.join(FIXTURES, "tf_records.tfrecord"))
        packed = tf.data.TFRecordDataset(os.path.join(FIXTURES, "tf_records.tfrecord.gz"),
                                         compression_type="GZIP")
        a = plain.make_one_shot_iterator().get_next()
        b = packed.batch(2).make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert drain(sess, a) == expected
            assert [r for batch in drain(sess, b) for r in batch.tolist()] == expected
