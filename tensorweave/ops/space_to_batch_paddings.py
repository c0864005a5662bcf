"""tf.required_space_to_batch_paddings: the paddings and crops that make a shape divisible.

For SpaceToBatchND (and atrous convolution) each spatial dimension, after `base_paddings`, must
be a multiple of its block size: the end padding grows by the least amount that makes it so,
and the crops undo exactly that growth. Constant inputs give constant results.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_creation_ops import zeros
from tensorweave.ops.array_join_ops import stack
from tensorweave.ops.constant_op import constant

__all__ = ["required_space_to_batch_paddings"]


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None,
                                     name=None):
    """(paddings, crops), int32 [N, 2] each, for an input of spatial shape `input_shape` ([N])
    split into blocks of `block_shape` ([N], fully known): paddings start as `base_paddings`
    (default zeros) and end with what makes each padded size a multiple of its block;
    crops are zero at the start and that extra at the end."""
    with name_scope(name, "required_space_to_batch_paddings",
                    [input_shape, block_shape]):
        input_shape = convert_to_tensor(input_shape, dtype=_dtypes.int32, name="input_shape")
        block_shape = convert_to_tensor(block_shape, dtype=_dtypes.int32, name="block_shape")
        block_shape.get_shape().assert_is_fully_defined()
        block_shape.get_shape().assert_has_rank(1)
        n = block_shape.get_shape().as_list()[0]
        if n == 0:
            return zeros([0, 2], _dtypes.int32), zeros([0, 2], _dtypes.int32)
        input_shape.get_shape().assert_is_compatible_with([n])
        if base_paddings is not None:
            base_paddings = convert_to_tensor(base_paddings, dtype=_dtypes.int32,
                                              name="base_paddings")
            base_paddings.get_shape().assert_is_compatible_with([n, 2])
        else:
            base_paddings = zeros([n, 2], _dtypes.int32)
        known = [static_value(t) for t in (block_shape, input_shape, base_paddings)]
        if all(v is not None for v in known):
            block, shape, base = (np.asarray(v, np.int32) for v in known)
            extra = (block - (shape + base[:, 0] + base[:, 1]) % block) % block
            paddings = np.stack([base[:, 0], base[:, 1] + extra], axis=1)
            crops = np.stack([np.zeros_like(extra), extra], axis=1)
            return (constant(paddings, name="paddings"), constant(crops, name="crops"))
        start, end = base_paddings[:, 0], base_paddings[:, 1]
        extra = (block_shape - (input_shape + start + end) % block_shape) % block_shape
        padded_end = end + extra
        paddings = stack([[start[i], padded_end[i]] for i in range(n)], name="paddings")
        crops = stack([[0, extra[i]] for i in range(n)], name="crops")
        return paddings, crops
