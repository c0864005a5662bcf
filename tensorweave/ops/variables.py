"""tf.Variable (TF1's reference and resource variables) and the variable collections and
initializers.

A Variable is three ops made together, as the seeds describe: the `VariableV2` node holding
the state, an `Assign` of the initial value (its initializer) colocated with it, and an
`Identity` named `read` that yields its value to the rest of the graph. Its dtype is a ref
dtype (float32_ref).

With `use_resource=True` (or in a `variable_scope(use_resource=True)`, or from a VariableDef
that says so) tf.Variable makes a ResourceVariable instead, as TF1's variable creator does: a
`VarHandleOp` whose DT_RESOURCE output is the handle, an `AssignVariableOp` initializer, and
`Read/ReadVariableOp`, the value `sess.run(v)` fetches. Its dtype is the value's (float32);
every other read is a new ReadVariableOp, and an update returns the value read after it. The
state ops, scatter updates and optimizers' fused updates dispatch on the variable, so the same
programs run with either kind (ops/state_ops.py).
"""
from __future__ import annotations

import contextlib
import enum
import inspect

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_conversion
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.meta_graph import prepend_name_scope, strip_name_scope
from tensorweave.framework.operation import Reference, Tensor
from tensorweave.framework.scopes import (
    colocate_with,
    colocate_with_pending,
    control_dependencies,
    device,
    name_scope,
)
from tensorweave.ops import state_ops, variable_creators
from tensorweave.ops.sliced_variables import SaveSliceInfo

__all__ = ["Variable", "VariableV1", "VariableSynchronization", "VariableAggregation",
           "global_variables", "local_variables",
           "trainable_variables", "model_variables", "moving_average_variables",
           "all_variables", "variables_initializer", "global_variables_initializer",
           "local_variables_initializer", "initialize_all_variables",
           "initialize_variables", "initialize_local_variables",
           "report_uninitialized_variables", "assert_variables_initialized"]


def _identity(x, name):
    from tensorweave.ops.array_ops import identity
    return identity(x, name=name)


class VariableSynchronization(enum.Enum):
    """When a distributed variable's replicas are synchronized (TensorFlow's enum). A graph
    records it in the VariableDef; ON_READ also makes a variable non-trainable by default."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How a distributed variable's replicas combine their updates (TensorFlow's enum),
    recorded in the VariableDef."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


def validate_synchronization_aggregation_trainable(synchronization, aggregation, trainable,
                                                   name):
    """TensorFlow's defaults and checks: the enums (an enum or its number; AUTO and NONE when
    None) and `trainable`, which defaults to False for an ON_READ variable, else True."""
    aggregation = _mode(VariableAggregation, aggregation, "aggregation", name)
    synchronization = _mode(VariableSynchronization, synchronization, "synchronization", name)
    if trainable is None:
        trainable = synchronization != VariableSynchronization.ON_READ
    return synchronization, aggregation, trainable


def _mode(kind, value, what: str, name):
    """`value` as a member of the enum `kind` (from a member or its number; the first member
    when None), else ValueError in TensorFlow's words."""
    if value is None:
        return next(iter(kind))
    if isinstance(value, kind):
        return value
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"Invalid variable {what} mode: {value} for variable: {name}") from None


# What tf.Variable and get_variable make when neither they nor a variable_scope say: TF1's ref
# variables, or resource variables after tf.enable_resource_variables().
_default_use_resource = False


def set_default_use_resource(use_resource: bool) -> None:
    global _default_use_resource
    _default_use_resource = bool(use_resource)


def default_use_resource() -> bool:
    return _default_use_resource


class _CreatedByCreators(type):
    """Routes `Variable(...)` through the variable creators in effect, if any
    (ops/variable_creators.py); with none, construction is Python's own."""

    def __call__(cls, *args, **kwargs):
        creators = variable_creators.active_creators()
        if not creators:
            return super().__call__(*args, **kwargs)
        arguments = _INIT_SIGNATURE.bind(None, *args, **kwargs)
        arguments.apply_defaults()
        del arguments.arguments["self"]
        return variable_creators.create_through(
            creators, lambda **kw: super(_CreatedByCreators, cls).__call__(**kw),
            dict(arguments.arguments))


class Variable(metaclass=_CreatedByCreators):
    """A mutable tensor whose value persists across `Session.run` calls (TF1's tf.Variable).

    Args:
      initial_value: a Tensor or value (or a callable returning one) for the initializer.
      trainable: if True (default), also added to TRAINABLE_VARIABLES.
      collections: collections to add to; default [GraphKeys.GLOBAL_VARIABLES].
      validate_shape: if False, the variable may take values of any shape.
      name: the variable's op name.
      dtype: converts the initial value to this dtype.
      use_resource: if True, a ResourceVariable; None follows the enclosing variable_scope.
    """

    def __new__(cls, *args, **kwargs):
        """TF1's variable creator: a ResourceVariable when `use_resource` (else the enclosing
        variable_scope's) asks for one or `variable_def` describes one, else this class."""
        if cls is Variable:
            arguments = _INIT_SIGNATURE.bind(None, *args, **kwargs).arguments
            if _wants_resource(arguments.get("use_resource"), arguments.get("variable_def")):
                cls = ResourceVariable
        return super().__new__(cls)

    def __init__(self, initial_value=None, trainable=None, collections=None,
                 validate_shape=True, caching_device=None, name=None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=None, aggregation=None, shape=None):
        if variable_def is not None:
            self._init_from_graph(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        self._synchronization, self._aggregation, trainable = \
            validate_synchronization_aggregation_trainable(synchronization, aggregation,
                                                           trainable, name)
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
            self._build(scope, initial_value, dtype, validate_shape, shape, caching_device)
        self._trainable = trainable
        self._constraint = constraint
        self._caching_device = caching_device
        self._save_slice_info = None
        get_default_graph().add_to_collections(collections, self)

    def _build(self, scope, initial_value, dtype, validate_shape, shape, caching_device):
        """Makes the VariableV2 node `scope`, its initializer and its `read` snapshot."""
        # Like TF: an initial value built by a callable (get_variable's initializer) is made
        # without a device and, as the variable op, with `_class` "loc:@<name>"; a given value
        # is converted in the variable's scope under the current device.
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
        self._synchronization = VariableSynchronization(variable_def.synchronization)
        self._aggregation = VariableAggregation(variable_def.aggregation)
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
            synchronization=self._synchronization.value,
            aggregation=self._aggregation.value)
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
    def synchronization(self) -> VariableSynchronization:
        return self._synchronization

    @property
    def aggregation(self) -> VariableAggregation:
        return self._aggregation

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
        """The tensor that stands for the variable itself: a gradient's target, an update's
        input (the ref; a resource variable's handle)."""
        return self._variable

    def value(self) -> Tensor:
        """The snapshot (`<name>/read`) of the variable's value."""
        return self._snapshot

    def ref(self) -> Reference:
        """A hashable handle on this variable that compares by identity (see Tensor.ref)."""
        return Reference(self)

    experimental_ref = ref

    def read_value(self) -> Tensor:
        """A new read of the variable's value (honours enclosing control dependencies)."""
        return _identity(self._variable, name="read")

    def initialized_value(self) -> Tensor:
        """The variable's value if it is initialized, else its initial value (TF1's form: a
        cond on is_variable_initialized), for initial values that depend on other variables."""
        from tensorweave.ops.cond import cond
        with control_dependencies(None):
            return cond(state_ops.is_variable_initialized(self), self.read_value,
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
        return state_ops.count_up_to(self, limit)

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
        return self._as_graph_element().eval(session=session)

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
        """The slice `key` of the value; its `assign(x)` writes x into that slice."""
        from tensorweave.ops.array_slicing_ops import slice_helper
        return slice_helper(self.value(), key, var=self)

    def __array__(self, dtype=None):
        raise TypeError("A symbolic tf.Variable cannot be converted to a NumPy array; run it "
                        "in a Session.")


VariableV1 = Variable


_OPERATORS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__",
              "__abs__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__rand__",
              "__or__", "__ror__", "__xor__", "__rxor__", "__invert__")


def _delegate(op_name):
    def operator(self, *args):
        return getattr(Tensor, op_name)(self.value(), *args)
    operator.__name__ = op_name
    return operator


for _name in _OPERATORS:
    setattr(Variable, _name, _delegate(_name))


# --- sparse updates: the wrappers in ops/scatter_ops.py and ops/misc_array_ops.py --------------
_ROWS_DOC = """{summary} (TF's Variable.{method}).

    Args:
      sparse_delta: an IndexedSlices: `values` for the rows `indices` of this variable.
      use_locking: if True, the update holds the variable's lock.
      name: the op name.

    Returns:
      The variable after the update (the ref; a resource variable's value read after it).

    Raises:
      TypeError: if `sparse_delta` is not an IndexedSlices.
    """


def _rows_update(method: str, summary: str):
    """Variable.<method>(sparse_delta): tf.<method> of the delta's rows, as TF's does."""
    def update(self, sparse_delta, use_locking=False, name=None):
        if not isinstance(sparse_delta, IndexedSlices):   # (TF's two classes' words)
            raise TypeError(f"Argument `sparse_delta` must be a `tf.IndexedSlices`. Received "
                            f"arg: {sparse_delta}" if is_resource_variable(self) else
                            f"sparse_delta is not IndexedSlices: {sparse_delta}")
        from tensorweave.ops import scatter_ops
        return getattr(scatter_ops, method)(self, sparse_delta.indices, sparse_delta.values,
                                            use_locking=use_locking, name=name)
    update.__name__ = update.__qualname__ = method
    update.__doc__ = _ROWS_DOC.format(summary=summary, method=method)
    return update


_SLICES_DOC = """{summary} (TF's Variable.{method}).

    Args:
      indices: an int32/int64 Tensor whose last dimension K indexes the first K dimensions.
      updates: a Tensor of shape indices.shape[:-1] + shape[K:].
      name: the op name.

    Returns:
      The variable after the update (the ref; a resource variable's value read after it).
    """


def _slices_update(method: str, summary: str):
    """Variable.<method>(indices, updates): tf.<method> holding the variable's lock."""
    def update(self, indices, updates, name=None):
        from tensorweave.ops import misc_array_ops
        return getattr(misc_array_ops, method)(self, indices, updates, use_locking=True,
                                               name=name)
    update.__name__ = update.__qualname__ = method
    update.__doc__ = _SLICES_DOC.format(summary=summary, method=method)
    return update


for _method, _summary in (
        ("scatter_update", "Assigns the rows of `sparse_delta`; the last of repeated rows wins"),
        ("scatter_add", "Adds the rows of `sparse_delta`"),
        ("scatter_sub", "Subtracts the rows of `sparse_delta`"),
        ("scatter_mul", "Multiplies by the rows of `sparse_delta`"),
        ("scatter_div", "Divides by the rows of `sparse_delta`"),
        ("scatter_min", "Takes the minimum with the rows of `sparse_delta`"),
        ("scatter_max", "Takes the maximum with the rows of `sparse_delta`"),
        ("batch_scatter_update", "Assigns the rows of `sparse_delta` within each batch entry")):
    setattr(Variable, _method, _rows_update(_method, _summary))
for _method, _summary in (
        ("scatter_nd_update", "Assigns `updates` to the slices at `indices`; the last of "
                              "repeated indices wins"),
        ("scatter_nd_add", "Adds `updates` to the slices at `indices`"),
        ("scatter_nd_sub", "Subtracts `updates` from the slices at `indices`")):
    setattr(Variable, _method, _slices_update(_method, _summary))


class ResourceVariable(Variable):
    """A variable reached through a DT_RESOURCE handle (TF1's `use_resource=True` variable).

    Made by tf.Variable / tf.get_variable when asked for (see the module docstring), with
    TensorFlow's ops and names: `<name>` (VarHandleOp), `<name>/Initializer/...`,
    `<name>/IsInitialized/VarIsInitializedOp`, `<name>/Assign` (AssignVariableOp, the
    initializer) and `<name>/Read/ReadVariableOp`. `dtype` is the value's dtype, not a ref
    dtype; `handle` is the VarHandleOp's output.
    """

    def _build(self, scope, initial_value, dtype, validate_shape, shape, caching_device):
        """Makes the VarHandleOp `scope` and its ops; the initial value always goes under
        `Initializer`, colocated with the handle and without a device, as in TF."""
        handle_name = scope[:-1]
        with colocate_with_pending(handle_name):
            with name_scope("Initializer"), device(None):
                value = tensor_conversion.convert_to_tensor(
                    initial_value() if callable(initial_value) else initial_value,
                    dtype=dtype, name="initial_value")
            static = value.shape
            if shape is not None:
                if not static.is_compatible_with(shape):
                    raise ValueError(f"In this `tf.Variable` creation, the initial value's "
                                     f"shape ({static}) is not compatible with the explicitly "
                                     f"supplied `shape` argument ({_ts.as_shape(shape)}).")
                static = _ts.as_shape(shape)
            self._variable = state_ops.var_handle_op(static, value.dtype.base_dtype,
                                                     shared_name=handle_name, name=scope)
        handle = self._variable
        self._dtype, self._shape = value.dtype.base_dtype, static
        self._validate_shape = validate_shape
        self._initial_value = value
        with name_scope("IsInitialized"):
            state_ops.var_is_initialized_op(handle)   # TF's graph has it, whether used or not
        with name_scope("Assign") as assign_name, colocate_with(None, ignore_existing=True), \
                device(handle.device):
            self._initializer_op = state_ops.assign_variable_op(handle, value, name=assign_name)
        with name_scope("Read"):
            with device(handle.device):
                self._graph_element = state_ops.read_variable_op(handle, self._dtype)
            self._cached_value = None
            if caching_device is not None:
                with colocate_with(None, ignore_existing=True), device(caching_device):
                    self._cached_value = _identity(self._graph_element, name=None)
        self._snapshot = self._cached_value if caching_device is not None else \
            self._graph_element

    def _init_from_graph(self, variable_def, import_scope):
        """Also reads the dtype and shape from the VarHandleOp, and finds the ReadVariableOp
        behind the snapshot (an Identity on the caching device, if there was one)."""
        super()._init_from_graph(variable_def, import_scope)
        handle_op = self._variable.op
        self._dtype, self._shape = handle_op.get_attr("dtype"), handle_op.get_attr("shape")
        self._validate_shape = True
        read = self._snapshot
        while read.op.type != "ReadVariableOp":
            read = read.op.inputs[0]
        self._graph_element = read
        self._cached_value = None if read is self._snapshot else self._snapshot

    def to_proto(self, export_scope=None):
        proto = super().to_proto(export_scope)
        if proto is not None:
            proto.is_resource = True
        return proto

    @property
    def handle(self) -> Tensor:
        """The DT_RESOURCE tensor (the VarHandleOp's output) the variable's ops take."""
        return self._variable

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self) -> _ts.TensorShape:
        return self._shape

    def get_shape(self) -> _ts.TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        self._shape = self._shape.merge_with(shape)

    def _as_graph_element(self):
        return self._graph_element

    def _read(self) -> Tensor:
        return state_ops.read_variable_op(self._variable, self._dtype)

    def _read_after(self, op) -> Tensor:
        """The value read once `op` (an update) has run: what an update returns."""
        with control_dependencies([op]):
            return self._read()

    def value(self) -> Tensor:
        """A new read of the variable (`ReadVariableOp`), or its cached copy on the caching
        device."""
        if self._cached_value is not None:
            return self._cached_value
        with colocate_with(None, ignore_existing=True):
            return self._read()

    def read_value(self) -> Tensor:
        """A new read of the variable (`Read/ReadVariableOp`) through an Identity."""
        with name_scope("Read"):
            value = self._read()
        return _identity(value, name=None)

    def is_initialized(self, name=None) -> Tensor:
        """A scalar bool: whether the variable has been assigned in this session."""
        return state_ops.var_is_initialized_op(self._variable, name=name)

    def gather_nd(self, indices, name=None) -> Tensor:
        """tf.gather_nd of the variable read sparsely (ResourceGatherNd, in a "GatherNd" name
        scope by default, then an Identity, as TensorFlow builds it): only the named elements
        are read; the gradient is IndexedSlices of the variable for [N, 1] indices."""
        with name_scope("GatherNd" if name is None else name) as scope:
            value = state_ops.resource_gather_nd(self._variable, indices, self._dtype, scope)
        return _identity(value, name=None)

    def sparse_read(self, indices, name=None) -> Tensor:
        """Rows `indices` of the variable (ResourceGather, named `Gather` by default): what
        tf.gather and tf.nn.embedding_lookup read from a resource variable, without copying
        the rest of it; its gradient is IndexedSlices of the variable."""
        with name_scope("Gather" if name is None else name) as scope:
            return state_ops.resource_gather(self._variable, indices, self._dtype, name=scope)

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Assigns `value` (AssignVariableOp).

        Returns:
          The value read after the assignment, or with `read_value=False` the op.

        Raises:
          ValueError: if `value`'s static shape is incompatible with the variable's.
        """
        value = tensor_conversion.convert_to_tensor(value, dtype=self._dtype)
        if not self._shape.is_compatible_with(value.shape):
            raise ValueError(f"Cannot assign value to variable ' {self.name}': Shape mismatch."
                             f"The variable shape {self._shape}, and the assigned value shape "
                             f"{value.shape} are incompatible.")
        op = state_ops.assign_variable_op(
            self._variable, value,
            validate_shape=self._validate_shape and self._shape.is_fully_defined(), name=name)
        return self._read_after(op) if read_value else op

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        """Adds `delta` in place (AssignAddVariableOp); returns the value read after it, or
        with `read_value=False` the op."""
        return self._update(state_ops.assign_add_variable_op, delta, name, read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        """Subtracts `delta` in place (AssignSubVariableOp); returns the value read after it,
        or with `read_value=False` the op."""
        return self._update(state_ops.assign_sub_variable_op, delta, name, read_value)

    def _update(self, update_op, delta, name, read_value):
        op = update_op(self._variable,
                       tensor_conversion.convert_to_tensor(delta, dtype=self._dtype), name=name)
        return self._read_after(op) if read_value else op


_INIT_SIGNATURE = inspect.signature(Variable.__init__)


def _wants_resource(use_resource, variable_def) -> bool:
    """Whether tf.Variable makes a ResourceVariable: as the VariableDef says, else as
    `use_resource` says, else as the enclosing variable_scope says, else by the default
    (TF1's: no; `tf.enable_resource_variables()` changes it)."""
    if variable_def is not None:
        return variable_def.is_resource
    if use_resource is None:
        from tensorweave.ops.variable_scope import get_variable_scope
        use_resource = get_variable_scope().use_resource
    return _default_use_resource if use_resource is None else bool(use_resource)


def is_resource_variable(value) -> bool:
    """Whether `value` is a ResourceVariable (whose updates go through its handle)."""
    return isinstance(value, ResourceVariable)


def _convert_variable(value, dtype=None, name=None, as_ref=False):
    """The variable as an op input: itself (`_ref`) for a ref argument, else its value."""
    own = value.dtype if as_ref else value.dtype.base_dtype
    if dtype is not None and not dtype.is_compatible_with(own):
        raise ValueError(f"Incompatible type conversion requested to type '{dtype.name}' for "
                         f"variable of type '{own.name}'")
    return value._ref() if as_ref else value.value()


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
