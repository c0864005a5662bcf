"""The ops of tf.data.experimental that read a whole pipeline: its cardinality, its one element.

Both take the `DatasetPipeline` variant (ops/data_ops.py) as input and keep TensorFlow's op
types: `DatasetCardinality` (an int64 scalar: the number of elements, -1 for infinite, -2 for
unknown) and `DatasetToSingleElement` (the components of the only element). Their kernels are
in kernels/dataset_cardinality.py.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op, create_op
from tensorweave.framework.op_def import Arg, Attr, define_op

__all__: list[str] = []


def _scalar(ctx):
    return _ts.TensorShape([])


def _element_shapes(ctx):
    return list(ctx.attrs["output_shapes"])


DatasetCardinality = define_op(
    "DatasetCardinality", inputs=[Arg("input_dataset", dtype=_dtypes.variant)],
    outputs=[Arg("cardinality", dtype=_dtypes.int64)], shape_fn=_scalar,
    not_differentiable=True)

DatasetToSingleElement = define_op(
    "DatasetToSingleElement", inputs=[Arg("dataset", dtype=_dtypes.variant)],
    outputs=[Arg("components", type_list_attr="output_types")],
    attrs=[Attr("output_types", "list(type)"), Attr("output_shapes", "list(shape)")],
    shape_fn=_element_shapes, is_stateful=True, not_differentiable=True)


def dataset_cardinality(dataset, name=None):
    """The int64 scalar cardinality of the pipeline variant `dataset`."""
    return apply_op(DatasetCardinality, [dataset], name=name)


def dataset_to_single_element(dataset, types, shapes, name=None) -> list:
    """The component tensors of the only element of the pipeline variant `dataset`."""
    attrs = {"output_types": list(types), "output_shapes": [_ts.as_shape(s) for s in shapes]}
    op = create_op(DatasetToSingleElement, [dataset], attrs, name=name)
    return list(op.outputs)


DatasetToTFRecord = define_op(
    "DatasetToTFRecord", inputs=[Arg("input_dataset", dtype=_dtypes.variant),
                                 Arg("filename", dtype=_dtypes.string),
                                 Arg("compression_type", dtype=_dtypes.string)],
    is_stateful=True, not_differentiable=True)


def dataset_to_tf_record(dataset, filename, compression_type, name=None):
    """The op writing every element of the pipeline variant `dataset` to `filename`."""
    return create_op(DatasetToTFRecord, [dataset, filename, compression_type], {}, name=name)
