"""tf.train.checkpoints_iterator: yields each new latest checkpoint once, ends on timeout (or
when timeout_fn says so), and waits for checkpoints written while it iterates."""
import threading
import time

import tensorweave as tf


def _save(directory, step):
    with tf.Graph().as_default():
        v = tf.Variable(float(step), name="v")
        with tf.Session() as sess:
            sess.run(v.initializer)
            return tf.train.Saver().save(sess, f"{directory}/model", global_step=step)


def test_yields_new_checkpoints_then_times_out(tmp_path):
    first = _save(tmp_path, 1)
    seen = []
    writer = None
    start = time.time()
    for path in tf.train.checkpoints_iterator(str(tmp_path), timeout=2.5):
        seen.append(path)
        if writer is None:
            writer = threading.Thread(target=_save, args=(tmp_path, 2))
            writer.start()
    writer.join()
    assert seen == [first, f"{tmp_path}/model-2"]
    assert time.time() - start >= 2.5


def test_timeout_fn_decides_whether_to_keep_waiting(tmp_path):
    calls = []

    def timeout_fn():
        calls.append(time.time())
        if len(calls) == 1:
            _save(tmp_path, 7)
            return False
        return True
    paths = list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0.5,
                                               timeout_fn=timeout_fn))
    assert paths == [f"{tmp_path}/model-7"] and len(calls) == 2


def test_min_interval_between_yields(tmp_path):
    _save(tmp_path, 1)
    iterator = tf.train.checkpoints_iterator(str(tmp_path), min_interval_secs=1.0, timeout=0.2)
    start = time.time()
    assert next(iterator).endswith("model-1")
    assert list(iterator) == []
    assert time.time() - start >= 1.0
