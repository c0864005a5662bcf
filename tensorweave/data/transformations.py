"""The transformations of tf.data.experimental (and their Dataset methods in TF 2.x).

scan, take_while, unique, ignore_errors, assert_cardinality, group_by_window and the directed
interleave of choose_from_datasets record a spec of their own kind; their runtime nodes are in
kernels/dataset_experimental.py. enumerate, Counter, bucket_by_sequence_length and
sample_from_datasets (Dataset.random pairs seeding a stateless multinomial draw that directs the
interleave) are compositions of other transformations, exactly as TensorFlow writes them, so
they have its element order and structure. cardinality and get_single_element
make one op each (ops/data_experimental_ops.py) reading the pipeline's variant.
"""
from __future__ import annotations

import numpy as np

from tensorweave.data import function as _function
from tensorweave.data import nest
from tensorweave.data.dataset_ops import (
    Dataset,
    TensorSpec,
    UnaryDataset,
    dense_structure,
    flat_specs,
    from_flat,
    int64_arg,
    merge_specs,
    nested_pipeline,
    pipeline_tensor,
    spec_of,
    tensor_structure,
)
from tensorweave.data.reduce import settle_state
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.kernels import dataset_experimental  # noqa: F401 - registers the nodes
from tensorweave.ops import data_experimental_ops

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
_INT64_SCALAR = TensorSpec([], _dtypes.int64)


def _trace(fn, structure, what: str):
    return _function.trace(fn, structure, get_default_graph(), what)


def _bool_predicate(predicate, structure, what: str):
    """`predicate` traced; ValueError unless it returns a scalar tf.bool (TF's message)."""
    traced = _trace(predicate, structure, what)
    result = traced.result
    if not isinstance(result, Tensor) or result.dtype.base_dtype != _dtypes.bool or \
            not result.shape.is_compatible_with([]):
        got = nest.map_structure(spec_of, result) if not isinstance(result, Dataset) else result
        raise ValueError("Invalid `predicate`. `predicate` must return a `tf.bool` scalar "
                         f"tensor but its return type is{got}.")
    return traced


def _scan_state(result):
    """The new state in a scan_func result, which must be a (new state, output) pair."""
    if not isinstance(result, tuple) or len(result) != 2:
        got = nest.map_structure(spec_of, result) if not isinstance(result, Dataset) else result
        raise TypeError("Invalid `scan_func`. `scan_func` should return a pair consisting of new "
                        f"state and the output value but its return type is {got}.")
    return result[0]


class Scan(UnaryDataset):
    """scan_func(state, element) -> (new_state, output); the state's shapes are relaxed and
    the function traced again until they settle, as for Dataset.reduce."""

    def __init__(self, input_dataset, initial_state, scan_func):
        element = tensor_structure(input_dataset, "Dataset.scan()")
        self._initial = nest.map_structure(convert_to_tensor, initial_state)
        self._traced, _ = settle_state(
            lambda s: _trace(scan_func, (s, element), "Dataset.scan()"),
            nest.map_structure(spec_of, self._initial), _scan_state, "scan_func",
            "Dataset.scan()")
        super().__init__(input_dataset, nest.map_structure(spec_of, self._traced.result[1]))

    def _dataset_spec(self, builder):
        spec = self._spec(builder, "scan", args=builder.args(nest.flatten(self._initial)))
        return builder.function(self._traced, nest.flatten(self._traced.result), spec)


class TakeWhile(UnaryDataset):
    def __init__(self, input_dataset, predicate):
        self._traced = _bool_predicate(predicate, input_dataset._structure,
                                       "Dataset.take_while()")
        super().__init__(input_dataset)

    def _dataset_spec(self, builder):
        spec = self._spec(builder, "take_while")
        return builder.function(self._traced, [self._traced.result], spec)


_UNIQUE_DTYPES = (_dtypes.int32, _dtypes.int64, _dtypes.string)


class Unique(UnaryDataset):
    def __init__(self, input_dataset):
        flat = nest.flatten(dense_structure(input_dataset, "unique"))
        for spec in flat:
            if spec.dtype not in _UNIQUE_DTYPES:
                raise TypeError(f"`tf.data.Dataset.unique` does not support type <dtype: "
                                f"'{spec.dtype.name}'> -- only `tf.int32`, `tf.int64`, and "
                                "`tf.string` are supported.")
        self._n = len(flat)
        super().__init__(input_dataset)

    def _dataset_spec(self, builder):
        return self._spec(builder, "unique", n_components=self._n)


class IgnoreErrors(UnaryDataset):
    def _dataset_spec(self, builder):
        return self._spec(builder, "ignore_errors")


class AssertCardinality(UnaryDataset):
    def __init__(self, input_dataset, expected_cardinality):
        self._expected = int64_arg(expected_cardinality, "expected_cardinality")
        super().__init__(input_dataset)

    def _dataset_spec(self, builder):
        return self._spec(builder, "assert_cardinality", args=[builder.arg(self._expected)])


def _int64_scalar_fn(fn, what: str):
    """`fn` with its result converted to an int64 scalar tensor, as TensorFlow wraps the key
    and window size functions of group_by_window (an int32 result is a ValueError)."""
    def wrapped(*args):
        result = convert_to_tensor(fn(*args), dtype=_dtypes.int64)
        if not result.shape.is_compatible_with([]):
            raise ValueError(f"Invalid `{what}`. `{what}` must return a single `tf.int64` "
                             f"scalar tensor but its return type is {spec_of(result)}.")
        return result
    return wrapped


class _GroupWindow(Dataset):
    """The window a group_by_window `reduce_func` receives: at run time, the list of elements
    the group collected, passed as the last argument of the reduced pipeline (args[-1])."""

    def __init__(self, structure):
        self._structure = structure

    def _dataset_spec(self, builder):
        return {"kind": "group_window", "args": [-1]}


class GroupByWindow(Dataset):
    """Windows of elements of equal key, each reduced to a dataset by `reduce_func(key,
    window)` (the window's elements may differ in shape, as bucket_by_sequence_length
    needs)."""

    def __init__(self, input_dataset, key_func, reduce_func, window_size=None,
                 window_size_func=None):
        if (window_size is None) == (window_size_func is None):
            raise ValueError("Either the `window_size` argument or the `window_size_func` "
                             "argument must be specified.")
        structure = dense_structure(input_dataset, "group_by_window")
        if window_size is not None:
            size = int64_arg(window_size, "window_size")
            window_size_func = lambda key: size  # noqa: E731 - TensorFlow's own wrapping
        self._input = input_dataset
        self._key = _trace(_int64_scalar_fn(key_func, "key_func"), structure,
                           "Dataset.group_by_window()")
        self._size = _trace(_int64_scalar_fn(window_size_func, "window_size_func"),
                            _INT64_SCALAR, "Dataset.group_by_window()")
        self._reduce = _trace(lambda key: reduce_func(key, _GroupWindow(structure)),
                              _INT64_SCALAR, "Dataset.group_by_window()")
        if not isinstance(self._reduce.result, Dataset):
            got = nest.map_structure(spec_of, self._reduce.result)
            raise TypeError("Invalid `reduce_func`. `reduce_func` must return a single "
                            f"`tf.data.Dataset` object but its return type is {got}.")
        self._structure = self._reduce.result._structure

    def _dataset_spec(self, builder):
        inner, outputs = nested_pipeline(builder, self._reduce)
        return {"kind": "group_by_window", "input": self._input._dataset_spec(builder),
                "key": builder.function(self._key, [self._key.result], {}),
                "size": builder.function(self._size, [self._size.result], {}),
                "reduce": builder.function(self._reduce, outputs, {"inner": inner})}


def bucket_by_sequence_length(dataset, element_length_func, bucket_boundaries,
                              bucket_batch_sizes, padded_shapes=None, padding_values=None,
                              pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """TensorFlow's composition: group_by_window keyed by bucket, windows padded-batched."""
    from tensorweave.framework.scopes import control_dependencies
    from tensorweave.ops import array_index_ops, check_ops, math_ops, reduction_ops
    from tensorweave.ops.constant_op import constant
    if len(bucket_batch_sizes) != len(bucket_boundaries) + 1:
        raise ValueError(
            "`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
            f"`len(bucket_batch_sizes)={len(bucket_batch_sizes)}` and "
            f"`len(bucket_boundaries)={len(bucket_boundaries)}`.")
    batch_sizes = constant(bucket_batch_sizes, dtype=_dtypes.int64)

    def element_to_bucket_id(*args):
        seq_length = element_length_func(*args)
        boundaries = list(bucket_boundaries)
        buckets_min = [np.iinfo(np.int32).min] + boundaries
        buckets_max = boundaries + [np.iinfo(np.int32).max]
        conditions = math_ops.logical_and(math_ops.less_equal(buckets_min, seq_length),
                                          math_ops.less(seq_length, buckets_max))
        return reduction_ops.reduce_min(array_index_ops.where(conditions))

    def window_size_fn(bucket_id):
        return batch_sizes[bucket_id]

    def make_padded_shapes(shapes, none_filler=None):
        return nest.map_structure(lambda s: [none_filler if d.value is None else d.value
                                             for d in s], shapes)

    def batching_fn(bucket_id, grouped_dataset):
        batch_size = window_size_fn(bucket_id)
        if no_padding:
            return grouped_dataset.batch(batch_size, drop_remainder=drop_remainder)
        none_filler = None
        if pad_to_bucket_boundary:
            check = check_ops.assert_less(
                bucket_id, constant(len(bucket_batch_sizes) - 1, dtype=_dtypes.int64),
                message="When pad_to_bucket_boundary=True, elements must have length < "
                        "max(bucket_boundaries).")
            with control_dependencies([check]):
                boundaries = constant(bucket_boundaries, dtype=_dtypes.int64)
                none_filler = boundaries[bucket_id] - 1
        shapes = padded_shapes if padded_shapes is not None else \
            make_padded_shapes(grouped_dataset.output_shapes, none_filler)
        return grouped_dataset.padded_batch(batch_size, shapes, padding_values,
                                            drop_remainder=drop_remainder)

    return GroupByWindow(dataset, element_to_bucket_id, batching_fn,
                         window_size_func=window_size_fn)


class DirectedInterleave(Dataset):
    """Elements of `datasets` in the order the int64 scalars of `selector` name them
    (TF's DirectedInterleaveDataset)."""

    def __init__(self, datasets, selector, stop_on_empty_dataset=False, weights=None):
        datasets = list(datasets)
        if not datasets:
            raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
        structure = datasets[0]._structure
        for i, d in enumerate(datasets[1:], 1):
            try:
                structure = merge_specs(structure, d._structure)
            except TypeError:
                raise TypeError(
                    "Invalid `datasets`. `datasets` must have compatible element specs.\n "
                    f"Dataset 0 element_spec={datasets[0]._structure}.\nDataset {i} "
                    f"element_spec={d._structure}.") from None
        self._datasets, self._selector, self._weights = datasets, selector, weights
        self._stop = bool(stop_on_empty_dataset)
        self._structure = structure

    def _dataset_spec(self, builder):
        return {"kind": "directed_interleave",
                "inputs": [d._dataset_spec(builder) for d in self._datasets],
                "selector": self._selector._dataset_spec(builder), "stop_on_empty": self._stop,
                "args": [] if self._weights is None else [builder.arg(self._weights)]}


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                         rerandomize_each_iteration=None):
    """Elements drawn at random from `datasets` (tf.data.experimental.sample_from_datasets).

    Built as TensorFlow 2.21 builds it, so its order is TensorFlow's: each choice is
    stateless_multinomial(log(weights), 1) seeded by the next pair of `Dataset.random(seed)`,
    and the choices direct an interleave of `datasets` (a choice of an exhausted dataset is
    skipped). A list of weights drops the datasets of weight 0 first; a weights tensor does
    not, so its zero-weight datasets are never chosen, and once the others are exhausted the
    iteration ends (TensorFlow's draws forever there and its get_next hangs).

    Args:
      datasets: a non-empty list of datasets of compatible elements.
      weights: one non-negative weight per dataset: a list, a float32/float64 vector tensor
        (read when the iterator starts), or a dataset of such vectors (one per choice);
        None: uniform.
      seed: the op seed of the draws (with the graph seed, as `tf.set_random_seed` sets).
      stop_on_empty_dataset: end when a dataset drawn is exhausted, instead of drawing from
        the others only.
      rerandomize_each_iteration: draw other choices in each epoch of a `repeat` above.

    Returns:
      A `Dataset` whose elements keep each input's order.

    Raises:
      ValueError: for no datasets or a weight count that differs from theirs.
      TypeError: for incompatible elements or non-float weights.
    """
    from tensorweave.data.random_dataset import RandomDataset
    from tensorweave.ops import array_ops, math_unary_ops, stateless_random_ops

    def choice(logits, seed_pair):
        """The index stateless_multinomial draws from `logits` [1, n] for one seed pair."""
        sample = stateless_random_ops.stateless_multinomial(logits, 1, seed_pair)
        return array_ops.squeeze(sample, axis=[0, 1])

    def seed_pairs():
        """The stateless seeds, made (and the graph's op seed taken) where TensorFlow does."""
        return RandomDataset(seed, rerandomize_each_iteration).batch(2)

    datasets = list(datasets)
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    if isinstance(weights, Dataset):
        logits = weights.map(lambda *p: math_unary_ops.log(p, name="logits"))
        selector = Dataset.zip((logits, seed_pairs())).map(choice)
        return DirectedInterleave(datasets, selector, stop_on_empty_dataset)
    if weights is None:
        logits = [[1.0] * len(datasets)]
    else:
        if isinstance(weights, Tensor):
            if not weights.shape.is_compatible_with([len(datasets)]):
                raise ValueError("Invalid `weights`. The shape of `weights` should be "
                                 "compatible with `[len(datasets)]` but is "
                                 f"{weights.shape}.")
        else:
            if len(datasets) != len(weights):
                raise ValueError("Invalid `weights`. `weights` should have the same length as "
                                 f"`datasets` but got `len(weights)={len(weights)}` vs. "
                                 f"`len(datasets)={len(datasets)}`.")
            kept = [(d, w) for d, w in zip(datasets, weights) if w > 0]
            datasets, weights = ([list(x) for x in zip(*kept)] if kept else
                                 ([datasets[0].take(0)], [1.0]))
        weights = convert_to_tensor(weights, name="weights")
        if weights.dtype.base_dtype not in (_dtypes.float32, _dtypes.float64):
            raise TypeError("Invalid `weights`. `weights` type must be either `tf.float32` or "
                            f"`tf.float64` but is {weights.dtype}.")
        logits = array_ops.expand_dims(math_unary_ops.log(weights, name="logits"), 0)
    if len(datasets) == 1:
        return datasets[0]
    selector = seed_pairs().map(lambda pair: choice(logits, pair))
    return DirectedInterleave(datasets, selector, stop_on_empty_dataset, weights)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=False):
    """Elements of `datasets[i]` for each `i` of `choice_dataset`, in that order.

    Args:
      datasets: a non-empty list of datasets of compatible elements.
      choice_dataset: a dataset of int64 scalars in [0, len(datasets)); an index out of that
        range is an InvalidArgumentError when it is reached.
      stop_on_empty_dataset: end when a chosen dataset is exhausted, instead of skipping it.

    Returns:
      A `Dataset`.

    Raises:
      TypeError: when `choice_dataset` is not of int64 scalars or the elements differ.
    """
    if not isinstance(choice_dataset, Dataset) or \
            choice_dataset._structure != _INT64_SCALAR:
        got = choice_dataset._structure if isinstance(choice_dataset, Dataset) else \
            type(choice_dataset)
        raise TypeError("Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar "
                        f"`tf.int64` tensors but are {got}.")
    return DirectedInterleave(datasets, choice_dataset, stop_on_empty_dataset)


def enumerate_dataset(dataset, start=0):
    """(index, element) pairs from `start`: TensorFlow's zip with a range."""
    return Dataset.zip((Dataset.range(start, np.iinfo(np.int64).max), dataset))


def counter(start=0, step=1, dtype=_dtypes.int64):
    """start, start + step, ... without end: TensorFlow's scan over a repeated tensor."""
    from tensorweave.framework.scopes import name_scope
    with name_scope("counter"):
        start = convert_to_tensor(start, dtype=dtype, name="start")
        step = convert_to_tensor(step, dtype=dtype, name="step")
        return Scan(Dataset.from_tensors(0).repeat(None), start,
                    lambda state, _: (state + step, state))


def _check_dataset(dataset) -> None:
    if not isinstance(dataset, Dataset):
        raise TypeError(f"Invalid `dataset`. Expected a `tf.data.Dataset` object but got "
                        f"{type(dataset)}.")


def cardinality(dataset):
    """The number of elements of `dataset`, computed without running it.

    Args:
      dataset: a `Dataset`.

    Returns:
      An int64 scalar tensor (op DatasetCardinality): the count, INFINITE_CARDINALITY (-1),
      or UNKNOWN_CARDINALITY (-2) where only running the pipeline would tell (filter,
      interleave, TF1's map, files).

    Raises:
      TypeError: if `dataset` is not a `Dataset`.
    """
    _check_dataset(dataset)
    variant, _ = pipeline_tensor(dataset)
    return data_experimental_ops.dataset_cardinality(variant)


def get_single_element(dataset, name=None):
    """The only element of `dataset`.

    Args:
      dataset: a `Dataset` of exactly one element.
      name: the name of the DatasetToSingleElement op.

    Returns:
      The element's nested structure of tensors; running them raises InvalidArgumentError
      when the dataset is empty or has more than one element.

    Raises:
      TypeError: if `dataset` is not a `Dataset` (or its elements are windows).
    """
    _check_dataset(dataset)
    flat = flat_specs(tensor_structure(dataset, "get_single_element()"))
    variant, _ = pipeline_tensor(dataset)
    outputs = data_experimental_ops.dataset_to_single_element(
        variant, [s.dtype for s in flat], [s.shape for s in flat], name=name)
    return from_flat(dataset._structure, outputs)


class WithOptions(UnaryDataset):
    """Records options (data/options.py): the pipeline itself is its input's."""

    def __init__(self, input_dataset, options):
        self._options = options
        super().__init__(input_dataset)

    def _dataset_spec(self, builder):
        return self._input._dataset_spec(builder)
