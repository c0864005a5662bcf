"""Denormals flush to zero inside steps, as in TensorFlow; the caller keeps IEEE outside them."""
import platform
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime import float_env

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64", "aarch64", "arm64")
    or platform.libc_ver()[0] != "glibc", reason="flushing is set through glibc's fenv_t")

DENORMAL = np.float32(1e-39)      # below float32's smallest normal, 1.18e-38


def _times_one(values):
    return np.asarray(values, np.float32) * np.float32(1.0)


def test_kernels_flush_denormal_inputs_and_results_to_zero():
    # TensorFlow 2.21 gives [0, 1e-30, -0] for this feed and 0 for the folded constant.
    x = tf.placeholder(tf.float32, [3])
    one = tf.placeholder(tf.float32, [])
    y = x * one
    folded = tf.constant(DENORMAL) * tf.constant(np.float32(1.0))
    with tf.Session() as sess:
        got = sess.run(y, {x: np.float32([1e-39, 1e-30, -2e-39]), one: 1.0})
        np.testing.assert_array_equal(got, np.float32([0, 1e-30, 0]))
        assert np.signbit(got[2])
        assert sess.run(folded) == 0


def test_the_callers_thread_keeps_ieee_denormals_after_a_step():
    x = tf.placeholder(tf.float32, [])
    with tf.Session() as sess:
        sess.run(x * 2.0, {x: 1.0})
    assert _times_one([DENORMAL])[0] == DENORMAL


def test_a_failed_step_restores_the_callers_environment():
    x = tf.placeholder(tf.float32, [None])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(tf.reshape(x, [3]), {x: [1.0, 2.0]})
    assert _times_one([DENORMAL])[0] == DENORMAL


def test_inter_op_threads_flush_for_life():
    # Enough independent branches that some run on the inter-op pool.
    x = tf.placeholder(tf.float32, [4096])
    branches = [tf.reduce_sum(x * float(i + 1)) for i in range(8)]
    seen = []
    with tf.Session() as sess:
        sess.run(branches, {x: np.ones(4096, np.float32)})
        pool = sess._core.pool
        pool.submit(lambda: seen.append(_times_one([DENORMAL])[0])).result()
    assert seen == [0]


def test_enter_is_idempotent_and_leave_restores():
    results = []

    def in_fresh_thread():
        outer = float_env.enter()
        inner = float_env.enter()         # already flushing: nothing to undo
        results.append((inner, _times_one([DENORMAL])[0]))
        float_env.leave(inner)
        results.append(_times_one([DENORMAL])[0])
        float_env.leave(outer)
        results.append(_times_one([DENORMAL])[0])

    thread = threading.Thread(target=in_fresh_thread)
    thread.start()
    thread.join()
    assert results == [(None, 0), 0, DENORMAL]
