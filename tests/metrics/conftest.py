"""Shared harness for the tf.metrics tests: stream batches through a metric and compare every
update (and the final value) with a NumPy reference computed on all the data seen so far.

`stream.check(build, batches, reference)` builds the metric on placeholders named like the
batch entries (with static shapes, an unknown batch dimension, or an unknown rank), feeds the
batches one by one through the update op, checks each result against `reference` of the
concatenated batches, then checks the value and that `local_variables_initializer()` resets it.
"""
import numpy as np
import pytest

import tensorweave as tf

SHAPES = ("static", "batch", "rank")


def _placeholder_shape(shape, kind):
    if kind == "rank":
        return None
    return shape if kind == "static" else (None,) + tuple(shape[1:])


def _concat(batches, key):
    values = [b[key] for b in batches]
    return values[0] if np.ndim(values[0]) == 0 else np.concatenate(values)


class Streamer:
    def session_run(self, build, batches, kind="static"):
        """(update results, value after the batches, value after a reset) of the metric."""
        with tf.Graph().as_default():
            ph = {k: tf.placeholder(tf.as_dtype(np.asarray(v).dtype),
                                    _placeholder_shape(np.shape(v), kind), name=k)
                  for k, v in batches[0].items()}
            value, update = build(ph)
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                updates = [sess.run(update, {ph[k]: v for k, v in b.items()}) for b in batches]
                final = sess.run(value)
                sess.run(tf.local_variables_initializer())
                reset = sess.run(value)
        return updates, final, reset

    def check(self, build, batches, reference, kind="static", rtol=1e-5, atol=1e-6,
              update_reference=None):
        """Each update equals reference(all data so far); so does the value; a reset zeroes it.

        `update_reference` gives the update op's result where it is not the value (mean_iou's
        update returns the confusion matrix, mean_per_class_accuracy's the per-class values).
        """
        updates, final, reset = self.session_run(build, batches, kind)
        expect_update = update_reference or reference
        for i, got in enumerate(updates):
            seen = {k: _concat(batches[:i + 1], k) for k in batches[0]}
            np.testing.assert_allclose(got, expect_update(**seen), rtol=rtol, atol=atol,
                                       err_msg=f"update after batch {i}")
        everything = {k: _concat(batches, k) for k in batches[0]}
        np.testing.assert_allclose(final, reference(**everything), rtol=rtol, atol=atol,
                                   err_msg="value")
        zero = reference(**{k: v[:0] for k, v in everything.items()})
        np.testing.assert_allclose(reset, zero, rtol=rtol, atol=atol, err_msg="after reset")


@pytest.fixture
def stream():
    return Streamer()


@pytest.fixture(params=SHAPES)
def kind(request):
    """How the placeholders are shaped: static, unknown batch dimension, or unknown rank."""
    return request.param
