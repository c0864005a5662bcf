"""tf.linalg: TF 2.21 compat.v1's tf.linalg names of the ops tensorweave implements
(re-exports only)."""
# ruff: noqa: F401 - re-exports
from tensorweave.ops.clip_ops import global_norm
from tensorweave.ops.linalg_ops import einsum, matmul, tensordot
from tensorweave.ops.nn_normalize_ops import l2_normalize
