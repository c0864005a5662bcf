"""prefetch runs its input ahead on a producer thread, with the inline pipeline's values,
order and errors, and the thread ends with its iterator."""
import gc
import threading
import time

import numpy as np
import pytest

import tensorweave as tf

D = tf.data.Dataset


def _producers() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "tw-prefetch" and t.is_alive())


def _wait_for(condition, seconds=5.0) -> bool:
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_elements_are_made_ahead_up_to_the_buffer_size():
    made = []

    def gen():
        for i in range(20):
            made.append(i)
            yield i

    with tf.Graph().as_default():
        nxt = D.from_generator(gen, tf.int64, []).prefetch(3).make_one_shot_iterator() \
            .get_next()
        with tf.Session() as sess:
            assert sess.run(nxt) == 0
            # the consumer took element 0; the producer fills the buffer (1, 2, 3) and then
            # holds element 4, made but not yet buffered
            assert _wait_for(lambda: len(made) == 5)
            time.sleep(0.05)
            assert len(made) == 5
            assert [sess.run(nxt) for _ in range(19)] == list(range(1, 20))
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(nxt)


@pytest.mark.parametrize("buffer_size", [1, 2, tf.data.experimental.AUTOTUNE])
def test_values_and_order_are_the_inline_pipeline_s(buffer_size):
    def run(prefetch):
        with tf.Graph().as_default():
            ds = D.from_tensor_slices(np.arange(300, dtype=np.float32)).shuffle(50, seed=3) \
                .repeat(2).batch(16).map(lambda x: x * 2.0)
            if prefetch:
                ds = ds.prefetch(buffer_size)
            nxt = ds.make_one_shot_iterator().get_next()
            out = []
            with tf.Session() as sess:
                while True:
                    try:
                        out.append(sess.run(nxt).tolist())
                    except tf.errors.OutOfRangeError:
                        return out
    assert run(True) == run(False)


def test_an_error_is_raised_at_its_element_and_ends_the_iteration():
    with tf.Graph().as_default():
        ds = D.from_tensor_slices(np.array([4, 4, 3, 4], np.int64)) \
            .map(lambda n: tf.reshape(tf.range(n), [2, 2])).prefetch(2)
        nxt = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            assert sess.run(nxt).tolist() == [[0, 1], [2, 3]]
            assert sess.run(nxt).tolist() == [[0, 1], [2, 3]]
            with pytest.raises(tf.errors.InvalidArgumentError, match="reshape"):
                sess.run(nxt)
            with pytest.raises(tf.errors.OutOfRangeError):   # as inline: the pipeline ended
                sess.run(nxt)


def test_the_producer_stops_when_its_iterator_is_reinitialized_or_its_session_closes():
    before = _producers()
    with tf.Graph().as_default():
        it = D.range(1_000_000).prefetch(2).make_initializable_iterator()
        nxt = it.get_next()
        sess = tf.Session()
        for _ in range(3):
            sess.run(it.initializer)
            assert sess.run(nxt) == 0
        assert _wait_for(lambda: _producers() == before + 1)   # the older two have stopped
        sess.close()
        del sess
        gc.collect()
        assert _wait_for(lambda: _producers() == before)
