"""The host memory policy: a training step reuses the pages the previous step freed."""
import os
import platform
import subprocess
import sys
import textwrap

import pytest

_STEPS = textwrap.dedent("""
    import resource
    import numpy as np
    import tensorweave as tf
    tf.Session().close()      # making the session's CPU device applies the policy

    def step():
        # What a training step does to the heap: megabyte tensors made, then all freed.
        tensors = [np.ones(1 << 19, np.float32) for _ in range(8)]
        del tensors

    for _ in range(3):
        step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        step()
    print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
""")



def _faults_per_step(retain: str) -> float:
    env = dict(os.environ, TW_RETAIN_HOST_MEMORY=retain)
    out = subprocess.run([sys.executable, "-c", _STEPS], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.split()[-1])


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the policy is glibc's mallopt")
def test_steps_reuse_freed_pages_unless_disabled():
    kept, returned = _faults_per_step("1"), _faults_per_step("0")
    assert kept < 50, kept            # the tensors land on pages already mapped
    assert returned > 1000, returned  # malloc's defaults unmap and fault in 8 x 512 pages
