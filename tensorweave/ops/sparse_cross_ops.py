"""Feature crosses of sparse and dense columns (wide-and-deep models): SparseCrossV2
(tf.sparse.cross, joined strings) and SparseCross (tf.sparse.cross_hashed, FingerprintCat64 of
the features' fingerprints, TensorFlow's compat.v1 wrapper builds the V1 op with
hashed_output=True).

As in TensorFlow, the wrappers pass the SparseTensor inputs first and the dense ones after
them, so the features of a cross come in that order whatever the order of `inputs`; non-string
values are cast to int64. Neither op is differentiable (TensorFlow registers no gradient).
Kernels: kernels/sparse_cross.py.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Arg, Attr, TypeAttr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__: list[str] = []   # tf.sparse.cross / cross_hashed only: tensorweave/sparse exports them

TensorShape = _ts.TensorShape
_FEATURE = frozenset({_dtypes.int64, _dtypes.string})
# TensorFlow's _DEFAULT_HASH_KEY, FingerprintCat64's starting value.
DEFAULT_HASH_KEY = 0xDECAFCAFFE


def _cross_shape(ctx):
    """TensorFlow checks nothing here (the kernel does): [?, 2] indices, [?] values, [2]."""
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


_CROSS_INPUTS = ["indices: N * int64", Arg("values", type_list_attr="sparse_types"),
                 "shapes: N * int64", Arg("dense_inputs", type_list_attr="dense_types")]
_CROSS_ATTRS = [Attr("N", "int", minimum=0),
                Attr("sparse_types", "list(type)", allowed=_FEATURE, minimum=0),
                Attr("dense_types", "list(type)", allowed=_FEATURE, minimum=0)]

SparseCross = define_op(
    "SparseCross", inputs=_CROSS_INPUTS,
    outputs=["output_indices: int64", "output_values: out_type", "output_shape: int64"],
    attrs=_CROSS_ATTRS + [Attr("hashed_output", "bool"), Attr("num_buckets", "int", minimum=0),
                          Attr("hash_key", "int"), TypeAttr("out_type", _FEATURE),
                          TypeAttr("internal_type", _FEATURE)],
    shape_fn=_cross_shape, not_differentiable=True,
    doc="Crosses of the row features of sparse and dense columns, joined or hashed.")

SparseCrossV2 = define_op(
    "SparseCrossV2", inputs=_CROSS_INPUTS + ["sep: string"],
    outputs=["output_indices: int64", "output_values: string", "output_shape: int64"],
    attrs=_CROSS_ATTRS, shape_fn=_cross_shape, not_differentiable=True,
    doc="Crosses of the row features of sparse and dense columns, joined by `sep`.")


def _cross_inputs(inputs, message: str):
    """TF's _sparse_cross_internal(_v2): (indices, values, shapes, dense), int values as int64,
    and whether any feature is an integer."""
    from tensorweave.ops.math_unary_ops import cast
    if not isinstance(inputs, (tuple, list)):
        raise TypeError("Inputs must be a list")
    if not all(isinstance(i, (SparseTensor, Tensor)) for i in inputs):
        raise TypeError(message)
    sparse = [i for i in inputs if isinstance(i, SparseTensor)]
    dense = [i for i in inputs if not isinstance(i, SparseTensor)]
    values = [sp.values for sp in sparse]
    integer = False
    for group in (values, dense):
        for k, value in enumerate(group):
            if value.dtype != _dtypes.string:
                group[k] = cast(value, _dtypes.int64)
                integer = True
    return ([sp.indices for sp in sparse], values, [sp.dense_shape for sp in sparse], dense,
            integer)


def sparse_cross(inputs, name=None, separator=None):
    """Generates sparse cross from a list of sparse and dense tensors (tf.sparse.cross).

    Row b of the result holds, for every choice of one feature of row b from each input, the
    features joined by `separator` (integers in decimal); the SparseTensor inputs come first in
    each cross, then the dense ones, and the last input varies fastest. A row with no feature
    in some input has no cross.

    Args:
      inputs: a list of 2-D `SparseTensor`s and `Tensor`s (string or integer), one row per
        batch entry.
      name: the op name (default "SparseCrossV2").
      separator: the string between two features (default "_X_").

    Returns:
      A string `SparseTensor` of dense shape [batch, most crosses in a row].

    Raises:
      TypeError: if `inputs` is not a list of Tensors and SparseTensors.
      InvalidArgumentError: at run time for inputs not 2-D or of different batch sizes.
    """
    if separator is None:
        separator = "_X_"
    separator = convert_to_tensor(separator, _dtypes.string)
    indices, values, shapes, dense, _ = _cross_inputs(
        inputs, "All inputs must be Tensor or SparseTensor.")
    out = apply_op(SparseCrossV2, [indices, values, shapes, dense, separator], name=name)
    return SparseTensor(*out)


def sparse_cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """Generates hashed sparse cross from a list of sparse and dense tensors
    (tf.sparse.cross_hashed).

    The crosses are those of `tf.sparse.cross`, each the FingerprintCat64 chain (from
    `hash_key`) of its features' values: Fingerprint64 of a string, an integer as it is.

    Args:
      inputs: a list of 2-D `SparseTensor`s and `Tensor`s (string or integer).
      num_buckets: the hash modulo when positive (else modulo 2**63 - 1).
      hash_key: the starting value of the FingerprintCat64 chain (default 0xDECAFCAFFE).
      name: the op name (default "SparseCross").

    Returns:
      An int64 `SparseTensor` of dense shape [batch, most crosses in a row].

    Raises:
      TypeError: if `inputs` is not a list of Tensors and SparseTensors.
      InvalidArgumentError: at run time for inputs not 2-D or of different batch sizes.
    """
    indices, values, shapes, dense, integer = _cross_inputs(
        inputs, "All inputs must be SparseTensors")
    attrs = {"hashed_output": True, "num_buckets": num_buckets,
             "hash_key": hash_key or DEFAULT_HASH_KEY, "out_type": _dtypes.int64,
             "internal_type": _dtypes.int64 if integer else _dtypes.string}
    out = apply_op(SparseCross, [indices, values, shapes, dense], attrs, name=name)
    return SparseTensor(*out)
