"""tf.TensorArray (TF1 graph mode): an immutable view (handle, flow) of a per-step array.

Each method that changes the array returns a new TensorArray with the new flow; all views made
from one array share its static facts (element shape inferred from writes, first-write
colocation), as in TensorFlow. `while_loop` carries a TensorArray by its flow:
`build_ta_with_new_flow` rebuilds the view from a loop's flow tensor.
"""
from __future__ import annotations

import contextlib

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import colocate_with, control_dependencies, device, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import tensor_array_ops as _ops

__all__ = ["TensorArray"]


class TensorArray:
    """Class wrapping dynamic-sized, per-time-step, write-once Tensor arrays.

    A TensorArray holds `size` tensors of one dtype, written once and (by default) read once,
    inside one `Session.run`. Ops on it are ordered by its `flow` tensor: every write returns a
    new TensorArray whose flow depends on the write. Used by `while_loop`, `map_fn`, `scan` and
    `dynamic_rnn` to collect per-iteration values.
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        """Constructs a new TensorArray or wraps an existing TensorArray handle.

        Args:
          dtype: the type of the elements.
          size: (int32 scalar) the array size; required unless `handle` is given.
          dynamic_size: whether writes past the end grow the array (default False).
          clear_after_read: whether reading an element frees it (default True), so that
            reading it twice is an error.
          tensor_array_name: the runtime name of the array (default: the op name).
          handle: an existing TensorArray handle to wrap (with `flow`).
          flow: the flow scalar of `handle`.
          infer_shape: whether all elements must share one shape, inferred from writes.
          element_shape: the (possibly partial) shape of every element.
          colocate_with_first_write_call: place the array with the first value written to it.
          name: a name for the operation.

        Raises:
          ValueError: if both or neither of `handle` and `size` are given, or other arguments
            conflict with `handle`.
        """
        if handle is not None:
            for value, what in ((tensor_array_name, "tensor_array_name"), (size, "size"),
                                (element_shape, "element_shape"),
                                (dynamic_size, "dynamic_size"),
                                (clear_after_read, "clear_after_read")):
                if value is not None and value != "":
                    raise ValueError(f"Cannot provide both a handle and {what} at the same time")
            if not isinstance(handle, Tensor):
                raise TypeError("Handle must be a Tensor")
            if flow is None:
                raise ValueError("flow must not be None if handle is not None.")
        elif size is None:
            raise ValueError("Size must be provided if handle is not provided")
        self._dtype = _dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._size = size
        self._colocate_with_first_write_call = colocate_with_first_write_call
        self._colocate_with = [] if colocate_with_first_write_call else None
        self._element_shape = [_ts.as_shape(element_shape) if element_shape is not None
                               else _ts.unknown_shape()]
        if handle is not None:
            self._handle, self._flow = handle, flow
            return
        with name_scope(name, "TensorArray", [handle, size, flow]) as scope:
            attrs = {"dtype": self._dtype, "element_shape": self._element_shape[0],
                     "dynamic_size": self._dynamic_size,
                     "clear_after_read": True if clear_after_read is None else clear_after_read,
                     "identical_element_shapes": infer_shape,
                     "tensor_array_name": tensor_array_name or ""}
            if colocate_with_first_write_call:
                # The op is placed with its first write (see _maybe_colocate_with).
                with device(None), colocate_with(None, ignore_existing=True):
                    self._handle, self._flow = apply_op(_ops.TensorArrayV3, [size], attrs,
                                                        name=scope)
            else:
                self._handle, self._flow = apply_op(_ops.TensorArrayV3, [size], attrs,
                                                    name=scope)

    def _as_flow(self) -> Tensor:
        """How cond and while_loop carry the array (ops/loop_vars.py)."""
        return self.flow

    def _with_flow(self, flow: Tensor) -> TensorArray:
        return build_ta_with_new_flow(self, flow)

    @property
    def flow(self) -> Tensor:
        """The flow Tensor forcing ops leading to this TensorArray state."""
        return self._flow

    @property
    def dtype(self):
        """The data type of this TensorArray."""
        return self._dtype

    @property
    def handle(self) -> Tensor:
        """The reference to the TensorArray."""
        return self._handle

    @property
    def element_shape(self) -> _ts.TensorShape:
        """The TensorShape of elements in this TensorArray (as inferred so far)."""
        return self._element_shape[0]

    def _check_element_shape(self, shape) -> None:
        """Raises ValueError for a shape incompatible with the elements'; merges it in."""
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected "
                             f"{self.element_shape} ")
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    def _check_dtype(self, value: Tensor) -> None:
        if value.dtype.base_dtype != self._dtype:
            raise errors.InvalidArgumentError(
                None, None, f"TensorArray dtype is {self._dtype.name} but Op is trying to write "
                f"dtype {value.dtype.base_dtype.name} ")

    def _maybe_colocate_with(self, value: Tensor):
        """Colocates with the first value written when `colocate_with_first_write_call`."""
        if not self._colocate_with_first_write_call:
            return contextlib.nullcontext()
        if not self._colocate_with:
            self._colocate_with.append(value)
        return colocate_with(self._colocate_with[0].op)

    def _with_flow(self, flow: Tensor) -> TensorArray:
        return build_ta_with_new_flow(self, flow)

    def identity(self) -> TensorArray:
        """A TensorArray with the same content, its flow passed through an Identity."""
        from tensorweave.ops.array_ops import identity
        return self._with_flow(identity(self._flow))

    def grad(self, source, flow=None, name=None) -> TensorArray:
        """The gradient TensorArray of this one for the gradient scope `source`."""
        from tensorweave.ops.array_ops import identity
        flow = self._flow if flow is None else flow
        with name_scope(name, "TensorArrayGrad", [self._handle]):
            with colocate_with(self._handle.op):
                g_handle, _ = apply_op(_ops.TensorArrayGradV3, [self._handle, flow],
                                       {"source": source})
                with control_dependencies([g_handle]):
                    flow = identity(flow, name="gradient_flow")
                g = TensorArray(self._dtype, handle=g_handle, flow=flow,
                                infer_shape=self._infer_shape,
                                colocate_with_first_write_call=False)
                g._element_shape = self._element_shape
                return g

    def read(self, index, name=None) -> Tensor:
        """Reads the element at `index` (an int32 scalar)."""
        value = apply_op(_ops.TensorArrayReadV3, [self._handle, index, self._flow],
                         {"dtype": self._dtype}, name=name)
        value.set_shape(self.element_shape)
        return value

    def write(self, index, value, name=None) -> TensorArray:
        """Writes `value` at `index`; returns the TensorArray after the write.

        Raises:
          ValueError: if `value`'s shape is incompatible with the elements' shape.
        """
        with name_scope(name, "TensorArrayWrite", [self._handle, index, value]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            self._check_dtype(value)
            self._check_element_shape(value.shape)
            with self._maybe_colocate_with(value):
                flow = apply_op(_ops.TensorArrayWriteV3, [self._handle, index, value,
                                                          self._flow], name=name)
        return self._with_flow(flow)

    def stack(self, name=None) -> Tensor:
        """All elements stacked into one tensor (shape [size] + element shape)."""
        from tensorweave.ops.array_creation_ops import range as _range
        with name_scope(name, "TensorArrayStack", [self._handle]):
            return self.gather(_range(0, self.size()), name=name)

    def gather(self, indices, name=None) -> Tensor:
        """The elements at `indices` stacked into one tensor."""
        return apply_op(_ops.TensorArrayGatherV3, [self._handle, indices, self._flow],
                        {"dtype": self._dtype, "element_shape": self.element_shape}, name=name)

    def concat(self, name=None) -> Tensor:
        """All elements concatenated along their first dimension."""
        dims = self.element_shape.as_list() if self.element_shape.ndims else None
        except0 = _ts.TensorShape(dims[1:]) if dims else _ts.unknown_shape()
        value, _ = apply_op(_ops.TensorArrayConcatV3, [self._handle, self._flow],
                            {"dtype": self._dtype, "element_shape_except0": except0}, name=name)
        if dims:
            size = constant_value(self.size()) if self._infer_shape else None
            dim0 = int(size) * dims[0] if size is not None and dims[0] is not None else None
            value.set_shape(_ts.TensorShape([dim0]).concatenate(except0))
        return value

    def unstack(self, value, name=None) -> TensorArray:
        """Writes the rows of `value` (split along dimension 0) as elements 0..n-1."""
        from tensorweave.ops.array_creation_ops import range as _range
        from tensorweave.ops.array_ops import shape as _shape
        with name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            return self.scatter(_range(0, _shape(value)[0]), value, name=name)

    def scatter(self, indices, value, name=None) -> TensorArray:
        """Writes `value[i]` at `indices[i]`; returns the TensorArray after the writes."""
        with name_scope(name, "TensorArrayScatter", [self._handle, value, indices]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            self._check_dtype(value)
            if value.shape.ndims:
                self._check_element_shape(_ts.TensorShape(value.shape.dims[1:]))
            with self._maybe_colocate_with(value):
                flow = apply_op(_ops.TensorArrayScatterV3, [self._handle, indices, value,
                                                            self._flow], name=name)
        return self._with_flow(flow)

    def split(self, value, lengths, name=None) -> TensorArray:
        """Splits `value` along dimension 0 into pieces of `lengths` rows, one per element."""
        from tensorweave.ops.math_unary_ops import cast
        with name_scope(name, "TensorArraySplit", [self._handle, value, lengths]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            self._check_dtype(value)
            with self._maybe_colocate_with(value):
                lengths_64 = cast(lengths, _dtypes.int64)
                known = constant_value(lengths_64)
                if value.shape.ndims and known is not None and known.size and \
                        known.max() == known.min():
                    self._check_element_shape(_ts.TensorShape([int(known[0])]).concatenate(
                        value.shape.dims[1:]))
                flow = apply_op(_ops.TensorArraySplitV3, [self._handle, value, lengths_64,
                                                          self._flow], name=name)
        return self._with_flow(flow)

    def size(self, name=None) -> Tensor:
        """The number of elements (a constant when the size is fixed and known)."""
        if not self._dynamic_size and self._size is not None:
            return convert_to_tensor(self._size, dtype=_dtypes.int32)
        return apply_op(_ops.TensorArraySizeV3, [self._handle, self._flow], name=name)

    def close(self, name=None):
        """Closes the TensorArray, freeing its elements; returns the op."""
        return apply_op(_ops.TensorArrayCloseV3, [self._handle], name=name)


def build_ta_with_new_flow(old_ta: TensorArray, flow: Tensor) -> TensorArray:
    """The TensorArray `old_ta` with `flow` as its flow (how loops carry TensorArrays)."""
    ta = TensorArray(old_ta.dtype, handle=old_ta.handle, flow=flow,
                     infer_shape=old_ta._infer_shape,
                     colocate_with_first_write_call=old_ta._colocate_with_first_write_call)
    ta._dynamic_size = old_ta._dynamic_size
    ta._size = old_ta._size
    ta._colocate_with = old_ta._colocate_with
    ta._element_shape = old_ta._element_shape
    return ta
