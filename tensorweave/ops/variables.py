"""tf.Variable (TF1's reference variable) and the variable collections and initializers.

A Variable is three ops made together, as the seeds describe: the `VariableV2` node holding
the state, an `Assign` of the initial value (its initializer) colocated with it, and an
`Identity` named `read` that yields its value to the rest of the graph.
"""
from __future__ import annotations

import contextlib

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_conversion
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.meta_graph import prepend_name_scope, strip_name_scope
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import (
    colocate_with,
    colocate_with_pending,
    control_dependencies,
    device,
    name_scope,
)
from tensorweave.ops import state_ops
from tensorweave.ops.sliced_variables import SaveSliceInfo

__all__ = ["Variable", "VariableV1", "global_variables", "local_variables",
           "trainable_variables", "model_variables", "moving_average_variables",
           "all_variables", "variables_initializer", "global_variables_initializer",
           "local_variables_initializer", "initialize_all_variables",
           "initialize_variables", "initialize_local_variables",
           "report_uninitialized_variables", "assert_variables_initialized"]


def _identity(x, name):
    from tensorweave.ops.array_ops import identity
    return identity(x, name=name)


class Variable:
    """A mutable tensor whose value persists across `Session.run` calls (TF1's tf.Variable).

    Args:
      initial_value: a Tensor or value (or a callable returning one) for the initializer.
      trainable: if True (default), also added to TRAINABLE_VARIABLES.
      collections: collections to add to; default [GraphKeys.GLOBAL_VARIABLES].
      validate_shape: if False, the variable may take values of any shape.
      name: the variable's op name.
      dtype: converts the initial value to this dtype.
    """

    def __init__(self, initial_value=None, trainable=None, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=None, aggregation=None, shape=None):
        self._synchronization = synchronization
        self._aggregation = aggregation
        if variable_def is not None:
            self._init_from_graph(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        trainable = True if trainable is None else trainable
        collections = list(collections) if collections is not None else \
            [GraphKeys.GLOBAL_VARIABLES]
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        dtype = _dtypes.as_dtype(dtype) if dtype is not None else None
        # Like TF's init_scope: a variable made inside a cond or loop body (a layer's first
        # call there) is created outside all control flow, once.
        from tensorweave.ops.control_flow_context import building_in
        with building_in(None), control_dependencies(None), \
                name_scope(name, "Variable") as scope:
            # Like TF: an initial value built by a callable (get_variable's initializer) is
            # made without a device and, as the variable op, with `_class` "loc:@<name>"; a
            # given value is converted in the variable's scope under the current device.
            from_fn = callable(initial_value)
            with colocate_with_pending(scope[:-1]) if from_fn else contextlib.nullcontext():
                if from_fn:
                    with name_scope("Initializer"), device(None):
                        value = tensor_conversion.convert_to_tensor(
                            initial_value(), dtype=dtype, name="initial_value")
                else:
                    value = tensor_conversion.convert_to_tensor(initial_value, dtype=dtype,
                                                                name="initial_value")
                static = value.shape if validate_shape else _ts.unknown_shape()
                if shape is not None:
                    static = _ts.as_shape(shape)
                if validate_shape and not static.is_fully_defined():
                    raise ValueError(f"initial_value must have a shape specified: {value}")
                self._variable = state_ops.variable_op_v2(static, value.dtype.base_dtype,
                                                          name=scope)
            self._initial_value = value
            with colocate_with(self._variable.op):
                self._initializer_op = state_ops.assign(
                    self._variable, value, validate_shape=validate_shape).op
            # TF: the snapshot goes on the caching device if one is given, else with the op.
            with device(caching_device) if caching_device is not None else \
                    colocate_with(self._variable.op):
                self._snapshot = _identity(self._variable, name="read")
        self._trainable = trainable
        self._constraint = constraint
        self._caching_device = caching_device
        self._save_slice_info = None
        get_default_graph().add_to_collections(collections, self)

    def _init_from_graph(self, variable_def, import_scope):
        """Wraps the ops a VariableDef names (under `import_scope`) that already exist."""
        graph = get_default_graph()

        def element(name):
            return graph.as_graph_element(prepend_name_scope(name, import_scope))

        self._variable = element(variable_def.variable_name)
        self._initializer_op = element(variable_def.initializer_name)
        self._snapshot = element(variable_def.snapshot_name)
        initial = variable_def.initial_value_name
        self._initial_value = element(initial) if initial else None
        self._trainable = variable_def.trainable
        self._synchronization = variable_def.synchronization or None
        self._aggregation = variable_def.aggregation or None
        self._constraint = None
        self._caching_device = None
        self._save_slice_info = SaveSliceInfo(
            save_slice_info_def=variable_def.save_slice_info_def, import_scope=import_scope) \
            if variable_def.HasField("save_slice_info_def") else None

    def to_proto(self, export_scope=None):
        """The VariableDef naming this variable's ops (relative to `export_scope`).

        Returns None when the variable is not under `export_scope`.
        """
        if export_scope and not self._variable.name.startswith(export_scope):
            return None
        from tensorweave.protos import variable_pb2
        proto = variable_pb2.VariableDef(
            variable_name=strip_name_scope(self._variable.name, export_scope),
            initializer_name=strip_name_scope(self._initializer_op.name, export_scope),
            snapshot_name=strip_name_scope(self._snapshot.name, export_scope),
            trainable=self._trainable,
            synchronization=_enum_value(self._synchronization),
            aggregation=_enum_value(self._aggregation))
        if self._initial_value is not None:
            proto.initial_value_name = strip_name_scope(self._initial_value.name, export_scope)
        if self._save_slice_info is not None:
            proto.save_slice_info_def.MergeFrom(self._save_slice_info.to_proto(export_scope))
        return proto

    # --- a part of a partitioned variable (ops/sliced_variables.py) ---------------------------
    SaveSliceInfo = SaveSliceInfo

    def _set_save_slice_info(self, save_slice_info) -> None:
        """Marks this variable as the slice `save_slice_info` of a partitioned variable."""
        self._save_slice_info = save_slice_info

    def _get_save_slice_info(self):
        return self._save_slice_info

    @staticmethod
    def from_proto(variable_def, import_scope=None):
        """The Variable whose ops `variable_def` names, in the default graph."""
        return Variable(variable_def=variable_def, import_scope=import_scope)

    # --- identity ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._variable.name

    @property
    def op(self):
        return self._variable.op

    @property
    def graph(self):
        return self._variable.graph

    @property
    def device(self) -> str:
        return self._variable.device

    @property
    def dtype(self):
        return self._variable.dtype

    @property
    def shape(self) -> _ts.TensorShape:
        return self._variable.shape

    def get_shape(self) -> _ts.TensorShape:
        return self._variable.shape

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    def _as_graph_element(self):
        return self._variable

    def _ref(self) -> Tensor:
        return self._variable

    def value(self) -> Tensor:
        """The snapshot (`<name>/read`) of the variable's value."""
        return self._snapshot

    def read_value(self) -> Tensor:
        """A new read of the variable's value (honours enclosing control dependencies)."""
        return _identity(self._variable, name="read")

    def initialized_value(self) -> Tensor:
        """The variable's value if it is initialized, else its initial value (TF1's form: a
        cond on is_variable_initialized), for initial values that depend on other variables."""
        from tensorweave.ops.cond import cond
        with control_dependencies(None):
            return cond(state_ops.is_variable_initialized(self._variable), self.read_value,
                        lambda: self.initial_value)

    # --- updates ----------------------------------------------------------------------------
    def assign(self, value, use_locking=False, name=None, read_value=True):
        result = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return result if read_value else result.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        result = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return result if read_value else result.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        result = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return result if read_value else result.op

    def count_up_to(self, limit):
        """Increments this int variable until it reaches `limit` (see tf.count_up_to)."""
        return state_ops.count_up_to(self._variable, limit)

    def load(self, value, session=None) -> None:
        """Writes `value` into the variable by feeding its initializer (TF1's Variable.load)."""
        from tensorweave.runtime.session import get_default_session
        session = session or get_default_session()
        if session is None:
            raise ValueError("Either session argument should be provided or default session "
                             "should be established")
        session.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    def eval(self, session=None):
        """The variable's value in `session` (or the default session)."""
        return self._variable.eval(session=session)

    def set_shape(self, shape) -> None:
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    def __repr__(self) -> str:
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    # TF1 variables compare by identity and hash by id, like tensors.
    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    def __bool__(self):
        raise TypeError("Using a `tf.Variable` as a Python `bool` is not allowed.")

    def __getitem__(self, key):
        return self._snapshot[key]

    def __array__(self, dtype=None):
        raise TypeError("A symbolic tf.Variable cannot be converted to a NumPy array; run it "
                        "in a Session.")


VariableV1 = Variable


def _enum_value(value) -> int:
    """The proto enum number of a VariableSynchronization/VariableAggregation (0 if unset)."""
    return int(getattr(value, "value", value) or 0)


_OPERATORS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__",
              "__abs__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__rand__",
              "__or__", "__ror__", "__xor__", "__rxor__", "__invert__")


def _delegate(op_name):
    def operator(self, *args):
        return getattr(Tensor, op_name)(self._snapshot, *args)
    operator.__name__ = op_name
    return operator


for _name in _OPERATORS:
    setattr(Variable, _name, _delegate(_name))


def _convert_variable(value, dtype=None, name=None, as_ref=False):
    tensor = value._variable if as_ref else value._snapshot
    if dtype is not None and not dtype.is_compatible_with(tensor.dtype):
        raise ValueError(f"Incompatible type conversion requested to type '{dtype.name}' for "
                         f"variable of type '{tensor.dtype.name}'")
    return tensor


tensor_conversion.register_tensor_conversion_function_internal(Variable, _convert_variable)


# --- collections ------------------------------------------------------------------------------
def global_variables(scope=None) -> list:
    return get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def all_variables() -> list:
    return global_variables()


def local_variables(scope=None) -> list:
    return get_default_graph().get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope=None) -> list:
    return get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope=None) -> list:
    return get_default_graph().get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None) -> list:
    return get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    """An op running the initializers of `var_list` (a no-op when it is empty)."""
    from tensorweave.ops.control_flow_ops import group, no_op
    if var_list:
        return group(*[v.initializer for v in var_list], name=name)
    return no_op(name=name)


def initialize_variables(var_list, name="init"):
    return variables_initializer(var_list, name)


def global_variables_initializer():
    return variables_initializer(global_variables())


def initialize_all_variables():
    return global_variables_initializer()


def local_variables_initializer():
    return variables_initializer(local_variables())


def initialize_local_variables():
    return local_variables_initializer()


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor of the names of the variables not yet initialized."""
    from tensorweave.ops.array_index_ops import boolean_mask
    from tensorweave.ops.array_join_ops import stack
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.math_ops import logical_not
    if var_list is None:
        var_list = global_variables() + local_variables()
    with name_scope(name):
        if not var_list:
            return constant([], dtype=_dtypes.string)
        mask = logical_not(stack([state_ops.is_variable_initialized(v) for v in var_list]))
        names = constant([v.op.name for v in var_list])
        return boolean_mask(names, mask)


def assert_variables_initialized(var_list=None):
    """An op that fails when any of `var_list` is uninitialized."""
    from tensorweave.ops.array_join_ops import stack
    from tensorweave.ops.logging_ops import Assert
    from tensorweave.ops.reduction_ops import reduce_all
    if var_list is None:
        var_list = global_variables() + local_variables()
    if not var_list:
        return None
    ready = reduce_all(stack([state_ops.is_variable_initialized(v) for v in var_list]))
    return Assert(ready, [ready], name="assert_variables_initialized")
