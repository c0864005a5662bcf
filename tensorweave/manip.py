"""tf.manip: TF 2.21 compat.v1's tf.manip names of the tensor-manipulation ops (re-exports)."""
# ruff: noqa: F401 - re-exports
from tensorweave.ops.array_index_ops import gather_nd, scatter_nd
from tensorweave.ops.array_ops import reshape
from tensorweave.ops.array_rearrange_ops import roll
from tensorweave.ops.array_space_ops import batch_to_space_nd, space_to_batch_nd
from tensorweave.ops.array_tile_pad_ops import reverse, tile
