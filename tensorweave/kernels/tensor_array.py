"""TensorArray kernels: per-step arrays of tensors, named by a handle, ordered by a flow scalar.

An array lives in its step's resource container (`StepState.resources`), so it is created
afresh in every run and freed when the step ends, as TensorFlow's step container does. The
handle is TF's legacy string pair [container, name]; the name is unique in the process
("TensorArray_7"). Gradient arrays are created once per (array, source) and add up repeated
writes of one index, which is how several reads of an element sum their gradients.
"""
from __future__ import annotations

import itertools
import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels.registry import kernel

_ids = itertools.count()
_CONTAINER = b"_tensor_arrays"
_CLEARED = object()   # the slot of an element read with clear_after_read
_FLOW = np.float32(0.0)


def _shape_tuple(shape):
    """A TensorShape attr as a tuple of ints/None, or None for an unknown rank."""
    return None if shape.ndims is None else tuple(shape.as_list())


def _compatible(a, b) -> bool:
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _defined(shape) -> bool:
    return shape is not None and None not in shape


class TensorArrayState:
    """One array's elements and flags; `lock` serializes ops of parallel loop iterations."""

    def __init__(self, name, dtype, size, element_shape, dynamic_size, clear_after_read,
                 identical_shapes, aggregate=False):
        self.name = name
        self.dtype = dtype
        self.values: list = [None] * size
        self.element_shape = element_shape
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.identical_shapes = identical_shapes
        self.aggregate = aggregate
        self.size_fixed = False
        self.closed = False
        self.lock = threading.Lock()

    def check_open(self):
        if self.closed:
            raise invalid_argument(f"TensorArray {self.name} has already been closed.")

    def grow_to(self, size: int):
        """Resizes a dynamic array so that `size` elements fit."""
        if size > len(self.values):
            if self.size_fixed:
                raise invalid_argument(f"TensorArray {self.name}: Could not resize to size {size} "
                                       "because its size has been marked fixed (a gradient of it "
                                       "was requested).")
            self.values.extend([None] * (size - len(self.values)))

    def write(self, index: int, value) -> None:
        name = self.name
        if index < 0 or index >= len(self.values):
            if index < 0 or not self.dynamic_size:
                raise invalid_argument(f"TensorArray {name}: Tried to write to index {index} but "
                                       f"array is not resizeable and size is: {len(self.values)}")
            self.grow_to(index + 1)
        shape = value.shape
        if not _compatible(shape, self.element_shape):
            raise invalid_argument(f"TensorArray {name}: Could not write to TensorArray index "
                                   f"{index} because the value shape is {dims_text(shape)} which "
                                   "is incompatible with the TensorArray's inferred element shape: "
                                   f"{dims_text(self.element_shape, '<unknown>')} (consider "
                                   "setting infer_shape=False).")
        if self.identical_shapes:
            self.element_shape = shape
        old = self.values[index]
        if old is None:
            self.values[index] = value
        elif not self.aggregate:
            raise invalid_argument(f"TensorArray {name}: Could not write to TensorArray index "
                                   f"{index} because it has already been written to.")
        elif old is _CLEARED:
            raise invalid_argument(f"TensorArray {name}: Could not aggregate to TensorArray index "
                                   f"{index} because it has already been read.")
        elif old.shape != shape:
            raise invalid_argument(f"TensorArray {name}: Could not aggregate to TensorArray index "
                                   f"{index} because the existing shape is {dims_text(old.shape)} "
                                   f"but the new input shape is {dims_text(shape)}.")
        else:
            self.values[index] = old + value

    def read(self, index: int, xp):
        """Element `index`; zeros if it was never written but its shape is known."""
        if index < 0 or index >= len(self.values):
            raise invalid_argument(f"Tried to read from index {index} but array size is: "
                                   f"{len(self.values)}")
        value = self.values[index]
        if value is _CLEARED:
            raise invalid_argument(f"TensorArray {self.name}: Could not read index {index} twice "
                                   "because it was cleared after a previous read (perhaps try "
                                   "setting clear_after_read = false?).")
        if value is None:
            if not _defined(self.element_shape):
                raise invalid_argument(
                    f"TensorArray {self.name}: Could not read from TensorArray index {index}."
                    f"  Furthermore, the element shape is not fully defined: "
                    f"{dims_text(self.element_shape, '<unknown>')}.  It is possible you are "
                    "working with a resizeable TensorArray and stop_gradients is not allowing "
                    "the gradients to be written.  If you set the full element_shape property on "
                    "the forward TensorArray, the proper all-zeros tensor will be returned "
                    "instead of incurring this error.")
            return xp.zeros(self.element_shape, self.dtype)
        if self.clear_after_read:
            self.values[index] = _CLEARED
        return value


def _lookup(step, handle, dtype=None) -> TensorArrayState:
    try:
        ta = step.resources[handle[1]]
    except KeyError:
        raise errors.NotFoundError(None, None, f"Container {handle[0].decode()} does not "
                                   f"exist. (Could not find resource: {handle[0].decode()}/"
                                   f"{handle[1].decode()})") from None
    ta.check_open()
    if dtype is not None and dtype != ta.dtype:
        raise invalid_argument(f"TensorArray dtype is {np.dtype(ta.dtype).name} but Op requested "
                               f"dtype {np.dtype(dtype).name}.")
    return ta


def _new_handle(step, ta: TensorArrayState):
    key = ta.name.encode()
    step.resources[key] = ta
    return np.array([_CONTAINER, key], dtype=object)


def _np(dtype):
    return dtype.as_numpy_dtype


@kernel("TensorArrayV3", needs_step=True)
class TensorArrayKernel:
    """Creates the step's array: a handle and the initial flow."""

    def __init__(self, ctx):
        a = ctx.attrs
        self.args = (_np(a["dtype"]), _shape_tuple(a["element_shape"]), a["dynamic_size"],
                     a["clear_after_read"], a["identical_element_shapes"])
        self.prefix = a["tensor_array_name"] or ctx.node_name

    def compute(self, ctx, step, size):
        size = int(size)
        if size < 0:
            raise invalid_argument(f"Size should be >= 0, got: {size}")
        ta = TensorArrayState(f"{self.prefix}_{next(_ids)}", self.args[0], size, *self.args[1:])
        return _new_handle(step, ta), _FLOW


@kernel("TensorArrayGradV3", needs_step=True)
class TensorArrayGradKernel:
    """The gradient array of (handle, source), created once per step and pair."""

    def __init__(self, ctx):
        self.suffix = "@" + ctx.attrs["source"]

    def compute(self, ctx, step, handle, flow):
        fwd = _lookup(step, handle)
        name = fwd.name + self.suffix
        with fwd.lock:
            grad = step.resources.get(name.encode())
            if grad is None:
                fwd.size_fixed = True
                grad = TensorArrayState(name, fwd.dtype, len(fwd.values), fwd.element_shape,
                                        False, True, fwd.identical_shapes, aggregate=True)
                handle = _new_handle(step, grad)
            else:
                handle = np.array([_CONTAINER, name.encode()], dtype=object)
        return handle, flow


class _TypedKernel:
    """Base of the element ops: the op's dtype attr, parsed once."""

    def __init__(self, ctx):
        self.dtype = _np(ctx.attrs.get("dtype") or ctx.attrs["T"])


@kernel("TensorArrayWriteV3", needs_step=True)
class TensorArrayWriteKernel(_TypedKernel):
    def compute(self, ctx, step, handle, index, value, flow):
        ta = _lookup(step, handle, self.dtype)
        with ta.lock:
            ta.write(int(index), ctx.xp.asarray(value))
        return flow


@kernel("TensorArrayReadV3", needs_step=True)
class TensorArrayReadKernel(_TypedKernel):
    def compute(self, ctx, step, handle, index, flow):
        ta = _lookup(step, handle, self.dtype)
        with ta.lock:
            return ta.read(int(index), ctx.xp)


def _stack(ta, values, element_shape, xp, what):
    """Stacks gathered elements; all must have one shape (TF's message names the first odd one)."""
    if not values:
        shape = element_shape if element_shape is not None else ta.element_shape
        if not _defined(shape):
            raise errors.UnimplementedError(
                None, None, "TensorArray has size zero, but element shape "
                f"{dims_text(shape, '<unknown>')} is not fully defined. Currently only static "
                f"shapes are supported when {what} zero-size TensorArrays.")
        return xp.zeros((0,) + shape, ta.dtype)
    first = values[0].shape
    for i, v in enumerate(values):
        if v.shape != first:
            raise invalid_argument("TensorArray has inconsistent shapes.  Index 0 has shape: "
                                   f"{dims_text(first)} but index {i} has shape: "
                                   f"{dims_text(v.shape)}")
    return xp.stack(values)


@kernel("TensorArrayGatherV3", needs_step=True)
class TensorArrayGatherKernel(_TypedKernel):
    def __init__(self, ctx):
        super().__init__(ctx)
        self.element_shape = _shape_tuple(ctx.attrs["element_shape"])

    def compute(self, ctx, step, handle, indices, flow):
        ta = _lookup(step, handle, self.dtype)
        with ta.lock:
            values = [ta.read(int(i), ctx.xp) for i in np.ravel(indices)]
            return _stack(ta, values, self.element_shape, ctx.xp, "packing")


@kernel("TensorArrayScatterV3", needs_step=True)
class TensorArrayScatterKernel(_TypedKernel):
    def compute(self, ctx, step, handle, indices, value, flow):
        ta = _lookup(step, handle, self.dtype)
        indices = np.ravel(indices)
        value = ctx.xp.asarray(value)
        if value.ndim == 0 or value.shape[0] != indices.size:
            raise invalid_argument(f"Expected len(indices) == values.shape[0], but saw: "
                                   f"{indices.size} vs. {value.shape[0] if value.ndim else 0}")
        with ta.lock:
            if indices.size:
                top = int(indices.max())
                if ta.dynamic_size:
                    ta.grow_to(top + 1)
                elif top >= len(ta.values):
                    raise invalid_argument(f"Max scatter index must be < array size ({top} vs. "
                                           f"{len(ta.values)})")
            for i, index in enumerate(indices):
                ta.write(int(index), value[i])
        return flow


@kernel("TensorArrayConcatV3", needs_step=True)
class TensorArrayConcatKernel(_TypedKernel):
    def __init__(self, ctx):
        super().__init__(ctx)
        self.except0 = _shape_tuple(ctx.attrs["element_shape_except0"])

    def compute(self, ctx, step, handle, flow):
        ta = _lookup(step, handle, self.dtype)
        xp = ctx.xp
        with ta.lock:
            values = [ta.read(i, xp) for i in range(len(ta.values))]
        if not values:
            if not _defined(self.except0):
                raise errors.UnimplementedError(
                    None, None, f"TensorArray has size zero, but element_shape_except0 "
                    f"{dims_text(self.except0, '<unknown>')} is not fully defined. Currently "
                    "only static shapes are supported when concatenating zero-size TensorArrays.")
            return xp.zeros((0,) + self.except0, ta.dtype), np.zeros(0, np.int64)
        for i, v in enumerate(values):
            if v.ndim == 0:
                raise invalid_argument(f"Concat saw a scalar shape at index {i} but requires at "
                                       "least vectors.  Did you mean to call stack?")
            if v.shape[1:] != values[0].shape[1:]:
                raise invalid_argument("TensorArray has inconsistent shapes.  Index 0 has "
                                       "(excepting dimension 0) shape: "
                                       f"{dims_text(values[0].shape[1:])} but index {i} has "
                                       f"(excepting dimension 0) shape: {dims_text(v.shape[1:])}")
        lengths = np.array([v.shape[0] for v in values], np.int64)
        return xp.concatenate(values), lengths


@kernel("TensorArraySplitV3", needs_step=True)
class TensorArraySplitKernel(_TypedKernel):
    def compute(self, ctx, step, handle, value, lengths, flow):
        ta = _lookup(step, handle, self.dtype)
        value = ctx.xp.asarray(value)
        lengths = np.ravel(lengths).astype(np.int64)
        if value.ndim == 0:
            raise invalid_argument("Expected value to be at least a vector, but received shape: []")
        total = int(lengths.sum())
        if total != value.shape[0]:
            raise invalid_argument("Expected sum of lengths to be equal to values.shape[0], but "
                                   f"sum of lengths is {total} and value's shape is: "
                                   f"{dims_text(value.shape)}")
        with ta.lock:
            if len(ta.values) != lengths.size:
                if not ta.dynamic_size:
                    raise invalid_argument("TensorArray's size is not equal to the size of lengths "
                                           f"({len(ta.values)} vs. {lengths.size}), and the "
                                           "TensorArray is not marked as dynamically resizeable")
                ta.grow_to(lengths.size)
            start = 0
            for i, n in enumerate(lengths):
                ta.write(i, value[start:start + n])
                start += n
        return flow


@kernel("TensorArraySizeV3", needs_step=True)
def _tensor_array_size(ctx, step, handle, flow):
    return np.int32(len(_lookup(step, handle).values))


@kernel("TensorArrayCloseV3", needs_step=True)
def _tensor_array_close(ctx, step, handle):
    ta = _lookup(step, handle)
    with ta.lock:
        ta.closed = True
        ta.values = []
