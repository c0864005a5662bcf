"""SparseTensors as strings: SerializeSparse, SerializeManySparse and DeserializeManySparse.

A serialized SparseTensor is a string vector of three serialized TensorProtos (indices, values,
dense_shape), TensorFlow's format, so the strings can cross a queue or a file and be read back
by TensorFlow. SerializeManySparse turns a minibatch (the first dimension) into one such triple
per row; DeserializeManySparse stacks triples back into one SparseTensor with a leading batch
dimension. None of them is differentiable. Kernels: kernels/sparse_serialize.py.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.shape_checks import shape_with_rank
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.sparse_reshape_ops import as_sparse_input, sparse_components

__all__ = ["serialize_sparse", "serialize_many_sparse", "deserialize_many_sparse"]

_SERIALIZE_ATTRS = [TypeAttr("T"), TypeAttr("out_type", [_dtypes.string], _dtypes.string)]


def _serialize_op(name, shape):
    def shape_fn(ctx):
        sparse_components(ctx)
        return _ts.TensorShape(shape)
    return define_op(
        name, inputs=["sparse_indices: int64", "sparse_values: T", "sparse_shape: int64"],
        outputs=["serialized_sparse: out_type"], attrs=_SERIALIZE_ATTRS, shape_fn=shape_fn,
        not_differentiable=True, doc="Serializes a SparseTensor into TensorProto strings.")


SerializeSparse = _serialize_op("SerializeSparse", [3])
SerializeManySparse = _serialize_op("SerializeManySparse", [None, 3])


def _deserialize_shape(ctx):
    serialized = shape_with_rank(ctx.input_shape(0), 2).as_list()
    if serialized[1] is not None and serialized[1] != 3:
        raise ValueError(f"Dimension must be 3 but is {serialized[1]}")
    return [_ts.TensorShape([None, None]), _ts.TensorShape([None]), _ts.TensorShape([None])]


DeserializeManySparse = define_op(
    "DeserializeManySparse", inputs=["serialized_sparse: string"],
    outputs=["sparse_indices: int64", "sparse_values: dtype", "sparse_shape: int64"],
    attrs=[TypeAttr("dtype")], shape_fn=_deserialize_shape, not_differentiable=True,
    doc="Stacks serialized SparseTensors into one with a leading batch dimension.")


def _serialize(op_def, sp_input, name, out_type):
    sp_input = as_sparse_input(sp_input)
    return apply_op(op_def, [sp_input.indices, sp_input.values, sp_input.dense_shape],
                    {"out_type": out_type}, name=name)


def serialize_sparse(sp_input, name=None, out_type=_dtypes.string):
    """Serializes a SparseTensor into a 3-vector of strings (tf.io.serialize_sparse).

    Args:
      sp_input: a SparseTensor.
      name: the op name (default "SerializeSparse").
      out_type: the output dtype (tf.string).

    Returns:
      A string vector [3]: the serialized indices, values and dense_shape TensorProtos.

    Raises:
      TypeError: if `sp_input` is not a SparseTensor.
    """
    return _serialize(SerializeSparse, sp_input, name, out_type)


def serialize_many_sparse(sp_input, name=None, out_type=_dtypes.string):
    """Serializes each row (first-dimension entry) of a SparseTensor of rank >= 2 into a
    3-vector of strings (tf.io.serialize_many_sparse).

    Args:
      sp_input: a SparseTensor of rank >= 2, whose first dimension is the minibatch.
      name: the op name (default "SerializeManySparse").
      out_type: the output dtype (tf.string).

    Returns:
      A string matrix [dense_shape[0], 3].

    Raises:
      TypeError: if `sp_input` is not a SparseTensor.
      InvalidArgumentError: at run time for rank below 2 or unsorted first indices.
    """
    return _serialize(SerializeManySparse, sp_input, name, out_type)


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """Stacks serialized SparseTensors (rows of a [N, 3] string matrix) into one with a new
    leading dimension of size N (tf.io.deserialize_many_sparse); the other dimensions are the
    maxima over the rows.

    Args:
      serialized_sparse: a string matrix [N, 3] from serialize_sparse / serialize_many_sparse.
      dtype: the values' dtype.
      rank: optional, the rank of the result (N's dimension included).
      name: the op name (default "DeserializeManySparse").

    Returns:
      A SparseTensor of rank (stored rank + 1).

    Raises:
      InvalidArgumentError: at run time for a dtype or rank that does not match the strings.
    """
    indices, values, shape = apply_op(DeserializeManySparse, [serialized_sparse],
                                      {"dtype": dtype}, name=name)
    indices.set_shape([None, rank])
    shape.set_shape([rank])
    return SparseTensor(indices, values, shape)
