"""Queue-based input as TensorFlow 2.21 runs it: the expected values and messages are what
`tensorflow.compat.v1` printed for the same programs (match_filenames_once feeding
string_input_producer, shared queues that disagree, SparseTensors through the batching
functions, LoggingTensorHook's text, empty padded batches, argument checks). Every blocking
run carries a deadline, so a bug fails instead of hanging."""
import logging
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.bounded import drain, run_bounded

BOUNDED = tf.RunOptions(timeout_in_ms=10000)


class Running:
    """A session with the queue runners started; `init_local` runs the local initializer."""

    def __init__(self, init_local=True):
        self.sess = tf.Session()
        self.coord = tf.train.Coordinator()
        self.init_local = init_local

    def __enter__(self):
        self.sess.run(tf.global_variables_initializer())
        if self.init_local:
            self.sess.run(tf.local_variables_initializer())
        self.threads = tf.train.start_queue_runners(self.sess, self.coord)
        return self

    def join(self):
        """Stops the runners; re-raises the error one of them reported, as TF's join does."""
        self.coord.request_stop()
        self.coord.join(self.threads, stop_grace_period_secs=5)

    def __exit__(self, *exc):
        self.coord.request_stop()
        try:
            self.coord.join(self.threads, stop_grace_period_secs=5)
        except Exception:   # noqa: BLE001 - reported by the test through join()
            pass
        self.sess.close()


# --- match_filenames_once -> string_input_producer ---------------------------------------
def _read_lines(pattern, init_local=True):
    files = tf.train.match_filenames_once(pattern)
    queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
    _, line = tf.TextLineReader().read(queue)
    run = Running(init_local)
    with run:
        lines = drain(run.sess, line, BOUNDED)
        value = run.sess.run(files) if init_local else None
        return run, lines, value


@pytest.fixture
def text_files(tmp_path):
    for name in ["b.txt", "a.txt"]:
        (tmp_path / name).write_text(f"line of {name}\n")
    return tmp_path


def test_match_filenames_once_feeds_string_input_producer(text_files):
    with tf.Graph().as_default():
        run, lines, files = _read_lines(str(text_files / "*.txt"))
        run.join()
        assert [v.name for v in tf.local_variables()] == [
            "matching_filenames:0", "input_producer/limit_epochs/epochs:0"]
    assert lines == [b"line of a.txt", b"line of b.txt"]
    assert files.tolist() == [str(text_files / "a.txt").encode(),
                              str(text_files / "b.txt").encode()]


def test_no_matching_file_fails_the_runner_with_the_assertion(text_files):
    with tf.Graph().as_default():
        run, lines, files = _read_lines(str(text_files / "*.nomatch"))
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"assertion failed: \[string_input_producer requires a "
                                 r"non-null input tensor\]"):
            run.join()
    assert lines == [] and files.tolist() == []


def test_the_file_list_is_a_local_variable_to_initialize(text_files):
    with tf.Graph().as_default():
        run, lines, _ = _read_lines(str(text_files / "*.txt"), init_local=False)
        with pytest.raises(tf.errors.FailedPreconditionError,
                           match="Attempting to use uninitialized value.*matching_filenames"):
            run.join()
    assert lines == []


@pytest.mark.parametrize("value, message", [
    ([], "string_input_producer requires a non-null input tensor"),
    ("", "string_input_producer requires a non-null input tensor"),
    (np.array(["a", "b"]), "The truth value of an array with more than one element is "
                           "ambiguous"),
    (np.array([], dtype=str), "The truth value of an empty array is ambiguous"),
])
def test_string_input_producer_rejects_what_tf_rejects(value, message):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=message):
        tf.train.string_input_producer(value)


@pytest.mark.parametrize("make", [lambda: ("a",), lambda: np.array(["a"]),
                                  lambda: tf.Variable(["a"])])
def test_string_input_producer_accepts_what_tf_accepts(make):
    with tf.Graph().as_default():
        assert isinstance(tf.train.string_input_producer(make()), tf.FIFOQueue)


# --- shared queues that do not match ------------------------------------------------------
def _shared(cls):
    """`cls` with shared_name="shq": every queue of the table shares one name."""
    return lambda *args, **kwargs: cls(*args, shared_name="shq", **kwargs)


F, R, PF, PQ = (_shared(tf.FIFOQueue), _shared(tf.RandomShuffleQueue),
                _shared(tf.PaddingFIFOQueue), _shared(tf.PriorityQueue))
SHARED = [
    (lambda: F(10, tf.int32, shapes=[[]]), lambda: F(10, tf.float32, shapes=[[]]),
     "Shared queue 'shq' has component types int32 but requested component types were float"),
    (lambda: F(10, tf.int32, shapes=[[]]), lambda: F(5, tf.int32, shapes=[[]]),
     "Shared queue 'shq' has capacity 10 but requested capacity was 5"),
    (lambda: F(10, tf.int32, shapes=[[]]), lambda: R(10, 0, tf.int32, shapes=[[]]),
     "Expected FIFOQueue, found RandomShuffleQueueV2"),
    (lambda: F(10, [tf.int32, tf.float32], shapes=[[], [2, 3]]),
     lambda: F(10, [tf.int32, tf.float32], shapes=[[], [3]]),
     "Shared queue 'shq' has component shapes [[], [2,3]] but requested component shapes "
     "were [[], [3]]"),
    (lambda: F(10, tf.int32), lambda: F(10, tf.int32, shapes=[[]]),
     "Shared queue 'shq' has component shapes [] but requested component shapes were [[]]"),
    (lambda: F(10, [tf.int32, tf.string]), lambda: F(10, [tf.int64, tf.double, tf.bool]),
     "Shared queue 'shq' has component types int32, string but requested component types "
     "were int64, double, bool"),
    (lambda: F(10, tf.int32), lambda: F(5, tf.float32),
     "Shared queue 'shq' has capacity 10 but requested capacity was 5"),
    (lambda: F(-1, tf.int32), lambda: F(5, tf.int32),
     "Shared queue 'shq' has capacity 2147483647 but requested capacity was 5"),
    (lambda: F(5, tf.int32), lambda: F(-1, tf.int32),
     "Shared queue 'shq' has capacity 5 but requested capacity was 2147483647"),
    (lambda: F(-1, tf.int32), lambda: F(-7, tf.int32), None),
    (lambda: F(10, tf.int32, shapes=[[]]), lambda: PF(10, tf.int32, shapes=[[]]),
     "Expected FIFOQueue, found PaddingFIFOQueueV2"),
    (lambda: PF(10, tf.int32, shapes=[[None]]), lambda: F(10, tf.int32, shapes=[[3]]),
     "Expected PaddingFIFOQueue, found FIFOQueueV2"),
    (lambda: PF(10, tf.int32, shapes=[[None, 2]]), lambda: PF(10, tf.int32, shapes=[[3, 2]]),
     None),
    (lambda: PF(10, [tf.int32], shapes=[[None]]), lambda: PF(10, [tf.int32], shapes=[[None, None]]),
     "Shared queue 'shq' has component shapes [[?]] but requested component shapes were "
     "[[?,?]]"),
    (lambda: R(10, 0, tf.int32, shapes=[[]]), lambda: F(10, tf.int32, shapes=[[]]),
     "Expected RandomShuffleQueue, found FIFOQueueV2"),
    (lambda: R(10, 2, tf.int32), lambda: R(10, 3, tf.int32),
     "Shared queue 'shq' has min_after_dequeue 2 but requested min_after_dequeue was 3."),
    (lambda: R(10, 2, tf.int32, seed=1), lambda: R(10, 2, tf.int32, seed=2),
     "Shared queue 'shq' has random seeds (87654321, 1) but requested seeds are "
     "(87654321, 2)."),
    (lambda: R(10, 2, tf.int32, seed=1), lambda: R(10, 2, tf.int32), None),
    (lambda: R(10, 2, tf.int32), lambda: R(10, 2, tf.int32, seed=3),
     "Shared queue 'shq' has random seeds (0, 0) but requested seeds are (87654321, 3)."),
    (lambda: R(10, 2, tf.int32, seed=1), lambda: R(10, 2, tf.int32, seed=1), None),
    (lambda: R(10, 2, tf.int32, shapes=[[]]), lambda: R(10, 2, tf.float32, shapes=[[2]]),
     "Shared queue 'shq' has component types int32 but requested component types were float"),
    (lambda: R(10, 2, tf.int32, shapes=[[]]), lambda: R(10, 2, tf.int32, shapes=[[2]]),
     "Shared queue 'shq' has component shapes [[]] but requested component shapes were "
     "[[2]]"),
    (lambda: PQ(10, [tf.int32], shapes=[[]]), lambda: PQ(10, [tf.float32], shapes=[[]]),
     "Shared queue 'shq' has component types int64, int32 but requested component types "
     "were int64, float"),
    (lambda: PQ(10, [tf.int32], shapes=[[]]), lambda: PQ(10, [tf.int32], shapes=[[2]]),
     "Shared queue 'shq' has component shapes [[], []] but requested component shapes were "
     "[[], [2]]"),
    (lambda: PQ(10, [tf.int32], shapes=[[]]), lambda: PQ(3, [tf.int32], shapes=[[]]),
     "Shared queue 'shq' has capacity 10 but requested capacity was 3"),
    (lambda: PQ(10, [tf.int32], shapes=[[]]), lambda: F(10, [tf.int32], shapes=[[]]),
     "Expected PriorityQueue, found FIFOQueueV2"),
    (lambda: F(10, [tf.int64, tf.int32], shapes=[[], []]),
     lambda: PQ(10, [tf.int32], shapes=[[]]), "Expected FIFOQueue, found PriorityQueueV2"),
]


@pytest.mark.parametrize("first, second, message", SHARED)
def test_a_second_queue_must_match_the_shared_one(first, second, message):
    with tf.Graph().as_default():
        queues = [first(), second()]
        with tf.Session() as sess:
            sess.run(queues[0].size(), options=BOUNDED)
            if message is None:
                assert sess.run(queues[1].size(), options=BOUNDED) == 0
                return
            for _ in range(2):   # the check runs again on every run
                with pytest.raises(tf.errors.InvalidArgumentError) as info:
                    sess.run(queues[1].size(), options=BOUNDED)
                assert message in str(info.value)


def test_the_first_queue_run_defines_the_shared_queue():
    with tf.Graph().as_default():
        q10 = tf.FIFOQueue(10, tf.int32, shared_name="d")
        q5 = tf.FIFOQueue(5, tf.int32, shared_name="d")
        message = "Shared queue 'd' has capacity 5 but requested capacity was 10"
        with tf.Session() as sess:
            sess.run(q5.size(), options=BOUNDED)
            for fetch in (q10.size(), q10.enqueue(3)):
                with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                    sess.run(fetch, options=BOUNDED)


def test_queues_in_other_containers_are_not_shared():
    with tf.Graph().as_default():
        q1 = tf.FIFOQueue(10, tf.int32, shared_name="b")
        with tf.container("c2"):
            q2 = tf.FIFOQueue(5, tf.float32, shared_name="b")
        with tf.Session() as sess:
            sess.run(q1.enqueue(4), options=BOUNDED)
            assert (sess.run(q2.size()), sess.run(q1.size())) == (0, 1)


# --- SparseTensors through the batching functions -----------------------------------------
def _index():
    return tf.train.range_input_producer(4, num_epochs=1, shuffle=False).dequeue()


def _sparse(i, size=3):
    return tf.SparseTensor(indices=[[0]], values=tf.reshape(i, [1]), dense_shape=[size])


def _triple(value):
    """A SparseTensorValue as plain lists, to compare with what TF printed."""
    return value.indices.tolist(), value.values.tolist(), value.dense_shape.tolist()


def _static(sp):
    return (sp.indices.shape.as_list(), sp.values.shape.as_list(),
            sp.dense_shape.shape.as_list(), sp.values.dtype)


def _batches(fetch, n):
    with Running() as run:
        return [run.sess.run(fetch, options=BOUNDED) for _ in range(n)]


def test_batch_of_sparse_tensors_is_a_sparse_tensor():
    with tf.Graph().as_default():
        batched = tf.train.batch([_sparse(_index())], batch_size=2)
        assert isinstance(batched, tf.SparseTensor)
        assert _static(batched) == ([None, 2], [None], [2], tf.int32)
        assert batched.indices.name == "batch/DeserializeManySparse:0"
        with Running() as run:
            first, second = (run.sess.run(batched, options=BOUNDED) for _ in range(2))
            with pytest.raises(tf.errors.OutOfRangeError):
                run.sess.run(batched, options=BOUNDED)
    assert _triple(first) == ([[0, 0], [1, 0]], [0, 1], [2, 3])
    assert _triple(second) == ([[0, 0], [1, 0]], [2, 3], [2, 3])


def test_sparse_and_dense_outputs_wait_for_each_other():
    with tf.Graph().as_default():
        i = _index()
        dense, sparse, tens = tf.train.batch([i, _sparse(i), i * 10], batch_size=2)
        assert [dense.name, sparse.indices.name, sparse.values.name, sparse.dense_shape.name,
                tens.name] == [f"batch/control_dependency{s}:0"
                               for s in ("", "_1", "_2", "_3", "_4")]
        assert dense.shape.as_list() == [2] and _static(sparse)[:3] == ([None, 2], [None], [2])
        (d, sp, t), = _batches([dense, sparse, tens], 1)
    assert d.tolist() == [0, 1] and t.tolist() == [0, 10]
    assert _triple(sp) == ([[0, 0], [1, 0]], [0, 1], [2, 3])


def test_sparse_tensors_in_dicts():
    with tf.Graph().as_default():
        i = _index()
        one = tf.train.batch({"s": _sparse(i)}, batch_size=2)
        assert isinstance(one["s"], tf.SparseTensor)
    with tf.Graph().as_default():
        i = _index()
        two = tf.train.batch({"s": _sparse(i), "d": i}, batch_size=2)
        (value,) = _batches(two, 1)
    assert value["d"].tolist() == [0, 1]
    assert _triple(value["s"]) == ([[0, 0], [1, 0]], [0, 1], [2, 3])


def test_sparse_string_values_with_varying_dense_shapes():
    with tf.Graph().as_default():
        i = _index()
        sp = tf.SparseTensor(
            indices=tf.cast(tf.reshape(tf.stack([0, i % 2]), [1, 2]), tf.int64),
            values=tf.reshape(tf.as_string(i), [1]),
            dense_shape=tf.cast(tf.stack([1, i + 1]), tf.int64))
        batched = tf.train.batch([sp], batch_size=3)
        assert _static(batched) == ([None, 3], [None], [3], tf.string)
        (value,) = _batches(batched, 1)
    assert _triple(value) == ([[0, 0, 0], [1, 0, 1], [2, 0, 0]], [b"0", b"1", b"2"],
                              [3, 1, 3])


def test_smaller_final_sparse_batch():
    with tf.Graph().as_default():
        batched = tf.train.batch([_sparse(_index())], batch_size=3,
                                 allow_smaller_final_batch=True)
        with Running() as run:
            values = drain(run.sess, batched, BOUNDED)
    assert [_triple(v) for v in values] == [([[0, 0], [1, 0], [2, 0]], [0, 1, 2], [3, 3]),
                                            ([[0, 0]], [3], [1, 3])]


def test_sparse_with_dynamic_pad():
    with tf.Graph().as_default():
        i = _index()
        sp, padded = tf.train.batch([_sparse(i), tf.fill([i], i)], batch_size=2,
                                    dynamic_pad=True)
        assert padded.shape.as_list() == [2, None]
        ((sp_value, padded_value),) = _batches([sp, padded], 1)
    assert _triple(sp_value) == ([[0, 0], [1, 0]], [0, 1], [2, 3])
    assert padded_value.tolist() == [[0], [1]]


def _rows():
    return tf.SparseTensor([[0, 0], [1, 2], [2, 1]], [1, 2, 3], [3, 4])


def test_sparse_enqueue_many_splits_rows():
    with tf.Graph().as_default():
        batched = tf.train.batch([_rows()], batch_size=2, enqueue_many=True)
        assert _static(batched)[:3] == ([None, 2], [None], [2])
        (value,) = _batches(batched, 1)
    assert _triple(value) == ([[0, 0], [1, 2]], [1, 2], [2, 4])


def test_maybe_batch_keeps_sparse_examples():
    with tf.Graph().as_default():
        i = _index()
        scalar = tf.train.maybe_batch([_sparse(i)], tf.equal(i % 2, 0), batch_size=2)
        (value,) = _batches(scalar, 1)
    assert _triple(value) == ([[0, 0], [1, 0]], [0, 2], [2, 3])
    with tf.Graph().as_default():
        vector = tf.train.maybe_batch([_rows()], [True, False, True], batch_size=2,
                                      enqueue_many=True)
        (value,) = _batches(vector, 1)
    assert _triple(value) == ([[0, 0], [1, 1]], [1, 3], [2, 4])


def test_shuffle_batch_and_joins_of_sparse_tensors():
    with tf.Graph().as_default():
        shuffled = tf.train.shuffle_batch([_sparse(_index())], batch_size=4, capacity=10,
                                          min_after_dequeue=0, seed=3)
        (value,) = _batches(shuffled, 1)
    # Which order depends on how the runner's enqueues interleave with the dequeue.
    assert sorted(value.values.tolist()) == [0, 1, 2, 3]
    assert value.indices.tolist() == [[0, 0], [1, 0], [2, 0], [3, 0]]
    assert value.dense_shape.tolist() == [4, 3]
    with tf.Graph().as_default():
        joined = tf.train.batch_join([[_sparse(tf.constant(1))], [_sparse(tf.constant(2), 5)]],
                                     batch_size=4)
        assert isinstance(joined, tf.SparseTensor)
        (value,) = _batches(joined, 1)
    assert set(value.values.tolist()) <= {1, 2} and value.dense_shape.tolist()[0] == 4
    with tf.Graph().as_default():
        joined = tf.train.shuffle_batch_join(
            [[_sparse(tf.constant(1))], [_sparse(tf.constant(1), 5)]], batch_size=4,
            capacity=10, min_after_dequeue=0)
        (value,) = _batches(joined, 1)
    assert value.values.tolist() == [1, 1, 1, 1] and value.dense_shape.tolist()[0] == 4


def test_joined_lists_must_be_sparse_in_the_same_places():
    with tf.Graph().as_default(), pytest.raises(
            ValueError, match=r"^Inconsistent SparseTensors list: \[SparseTensor\(indices="):
        tf.train.batch_join([[_sparse(tf.constant(1))], [tf.constant(2)]], batch_size=4)


# --- LoggingTensorHook's text -------------------------------------------------------------
def test_logging_tensor_hook_prints_numpy_values(caplog):
    with tf.Graph().as_default(), caplog.at_level(logging.INFO, logger="tensorweave"):
        w = tf.constant(1.4, tf.float32, name="w")
        tensors = {
            "w": w, "v": tf.constant([0.1, 0.2], name="v"), "i": tf.constant(3, tf.int64),
            "x": tf.constant(0.6710887, tf.float32), "d": tf.constant(0.1, tf.float64),
            "s": tf.constant(b"hi"), "ss": tf.constant([b"a", b"b"]), "b": tf.constant(True),
            "m": tf.constant([[1e-7, 2.0], [3.5, 1e6]], tf.float32),
            "big": tf.constant(1e-9, tf.float32), "i32": tf.constant([1, 2, 3]),
            "h": tf.constant(1.5, tf.float16)}

        def listing(vals):
            return "|".join(f"{k}:{type(vals[k]).__name__}:{vals[k]!s}" for k in sorted(vals))

        def suppressed(vals):
            return str(np.array([1e-9, 1.0])) + "{}".format(vals["w"]) + " " + repr(vals["x"])
        hooks = [tf.train.LoggingTensorHook(tensors, every_n_iter=1),
                 tf.train.LoggingTensorHook(tensors, every_n_iter=1, formatter=listing),
                 tf.train.LoggingTensorHook(tensors, every_n_iter=1, formatter=suppressed),
                 tf.train.LoggingTensorHook([w.name, "v:0"], every_n_iter=1)]
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            sess.run(w)
    messages = [r.getMessage() for r in caplog.records if " = " in r.getMessage()
                or "|" in r.getMessage() or "np." in r.getMessage()]
    assert messages == [
        "b = True, big = 1e-09, d = 0.1, h = 1.5, i = 3, i32 = [1 2 3], m = [[1.0e-07 2.0e+00]"
        "\n [3.5e+00 1.0e+06]], s = b'hi', ss = [b'a' b'b'], v = [0.1 0.2], w = 1.4, "
        "x = 0.6710887",
        "b:bool:True|big:float32:1e-09|d:float64:0.1|h:float16:1.5|i:int64:3|"
        "i32:ndarray:[1 2 3]|m:ndarray:[[1.0e-07 2.0e+00]\n [3.5e+00 1.0e+06]]|s:bytes:b'hi'|"
        "ss:ndarray:[b'a' b'b']|v:ndarray:[0.1 0.2]|w:float32:1.4|x:float32:0.6710887",
        "[0. 1.]1.399999976158142 np.float32(0.6710887)",
        "w:0 = 1.4, v:0 = [0.1 0.2]"]
    assert str(np.array([1e-9, 1.0])) == "[1.e-09 1.e+00]"   # suppress only while logging


# --- PaddingFIFOQueue.dequeue_many(0) -----------------------------------------------------
def test_empty_padded_batch_has_zero_sized_unknown_dimensions():
    with tf.Graph().as_default():
        queue = tf.PaddingFIFOQueue(10, [tf.int32, tf.float32], shapes=[[None], [None, 3]])
        batch = queue.dequeue_many(0)
        assert [t.shape.as_list() for t in batch] == [[0, None], [0, None, 3]]
        with tf.Session() as sess:
            values = sess.run(batch, options=BOUNDED)
    assert [v.shape for v in values] == [(0, 0), (0, 0, 3)]
    assert [v.dtype for v in values] == [np.int32, np.float32]


# --- argument checks ----------------------------------------------------------------------
@pytest.mark.parametrize("make, message", [
    (lambda: tf.FIFOQueue(5, []),
     "Attr 'component_types' of 'FIFOQueueV2' Op passed list of length 0 less than minimum "
     "1."),
    (lambda: tf.RandomShuffleQueue(5, 0, []),
     "Attr 'component_types' of 'RandomShuffleQueueV2' Op passed list of length 0 less than "
     "minimum 1."),
    (lambda: tf.PaddingFIFOQueue(5, [], shapes=[]),
     "When providing partial shapes, a list of shapes must be provided."),
    (lambda: tf.PaddingFIFOQueue(5, [tf.int32], shapes=[None]),
     "When providing partial shapes, a list of shapes must be provided."),
    (lambda: tf.PriorityQueue(5, [], shapes=[]),
     "Queue shapes must have the same length as dtypes, received len(shapes)=2, "
     "len(dtypes)=1"),
])
def test_queue_constructors_check_as_tf(make, message):
    with tf.Graph().as_default(), pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message


_PREFIX = ("queue_closed_exception_types, when provided, must be a tuple of tf.error types, "
           "but saw: ")


@pytest.mark.parametrize("types, message", [
    ((ValueError,), _PREFIX + "<class 'ValueError'>"),
    # TF formats the tuple with `%`: two items or none fail the formatting itself.
    ((tf.errors.OutOfRangeError, ValueError),
     "not all arguments converted during string formatting"),
    ((), "not enough arguments for format string"),
    ([tf.errors.OutOfRangeError], _PREFIX + "[<class "),
    (tf.errors.OutOfRangeError, _PREFIX + "<class "),
    ((tf.errors.OutOfRangeError(None, None, "x"),), "issubclass() arg 1 must be a class"),
])
def test_queue_runner_checks_queue_closed_exception_types(types, message):
    with tf.Graph().as_default():
        queue = tf.FIFOQueue(5, tf.int32, shapes=[[]])
        with pytest.raises(TypeError) as info:
            tf.train.QueueRunner(queue, [queue.enqueue(1)], queue_closed_exception_types=types)
        assert str(info.value).startswith(message)
        runner = tf.train.QueueRunner(queue, [queue.enqueue(1)],
                                      queue_closed_exception_types=(tf.errors.OpError,))
        assert runner.queue_closed_exception_types == (tf.errors.OpError,)


def test_batch_join_takes_as_many_tensors_from_each_list_as_the_first_has():
    with tf.Graph().as_default():
        batched = tf.train.batch_join([[tf.constant(1)], [tf.constant(2), tf.constant(3.0)]],
                                      batch_size=4)
        assert batched.name == "batch_join:0" and batched.dtype == tf.int32
        graph = tf.get_default_graph()
        enqueues = [[t.name for t in op.inputs] for op in graph.get_operations()
                    if op.type == "QueueEnqueueV2"]
        assert enqueues == [["batch_join/fifo_queue:0", "Const:0"],
                            ["batch_join/fifo_queue:0", "Const_1:0"]]
        (runner,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert len(runner.enqueue_ops) == 2
        (value,) = _batches(batched, 1)
    assert set(value.tolist()) <= {1, 2}   # which runner thread fills it first varies


@pytest.mark.parametrize("tensors_list, error, message", [
    ([[tf.constant(1), tf.constant(3)], [tf.constant(2)]], ValueError,
     r"^Inconsistent SparseTensors list: \["),
    ([{"a": 1}, {"a": 2, "b": 3}], ValueError,
     "^All dictionaries in tensors_list must have the same keys$"),
])
def test_batch_join_rejects_what_tf_rejects(tensors_list, error, message):
    with tf.Graph().as_default(), pytest.raises(error, match=message):
        tf.train.batch_join(tensors_list, batch_size=2)


def test_batch_iterates_what_it_is_given():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Iterating over a symbolic `tf.Tensor` is not "
                                            "allowed"):
            tf.train.batch(tf.constant([1, 2]), batch_size=2)
        with pytest.raises(TypeError, match="'int' object is not iterable"):
            tf.train.batch(5, batch_size=2)
        # Neither opened the "batch" name scope: TF iterates first.
        rows = tf.train.batch(np.array([1, 2]), batch_size=2)   # one tensor per row
        assert [(t.name, t.shape.as_list(), t.dtype) for t in rows] == [
            ("batch:0", [2], tf.int64), ("batch:1", [2], tf.int64)]
        with pytest.raises(ValueError, match=r"Expected at least one tensor in batch\(\)\."):
            tf.train.batch([], batch_size=2)


# --- RandomShuffleQueue order after a dequeue_many that fails -----------------------------
@pytest.mark.parametrize("fail_first", [False, True])
def test_a_failed_dequeue_many_draws_nothing(fail_first):
    with tf.Graph().as_default():
        queue = tf.RandomShuffleQueue(10, 0, tf.int32, shapes=[[]], seed=1)
        with tf.Session() as sess:
            sess.run(queue.enqueue_many([[1, 2, 3, 4]]), options=BOUNDED)
            sess.run(queue.close())
            if fail_first:
                with pytest.raises(tf.errors.OutOfRangeError,
                                   match=r"requested 50, current size 4\)"):
                    sess.run(queue.dequeue_many(50), options=BOUNDED)
            assert sess.run(queue.dequeue_up_to(50), options=BOUNDED).tolist() == [4, 3, 2, 1]


@pytest.mark.parametrize("kind, remaining", [("fifo", [1, 2, 3]), ("rsq", [2, 3, 1])])
def test_elements_a_closed_queue_cannot_complete_go_back(kind, remaining):
    """A dequeue_many(5) takes 1, 2 then 3 while it waits; closing the queue fails it and
    puts them back (a shuffling queue last first), for a dequeue_up_to to take."""
    with tf.Graph().as_default():
        queue = tf.FIFOQueue(10, tf.int32, shapes=[[]]) if kind == "fifo" else \
            tf.RandomShuffleQueue(10, 0, tf.int32, shapes=[[]], seed=5)
        many, up_to = queue.dequeue_many(5), queue.dequeue_up_to(10)
        with tf.Session() as sess:
            outcome = {}

            def blocked():
                try:
                    outcome["value"] = sess.run(many, options=BOUNDED)
                except tf.errors.OpError as e:
                    outcome["error"] = type(e)
            waiter = threading.Thread(target=run_bounded, args=(blocked, 15), daemon=True)
            waiter.start()
            for fetch in (queue.enqueue_many([[1, 2]]), queue.enqueue_many([[3]])):
                time.sleep(0.2)   # lets the dequeue park first, as TF's probe did
                sess.run(fetch, options=BOUNDED)
                # Taken before the next enqueue, even by a dequeue that parked late: a
                # shuffling queue's draws depend on how many elements it holds at a time.
                _wait_until(lambda: sess.run(queue.size()) == 0)
            sess.run(queue.close())
            waiter.join(15)
            assert outcome == {"error": tf.errors.OutOfRangeError}
            assert sess.run(queue.size()) == 3
            assert sess.run(up_to, options=BOUNDED).tolist() == remaining


def _wait_until(predicate, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)
