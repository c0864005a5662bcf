"""tf.uniform_unit_scaling_initializer / tf.initializers.uniform_unit_scaling: the bound
factor * sqrt(3 / input_size) (input size: all dimensions but the last, of the full variable
for a partition), its config and dtype check."""
import numpy as np
import pytest

import tensorweave as tf


def _values(shape, init, partitioner=None):
    with tf.Graph().as_default():
        v = tf.get_variable("v", shape, initializer=init, partitioner=partitioner)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return sess.run(tf.convert_to_tensor(v) if partitioner else v)


@pytest.mark.parametrize("shape,factor", [([50, 40, 30], 2.0), ([400, 20], 1.0), ([500], 1.0)])
def test_bound(shape, factor):
    x = _values(shape, tf.uniform_unit_scaling_initializer(factor=factor, seed=1))
    limit = factor * np.sqrt(3 / max(np.prod(shape[:-1]), 1))
    assert np.abs(x).max() <= limit and np.abs(x).max() > 0.95 * limit
    assert abs(x.mean()) < 0.05 * limit


def test_partitions_scale_as_the_full_variable():
    x = _values([300, 10], tf.initializers.uniform_unit_scaling(seed=2),
                partitioner=tf.fixed_size_partitioner(3))
    limit = np.sqrt(3 / 300)
    assert np.abs(x).max() <= limit and np.abs(x).max() > 0.95 * limit


def test_empty_and_config():
    assert _values([0, 3], tf.uniform_unit_scaling_initializer()).shape == (0, 3)
    init = tf.initializers.uniform_unit_scaling(factor=2.0, seed=1)
    assert tf.uniform_unit_scaling_initializer is tf.initializers.uniform_unit_scaling
    assert init.get_config() == {"factor": 2.0, "seed": 1, "dtype": "float32"}
    with pytest.raises(ValueError, match="expected to be floating point"):
        tf.uniform_unit_scaling_initializer(dtype=tf.int32)
