"""InitializeTableFromDataset: fills a lookup table from a tf.data pipeline of (key, value).

TensorFlow's op of the same name and signature: the table's resource handle and the pipeline's
variant (a DatasetPipeline tensor). It runs the pipeline to its end when it runs (under
`tf.tables_initializer()`), so graphs import by name. Not differentiable: it only fills a
table.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Arg, define_op

__all__: list[str] = []

InitializeTableFromDataset = define_op(
    "InitializeTableFromDataset", inputs=[Arg("table_handle", dtype=_dtypes.resource),
                                          Arg("dataset", dtype=_dtypes.variant)],
    shape_fn=lambda ctx: [], is_stateful=True, not_differentiable=True,
    doc="Initializes a table from the (key, value) elements of a dataset.")


def initialize_table_from_dataset(table_handle, dataset, name=None):
    """The op filling the table `table_handle` with the elements of the pipeline `dataset`."""
    return apply_op(InitializeTableFromDataset, [table_handle, dataset], name=name)
