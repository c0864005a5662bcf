"""Bucketize: each value's bucket among sorted boundaries (feature_column.bucketized_column).

TensorFlow has no public wrapper in TF1 (feature columns and tf.raw_ops use it); `bucketize`
here is what the feature columns call. Bucket i holds boundaries[i-1] <= x < boundaries[i]:
the number of boundaries at or below x.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op

__all__: list[str] = []

Bucketize = define_op(
    "Bucketize", inputs=["input: T"], outputs=["output: int32"],
    attrs=[TypeAttr("T", {_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64}),
           Attr("boundaries", "list(float)")],
    shape_fn=shape_fns.unchanged, not_differentiable=True,
    doc="The index of each input's bucket: how many boundaries are at or below it.")


def bucketize(input, boundaries, name=None):  # noqa: A002 - TF's argument name
    """int32 bucket ids of `input` (same shape) for the sorted float `boundaries`.

    Running it raises InvalidArgumentError when the boundaries are not sorted.
    """
    return apply_op(Bucketize, [input], {"boundaries": [float(b) for b in boundaries]},
                    name=name)
