"""input_layer, linear_model and make_parse_example_spec over feature columns (TF1's
tf.feature_column functions).

A call transforms each column once (`FeatureCache`: a column used twice, or crossed and also
embedded, is built once) and visits the columns sorted by name, each in a variable scope
named after it, so variables are named as TensorFlow names them:
`input_layer/<column>/embedding_weights`, `linear_model/<column>/weights`,
`linear_model/bias_weights`.
"""
from __future__ import annotations

import tensorweave as tf
from tensorweave.feature_column.categorical_columns import CategoricalColumn
from tensorweave.feature_column.dense_columns import DenseColumn

__all__ = ["FeatureCache", "input_layer", "linear_model", "make_parse_example_spec"]


class FeatureCache:
    """The features of one call, and each column's transformed value, made once."""

    def __init__(self, features):
        if not isinstance(features, dict):
            raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: "
                             f"{type(features)}")
        self._features = features
        self._made: dict = {}

    def get(self, key):
        """The value of a raw feature `key` (a name) or of a column."""
        if key not in self._made:
            self._made[key] = self._raw(key) if isinstance(key, str) else key.transform(self)
        return self._made[key]

    def _raw(self, key: str):
        if key not in self._features:
            raise ValueError(f"The following column is not in the features: {key}")
        value = tf.convert_to_tensor_or_sparse_tensor(self._features[key])
        if not isinstance(value, tf.SparseTensor) and value.shape.ndims == 1:
            value = tf.expand_dims(value, -1)   # a batch of scalars: one value per example
        return value


def _sorted_columns(feature_columns, kind, what: str) -> list:
    columns = list(feature_columns) if isinstance(feature_columns, (list, tuple, set)) \
        else [feature_columns]
    if not columns:
        raise ValueError("feature_columns must not be empty.")
    by_name: dict = {}
    for column in columns:
        if not isinstance(column, kind):
            raise ValueError(f"Items of feature_columns must be a {what}. Given (type "
                             f"{type(column)}): {column}.")
        if column.name in by_name:
            raise ValueError(f"Duplicate feature column name found for columns: "
                             f"{by_name[column.name]} and {column}. This usually means that "
                             "these columns refer to same base feature. Either one must be "
                             "discarded or a duplicated but renamed item must be inserted in "
                             "features dict.")
        by_name[column.name] = column
    return sorted(columns, key=lambda c: c.name)


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None, cols_to_output_tensors=None):
    """The dense columns' values concatenated per example: [batch, sum of widths] float32.

    Args:
      features: {feature name: Tensor or SparseTensor}, e.g. from tf.parse_example.
      feature_columns: dense columns (numeric, bucketized, indicator, embedding).
      weight_collections: extra collections the created variables are added to.
      trainable: whether the created variables are trainable.
      cols_to_vars: if a dict, filled with {column: [its variables]}.
      cols_to_output_tensors: if a dict, filled with {column: its [batch, width] tensor}.

    Raises:
      ValueError: a column is not dense, or a feature it needs is missing.
    """
    columns = _sorted_columns(feature_columns, DenseColumn, "_DenseColumn")
    cache = FeatureCache(features)
    found = {} if cols_to_vars is None else cols_to_vars
    with tf.variable_scope(None, default_name="input_layer"):
        outputs = []
        for column in columns:
            scope = getattr(column, "var_scope_name", column.name)
            with tf.variable_scope(None, default_name=scope):
                dense = column.dense(cache, trainable, found)
                outputs.append(dense)
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = dense
        _add_to_collections(found, weight_collections)
        return tf.concat(outputs, axis=1)


def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    """A linear model of the columns: [batch, units] = sum of each column's contribution
    (dense: values @ weights; categorical: its ids' weight rows combined by
    `sparse_combiner`) + bias. Weights and bias start at zero.

    Raises:
      ValueError: a column that is neither dense nor categorical, or a bad combiner.
    """
    if sparse_combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"sparse_combiner must be one of 'mean', 'sqrtn', 'sum'. Given: "
                         f"{sparse_combiner}")
    columns = _sorted_columns(feature_columns, (DenseColumn, CategoricalColumn),
                              "_FeatureColumn")
    cache = FeatureCache(features)
    found = {} if cols_to_vars is None else cols_to_vars
    with tf.variable_scope(None, default_name="linear_model"):
        terms = []
        for column in columns:
            with tf.variable_scope(None, default_name=column.name):
                categorical = isinstance(column, CategoricalColumn)
                rows = column.num_buckets if categorical else column.width
                weights = tf.get_variable("weights", [rows, units],
                                          initializer=tf.zeros_initializer(),
                                          trainable=trainable)
                found.setdefault(column, []).append(weights)
                if categorical:
                    ids, id_weights = column.ids(cache)
                    terms.append(tf.nn.safe_embedding_lookup_sparse(
                        weights, ids, id_weights, combiner=sparse_combiner,
                        name="weighted_sum"))
                else:
                    terms.append(tf.matmul(column.dense(cache, trainable, found), weights,
                                           name="weighted_sum"))
        bias = tf.get_variable("bias_weights", [units], initializer=tf.zeros_initializer(),
                               trainable=trainable)
        found["bias"] = [bias]
        _add_to_collections(found, weight_collections)
        total = tf.add_n(terms) if len(terms) > 1 else terms[0]
        return tf.nn.bias_add(total, bias, name="weighted_sum")


def _add_to_collections(cols_to_vars: dict, collections) -> None:
    for variables in cols_to_vars.values():
        for variable in variables:
            for key in collections or ():
                if variable not in tf.get_collection(key):
                    tf.add_to_collection(key, variable)


def make_parse_example_spec(feature_columns) -> dict:
    """{feature name: FixedLenFeature or VarLenFeature} that tf.parse_example needs to
    give the columns their inputs.

    Raises:
      ValueError: two columns want the same feature parsed differently, or an item is not
        a feature column.
    """
    spec: dict = {}
    for column in feature_columns:
        if not hasattr(column, "parse_example_spec"):
            raise ValueError(f"All feature_columns must be _FeatureColumn instances. Given: "
                             f"{column}")
        for key, value in column.parse_example_spec.items():
            if key in spec and spec[key] != value:
                raise ValueError(f"feature_columns contain different parse_spec for key "
                                 f"{key}. Given {value} and {spec[key]}")
            spec[key] = value
    return spec
