"""The host memory policy: a training step reuses the pages the previous step freed."""
import os
import platform
import subprocess
import sys
import textwrap

import pytest

_STEPS = textwrap.dedent("""
    import resource, sys
    import numpy as np
    import tensorweave as tf
    x = tf.placeholder(tf.float32, [128, 784])
    h = x
    for fan_in, fan_out in ((784, 512), (512, 512), (512, 10)):
        h = tf.nn.relu(tf.matmul(h, tf.Variable(tf.ones([fan_in, fan_out]) * 0.01)))
    # An MLP's Adam step: its weight gradients (1.6 MB and 1 MB) are fresh every step.
    step = tf.train.AdamOptimizer(0.01).minimize(tf.reduce_sum(h))
    feed = {x: np.ones([128, 784], np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            sess.run(step, feed)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(20):
            sess.run(step, feed)
        print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20)
""")


def _faults_per_step(retain: str) -> float:
    env = dict(os.environ, TW_RETAIN_HOST_MEMORY=retain)
    out = subprocess.run([sys.executable, "-c", _STEPS], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.split()[-1])


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the policy is glibc's mallopt")
def test_steps_reuse_freed_pages_unless_disabled():
    kept, returned = _faults_per_step("1"), _faults_per_step("0")
    assert kept < 50, kept            # the gradients land on pages already mapped
    assert returned > 100, returned   # malloc's defaults trim and fault them back in
