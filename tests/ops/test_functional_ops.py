"""tf.map_fn, tf.scan, tf.foldl, tf.foldr: values against NumPy and gradients against
numerical differentiation."""
import numpy as np
import pytest

import tensorweave as tf

pytestmark = pytest.mark.usefixtures("executor_kind")
MAT = np.arange(12, dtype=np.float64).reshape(4, 3) / 10.0


def test_map_fn_structures_and_dtypes():
    with tf.Graph().as_default():
        m = tf.constant(MAT)
        norms = tf.map_fn(lambda r: tf.reduce_sum(r * r), m)
        pairs = tf.map_fn(lambda ab: (ab[0] * ab[1], ab[0] + 1.0), (m, m), dtype=(tf.float64,
                                                                               tf.float64))
        ints = tf.map_fn(lambda r: tf.cast(tf.argmax(r), tf.int32), m, dtype=tf.int32)
        assert norms.shape.as_list() == [4]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(norms), (MAT * MAT).sum(1))
            a, b = sess.run(pairs)
            np.testing.assert_allclose(a, MAT * MAT)
            np.testing.assert_allclose(b, MAT + 1)
            assert sess.run(ints).tolist() == [2, 2, 2, 2]
        with pytest.raises(ValueError, match="scalars"):
            tf.map_fn(lambda x: x, tf.constant(1.0))
        with pytest.raises(TypeError, match="callable"):
            tf.map_fn(3, m)


def test_scan_and_folds_against_python():
    with tf.Graph().as_default():
        v = tf.constant([1, 2, 3, 4])
        with tf.Session() as sess:
            assert sess.run(tf.scan(lambda a, x: a + x, v)).tolist() == [1, 3, 6, 10]
            assert sess.run(tf.scan(lambda a, x: a + x, v, initializer=10)).tolist() == \
                [11, 13, 16, 20]
            assert sess.run(tf.scan(lambda a, x: a * 10 + x, v, reverse=True)).tolist() == \
                [4321, 432, 43, 4]
            assert sess.run(tf.foldl(lambda a, x: a * 10 + x, v)) == 1234
            assert sess.run(tf.foldr(lambda a, x: a * 10 + x, v, initializer=0)) == 4321
            a, b = sess.run(tf.scan(lambda s, _: (s[1], s[0] + s[1]), tf.range(6),
                                    initializer=(tf.constant(0), tf.constant(1))))
            assert a.tolist() == [1, 1, 2, 3, 5, 8] and b.tolist() == [1, 2, 3, 5, 8, 13]


def test_gradients_through_map_fn_scan_and_fold():
    xv = np.array([0.5, 1.5, -0.7, 2.0])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [4])
        outputs = {
            "map": tf.map_fn(lambda e: tf.sin(e) * e, x),
            "scan": tf.scan(lambda a, e: a * e + 1.0, x),
            "foldl": tf.foldl(lambda a, e: a * tf.cos(e), x, initializer=tf.constant(1.0,
                                                                                     tf.float64)),
        }
        with tf.Session():
            for name, y in outputs.items():
                shape = y.shape.as_list()
                err = tf.test.compute_gradient_error(x, [4], y, shape, x_init_value=xv)
                assert err < 1e-6, name


def test_vectorized_map_gives_map_fns_values_in_fns_structure():
    """TensorFlow 2.21's values and structure for the same calls (its dicts keep the order
    fn made them in)."""
    with tf.Graph().as_default():
        x = tf.constant(np.arange(6.0).reshape(3, 2), tf.float32)
        sums = tf.vectorized_map(lambda row: tf.reduce_sum(row * 2), x)
        parts = tf.vectorized_map(lambda p: {"s": p[0] + p[1], "d": tf.cast(p[0], tf.int32)},
                                  (x, x))
        assert list(parts) == ["s", "d"] and parts["d"].dtype == tf.int32
        with tf.Session() as sess:
            got_sums, got_parts = sess.run([sums, parts])
    np.testing.assert_array_equal(got_sums, [2.0, 10.0, 18.0])
    np.testing.assert_array_equal(got_parts["s"], np.arange(6.0).reshape(3, 2) * 2)
    np.testing.assert_array_equal(got_parts["d"], np.arange(6).reshape(3, 2))
