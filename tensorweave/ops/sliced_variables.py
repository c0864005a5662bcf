"""Variables stored as slices of a larger variable: PartitionedVariable and its bookkeeping.

A partitioned variable (TF1's `get_variable(..., partitioner=...)`) is several ordinary
Variables, `name/part_0 .. part_k`, each one slice of a full variable along one axis. Each part
carries a `SaveSliceInfo` (full name, full shape, offset, its shape) so a Saver writes it as a
slice of the full tensor (the `shape_and_slices` spec "10 5 4,3:0,5"), and a checkpoint can be
restored into any other partitioning. `PartitionedVariable` is the container `get_variable`
returns: it iterates over the parts and converts to their concatenation, so `matmul(x, v)`
and `embedding_lookup(v, ids)` work. `PartitionInfo` is what initializers that take a
`partition_info` argument see. TensorFlow keeps these in `ops/variables.py` and
`ops/variable_scope.py`; names and messages here are TensorFlow 2.21's.
"""
from __future__ import annotations

from tensorweave.framework import tensor_conversion
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.scopes import control_dependencies, name_scope

__all__: list = []   # TF 2.21 exports none of these under tf.compat.v1


class SaveSliceInfo:
    """Where a Variable lies in the full variable it is a slice of (TF's Variable.SaveSliceInfo).

    Args:
      full_name: the full variable's name (the checkpoint key of the slices).
      full_shape: the full variable's shape, a list of ints.
      var_offset: the slice's offset in the full variable, per dimension.
      var_shape: the slice's shape.
      save_slice_info_def: a SaveSliceInfoDef proto to read all four from instead.
      import_scope: a name scope prepended to the proto's full name.
    """

    def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None,
                 save_slice_info_def=None, import_scope=None):
        if save_slice_info_def is not None:
            from tensorweave.framework.meta_graph import prepend_name_scope
            full_name = prepend_name_scope(save_slice_info_def.full_name, import_scope)
            full_shape = list(save_slice_info_def.full_shape)
            var_offset = list(save_slice_info_def.var_offset)
            var_shape = list(save_slice_info_def.var_shape)
        self.full_name = full_name
        self.full_shape = full_shape
        self.var_offset = var_offset
        self.var_shape = var_shape

    @property
    def spec(self) -> str:
        """The slice as SaveV2/RestoreV2 spell it: full dims, then `offset,length` per dim."""
        full = " ".join(str(d) for d in self.full_shape) + " "
        return full + ":".join(f"{o},{s}" for o, s in zip(self.var_offset, self.var_shape))

    def to_proto(self, export_scope=None):
        """A SaveSliceInfoDef (the full name relative to `export_scope`), or None outside it."""
        from tensorweave.framework.meta_graph import strip_name_scope
        from tensorweave.protos import variable_pb2
        if export_scope is not None and not self.full_name.startswith(export_scope):
            return None
        return variable_pb2.SaveSliceInfoDef(
            full_name=strip_name_scope(self.full_name, export_scope),
            full_shape=self.full_shape, var_offset=self.var_offset, var_shape=self.var_shape)


class PartitionInfo:
    """A part's place in its partitioned variable, for initializers (TF's _PartitionInfo).

    Initializers whose `__call__` takes `partition_info` get one per part: variance-scaling
    initializers read `full_shape` so every part is drawn as a slice of the full variable.

    Args:
      full_shape: the full variable's shape, a list or tuple of ints.
      var_offset: the part's offset in it, per dimension.

    Raises:
      TypeError: either argument is not a list or tuple.
      ValueError: their lengths differ, or an offset is outside the shape.
    """

    def __init__(self, full_shape, var_offset):
        for arg, value in (("full_shape", full_shape), ("var_offset", var_offset)):
            if not isinstance(value, (list, tuple)):
                raise TypeError(f"`{arg}` must be a sequence (like tuple or list) instead of "
                                f"{type(value).__name__}")
        if len(var_offset) != len(full_shape):
            raise ValueError(f"Expected equal length, but `var_offset` is of length "
                             f"{len(var_offset)} while full_shape is of length "
                             f"{len(full_shape)}.")
        for offset, dim in zip(var_offset, full_shape):
            if offset < 0 or offset >= dim:
                raise ValueError(f"Expected 0 <= offset < shape but found offset={offset}, "
                                 f"shape={dim} for var_offset={var_offset}, "
                                 f"full_shape={full_shape}")
        self.full_shape = full_shape
        self.var_offset = var_offset

    def single_offset(self, shape) -> int:
        """The offset along the one partitioned dimension (0 if none is)."""
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self.var_offset[dim]

    def single_slice_dim(self, shape):
        """The one dimension in which a part of `shape` is smaller than the full variable.

        Raises:
          TypeError: `shape` is not a list or tuple.
          ValueError: its rank differs, it does not fit at the offset, or it is smaller in
            more than one dimension.
        """
        if not isinstance(shape, (list, tuple)):
            raise TypeError("`shape` must be a sequence (like tuple or list) instead of "
                            f"{type(shape).__name__}")
        if len(shape) != len(self.full_shape):
            raise ValueError(f"Expected equal length, but received shape={shape} of length "
                             f"{len(shape)} while self.full_shape={self.full_shape} is of "
                             f"length {len(self.full_shape)}.")
        for i, (offset, dim, full) in enumerate(zip(self.var_offset, shape, self.full_shape)):
            if offset + dim > full:
                raise ValueError(f"With self.var_offset={self.var_offset}, a partition of "
                                 f"shape={shape} would exceed self.full_shape="
                                 f"{self.full_shape} in dimension {i}.")
        smaller = [i for i, (dim, full) in enumerate(zip(shape, self.full_shape)) if dim != full]
        if len(smaller) > 1:
            raise ValueError(f"Cannot use single_slice_dim() with shape={shape} and "
                             f"self.full_shape={self.full_shape} since slice dim could be "
                             f"either dimension {smaller[1]} or {smaller[0]}.")
        return smaller[0] if smaller else None


def iter_slices(full_shape, num_slices: int, slice_dim: int):
    """(offset, shape) of each of `num_slices` contiguous parts of `full_shape` along
    `slice_dim`; the first `full_shape[slice_dim] % num_slices` parts are one larger."""
    excess = full_shape[slice_dim] % num_slices
    smallest = full_shape[slice_dim] // num_slices
    offset = [0] * len(full_shape)
    for i in range(num_slices):
        shape = list(full_shape)
        shape[slice_dim] = smallest + (1 if i < excess else 0)
        yield list(offset), shape
        offset[slice_dim] += shape[slice_dim]


class PartitionedVariable:
    """A variable made of Variables, each a slice of it along one axis (TF1's
    `tensorflow.python.ops.variables.PartitionedVariable`; not exported under tf.compat.v1).

    Iterating yields the parts in offset order; using it as a Tensor concatenates them.

    Args:
      name: the full variable's name.
      shape: its full shape.
      dtype: its dtype.
      variable_list: the parts, each with a SaveSliceInfo.
      partitions: the number of parts along each dimension.

    Raises:
      TypeError: `variable_list` or `partitions` is not a list or tuple.
      ValueError: no parts, a part without slice info or of another full shape, or
        partitions that are not positive or of the wrong length.
    """

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)):
            raise TypeError(f"variable_list is not a list or tuple: {variable_list}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError(f"partitions is not a list or tuple: {partitions}")
        if not all(p >= 1 for p in partitions):
            raise ValueError(f"partition values must be positive: {partitions}")
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        shape = _ts.as_shape(shape)
        if any(getattr(v, "_save_slice_info", None) is None for v in variable_list):
            raise ValueError(f"All variables must have a save_slice_info available: "
                             f"{[v.name for v in variable_list]}")
        if len(shape) != len(partitions):
            raise ValueError(f"len(shape) != len(partitions): {shape} vs. {partitions}")
        for v in variable_list:
            if shape != v._save_slice_info.full_shape:
                raise ValueError(f"All variables' full shapes must match shape: {shape}; but "
                                 f"full shapes were: {[v._save_slice_info.full_shape]}")
        self._variable_list = sorted(variable_list,
                                     key=lambda v: v._save_slice_info.var_offset)
        self._name = name
        self._shape = shape
        self._dtype = dtype
        self._partitions = list(partitions)

    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    shape = property(lambda self: self._shape)

    def get_shape(self) -> _ts.TensorShape:
        return self._shape

    def _get_variable_list(self) -> list:
        return self._variable_list

    def _get_partitions(self) -> list:
        return self._partitions

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self) -> int:
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError(f"Cannot get a length for {len(axes)} > 1 partition axes")
        return len(self._variable_list)

    def __repr__(self) -> str:
        return (f"<PartitionedVariable '{self._name}' shape={self._shape} "
                f"dtype={self._dtype.name} parts={len(self._variable_list)}>")

    def _partition_axes(self) -> list:
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def _concat(self):
        """The parts concatenated, named after the variable (keeps control dependencies)."""
        from tensorweave.ops.array_join_ops import concat
        from tensorweave.ops.array_ops import identity
        if len(self._variable_list) == 1:
            with name_scope(None):
                return identity(self._variable_list[0], name=self._name)
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot concatenate along more than one dimension: "
                                      f"{axes}.  Multi-axis partition concat is not supported")
        with name_scope(f"{self._name}/ConcatPartitions/"):
            concatenated = concat(self._variable_list, axes[0])
        with name_scope(None):
            return identity(concatenated, name=self._name)

    def as_tensor(self):
        """The full value: the parts concatenated, outside any control dependencies."""
        with control_dependencies(None):
            return self._concat()

    # --- assignment: one assign per part --------------------------------------------------
    def _apply_assign_fn(self, assign_fn, value) -> list:
        from tensorweave.ops.array_join_ops import split
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot do assign action along more than one "
                                      f"dimension: {axes}.  Multi-axis partition assign "
                                      "action is not supported ")
        if isinstance(value, list):
            if len(value) != len(self._variable_list):
                raise ValueError(f"Expected {len(self._variable_list)} values, one per part, "
                                 f"got {len(value)}")
            values = value
        elif isinstance(value, PartitionedVariable):
            values = list(value)
        else:
            sizes = [_ts.dimension_value(v.shape[axes[0]]) for v in self._variable_list]
            values = split(value, sizes, axis=axes[0])
        return [assign_fn(var, part) for var, part in zip(self._variable_list, values)]

    def _assign_each(self, method, value, use_locking, name, read_value) -> list:
        assigns = self._apply_assign_fn(
            lambda var, part: getattr(var, method)(part, use_locking=use_locking, name=name,
                                                   read_value=read_value), value)
        return assigns if read_value else [a.op if hasattr(a, "op") else a for a in assigns]

    def assign(self, value, use_locking=False, name=None, read_value=True) -> list:
        """Assigns `value` (a full tensor, a list of per-part values or a PartitionedVariable)
        to the parts; returns the per-part assigns (their ops if not `read_value`)."""
        return self._assign_each("assign", value, use_locking, name, read_value)

    def assign_add(self, value, use_locking=False, name=None, read_value=True) -> list:
        """Adds `value` to the parts, split as for `assign`."""
        return self._assign_each("assign_add", value, use_locking, name, read_value)

    def assign_sub(self, value, use_locking=False, name=None, read_value=True) -> list:
        """Subtracts `value` from the parts, split as for `assign`."""
        return self._assign_each("assign_sub", value, use_locking, name, read_value)


def _convert_partitioned(value, dtype=None, name=None, as_ref=False):
    """A PartitionedVariable used as a Tensor is its concatenation; it has no reference."""
    del name
    if dtype is not None and not dtype.is_compatible_with(value.dtype):
        raise ValueError(f"Incompatible type conversion requested to type '{dtype.name}' for "
                         f"variable of type '{value.dtype.name}'")
    if as_ref:
        raise NotImplementedError("PartitionedVariable doesn't support being used as a "
                                  "reference.")
    return value.as_tensor()


tensor_conversion.register_tensor_conversion_function_internal(
    PartitionedVariable, _convert_partitioned)
