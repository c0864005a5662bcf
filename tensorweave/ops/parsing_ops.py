"""Parsing tf.train.Example records: ParseExampleV2 and the TF1 feature configurations.

`parse_example` and `parse_single_example` build one ParseExampleV2 node, as TF 2.x's compat.v1
does: keys travel as string constants (sorted, like TF), dense defaults as typed inputs, and
VarLenFeature outputs come back as SparseTensors. The kernel (kernels/parsing.py) decodes the
protos with the generated example_pb2 classes. Parsing is not differentiable.
"""
from __future__ import annotations

import collections
import re

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Arg, Attr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "SparseFeature", "VarLenFeature",
           "parse_example", "parse_single_example"]

# The dtypes a parsed feature can have (TF's parsing ops allow no others).
PARSE_TYPES = frozenset({_dtypes.float32, _dtypes.int64, _dtypes.string})


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any length per example, parsed into a SparseTensor.

    Fields:
      dtype: tf.float32, tf.int64 or tf.string.
    """


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A SparseTensor assembled from an index feature and a value feature of each example.

    Fields:
      index_key: the int64 feature of the values' indices (a list of keys: one per dimension).
      value_key: the feature of the values.
      dtype: the values' dtype (tf.float32, tf.int64 or tf.string).
      size: the dense size of each indexed dimension (an int, or a list matching index_key).
      already_sorted: whether the indices come sorted (else they are reordered).
    """

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A feature with a fixed number of values per example, parsed into a dense Tensor.

    Fields:
      shape: the shape of one example's value (its element count must match the record).
      dtype: tf.float32, tf.int64 or tf.string.
      default_value: used when an example lacks the feature; None makes the feature required.
    """

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature of a variable number of `shape`-sized items per example, parsed densely into
    [batch, max_items, *shape] and padded with `default_value` (a scalar, 0 or "" if None).

    Fields:
      shape: the shape of one item.
      dtype: tf.float32, tf.int64 or tf.string.
      allow_missing: must be True for tf.parse_example (missing means no items).
      default_value: the scalar padding value.
    """

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


def example_output_shapes(num_sparse: int, serialized: _ts.TensorShape, dense_shapes) -> list:
    """The outputs of a parse of `serialized` (rank 0: one example, 1: a batch): sparse
    indices, values and shapes per sparse key, then [batch..] + shape per dense key."""
    if serialized.ndims is None:
        sparse = [_ts.TensorShape([None, None]), _ts.TensorShape([None]),
                  _ts.TensorShape([None])]
        dense = [_ts.unknown_shape()] * len(dense_shapes)
    else:
        rank = serialized.ndims + 1
        sparse = [_ts.TensorShape([None, rank]), _ts.TensorShape([None]),
                  _ts.TensorShape([rank])]
        dense = [serialized.concatenate(shape) for shape in dense_shapes]
    return [sparse[0]] * num_sparse + [sparse[1]] * num_sparse + \
        [sparse[2]] * num_sparse + dense


def _parse_example_shapes(ctx):
    serialized = ctx.input_shape(0).with_rank_at_most(1)
    for i in range(1, 5):
        ctx.input_shape(i).with_rank_at_most(1)
    if ctx.attrs["ragged_value_types"]:
        raise ValueError("ParseExampleV2 with ragged_keys is not supported")
    return example_output_shapes(ctx.attrs["num_sparse"], serialized, ctx.attrs["dense_shapes"])


ParseExampleV2 = define_op(
    "ParseExampleV2",
    inputs=["serialized: string", "names: string", "sparse_keys: string", "dense_keys: string",
            "ragged_keys: string", Arg("dense_defaults", type_list_attr="Tdense")],
    outputs=["sparse_indices: num_sparse * int64",
             Arg("sparse_values", type_list_attr="sparse_types"),
             "sparse_shapes: num_sparse * int64",
             Arg("dense_values", type_list_attr="Tdense"),
             Arg("ragged_values", type_list_attr="ragged_value_types"),
             Arg("ragged_row_splits", type_list_attr="ragged_split_types")],
    attrs=[Attr("Tdense", "list(type)", allowed=PARSE_TYPES, minimum=0),
           Attr("num_sparse", "int", minimum=0),
           Attr("sparse_types", "list(type)", allowed=PARSE_TYPES, minimum=0),
           Attr("ragged_value_types", "list(type)", allowed=PARSE_TYPES, minimum=0),
           Attr("ragged_split_types", "list(type)",
                allowed=frozenset({_dtypes.int32, _dtypes.int64}), minimum=0),
           Attr("dense_shapes", "list(shape)", minimum=0)],
    shape_fn=_parse_example_shapes, not_differentiable=True)


def _key_name(prefix: str, key: str) -> str:
    """A valid op name for a key's default constant, as TF spells it ('key_a', 'padding_d')."""
    return prefix + re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)


def check_parse_dtype(key: str, dtype) -> _dtypes.DType:
    """`dtype` as a DType; TypeError unless it is one a parsed feature can have."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in PARSE_TYPES:
        raise TypeError(f"Value passed to parameter 'dense_defaults' has DataType {dtype.name} "
                        "not in list of allowed values: float32, int64, string")
    return dtype


def dense_default(key: str, feature, dtype):
    """The dense_defaults input of one feature: [] (required), its value, or a scalar pad."""
    default = feature.default_value
    if isinstance(feature, FixedLenSequenceFeature):
        if default is None:
            return convert_to_tensor(b"" if dtype == _dtypes.string else 0, dtype=dtype)
        from tensorweave.ops.array_ops import reshape
        return reshape(convert_to_tensor(default, dtype=dtype, name=_key_name("padding_", key)),
                       [])
    if default is None:
        return convert_to_tensor(np.zeros([0], dtype=object if dtype == _dtypes.string
                                          else dtype.as_numpy_dtype), dtype=dtype)
    if isinstance(default, Tensor):
        return default
    from tensorweave.ops.array_ops import reshape
    return reshape(convert_to_tensor(default, dtype=dtype, name=_key_name("key_", key)),
                   _ts.as_shape(feature.shape).as_list())


def dense_feature_shape(key: str, feature) -> _ts.TensorShape:
    """The dense_shapes attr of one feature: [None, ...] for a sequence; ValueError if partial."""
    shape = _ts.as_shape(feature.shape)
    if isinstance(feature, FixedLenSequenceFeature):
        if not feature.allow_missing:
            raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to "
                             "be True.")
        return _ts.TensorShape([None] + shape.as_list())
    if not shape.is_fully_defined():
        raise ValueError(f"First dimension of shape for feature {key} unknown. Consider using "
                         f"FixedLenSequenceFeature. Received feature={feature}.")
    return shape


def _parse(serialized, features: dict, example_names):
    """Builds the ParseExampleV2 node; returns {key: Tensor or SparseTensor}. A SparseFeature
    is parsed as VarLenFeatures of its index and value keys, merged as TensorFlow does
    (sparse_merge); keys only it asked for are not returned."""
    if not features:
        raise ValueError(f"Argument `features` cannot be None or falsy. Got {features}")
    merged = {k: f for k, f in features.items() if isinstance(f, SparseFeature)}
    if merged:
        plain = {k: f for k, f in features.items() if k not in merged}
        for f in merged.values():
            for index_key in _index_keys(f):
                plain.setdefault(index_key, VarLenFeature(_dtypes.int64))
            plain.setdefault(f.value_key, VarLenFeature(f.dtype))
        parsed = _parse(serialized, plain, example_names)
        result = {k: parsed[k] for k in features if k not in merged}
        for key, f in merged.items():
            result[key] = _merged_sparse(f, parsed)
        return result
    sparse_keys = sorted(k for k, f in features.items() if isinstance(f, VarLenFeature))
    dense_keys = sorted(k for k, f in features.items()
                        if isinstance(f, (FixedLenFeature, FixedLenSequenceFeature)))
    unknown = set(features) - set(sparse_keys) - set(dense_keys)
    if unknown:
        key = sorted(unknown)[0]
        raise ValueError(f"Unsupported feature type for {key!r}: {type(features[key]).__name__}"
                         " (VarLenFeature, FixedLenFeature and FixedLenSequenceFeature are)")
    sparse_types = [check_parse_dtype(k, features[k].dtype) for k in sparse_keys]
    dense_types = [check_parse_dtype(k, features[k].dtype) for k in dense_keys]
    dense_shapes = [dense_feature_shape(k, features[k]) for k in dense_keys]
    defaults = [dense_default(k, features[k], t) for k, t in zip(dense_keys, dense_types)]
    names = [] if example_names is None else example_names
    attrs = {"Tdense": dense_types, "num_sparse": len(sparse_keys),
             "sparse_types": sparse_types, "ragged_value_types": [], "ragged_split_types": [],
             "dense_shapes": dense_shapes}
    keys = [np.array([k.encode() for k in ks], dtype=object).reshape(-1)
            for ks in (sparse_keys, dense_keys, [])]
    outputs = apply_op(ParseExampleV2, [serialized, encoded_strings(names), *keys, defaults], attrs,
                       name="ParseExampleV2")
    n = len(sparse_keys)
    result = {k: SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
              for i, k in enumerate(sparse_keys)}
    result.update(zip(dense_keys, outputs[3 * n:]))
    return result


def _index_keys(feature: SparseFeature) -> list:
    return [feature.index_key] if isinstance(feature.index_key, str) else \
        list(feature.index_key)


def _merged_sparse(feature: SparseFeature, parsed: dict) -> SparseTensor:
    """The SparseFeature's SparseTensor from its parsed index and value VarLenFeatures."""
    from tensorweave.ops.sparse_slice_ops import sparse_merge
    keys = _index_keys(feature)
    ids = parsed[keys[0]] if len(keys) == 1 else [parsed[k] for k in keys]
    size = feature.size if len(keys) == 1 or not isinstance(feature.size, int) else \
        [feature.size] * len(keys)
    return sparse_merge(ids, parsed[feature.value_key], size,
                        already_sorted=feature.already_sorted)


def encoded_strings(value):
    """A Tensor as is; otherwise `value` as an object array of bytes (str encoded as UTF-8)."""
    if isinstance(value, Tensor):
        return value
    return np.array([v.encode() if isinstance(v, str) else v for v in np.ravel(value)],
                    dtype=object).reshape(np.shape(value))


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a batch of serialized tf.train.Example protos into a dict of tensors.

    Args:
      serialized: 1-D string Tensor of serialized Example protos.
      features: dict mapping feature keys to `FixedLenFeature`, `VarLenFeature` or
        `FixedLenSequenceFeature` (allow_missing=True).
      name: the name scope (default "ParseExample").
      example_names: optional 1-D strings naming the examples in error messages.

    Returns:
      A dict: FixedLenFeature keys map to [batch] + shape Tensors, FixedLenSequenceFeature keys
      to [batch, max_items] + shape Tensors, VarLenFeature keys to SparseTensors with
      indices [N, 2] (example, position), values [N] and dense_shape [batch, max_len].

    Raises:
      ValueError: for an empty `features`, a FixedLenFeature of unknown shape, or a
        FixedLenSequenceFeature without allow_missing.
      InvalidArgumentError: at run time for a record that does not parse, a required feature
        missing, a type mismatch, or a wrong number of values (the message names the key).
    """
    with name_scope(name, "ParseExample"):
        return _parse(serialized, features, example_names)


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized tf.train.Example (a scalar string) into a dict of tensors.

    Like `parse_example` without the batch dimension: dense features have their `shape`,
    VarLenFeature SparseTensors have indices [N, 1] and dense_shape [len].

    Args:
      serialized: scalar string Tensor, one serialized Example.
      features: dict mapping feature keys to feature configurations (see `parse_example`).
      name: the name scope (default "ParseSingleExample").
      example_names: optional scalar string naming the example in error messages.

    Raises:
      ValueError: if `serialized` is not a scalar (or as `parse_example`).
    """
    with name_scope(name, "ParseSingleExample"):
        serialized = convert_to_tensor(serialized, dtype=_dtypes.string, name="serialized")
        if serialized.shape.ndims not in (None, 0):
            raise ValueError("Input serialized must be a scalar")
        if example_names is not None:
            example_names = convert_to_tensor(example_names, dtype=_dtypes.string,
                                              name="example_names")
            if example_names.shape.ndims not in (None, 0):
                raise ValueError("Input names must be a scalar")
        with name_scope(None, "ParseExample"):
            return _parse(serialized, features, example_names)
