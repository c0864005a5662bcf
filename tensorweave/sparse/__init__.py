"""tf.sparse: sparse tensors (re-exports only)."""
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.sparse_ops import sparse_placeholder as placeholder
from tensorweave.ops.sparse_ops import sparse_tensor_to_dense as to_dense
