"""The frameworks a workload runs on: how to import each, which workload function serves it, and
which interpreter runs it.

tensorweave runs with the runner's own interpreter; TensorFlow and PyTorch run with the reference
interpreter (`TW_BENCH_REF_PYTHON`), which is never a project dependency. Adding a framework is one
`Framework` row and one loader.
"""
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

REF_PYTHON_ENV = "TW_BENCH_REF_PYTHON"
DEFAULT_REF_PYTHON = "/opt/tfref/bin/python"


def _load_tensorweave() -> ModuleType:
    """`import tensorweave as tf`: the TF1 API under test, with its compiled-kernel runtime
    (numba, otherwise imported by the first step) loaded as TensorFlow's native libraries are
    by its import, so `first_step_ms` and peak memory compare the same things."""
    import tensorweave
    from tensorweave.kernels import jit

    jit.load_runtime()

    return tensorweave


def _load_tensorflow() -> ModuleType:
    """`tensorflow.compat.v1` in graph mode, quiet: the TF1 reference."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # read when TensorFlow is imported
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.nn.rnn_cell and tf.layers need it
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    tf.logging.set_verbosity(tf.logging.ERROR)
    return tf


def _load_torch() -> ModuleType:
    """PyTorch, eager."""
    import torch

    return torch


@dataclass(frozen=True)
class Framework:
    """One framework the runner knows.

    Attributes:
      name: the name used on the command line and in the table.
      short: the column suffix of its ratio, e.g. "tf" for "tw/tf".
      entry: the workload function that serves it ("run_tf1" or "run_torch").
      load: imports and returns the module passed to `entry`.
      reference: True when it runs with the reference interpreter, False for the runner's own.
      env: environment variables its workers get (tensorweave's optimizer variants).
    """

    name: str
    short: str
    entry: str
    load: Callable[[], ModuleType]
    reference: bool
    env: tuple[tuple[str, str], ...] = ()

    def python(self) -> str:
        """The interpreter that runs this framework's workers."""
        return ref_python() if self.reference else sys.executable


FRAMEWORKS: dict[str, Framework] = {
    fw.name: fw
    for fw in [
        Framework("tensorweave", "tw", "run_tf1", _load_tensorweave, reference=False),
        Framework("tensorflow", "tf", "run_tf1", _load_tensorflow, reference=True),
        Framework("torch", "torch", "run_torch", _load_torch, reference=True),
    ]
}
OURS = "tensorweave"
BASE_FRAMEWORKS = list(FRAMEWORKS)

# tensorweave with its graph optimizer off (TW_OPT_LEVEL=0), and with one optimizer switch off
# at a time (TW_PASSES_OFF, see tensorweave/runtime/passes/options.py): the ratio column
# "tw/<variant>" of such a run is the speed-up the optimizer (or that one pass) brings.
OPT_OFF = "tw-opt-off"
PASS_SWITCHES = ("model_pruning", "constant_folding", "arithmetic_optimization",
                 "common_subgraph_elimination", "dependency_optimization", "layout_optimizer",
                 "remapping", "memory_optimization")
FRAMEWORKS[OPT_OFF] = Framework(OPT_OFF, "opt-off", "run_tf1", _load_tensorweave, False,
                                (("TW_OPT_LEVEL", "0"),))
for _switch in PASS_SWITCHES:
    FRAMEWORKS[f"tw-no-{_switch}"] = Framework(
        f"tw-no-{_switch}", f"no-{_switch}", "run_tf1", _load_tensorweave, False,
        (("TW_PASSES_OFF", _switch),))
PASS_VARIANTS = [f"tw-no-{s}" for s in PASS_SWITCHES]


def ref_python() -> str:
    """`$TW_BENCH_REF_PYTHON`, else /opt/tfref/bin/python if it exists, else this interpreter."""
    chosen = os.environ.get(REF_PYTHON_ENV)
    if chosen:
        return chosen
    return DEFAULT_REF_PYTHON if os.path.exists(DEFAULT_REF_PYTHON) else sys.executable
