"""The graph-optimizer acceptance program (../shared/programs/p10) runs unmodified."""
import os
import subprocess
import sys

import pytest

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..",
                       "shared", "programs", "p10_graph_optimizations.py")


@pytest.mark.skipif(not os.path.exists(PROGRAM), reason="../shared/programs is not here")
def test_p10_graph_optimizations_passes(tmp_path):
    env = dict(os.environ, TW_LOG_REWRITES="1")
    proc = subprocess.run([sys.executable, PROGRAM], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=env)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines and lines[-1].startswith("PASS "), \
        f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    # the optimizations p10 is about really happened (not a vacuous pass); its float
    # x * 1.0 + 0.0 stays as built: the Mul would flush a denormal x and x + 0.0 turns -0.0
    # into +0.0 (arithmetic.py), so neither is x
    for rewrite in ("fold scale", "merge dup_", "fuse_matmul"):
        assert rewrite in proc.stderr, rewrite
