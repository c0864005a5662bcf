"""tf.data.Dataset: the graph-side description of an input pipeline and its transformations.

A Dataset object only records what to do and the static element structure (dtypes, shapes).
When an iterator is made, the whole chain becomes one `DatasetPipeline` op (ops/data_ops.py):
`pipeline_tensor` walks the chain with a `PipelineBuilder`, which numbers the graph tensors the
pipeline reads (they become the op's inputs) and collects the traced functions.

Signatures are TensorFlow 2.21's `tf.compat.v1.data.Dataset`. Its `name` arguments label the
dataset op of each transformation in TensorFlow's debugging metadata; here the whole chain is
one op, so they are accepted and have no effect. `num_parallel_calls`, `deterministic` and the
other parallelism knobs are hints that change no element or order here: the pipeline runs in
the calling thread (ARCHITECTURE.md, tf.data), so every transformation is deterministic, which
is what `deterministic=None/True` promise and what `deterministic=False` permits. A
`num_parallel_calls` that is neither positive nor AUTOTUNE fails when the pipeline starts, with
TensorFlow's InvalidArgumentError.
"""
from __future__ import annotations

import json

from tensorweave.data import function as _function
from tensorweave.data import nest
from tensorweave.data.dataset_methods import DatasetMethods
from tensorweave.data.options import AUTOTUNE as _AUTOTUNE
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import random_seed
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import data_ops

__all__ = ["Dataset", "TensorSpec", "SparseTensorSpec"]


class _ShapedSpec:
    """A component's static type: dtype and (partial) shape; equal to specs of its class."""

    __slots__ = ("dtype", "shape", "name")

    def __init__(self, shape, dtype=_dtypes.float32, name=None):
        self.shape = _ts.as_shape(shape)
        self.dtype = _dtypes.as_dtype(dtype).base_dtype
        self.name = name

    def __eq__(self, other):
        return type(other) is type(self) and (self.dtype, self.shape, self.name) == \
            (other.dtype, other.shape, other.name)

    __hash__ = None


class TensorSpec(_ShapedSpec):
    """The static type of a Tensor (TF's tf.TensorSpec): dtype, partial shape and an optional
    name; also the type of each tensor component of a dataset element."""

    __slots__ = ()

    def __repr__(self):
        name = "None" if self.name is None else repr(self.name)
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={name})"

    @classmethod
    def from_tensor(cls, tensor, name=None):
        """The spec of `tensor`, named `name` or else after the tensor's op."""
        if not isinstance(tensor, Tensor):
            raise ValueError(f"`tensor` should be a tf.Tensor, but got type {type(tensor)}.")
        return cls(tensor.shape, tensor.dtype, name or tensor.op.name)

    @classmethod
    def from_spec(cls, spec, name=None):
        """A TensorSpec with `spec`'s dtype and shape, named `name` or as `spec` is."""
        return cls(spec.shape, spec.dtype, name or getattr(spec, "name", None))

    def is_compatible_with(self, spec_or_tensor) -> bool:
        """Whether the dtypes are equal and the shapes compatible (names do not matter)."""
        return isinstance(spec_or_tensor, (TensorSpec, Tensor)) and \
            self.dtype == spec_or_tensor.dtype.base_dtype and \
            self.shape.is_compatible_with(spec_or_tensor.shape)

    def most_specific_compatible_type(self, other):
        """The spec compatible with both: the dtypes must be equal, shapes are relaxed."""
        if not isinstance(other, TensorSpec) or other.dtype != self.dtype:
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        name = self.name if self.name == other.name else None
        return TensorSpec(self.shape.most_specific_compatible_shape(other.shape), self.dtype,
                          name)


class SparseTensorSpec(_ShapedSpec):
    """The static type of a SparseTensor component: its values' dtype and its dense shape.

    `dtype` and `shape` are what output_types / output_shapes report and `value_type` what
    output_classes reports; `component_specs()` are the tensors it travels as and
    `from_components` makes the SparseTensor of them.
    """

    __slots__ = ()
    value_type = SparseTensor

    def __repr__(self):
        return f"SparseTensorSpec({self.shape!r}, tf.{self.dtype.name})"

    def component_specs(self) -> list[TensorSpec]:
        """int64 [N, rank] indices, [N] values, int64 [rank] dense_shape."""
        rank = self.shape.ndims
        return [TensorSpec([None, rank], _dtypes.int64), TensorSpec([None], self.dtype),
                TensorSpec([rank], _dtypes.int64)]

    def from_components(self, tensors) -> SparseTensor:
        sparse = SparseTensor(*tensors)
        sparse.set_shape(self.shape)
        return sparse


def spec_of(value) -> TensorSpec | SparseTensorSpec:
    """The spec of a function's result leaf: a Tensor's, or a SparseTensor's."""
    if isinstance(value, SparseTensor):
        return SparseTensorSpec(value.shape, value.dtype)
    return TensorSpec(value.shape, value.dtype)


def flat_tensors(values) -> list[Tensor]:
    """The tensors a structure of Tensors and SparseTensors travels as: a SparseTensor as its
    indices, values and dense_shape (the components its SparseTensorSpec names)."""
    return [t for v in nest.flatten(values)
            for t in ((v.indices, v.values, v.dense_shape) if isinstance(v, SparseTensor)
                      else (v,))]


def sparse_starts(structure) -> list[int]:
    """The positions, among the tensors an element of `structure` travels as, where each
    SparseTensor's three components start (what the batching nodes handle as one)."""
    starts, k = [], 0
    for s in nest.flatten(structure):
        if isinstance(s, SparseTensorSpec):
            starts.append(k)
            k += 3
        else:
            k += 1
    return starts


class DatasetSpec:
    """The static type of an element component that is itself a dataset (what `window` makes):
    the spec of that dataset's elements. Reported as-is by output_types/shapes/classes.

    A window travels stacked (`component_specs()`): a tensor as its elements stacked along a
    new first dimension; a SparseTensor as the indices of all its elements, each with its
    position in the window in front, their values, and their dense shapes stacked, so each
    keeps its own. `from_components` makes the dataset of those elements again.
    """

    __slots__ = ("element_spec",)

    def __init__(self, element_spec: TensorSpec | SparseTensorSpec):
        self.element_spec = element_spec

    def __eq__(self, other):
        return isinstance(other, DatasetSpec) and self.element_spec == other.element_spec

    __hash__ = None

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r}, TensorShape([]))"

    def component_specs(self) -> list[TensorSpec]:
        """The tensors one such component travels as (see the class docstring)."""
        spec = self.element_spec
        if isinstance(spec, SparseTensorSpec):
            rank = spec.shape.ndims
            return [TensorSpec([None, None if rank is None else rank + 1], _dtypes.int64),
                    TensorSpec([None], spec.dtype), TensorSpec([None, rank], _dtypes.int64)]
        return [TensorSpec(_ts.TensorShape([None]).concatenate(spec.shape), spec.dtype)]

    def from_components(self, tensors) -> Dataset:
        """The dataset a traced function sees for the stacked window `tensors`."""
        if isinstance(self.element_spec, SparseTensorSpec):
            return _SparseWindowSlices(self.element_spec, tensors)
        return Dataset.from_tensor_slices(tensors[0])


def tensor_structure(dataset, what: str):
    """The element structure of `dataset`, which `what` needs to be made of tensors only."""
    if any(isinstance(s, DatasetSpec) for s in nest.flatten(dataset._structure)):
        raise TypeError(f"{what} needs elements made of tensors, but the elements of {dataset} "
                        "are datasets (from window()): turn each into tensors with flat_map or "
                        "interleave first, e.g. .flat_map(lambda w: w.batch(size)).")
    return dataset._structure


def dense_structure(dataset, what: str):
    """The element structure of `dataset`, which `what` needs to be made of dense tensors:
    TypeError for windows and SparseTensors, the latter in TensorFlow's words."""
    structure = tensor_structure(dataset, what)
    sparse = [s for s in nest.flatten(structure) if isinstance(s, SparseTensorSpec)]
    if sparse:
        raise TypeError(f"`{what}` is only supported for datasets that produce tensor elements "
                        "but type spec of elements in the input dataset is not a subclass of "
                        f"TensorSpec: `{sparse[0]!r}`.")
    return structure


class StructuredOutputs:
    """TF1's output_types / output_shapes / output_classes, read from `self._structure` (a
    nest of TensorSpecs); shared by datasets and iterators."""

    @property
    def output_types(self):
        return nest.map_structure(lambda s: _reported(s, lambda t: t.dtype), self._structure)

    @property
    def output_shapes(self):
        return nest.map_structure(lambda s: _reported(s, lambda t: t.shape), self._structure)

    @property
    def output_classes(self):
        return nest.map_structure(
            lambda s: _reported(s, lambda t: getattr(t, "value_type", Tensor)), self._structure)


def _reported(spec, read):
    """read(spec) of a tensor component; TensorFlow reports a dataset component's DatasetSpec
    as its type, shape and class."""
    return spec if isinstance(spec, DatasetSpec) else read(spec)


def flat_specs(structure) -> list[TensorSpec]:
    """The TensorSpecs of the tensors an element of `structure` travels as: a composite leaf
    (a SparseTensorSpec, data/sparse_batching.py) as its `component_specs()`."""
    return [c for s in nest.flatten(structure)
            for c in (s.component_specs() if hasattr(s, "component_specs") else [s])]


def from_flat(structure, tensors):
    """`structure` packed from the tensors `flat_specs(structure)` describes."""
    it, leaves = iter(tensors), []
    for s in nest.flatten(structure):
        if hasattr(s, "component_specs"):
            leaves.append(s.from_components([next(it) for _ in s.component_specs()]))
        else:
            leaves.append(next(it))
    return nest.pack(structure, leaves)


class PipelineBuilder:
    """Numbers the tensors a pipeline reads and collects its function records."""

    def __init__(self, functions: list):
        self.tensors: list[Tensor] = []
        self.functions = functions
        self._index: dict[Tensor, int] = {}

    def arg(self, tensor: Tensor) -> int:
        index = self._index.get(tensor)
        if index is None:
            index = self._index[tensor] = len(self.tensors)
            self.tensors.append(tensor)
        return index

    def args(self, tensors) -> list[int]:
        return [self.arg(t) for t in tensors]

    def function(self, traced, outputs: list, spec: dict) -> dict:
        """Adds `traced` (returning `outputs`) to the pipeline; fills spec's fn/captures."""
        spec["fn"] = len(self.functions)
        self.functions.append(None)  # reserve the index: nested functions are added below
        self.functions[spec["fn"]] = traced.record(outputs)
        spec["captures"] = self.args(traced.captured)
        return spec


def int64_arg(value, name: str) -> Tensor:
    return convert_to_tensor(value, dtype=_dtypes.int64, name=name)


def merge_specs(a, b):
    """The most specific element spec compatible with both; TypeError if they differ in kind."""
    flat_a, flat_b = nest.flatten(a), nest.flatten(b)
    if not nest.same_structure(a, b) or [_leaf_kind(s) for s in flat_a] != \
            [_leaf_kind(s) for s in flat_b]:
        raise TypeError(f"Incompatible dataset elements:\n  {a} vs.   {b}")
    return nest.pack(a, [_merge_leaf(x, y) for x, y in zip(flat_a, flat_b)])


def _leaf_kind(spec):
    if isinstance(spec, DatasetSpec):
        return "dataset", _leaf_kind(spec.element_spec)
    return type(spec), spec.dtype


def _merge_leaf(x, y):
    """A TensorSpec or SparseTensorSpec (of a relaxed shape), or a DatasetSpec of one."""
    if isinstance(x, DatasetSpec):
        return DatasetSpec(_merge_leaf(x.element_spec, y.element_spec))
    return type(x)(x.shape.most_specific_compatible_shape(y.shape), x.dtype)


class Dataset(StructuredOutputs, DatasetMethods):
    """A sequence of elements, each a nested structure of tensors (TF1's tf.data.Dataset)."""

    _structure = None   # nested TensorSpecs

    def _dataset_spec(self, builder: PipelineBuilder) -> dict:
        raise NotImplementedError

    # --- element structure ---------------------------------------------------------------------
    @property
    def element_spec(self):
        return self._structure

    def __repr__(self):
        return f"<{type(self).__name__} element_spec={self._structure}>"

    # --- sources -------------------------------------------------------------------------------
    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of one element, `tensors`."""
        from tensorweave.data.sources import TensorDataset
        return TensorDataset(tensors)

    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """A dataset of the slices of `tensors` along their first dimension."""
        from tensorweave.data.sources import TensorSliceDataset
        return TensorSliceDataset(tensors)

    @staticmethod
    def from_sparse_tensor_slices(sparse_tensor):
        """TF1's: the rows of a rank-N SparseTensor, each as its (indices, values, dense_shape)
        tensors of rank N - 1 (from_tensor_slices gives them as SparseTensors)."""
        if not isinstance(sparse_tensor, SparseTensor):
            raise TypeError("Invalid `sparse_tensor`. `sparse_tensor` must be a "
                            f"`tf.sparse.SparseTensor`. Got {type(sparse_tensor)}.")
        return Dataset.from_tensor_slices(sparse_tensor).map(
            lambda row: (row.indices, row.values, row.dense_shape))

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        """The names of the files matching `file_pattern` (a glob or a list of globs), found
        when an iterator starts: sorted, or shuffled (the default) with `seed`. No match gives
        an empty dataset, as TensorFlow 2.21's graph mode does."""
        from tensorweave.framework.scopes import name_scope
        from tensorweave.ops.array_ops import shape as shape_of
        from tensorweave.ops.file_io_ops import matching_files
        from tensorweave.ops.math_ops import maximum
        with name_scope("list_files"):
            files = matching_files(file_pattern)
            dataset = Dataset.from_tensor_slices(files)
            if shuffle is None or shuffle:
                count = shape_of(files, out_type=_dtypes.int64)[0]
                dataset = dataset.shuffle(maximum(count, 1), seed=seed)
        return dataset

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None, name=None):
        """A dataset of the elements a Python generator yields (run in the session's process),
        typed by `output_types` (and `output_shapes`) or by a structure of TensorSpecs,
        `output_signature`."""
        from tensorweave.data.sources import GeneratorDataset, signature_types_and_shapes
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        if output_signature is not None:
            output_types, output_shapes = signature_types_and_shapes(
                output_signature, output_types, output_shapes)
        elif output_types is None:
            raise TypeError("To specify the output signature you need to provide either the "
                            "`output_signature` argument or the `output_types` argument.")
        return GeneratorDataset(generator, output_types, output_shapes, args, output_signature)

    @staticmethod
    def range(*args, **kwargs):
        """Integers like Python's range(start, stop, step), as scalars of the keyword
        `output_type` (int64 by default). Other keywords than it and `name` are ignored, as
        TensorFlow ignores them (`dtype=` included), with a warning here."""
        from tensorweave.data.sources import RangeDataset
        return RangeDataset(*args, **kwargs)

    @staticmethod
    def zip(*args, datasets=None, name=None):
        """Elements of several datasets side by side: `zip(a, b)`, or one nested structure
        of datasets, `zip((a, (b, c)))` or `zip(datasets=...)`."""
        if args and datasets is not None:
            raise TypeError("Both `*args` and `datasets` cannot be set.")
        if not args and datasets is None:
            raise TypeError("Must pass at least one dataset to `zip`.")
        if datasets is None:
            datasets = args[0] if len(args) == 1 else args
        if isinstance(datasets, list) or not all(
                isinstance(d, Dataset) for d in nest.flatten(datasets)):
            raise TypeError("Invalid input to `zip`. Inputs are expected to be (nested) "
                            "structures of `tf.data.Dataset` objects. Python `list` is not "
                            "supported and you should use `tuple` instead.")
        return _Zip(datasets)

    # --- transformations -----------------------------------------------------------------------
    def concatenate(self, dataset, name=None):
        return _Concatenate(self, dataset)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, synchronous=None,
            use_unbounded_threadpool=False, name=None):
        """Applies `map_func` to every element (traced once; see the module docstring for
        the parallelism arguments)."""
        return _parallel(_Map(self, map_func), num_parallel_calls)

    def filter(self, predicate, name=None):
        return _Filter(self, predicate)

    def map_with_legacy_function(self, map_func, num_parallel_calls=None, deterministic=None,
                                 use_unbounded_threadpool=False):
        """TF1's map through a `Defun`-style function: here the same traced function as map."""
        return self.map(map_func, num_parallel_calls)

    def filter_with_legacy_function(self, predicate):
        """TF1's filter through a `Defun`-style function: here the same as filter."""
        return self.filter(predicate)

    def flat_map(self, map_func, name=None):
        return _Interleave(self, map_func, 1, 1)

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None, name=None):
        from tensorweave.data.readers import Refused
        cycle = interleave_cycle(cycle_length, num_parallel_calls)
        dataset = _parallel(_Interleave(self, map_func, cycle, int(block_length or 1)),
                            num_parallel_calls)
        calls = num_parallel_calls
        if isinstance(calls, int) and calls > cycle:   # TF refuses it when the iterator starts
            return Refused(dataset, "If `cycle_length` is set to a fixed value, "
                           "`num_parallel_calls` must be either `tf.data.AUTOTUNE` or a value "
                           "less than or equal to `cycle_length`. However, `num_parallel_calls`"
                           f" is {calls} and `cycle_length` is {cycle}")
        return dataset

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        return _parallel(_Batch(self, batch_size, drop_remainder), num_parallel_calls)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None):
        from tensorweave.data.batching import PaddedBatch
        return PaddedBatch(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def unbatch(self, name=None):
        from tensorweave.data.batching import Unbatch
        return Unbatch(self)

    def reduce(self, initial_state, reduce_func, name=None):
        """The state after folding every element in order: `reduce_func(state, element)`
        returns the next state, from `initial_state` (tensors; see data/reduce.py)."""
        from tensorweave.data.reduce import reduce_dataset
        return reduce_dataset(self, initial_state, reduce_func, name)

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        """Windows of `size` elements, one starting every `shift` (default `size`) elements,
        taking every `stride`-th: each window is a (structure of) dataset(s), which flat_map or
        interleave turn back into tensors. The last windows are shorter unless
        `drop_remainder`. The elements of one window must share their shapes (they travel
        stacked)."""
        return _Window(self, size, shift, stride, drop_remainder)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        return _Shuffle(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count=None, name=None):
        return _Counted(self, "repeat", -1 if count is None else count)

    def take(self, count, name=None):
        return _Counted(self, "take", count)

    def skip(self, count, name=None):
        return _Counted(self, "skip", count)

    def prefetch(self, buffer_size, name=None):
        return _Counted(self, "prefetch", buffer_size)

    def shard(self, num_shards, index, name=None):
        """Every `num_shards`-th element, starting at element `index`: one worker's share.

        Raises (when iterated) InvalidArgumentError unless num_shards > 0 and
        0 <= index < num_shards, in TensorFlow's words."""
        return _Shard(self, num_shards, index)

    def cache(self, filename="", name=None):
        return _Cache(self, filename)

    def apply(self, transformation_func):
        return transformation_func(self)

    def __iter__(self):
        """Python iteration is TensorFlow's in eager mode or a tf.function only."""
        raise RuntimeError("`tf.data.Dataset` only supports Python-style iteration in eager "
                           "mode or within tf.function.")

    def as_numpy_iterator(self):
        """Eager-only in TensorFlow; graph-mode programs read elements through an iterator."""
        raise RuntimeError("`tf.data.Dataset.as_numpy_iterator()` is only supported in eager "
                           "mode.")

    # --- iterators -----------------------------------------------------------------------------
    def make_one_shot_iterator(self):
        from tensorweave.data.iterator_ops import make_one_shot_iterator
        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        from tensorweave.data.iterator_ops import make_initializable_iterator
        return make_initializable_iterator(self, shared_name)


def pipeline_tensor(dataset: Dataset, name=None) -> tuple[Tensor, list[Tensor]]:
    """The DatasetPipeline tensor of `dataset` in the default graph, and the tensors it reads."""
    builder = PipelineBuilder([])
    root = dataset._dataset_spec(builder)
    description = json.dumps({"root": root, "functions": builder.functions})
    flat = flat_specs(tensor_structure(dataset, "An iterator"))
    tensor = data_ops.dataset_pipeline(description, builder.tensors, [s.dtype for s in flat],
                                       [s.shape for s in flat], name=name)
    return tensor, builder.tensors


class UnaryDataset(Dataset):
    """A dataset made from one input dataset; its spec names the input's spec."""

    _parallel_calls = None   # the int64 num_parallel_calls tensor, checked when run

    def __init__(self, input_dataset: Dataset, structure=None):
        self._input = input_dataset
        self._structure = structure if structure is not None else input_dataset._structure

    def _spec(self, builder, kind: str, **fields) -> dict:
        spec = {"kind": kind, "input": self._input._dataset_spec(builder), **fields}
        if self._parallel_calls is not None:
            spec["parallel_calls"] = builder.arg(self._parallel_calls)
        return spec


def interleave_cycle(cycle_length, num_parallel_calls) -> int:
    """TF 2.21's cycle length: the given one, else (None or AUTOTUNE) the CPUs without
    num_parallel_calls, a third of them (rounded up) with AUTOTUNE calls, and no more than the
    calls' number otherwise."""
    from tensorweave.data.readers import schedulable_cpus
    if cycle_length not in (None, _AUTOTUNE):
        return int(cycle_length)
    cpus = schedulable_cpus()
    if num_parallel_calls is None or not isinstance(num_parallel_calls, int):
        return cpus
    if num_parallel_calls == _AUTOTUNE:
        return -(-cpus // 3)
    return max(min(num_parallel_calls, cpus), 1)


def _parallel(dataset: UnaryDataset, num_parallel_calls) -> UnaryDataset:
    """`dataset` with its `num_parallel_calls`, if given: a hint whose value is checked when
    the pipeline starts (positive or AUTOTUNE), as TensorFlow checks it."""
    if num_parallel_calls is not None:
        dataset._parallel_calls = int64_arg(num_parallel_calls, "num_parallel_calls")
    return dataset


class _Zip(Dataset):
    def __init__(self, datasets):
        self._datasets = datasets
        self._structure = nest.map_structure(lambda d: d._structure, datasets)

    def _dataset_spec(self, builder):
        return {"kind": "zip",
                "inputs": [d._dataset_spec(builder) for d in nest.flatten(self._datasets)]}


class _Concatenate(Dataset):
    def __init__(self, first: Dataset, second: Dataset):
        self._parts = (first, second)
        self._structure = merge_specs(first._structure, second._structure)

    def _dataset_spec(self, builder):
        return {"kind": "concatenate", "inputs": [d._dataset_spec(builder) for d in self._parts]}


class _Map(UnaryDataset):
    def __init__(self, input_dataset, map_func):
        traced = _function.trace(map_func, input_dataset._structure, get_default_graph(),
                                 "Dataset.map()")
        if any(isinstance(r, Dataset) for r in nest.flatten(traced.result)):
            raise TypeError("The `map_func` of Dataset.map() returned a Dataset; use flat_map "
                            "or interleave to produce datasets.")
        self._traced = traced
        super().__init__(input_dataset, nest.map_structure(spec_of, traced.result))

    def _dataset_spec(self, builder):
        spec = self._spec(builder, "map")
        return builder.function(self._traced, flat_tensors(self._traced.result), spec)


class _Filter(UnaryDataset):
    def __init__(self, input_dataset, predicate):
        traced = _function.trace(predicate, input_dataset._structure, get_default_graph(),
                                 "Dataset.filter()")
        result = traced.result
        if not isinstance(result, Tensor) or result.dtype.base_dtype != _dtypes.bool or \
                not result.shape.is_compatible_with([]):
            got = nest.map_structure(spec_of, result) if not isinstance(result, Dataset) \
                else result
            raise ValueError("Invalid `predicate`. `predicate` must return a `tf.bool` scalar "
                             f"tensor, but its return type is {got}.")
        self._traced = traced
        super().__init__(input_dataset)

    def _dataset_spec(self, builder):
        spec = self._spec(builder, "filter")
        return builder.function(self._traced, [self._traced.result], spec)


class _Interleave(UnaryDataset):
    def __init__(self, input_dataset, map_func, cycle_length: int, block_length: int):
        traced = _function.trace(map_func, input_dataset._structure, get_default_graph(),
                                 "Dataset.interleave()")
        if not isinstance(traced.result, Dataset):
            raise TypeError("The `map_func` argument must return a `Dataset` object. Got "
                            f"{type(traced.result)!r}.")
        if cycle_length < 1 or block_length < 1:
            raise ValueError("cycle_length and block_length must be positive.")
        self._traced = traced
        self._cycle, self._block = cycle_length, block_length
        super().__init__(input_dataset, traced.result._structure)

    def _dataset_spec(self, builder):
        inner_spec, outputs = nested_pipeline(builder, self._traced)
        spec = self._spec(builder, "interleave", inner=inner_spec, cycle_length=self._cycle,
                          block_length=self._block)
        return builder.function(self._traced, outputs, spec)


def nested_pipeline(builder: PipelineBuilder, traced) -> tuple[dict, list]:
    """The spec of the dataset `traced` returns, and the tensors of its graph that the spec's
    args index (the function's outputs): a pipeline built per call at run time."""
    graph = traced.graph
    inner = PipelineBuilder(builder.functions)
    with graph.as_default():
        inner_spec = traced.result._dataset_spec(inner)
        outputs = [graph.capture(t) if t.graph is not graph else t for t in inner.tensors]
    return inner_spec, outputs


def _batched(structure, batch_size, drop_remainder):
    size = constant_value(batch_size) if drop_remainder else None
    dim = int(size) if size is not None else None
    return nest.map_structure(
        lambda s: type(s)(_ts.TensorShape([dim]).concatenate(s.shape), s.dtype), structure)


class _Batch(UnaryDataset):
    def __init__(self, input_dataset, batch_size, drop_remainder):
        self._size = int64_arg(batch_size, "batch_size")
        self._drop = bool(drop_remainder)
        super().__init__(input_dataset, _batched(tensor_structure(input_dataset,
                                                                  "Dataset.batch()"),
                                                 self._size, self._drop))

    def _dataset_spec(self, builder):
        sparse = sparse_starts(self._input._structure)
        return self._spec(builder, "batch", args=[builder.arg(self._size)],
                          drop_remainder=self._drop, **({"sparse": sparse} if sparse else {}))


class _Window(UnaryDataset):
    def __init__(self, input_dataset, size, shift, stride, drop_remainder):
        structure = tensor_structure(input_dataset, "window")
        self._args = [int64_arg(size, "size"), int64_arg(size if shift is None else shift,
                                                           "shift"), int64_arg(stride, "stride")]
        self._drop = bool(drop_remainder)
        super().__init__(input_dataset, nest.map_structure(DatasetSpec, structure))

    def _dataset_spec(self, builder):
        sparse = sparse_starts(self._input._structure)
        return self._spec(builder, "window", args=builder.args(self._args),
                          drop_remainder=self._drop, **({"sparse": sparse} if sparse else {}))


class _SparseWindowSlices(Dataset):
    """The SparseTensors of one window (DatasetSpec.component_specs): row i of the indices
    and values, with the i-th dense shape."""

    def __init__(self, spec: SparseTensorSpec, tensors):
        self._tensors, self._structure = list(tensors), spec

    def _dataset_spec(self, builder):
        return {"kind": "sparse_slices", "args": builder.args(self._tensors), "sparse": [0],
                "row_shapes": True}


class _Shuffle(UnaryDataset):
    def __init__(self, input_dataset, buffer_size, seed, reshuffle):
        self._size = int64_arg(buffer_size, "buffer_size")
        self._seed2 = None
        if isinstance(seed, Tensor):
            # TensorFlow's get_seed: a tensor op seed taken modulo 2**31 - 1 in the graph (an
            # int64 one: others fail as there), beside the graph seed; the kernel turns (0, 0)
            # into (0, 2**31 - 1) as TF's `where` does.
            self._seed2 = convert_to_tensor(seed % (2**31 - 1), dtype=_dtypes.int64)
            seed = 0
        seeds = random_seed.get_seed(seed)
        self._seeds = None if seeds[0] is None else list(seeds)
        self._reshuffle = True if reshuffle is None else bool(reshuffle)
        super().__init__(input_dataset)

    def _dataset_spec(self, builder):
        seed2 = [] if self._seed2 is None else [self._seed2]
        return self._spec(builder, "shuffle", args=builder.args([self._size] + seed2),
                          seeds=self._seeds, reshuffle=self._reshuffle)


class _Counted(UnaryDataset):
    """repeat, take, skip and prefetch: one int64 count, the same element structure."""

    def __init__(self, input_dataset, kind: str, count):
        self._kind = kind
        self._count = int64_arg(count, "count" if kind != "prefetch" else "buffer_size")
        super().__init__(input_dataset)

    def _dataset_spec(self, builder):
        return self._spec(builder, self._kind, args=[builder.arg(self._count)])


class _Shard(UnaryDataset):
    def __init__(self, input_dataset, num_shards, index):
        self._args = [int64_arg(num_shards, "num_shards"), int64_arg(index, "index")]
        super().__init__(input_dataset)

    def _dataset_spec(self, builder):
        return self._spec(builder, "shard", args=[builder.arg(a) for a in self._args])


class _Cache(UnaryDataset):
    def __init__(self, input_dataset, filename):
        self._filename = convert_to_tensor(filename, dtype=_dtypes.string, name="filename")
        super().__init__(input_dataset)

    def _dataset_spec(self, builder):
        return self._spec(builder, "cache", args=[builder.arg(self._filename)])
