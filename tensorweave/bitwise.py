"""tf.bitwise: bitwise ops on integer tensors (re-exports only)."""
# ruff: noqa: F401 - re-exports
from tensorweave.ops.math_extra_ops import left_shift, right_shift
from tensorweave.ops.math_ops import bitwise_and, bitwise_or, bitwise_xor
from tensorweave.ops.math_unary_ops import invert
