"""Parsing tf.train.SequenceExample records: ParseSequenceExampleV2, as TF 2.x's compat.v1
builds it for `parse_single_sequence_example` and `parse_sequence_example`.

A SequenceExample has context features (one value list each, parsed like an Example's) and
feature lists (one value list per time step). Context features may be FixedLenFeature or
VarLenFeature; feature lists FixedLenSequenceFeature (dense [steps, *shape], padded across a
batch, with their lengths) or VarLenFeature (sparse [steps, values]). Keys are sorted, like
TF's. The kernel is kernels/sequence_parsing.py. Parsing is not differentiable.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Arg, Attr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.parsing_ops import (
    PARSE_TYPES,
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    check_parse_dtype,
    dense_default,
    dense_feature_shape,
    encoded_strings,
)

__all__ = ["parse_single_sequence_example", "parse_sequence_example"]

_SPLIT_TYPES = frozenset({_dtypes.int32, _dtypes.int64})


def sparse_shapes(batch: _ts.TensorShape, n: int, extra: int) -> list:
    """indices, values and dense_shape shapes of n SparseTensors of rank batch + extra."""
    rank = None if batch.ndims is None else batch.ndims + extra
    return [_ts.TensorShape([None, rank])] * n + [_ts.TensorShape([None])] * n + \
        [_ts.TensorShape([rank])] * n


def _parse_sequence_example_shapes(ctx):
    """Context outputs are [batch..] + shape, feature lists [batch..] + [steps] + shape, and
    lengths [batch..], with batch [] for a scalar input and [B] for a vector."""
    batch = ctx.input_shape(0).with_rank_at_most(1)
    for i in range(1, 9):
        ctx.input_shape(i).with_rank_at_most(1)
    attrs = ctx.attrs
    if attrs["context_ragged_value_types"] or attrs["feature_list_ragged_value_types"]:
        raise ValueError("ParseSequenceExampleV2 with ragged keys is not supported")
    known = batch.ndims is not None
    context_dense = [batch.concatenate(s) if known else _ts.unknown_shape()
                     for s in attrs["context_dense_shapes"]]
    list_dense = [batch.concatenate([None]).concatenate(s) if known else _ts.unknown_shape()
                  for s in attrs["feature_list_dense_shapes"]]
    return (sparse_shapes(batch, attrs["Ncontext_sparse"], 1) + context_dense +
            sparse_shapes(batch, attrs["Nfeature_list_sparse"], 2) + list_dense +
            [batch] * attrs["Nfeature_list_dense"])


def parse_types_attr(name: str, allowed=PARSE_TYPES) -> Attr:
    """A `list(type)` attr of parsed-feature dtypes, empty by default."""
    return Attr(name, "list(type)", [], allowed=allowed, minimum=0)


ParseSequenceExampleV2 = define_op(
    "ParseSequenceExampleV2",
    inputs=["serialized: string", "debug_name: string", "context_sparse_keys: string",
            "context_dense_keys: string", "context_ragged_keys: string",
            "feature_list_sparse_keys: string", "feature_list_dense_keys: string",
            "feature_list_ragged_keys: string", "feature_list_dense_missing_assumed_empty: bool",
            Arg("context_dense_defaults", type_list_attr="Tcontext_dense")],
    outputs=["context_sparse_indices: Ncontext_sparse * int64",
             Arg("context_sparse_values", type_list_attr="context_sparse_types"),
             "context_sparse_shapes: Ncontext_sparse * int64",
             Arg("context_dense_values", type_list_attr="Tcontext_dense"),
             Arg("context_ragged_values", type_list_attr="context_ragged_value_types"),
             Arg("context_ragged_row_splits", type_list_attr="context_ragged_split_types"),
             "feature_list_sparse_indices: Nfeature_list_sparse * int64",
             Arg("feature_list_sparse_values", type_list_attr="feature_list_sparse_types"),
             "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
             Arg("feature_list_dense_values", type_list_attr="feature_list_dense_types"),
             "feature_list_dense_lengths: Nfeature_list_dense * int64",
             Arg("feature_list_ragged_values", type_list_attr="feature_list_ragged_value_types"),
             Arg("feature_list_ragged_outer_splits",
                 type_list_attr="feature_list_ragged_split_types"),
             Arg("feature_list_ragged_inner_splits",
                 type_list_attr="feature_list_ragged_split_types")],
    attrs=[Attr("Ncontext_sparse", "int", 0, minimum=0), parse_types_attr("Tcontext_dense"),
           parse_types_attr("context_sparse_types"), parse_types_attr("context_ragged_value_types"),
           parse_types_attr("context_ragged_split_types", _SPLIT_TYPES),
           Attr("context_dense_shapes", "list(shape)", [], minimum=0),
           Attr("Nfeature_list_sparse", "int", 0, minimum=0),
           Attr("Nfeature_list_dense", "int", 0, minimum=0),
           parse_types_attr("feature_list_dense_types"),
           parse_types_attr("feature_list_sparse_types"),
           parse_types_attr("feature_list_ragged_value_types"),
           parse_types_attr("feature_list_ragged_split_types", _SPLIT_TYPES),
           Attr("feature_list_dense_shapes", "list(shape)", [], minimum=0)],
    shape_fn=_parse_sequence_example_shapes, not_differentiable=True)


def _context_dense_dtype(dtype) -> _dtypes.DType:
    """The dtype of a context dense feature; TypeError naming TF's input otherwise."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in PARSE_TYPES:
        raise TypeError(f"Value passed to parameter 'context_dense_defaults' has DataType "
                        f"{dtype.name} not in list of allowed values: float32, int64, string")
    return dtype


def _split(features: dict | None, dense_class, other_class, context: bool):
    """Sorted (sparse keys, dense keys) of a feature dict, with TF's checks."""
    features = features or {}
    sparse, dense = [], []
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, VarLenFeature):
            sparse.append(key)
        elif isinstance(feature, dense_class):
            if not context and feature.default_value is not None:
                raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None")
            dense.append(key)
        elif isinstance(feature, other_class):
            raise ValueError(f"Unsupported {type(feature).__name__} {feature} for key '{key}'")
        else:
            raise ValueError(f"Unsupported feature type for {key!r}: "
                             f"{type(feature).__name__}")
    return sparse, dense


def _keys(keys) -> np.ndarray:
    return np.array([k.encode() for k in keys], dtype=object).reshape(-1)


def _sparse_tensors(outputs, keys, start: int) -> dict:
    n = len(keys)
    return {k: SparseTensor(outputs[start + i], outputs[start + n + i],
                            outputs[start + 2 * n + i]) for i, k in enumerate(keys)}


def _parse(serialized, context_features, sequence_features, example_names):
    """Builds the ParseSequenceExampleV2 node; returns (context, feature_lists, lengths)."""
    if not context_features and not sequence_features:
        raise ValueError("Both context_features and sequence_features are None, but at least "
                         "one should have values.")
    context_features = context_features or {}
    sequence_features = sequence_features or {}
    c_sparse, c_dense = _split(context_features, FixedLenFeature, FixedLenSequenceFeature, True)
    l_sparse, l_dense = _split(sequence_features, FixedLenSequenceFeature, FixedLenFeature,
                               False)
    c_dense_types = [_context_dense_dtype(context_features[k].dtype) for k in c_dense]
    attrs = {
        "Ncontext_sparse": len(c_sparse), "Tcontext_dense": c_dense_types,
        "context_sparse_types": [check_parse_dtype(k, context_features[k].dtype) for k in c_sparse],
        "context_ragged_value_types": [], "context_ragged_split_types": [],
        "context_dense_shapes": [dense_feature_shape(k, context_features[k]) for k in c_dense],
        "Nfeature_list_sparse": len(l_sparse), "Nfeature_list_dense": len(l_dense),
        "feature_list_dense_types": [check_parse_dtype(k, sequence_features[k].dtype)
                                     for k in l_dense],
        "feature_list_sparse_types": [check_parse_dtype(k, sequence_features[k].dtype)
                                      for k in l_sparse],
        "feature_list_ragged_value_types": [], "feature_list_ragged_split_types": [],
        "feature_list_dense_shapes": [_ts.as_shape(sequence_features[k].shape)
                                      for k in l_dense]}
    defaults = [dense_default(k, context_features[k], t)
                for k, t in zip(c_dense, c_dense_types)]
    missing_ok = np.array([bool(sequence_features[k].allow_missing) for k in l_dense],
                          dtype=bool)
    names = [] if example_names is None else example_names
    outputs = apply_op(ParseSequenceExampleV2,
                       [serialized, encoded_strings(names), _keys(c_sparse), _keys(c_dense),
                        _keys([]), _keys(l_sparse), _keys(l_dense), _keys([]), missing_ok,
                        defaults],
                       attrs, name="ParseSequenceExampleV2")
    context = _sparse_tensors(outputs, c_sparse, 0)
    start = 3 * len(c_sparse)
    context.update(zip(c_dense, outputs[start:start + len(c_dense)]))
    start += len(c_dense)
    feature_lists = _sparse_tensors(outputs, l_sparse, start)
    start += 3 * len(l_sparse)
    feature_lists.update(zip(l_dense, outputs[start:start + len(l_dense)]))
    lengths = dict(zip(l_dense, outputs[start + len(l_dense):start + 2 * len(l_dense)]))
    return context, feature_lists, lengths


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """Parses one serialized tf.train.SequenceExample (a scalar string).

    Args:
      serialized: scalar string Tensor, one serialized SequenceExample.
      context_features: dict mapping context keys to `FixedLenFeature` or `VarLenFeature`.
      sequence_features: dict mapping feature list keys to `FixedLenSequenceFeature` (no
        default_value; `allow_missing` makes an absent list empty) or `VarLenFeature`.
      example_name: optional scalar string naming the record in error messages.
      name: the name scope (default "ParseSingleSequenceExample").

    Returns:
      A pair of dicts (context, feature_lists): FixedLenFeature keys map to Tensors of their
      shape, FixedLenSequenceFeature keys to [steps] + shape Tensors, VarLenFeature keys to
      SparseTensors (context: [len]; feature lists: [steps, max_len]).

    Raises:
      ValueError: if both dicts are empty, `serialized` is not a scalar, a feature kind is
        used where it is not supported, or a sequence feature has a default_value.
      InvalidArgumentError: at run time for a record that does not parse, a required feature
        missing, a type mismatch or a wrong number of values.
    """
    with name_scope(name, "ParseSingleSequenceExample"):
        serialized = convert_to_tensor(serialized, dtype=_dtypes.string, name="serialized")
        if serialized.shape.ndims not in (None, 0):
            raise ValueError("Input serialized must be a scalar")
        with name_scope(None, "ParseSequenceExample"):
            return _parse(serialized, context_features, sequence_features, example_name)[:2]


def parse_sequence_example(serialized, context_features=None, sequence_features=None,
                           example_names=None, name=None):
    """Parses a batch of serialized tf.train.SequenceExample protos.

    Args:
      serialized: 1-D string Tensor of serialized SequenceExamples.
      context_features, sequence_features: as for `parse_single_sequence_example`.
      example_names: optional 1-D strings naming the records in error messages.
      name: the name scope (default "ParseSequenceExample").

    Returns:
      A triple of dicts (context, feature_lists, lengths): as for
      `parse_single_sequence_example` with a leading batch dimension (dense feature lists
      padded with zeros or "" to the longest record), and for each FixedLenSequenceFeature
      key its per-record number of steps ([batch] int64).

    Raises:
      ValueError, InvalidArgumentError: as for `parse_single_sequence_example`.
    """
    with name_scope(name, "ParseSequenceExample"):
        return _parse(serialized, context_features, sequence_features, example_names)
