"""tf.linalg: TF 2.21 compat.v1's tf.linalg names of the ops tensorweave implements
(re-exports only)."""
# ruff: noqa: F401 - re-exports
from tensorweave.ops.array_matrix_ops import adjoint, eye, matrix_transpose, trace
from tensorweave.ops.array_matrix_ops import diag as tensor_diag
from tensorweave.ops.array_matrix_ops import diag_part as tensor_diag_part
from tensorweave.ops.array_matrix_ops import matrix_band_part as band_part
from tensorweave.ops.array_matrix_ops import matrix_diag as diag
from tensorweave.ops.array_matrix_ops import matrix_diag_part as diag_part
from tensorweave.ops.array_matrix_ops import matrix_set_diag as set_diag
from tensorweave.ops.array_matrix_ops import matrix_transpose as transpose
from tensorweave.ops.clip_ops import global_norm
from tensorweave.ops.linalg_ops import einsum, matmul, tensordot
from tensorweave.ops.nn_normalize_ops import l2_normalize
