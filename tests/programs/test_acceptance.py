"""The TF1 acceptance programs (../shared/programs) of the landed issues, run unmodified."""
import os
import subprocess
import sys

import pytest

PROGRAMS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                            "shared", "programs")
# Programs whose issues have landed; each must print "PASS ..." last and exit 0.
LANDED = ["p01_basics.py", "p02_linear_regression.py", "p03_digits_mlp.py",
          "p04_digits_cnn_layers.py", "p05_control_flow.py", "p06_checkpoints.py",
          "p07_summaries.py", "p08_input_pipelines.py", "p09_multi_device.py",
          "p10_graph_optimizations.py"]


@pytest.mark.skipif(not os.path.isdir(PROGRAMS_DIR),
                    reason="../shared/programs is not beside the repository")
@pytest.mark.parametrize("program", LANDED)
def test_program_passes(program, tmp_path):
    proc = subprocess.run([sys.executable, os.path.join(PROGRAMS_DIR, program)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines and lines[-1].startswith("PASS "), \
        f"{program} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
