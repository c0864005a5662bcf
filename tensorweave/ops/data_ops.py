"""The ops behind tf.data: one dataset-construction op and TensorFlow's iterator ops.

A whole input pipeline is ONE `DatasetPipeline` node: its `pipeline` attr is a JSON description
of the transformations (traced functions embedded as serialized GraphDefs) and its inputs are
the graph tensors the pipeline reads (slices, placeholders, captured tensors), evaluated when
an iterator is initialized. The iterator ops keep TensorFlow's op types and attrs; the iterator
itself is a resource in the device's resource manager (kernels/data.py).
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op, create_op
from tensorweave.framework.op_def import Arg, Attr, define_op

__all__: list[str] = []

_ELEMENT_ATTRS = [Attr("output_types", "list(type)"), Attr("output_shapes", "list(shape)")]
_RESOURCE_ATTRS = [Attr("shared_name", "string", ""), Attr("container", "string", "")]


def _scalar(ctx):
    return _ts.TensorShape([])


def _element_shapes(ctx):
    return list(ctx.attrs["output_shapes"])


DatasetPipeline = define_op(
    "DatasetPipeline", inputs=[Arg("arguments", type_list_attr="Targuments")],
    outputs=[Arg("handle", dtype=_dtypes.variant)],
    attrs=[Attr("pipeline", "string"), Attr("Targuments", "list(type)")] + _ELEMENT_ATTRS,
    shape_fn=_scalar, is_stateful=True, not_differentiable=True)

# Dataset.reduce: folds a pipeline's elements into a state with a traced function carried, like
# the pipeline's, as a JSON record in `function` (TensorFlow's op of the same name has an `f`
# FunctionDef attr instead).
ReduceDataset = define_op(
    "ReduceDataset", inputs=[Arg("input_dataset", dtype=_dtypes.variant),
                             Arg("initial_state", type_list_attr="Tstate"),
                             Arg("other_arguments", type_list_attr="Targuments")],
    outputs=[Arg("components", type_list_attr="output_types")],
    attrs=[Attr("function", "string"), Attr("Tstate", "list(type)"),
           Attr("Targuments", "list(type)")] + _ELEMENT_ATTRS,
    shape_fn=_element_shapes, is_stateful=True, not_differentiable=True)

IteratorV2 = define_op(
    "IteratorV2", outputs=[Arg("handle", dtype=_dtypes.resource)],
    attrs=_RESOURCE_ATTRS + _ELEMENT_ATTRS, shape_fn=_scalar, is_stateful=True,
    not_differentiable=True)

# TensorFlow's OneShotIterator builds its dataset from a `dataset_factory` function attr; ours
# reads the DatasetPipeline as an input instead (tf.data functions are not FunctionDefs here).
OneShotIterator = define_op(
    "OneShotIterator", inputs=[Arg("dataset", dtype=_dtypes.variant)],
    outputs=[Arg("handle", dtype=_dtypes.resource)],
    attrs=_RESOURCE_ATTRS + _ELEMENT_ATTRS, shape_fn=_scalar, is_stateful=True,
    not_differentiable=True)

MakeIterator = define_op(
    "MakeIterator", inputs=[Arg("dataset", dtype=_dtypes.variant),
                            Arg("iterator", dtype=_dtypes.resource)],
    is_stateful=True, not_differentiable=True)

IteratorGetNext = define_op(
    "IteratorGetNext", inputs=[Arg("iterator", dtype=_dtypes.resource)],
    outputs=[Arg("components", type_list_attr="output_types")], attrs=_ELEMENT_ATTRS,
    shape_fn=_element_shapes, is_stateful=True, not_differentiable=True)

IteratorToStringHandle = define_op(
    "IteratorToStringHandle", inputs=[Arg("resource_handle", dtype=_dtypes.resource)],
    outputs=[Arg("string_handle", dtype=_dtypes.string)], shape_fn=_scalar,
    is_stateful=True, not_differentiable=True)

IteratorFromStringHandleV2 = define_op(
    "IteratorFromStringHandleV2", inputs=[Arg("string_handle", dtype=_dtypes.string)],
    outputs=[Arg("resource_handle", dtype=_dtypes.resource)],
    attrs=[Attr("output_types", "list(type)", []), Attr("output_shapes", "list(shape)", [])],
    shape_fn=_scalar, is_stateful=True, not_differentiable=True)


def element_attrs(types, shapes) -> dict:
    """The output_types / output_shapes attrs of an op that yields dataset elements."""
    return {"output_types": list(types), "output_shapes": [_ts.as_shape(s) for s in shapes]}


def dataset_pipeline(pipeline: str, arguments, types, shapes, name=None):
    """The variant tensor of a pipeline described by `pipeline` reading `arguments`."""
    attrs = {"pipeline": pipeline, "Targuments": [t.dtype.base_dtype for t in arguments]}
    attrs.update(element_attrs(types, shapes))
    op = create_op(DatasetPipeline, [list(arguments)], attrs, name=name)
    return op.outputs[0]


def iterator_v2(types, shapes, shared_name="", container="", name=None):
    attrs = {"shared_name": shared_name, "container": container}
    attrs.update(element_attrs(types, shapes))
    return apply_op(IteratorV2, [], attrs, name=name)


def one_shot_iterator(dataset, types, shapes, name=None):
    return apply_op(OneShotIterator, [dataset], element_attrs(types, shapes), name=name)


def make_iterator(dataset, iterator, name=None):
    return apply_op(MakeIterator, [dataset, iterator], name=name)


def iterator_get_next(iterator, types, shapes, name=None) -> list:
    op = create_op(IteratorGetNext, [iterator], element_attrs(types, shapes), name=name)
    return list(op.outputs)


def iterator_to_string_handle(iterator, name=None):
    return apply_op(IteratorToStringHandle, [iterator], name=name)


def iterator_from_string_handle(string_handle, types, shapes, name=None):
    return apply_op(IteratorFromStringHandleV2, [string_handle],
                    element_attrs(types, shapes), name=name)


def reduce_dataset(dataset, initial_state, captured, function: str, shapes, name=None):
    """The final state tensors of folding `dataset` (a variant) from `initial_state` with the
    function record `function` reading `captured`."""
    attrs = {"function": function, "Tstate": [t.dtype.base_dtype for t in initial_state],
             "Targuments": [t.dtype.base_dtype for t in captured]}
    attrs.update(element_attrs(attrs["Tstate"], shapes))
    op = create_op(ReduceDataset, [dataset, list(initial_state), list(captured)], attrs,
                   name=name)
    return list(op.outputs)
