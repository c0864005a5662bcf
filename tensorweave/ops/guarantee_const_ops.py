"""GuaranteeConst (tf.guarantee_const): the input, promised constant for the session's life.

TensorFlow uses the promise to let a grappler pass fold the value; tensorweave runs the op as an
identity, which gives the same values. As in TensorFlow the op has no gradient: differentiating
through it raises LookupError (wrap the input in tf.stop_gradient to treat it as constant).
"""
from __future__ import annotations

from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op

__all__ = ["guarantee_const"]

GuaranteeConst = define_op(
    "GuaranteeConst", inputs=["input: T"], outputs=["output: T"], attrs=[TypeAttr("T")],
    shape_fn=shape_fns.unchanged, is_stateful=True)


def guarantee_const(input, name=None):  # noqa: A002 - TF1's argument name
    """Promises the runtime that `input`'s value is constant during the session's lifetime.

    Args:
      input: a Tensor (a Variable is read as its value).
      name: the op name (default "GuaranteeConst").

    Returns:
      A Tensor of the same dtype, shape and value.
    """
    return apply_op(GuaranteeConst, [input], name=name)
