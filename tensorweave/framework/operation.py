"""Operation and Tensor: symbolic handles to the nodes and edges of a Graph.

They hold typed data only (op def, attrs, inputs, static shapes); protobuf is produced on demand
by `graph_io`. Python operators on tensors are installed by the op families (`ops/`), so this
module imports no op.
"""
from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from tensorweave.framework import tensor_shape as _ts

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_creation_site() -> tuple[str, int]:
    """The (file, line) of the first caller outside tensorweave: where the user made the op."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return ("<unknown>", 0)
    return (frame.f_code.co_filename, frame.f_lineno)


class Operation:
    """A node of a Graph: op type, inputs, attrs, device and outputs (TF1's tf.Operation)."""

    __slots__ = ("_graph", "_name", "_op_def", "_inputs", "_control_inputs", "_outputs",
                 "_attrs", "_device", "_id", "_creation_site", "_control_outputs",
                 "_control_flow_context",
                 "__weakref__")

    def __init__(self, graph, name: str, op_def, inputs, attrs: dict, output_dtypes,
                 output_shapes, control_inputs, device: str, creation_site):
        self._graph = graph
        self._name = name
        self._op_def = op_def
        self._inputs = tuple(inputs)
        self._control_inputs = list(control_inputs)
        self._attrs = attrs
        self._device = device
        self._creation_site = creation_site
        self._control_outputs: list[Operation] = []
        self._control_flow_context = None   # the cond/while context that built it
        self._id = 0
        self._outputs = [Tensor(self, i, dt, shp)
                         for i, (dt, shp) in enumerate(zip(output_dtypes, output_shapes))]
        for t in self._inputs:
            t._consumers.append(self)
        for c in self._control_inputs:
            c._control_outputs.append(self)

    # --- identity -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._op_def.name

    @property
    def op_def(self):
        return self._op_def

    @property
    def graph(self):
        return self._graph

    @property
    def device(self) -> str:
        return self._device

    def _set_device(self, device) -> None:
        self._device = device.to_string() if hasattr(device, "to_string") else (device or "")
        self._graph._mutated()

    @property
    def traceback(self) -> list[tuple[str, int]]:
        return [self._creation_site]

    @property
    def creation_site(self) -> tuple[str, int]:
        return self._creation_site

    # --- edges ----------------------------------------------------------------------------
    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return self._inputs

    @property
    def outputs(self) -> list[Tensor]:
        return list(self._outputs)

    def values(self) -> tuple[Tensor, ...]:
        return tuple(self._outputs)

    @property
    def control_inputs(self) -> list[Operation]:
        return list(self._control_inputs)

    def _add_control_input(self, op: Operation) -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)
            self._graph._mutated()

    def _add_control_inputs(self, ops) -> None:
        for op in ops:
            self._add_control_input(op)

    def _remove_control_input(self, op: Operation) -> None:
        self._control_inputs.remove(op)
        op._control_outputs.remove(self)
        self._graph._mutated()

    def _update_input(self, index: int, tensor: Tensor) -> None:
        """Rewires input `index` (while loops close their Merge → NextIteration edge so)."""
        old = self._inputs[index]
        old._consumers.remove(self)
        self._inputs = self._inputs[:index] + (tensor,) + self._inputs[index + 1:]
        tensor._consumers.append(self)
        self._graph._mutated()

    @property
    def node_def(self):
        from tensorweave.framework import graph_io
        return graph_io.node_def_of(self)

    # --- attrs ----------------------------------------------------------------------------
    def get_attr(self, name: str) -> Any:
        """The attr's value as TF1 returns it: string attrs (and lists of them) as bytes, a
        tensor attr (a Const's value) as a TensorProto, which tf.make_ndarray reads into a new
        array (the graph's own array is the runtime's, read-only once bound)."""
        try:
            value = self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation {self._name!r} has no attr named {name!r}.") from None
        spec = self._op_def.attrs.get(name)
        if spec is not None and spec.kind == "tensor" and isinstance(value, np.ndarray):
            from tensorweave.framework import graph_io
            return graph_io.ndarray_to_tensor_proto(value)
        if isinstance(value, str):
            return value.encode()
        if isinstance(value, list) and value and isinstance(value[0], str):
            return [v.encode() for v in value]
        return value

    @property
    def attrs(self) -> dict:
        return self._attrs

    def _set_attr(self, name: str, value: Any) -> None:
        self._attrs[name] = value
        self._graph._mutated()

    def colocation_groups(self) -> list[bytes]:
        groups = [s.encode() if isinstance(s, str) else s for s in self._attrs.get("_class", [])
                  if (s.decode() if isinstance(s, bytes) else s).startswith("loc:@")]
        return groups or [f"loc:@{self._name}".encode()]

    def run(self, feed_dict=None, session=None) -> None:
        """Runs this operation in `session` (or the default session)."""
        from tensorweave.runtime import session as _session
        _session.run_in_session(self, feed_dict, session)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self._name}' type={self.type}>"

    def __str__(self) -> str:
        return str(self.node_def)   # TF1 prints an operation as its NodeDef


class Reference:
    """What `Tensor.ref()` and `Variable.ref()` return: a dict key or set member standing
    for one object, equal only to references to the same object (TF's Reference)."""

    __slots__ = ("_wrapped",)

    def __init__(self, wrapped):
        self._wrapped = wrapped

    def deref(self):
        """The object this reference stands for."""
        return self._wrapped

    def __eq__(self, other):
        return isinstance(other, Reference) and self._wrapped is other._wrapped

    def __hash__(self):
        return id(self._wrapped)

    def __repr__(self):
        return f"<Reference wrapping {self._wrapped!r}>"


class Tensor:
    """A symbolic output of an Operation (TF1's tf.Tensor); compares and hashes by identity."""

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "__weakref__")

    # Lets NumPy defer to our reflected operators (np.float32(2) * tensor).
    __array_priority__ = 100

    def __init__(self, op: Operation, value_index: int, dtype, shape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = shape if shape is not None else _ts.unknown_shape()
        self._consumers: list[Operation] = []

    @property
    def op(self) -> Operation:
        return self._op

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._op._graph

    @property
    def name(self) -> str:
        return f"{self._op._name}:{self._value_index}"

    @property
    def device(self) -> str:
        return self._op._device

    @property
    def shape(self) -> _ts.TensorShape:
        return self._shape

    def get_shape(self) -> _ts.TensorShape:
        return self._shape

    @property
    def ndim(self) -> int:
        """The static rank; -1 when unknown (what TensorFlow 2.21's graph tensors report)."""
        rank = self._shape.ndims
        return -1 if rank is None else rank

    def ref(self) -> Reference:
        """A hashable handle on this tensor that compares by identity (`deref()` returns it)."""
        return Reference(self)

    experimental_ref = ref

    def set_shape(self, shape) -> None:
        """Refines the static shape; ValueError if `shape` is incompatible with it."""
        self._shape = self._shape.merge_with(_ts.as_shape(shape))

    def consumers(self) -> list[Operation]:
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        """Runs the graph up to this tensor in `session` (or the default) and returns its value."""
        from tensorweave.runtime import session as _session
        return _session.run_in_session(self, feed_dict, session)

    def _as_node_def_input(self) -> str:
        return self._op._name if self._value_index == 0 else self.name

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __str__(self) -> str:
        """TF1's text: the shape only when its rank is known, the device when set."""
        shape = f", shape={self._shape}" if self._shape.ndims is not None else ""
        device = f", device={self._op._device}" if self._op._device else ""
        return f'Tensor("{self.name}"{shape}, dtype={self._dtype.name}{device})'

    # TF1 graph tensors compare by identity, so they can key feed_dicts.
    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __bool__(self):
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
            "instead of `if t:` to test if a tensor is defined, and use TensorFlow ops such as "
            "tf.cond to execute subgraphs conditioned on the value of a tensor.")

    def __iter__(self):
        raise TypeError("Iterating over a symbolic `tf.Tensor` is not allowed: tensor objects "
                        "are only iterable when eager execution is enabled. To iterate over "
                        "this tensor use tf.map_fn or tf.unstack.")

    def __len__(self):
        raise TypeError(f"len is not well defined for symbolic Tensors ({self.name}). "
                        "Please call `x.shape` rather than `len(x)` for shape information.")

    @classmethod
    def _override_operator(cls, operator: str, func) -> None:
        """Installs a Python operator implemented by an op family (e.g. __add__ → AddV2)."""
        setattr(cls, operator, func)
