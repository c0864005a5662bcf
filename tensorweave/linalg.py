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
from tensorweave.ops.linalg_decomp_ops import cholesky, logdet, slogdet
from tensorweave.ops.linalg_decomp_ops import matrix_determinant as det
from tensorweave.ops.linalg_decomp_ops import matrix_inverse as inv
from tensorweave.ops.linalg_decomp_ops import self_adjoint_eig as eigh
from tensorweave.ops.linalg_decomp_ops import self_adjoint_eigvals as eigvalsh
from tensorweave.ops.linalg_funcs_ops import matrix_exponential as expm
from tensorweave.ops.linalg_funcs_ops import matrix_logarithm as logm
from tensorweave.ops.linalg_funcs_ops import matrix_square_root as sqrtm
from tensorweave.ops.linalg_funcs_ops import matvec, normalize
from tensorweave.ops.linalg_lu_ops import lu, lu_matrix_inverse, lu_reconstruct, lu_solve
from tensorweave.ops.linalg_ops import einsum, matmul, tensordot
from tensorweave.ops.linalg_qr_svd_ops import matrix_rank, pinv, qr, svd
from tensorweave.ops.linalg_solve_ops import cholesky_solve
from tensorweave.ops.linalg_solve_ops import matrix_solve as solve
from tensorweave.ops.linalg_solve_ops import matrix_solve_ls as lstsq
from tensorweave.ops.linalg_solve_ops import matrix_triangular_solve as triangular_solve
from tensorweave.ops.linalg_tridiagonal_ops import tridiagonal_matmul, tridiagonal_solve
from tensorweave.ops.misc_array_ops import cross
from tensorweave.ops.nn_normalize_ops import l2_normalize
from tensorweave.ops.norm_ops import norm
