"""variable_scope and get_variable: named, shareable variables (TF1's variable store).

Each graph has a store mapping full variable names to Variables. `variable_scope` prefixes
names, carries defaults (initializer, regularizer, dtype, reuse, use_resource) and opens a
matching name scope; `get_variable` creates a variable under the current scope or, with reuse,
returns the existing one. With a partitioner (given or the scope's) it makes or finds a
PartitionedVariable: parts `name/part_<i>`, each an ordinary variable in the store and the
collections, with its slice of the full variable recorded for the Saver
(ops/sliced_variables.py).
"""
from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import inspect
import logging
import threading

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.ops.partitioned_variables import call_partitioner, slice_dim_and_num_slices
from tensorweave.ops.sliced_variables import (
    PartitionedVariable,
    PartitionInfo,
    SaveSliceInfo,
    iter_slices,
)
from tensorweave.ops.variables import (
    ResourceVariable,
    Variable,
    default_use_resource,
    validate_synchronization_aggregation_trainable,
)

__all__ = ["variable_scope", "get_variable", "get_variable_scope", "VariableScope",
           "AUTO_REUSE", "get_local_variable", "no_regularizer", "variable_op_scope"]


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


def no_regularizer(_):
    """Use as `regularizer=no_regularizer` to turn off an enclosing scope's regularizer."""
    return None


class VariableScope:
    """The defaults and name prefix of a `variable_scope` block."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, name_scope="", dtype=_dtypes.float32,
                 use_resource=None, constraint=None):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    constraint = property(lambda self: self._constraint)
    caching_device = property(lambda self: self._caching_device)

    def reuse_variables(self) -> None:
        self._reuse = True

    def set_initializer(self, initializer) -> None:
        self._initializer = initializer

    def set_regularizer(self, regularizer) -> None:
        self._regularizer = regularizer

    def set_dtype(self, dtype) -> None:
        self._dtype = dtype

    def set_use_resource(self, use_resource) -> None:
        self._use_resource = use_resource

    def set_partitioner(self, partitioner) -> None:
        self._partitioner = partitioner

    def get_variable(self, name, *args, **kwargs):
        with _scope_state().entered(self):
            return get_variable(name, *args, **kwargs)


class _VariableStore:
    """Full name -> Variable for one graph (parts of partitioned variables included, as
    `name/part_<i>`), full name -> PartitionedVariable, and how often each scope is open.

    The counts (TF1's `_VariableScopeStore.variable_scopes_count`) make `default_name` scopes
    unique: `dense`, `dense_1`, ... within one entry of the enclosing scope. Leaving a scope
    entered by name zeroes the counts of its sub-scopes, so re-entering `model` makes
    `model/dense` again (and, with reuse, finds its variables); leaving a scope entered as a
    VariableScope object restores the counts it found.
    """

    def __init__(self):
        self.vars: dict = {}
        self.partitioned_vars: dict = {}
        self.scope_counts: dict[str, int] = {}

    def open_scope(self, full_name: str) -> None:
        self.scope_counts[full_name] = self.scope_counts.get(full_name, 0) + 1

    def close_subscopes(self, full_name: str) -> None:
        prefix = f"{full_name}/" if full_name else ""
        for name in self.scope_counts:
            if name.startswith(prefix):
                self.scope_counts[name] = 0

    def unique_scope(self, prefix: str, name: str) -> str:
        """`name`, or `name_<i>` with the least i, whose scope under `prefix` is not open."""
        full = f"{prefix}/{name}" if prefix else name
        if not self.scope_counts.get(full):
            return name
        i = 1
        while self.scope_counts.get(f"{full}_{i}"):
            i += 1
        return f"{name}_{i}"


def variable_store(graph) -> _VariableStore:
    """The graph's store of variables made by get_variable."""
    return _store(graph)


def _store(graph):
    if graph._variable_store is None:
        graph._variable_store = _VariableStore()
    return graph._variable_store


class _ScopeState(threading.local):
    """The current VariableScope per thread and graph."""

    def __init__(self):
        self.current: dict = {}

    def get(self, graph) -> VariableScope:
        scope = self.current.get(id(graph))
        if scope is None or scope[0] is not graph:
            scope = self.current[id(graph)] = (graph, VariableScope(False))
        return scope[1]

    @contextlib.contextmanager
    def entered(self, scope: VariableScope):
        graph = get_default_graph()
        old = self.get(graph)
        self.current[id(graph)] = (graph, scope)
        try:
            yield scope
        finally:
            self.current[id(graph)] = (graph, old)


_state = _ScopeState()


def _scope_state() -> _ScopeState:
    return _state


def get_variable_scope() -> VariableScope:
    """The current VariableScope."""
    return _state.get(get_default_graph())


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None,
                   regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                   reuse=None, dtype=None, use_resource=None, constraint=None,
                   auxiliary_name_scope=True):
    """A context manager for defining ops that create variables (TF1's tf.variable_scope).

    Args:
      name_or_scope: a string or VariableScope; with None, `default_name` is made unique.
      reuse: True, AUTO_REUSE or None (inherit the enclosing scope's; a re-entered
        VariableScope keeps its own). False is treated like None, as in TF1.
      use_resource: if True, variables made in the scope (by get_variable or tf.Variable) are
        ResourceVariables; None inherits.
      custom_getter: called as custom_getter(getter=..., name=..., ...) by get_variable; an
        enclosing scope's getter is what its `getter` calls.
      initializer, regularizer, dtype, constraint, ...: defaults for variables in the scope
        (all but `constraint` inherited by nested scopes, as in TF).

    Yields:
      The VariableScope.
    """
    del values
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if name_or_scope is not None and not isinstance(name_or_scope, (str, VariableScope)):
        raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
    if name_or_scope is None and reuse is True:
        raise ValueError("reuse=True cannot be used without a name_or_scope")
    graph = get_default_graph()
    store = _store(graph)
    parent = _state.get(graph)
    if reuse is False:
        reuse = None
    inherited = parent.reuse if reuse is None else reuse
    if isinstance(name_or_scope, VariableScope):
        # Ops go to a fresh name scope named after the scope's last component; the scope
        # keeps the name scope it was first opened in (layers re-enter that one).
        full = name_or_scope.name
        short = full.rsplit("/", 1)[-1]
        name_ctx = name_scope(short) if short else None
        base = name_or_scope
        if reuse is None:
            inherited = base.reuse  # TF: a re-entered scope keeps its own, not the parent's
    else:
        base = parent
        # The name scope takes the name as given and is made unique by the graph; the
        # variable scope's name is made unique by the open-scope counts instead.
        short = name_or_scope
        if name_or_scope is None:
            short = store.unique_scope(parent.name, default_name)
        full = f"{parent.name}/{short}" if parent.name else short
        name_ctx = name_scope(name_or_scope if name_or_scope is not None else default_name)
    new = VariableScope(
        inherited, full,
        initializer=initializer if initializer is not None else base.initializer,
        regularizer=regularizer if regularizer is not None else base.regularizer,
        caching_device=caching_device or base.caching_device,
        partitioner=partitioner if partitioner is not None else base.partitioner,
        custom_getter=_wrap_custom_getter(custom_getter, base.custom_getter),
        dtype=_dtypes.as_dtype(dtype) if dtype is not None else base.dtype,
        use_resource=use_resource if use_resource is not None else base.use_resource,
        constraint=constraint)  # TF: the constraint is not inherited
    if not auxiliary_name_scope or name_ctx is None:
        current = graph.get_name_scope()
        name_ctx = contextlib.nullcontext(f"{current}/" if current else "")
    store.open_scope(full)
    saved_counts = dict(store.scope_counts) if base is name_or_scope else None
    try:
        with name_ctx as ns:
            new._name_scope = base.original_name_scope if base is name_or_scope else ns
            with _state.entered(new):
                yield new
    finally:
        if saved_counts is not None:
            store.scope_counts = saved_counts
        else:
            store.close_subscopes(full)


def _wrap_custom_getter(custom_getter, old_getter):
    """A scope's custom getter: the new one, calling the enclosing scope's (TF composes them
    so that the inner getter sees what the outer one returns)."""
    if custom_getter is None or old_getter is None:
        return custom_getter if custom_getter is not None else old_getter

    def wrapped(getter, *args, **kwargs):
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)
    return wrapped


def _accepts(fn, keyword: str, via_kwargs: bool = True) -> bool:
    """Whether `fn` takes `keyword` by name, or (with `via_kwargs`) has **kwargs: TF's
    fn_args / has_kwargs test for getters; initializers get partition_info only by name."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any((via_kwargs and p.kind is p.VAR_KEYWORD) or
               (p.name == keyword and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
               for p in params)


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=None, aggregation=None):
    """Gets an existing variable or creates a new one (TF1's tf.get_variable).

    With a partitioner (this one, else the scope's) and a shape that is not `[]`, the result
    is a PartitionedVariable: parts `<name>/part_<i>` split along one axis as the partitioner
    says (the first `dim % parts` parts one larger), each a Variable in the collections with
    its slice recorded for the Saver. A callable initializer is called once per part with the
    part's shape (and `partition_info=` if it takes that argument); a Tensor or value
    initializer is sliced. Reusing returns the same PartitionedVariable.

    Raises:
      ValueError: when creating a variable that exists without reuse, when reusing one that
        does not exist, when a reused variable's shape, dtype or partitioning differs from
        the request, when a partitioned and an unpartitioned variable share a name, or when
        the partitioner or its result is invalid.
    """
    scope = get_variable_scope()
    full = f"{scope.name}/{name}" if scope.name else name
    # As in TF: variable names depend on the variable scope only, so everything below (custom
    # getters and regularizers included) runs outside the caller's name scope.
    with name_scope(None):
        if dtype is not None and initializer is not None and not callable(initializer):
            from tensorweave.framework.tensor_conversion import convert_to_tensor
            init_dtype = convert_to_tensor(initializer).dtype.base_dtype
            if init_dtype != _dtypes.as_dtype(dtype):
                raise ValueError(f"Initializer type '{init_dtype}' and explicit dtype "
                                 f"'{_dtypes.as_dtype(dtype)}' don't match.")
        synchronization, aggregation, trainable = \
            validate_synchronization_aggregation_trainable(synchronization, aggregation,
                                                           trainable, full)
        kwargs = dict(
            shape=shape, dtype=_dtypes.as_dtype(dtype) if dtype is not None else scope.dtype,
            initializer=initializer if initializer is not None else scope.initializer,
            regularizer=regularizer if regularizer is not None else scope.regularizer,
            reuse=scope.reuse, trainable=trainable, collections=collections,
            caching_device=caching_device or scope.caching_device,
            partitioner=partitioner if partitioner is not None else scope.partitioner,
            validate_shape=validate_shape,
            use_resource=use_resource if use_resource is not None else scope.use_resource,
            synchronization=synchronization, aggregation=aggregation)
        constraint = constraint if constraint is not None else scope.constraint
        getter = custom_getter if custom_getter is not None else scope.custom_getter
        if getter is None:
            return _true_getter(full, constraint=constraint, **kwargs)
        # Getters written before `constraint` existed are not given it, as in TF.
        if _accepts(getter, "constraint"):
            kwargs["constraint"] = constraint
        return getter(getter=_true_getter, name=full, **kwargs)


@dataclasses.dataclass(frozen=True)
class _Request:
    """What get_variable asks for, the scope's defaults filled in (shared by every part)."""

    dtype: _dtypes.DType
    initializer: object
    regularizer: object
    reuse: object
    trainable: object
    collections: object
    validate_shape: bool
    use_resource: object
    constraint: object
    synchronization: object
    aggregation: object


def _request(scope, dtype, initializer, regularizer, reuse, trainable, collections,
             validate_shape, use_resource, constraint, synchronization,
             aggregation) -> _Request:
    return _Request(
        dtype=_dtypes.as_dtype(dtype) if dtype is not None else scope.dtype,
        initializer=initializer if initializer is not None else scope.initializer,
        regularizer=regularizer if regularizer is not None else scope.regularizer,
        reuse=reuse, trainable=trainable, collections=collections,
        validate_shape=validate_shape,
        use_resource=use_resource if use_resource is not None else scope.use_resource,
        constraint=constraint, synchronization=synchronization,
        aggregation=aggregation)


def _true_getter(name, shape=None, dtype=None, initializer=None, regularizer=None, reuse=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, constraint=None,
                 synchronization=None, aggregation=None):
    """The variable store's getter, last in any chain of custom getters: TF's parameters in
    TF's order, so getters may pass them by position."""
    full, scope = name, get_variable_scope()
    synchronization, aggregation, trainable = validate_synchronization_aggregation_trainable(
        synchronization, aggregation, trainable, full)
    store = _store(get_default_graph())
    is_scalar = isinstance(shape, (list, tuple)) and not shape
    partitioned = partitioner is not None and not is_scalar
    request = _request(scope, dtype, initializer, regularizer, reuse, trainable, collections,
                       validate_shape, use_resource, constraint, synchronization, aggregation)
    if partitioned:
        if not callable(partitioner):
            raise ValueError(f"Partitioner must be callable, but received: {partitioner}")
        with name_scope(None):
            return _get_partitioned_variable(store, full, shape, partitioner, request)
    # A partitioned variable can be reused without repeating its partitioner.
    if request.reuse is True and full in store.partitioned_vars:
        return _get_partitioned_variable(store, full, shape, None, request)
    if f"{full}/part_0" in store.vars:
        raise ValueError(f"No partitioner was provided, but a partitioned version of the "
                         f"variable was found: {full}/part_0. Perhaps a variable of the same "
                         "name was already created with partitioning?")
    return _get_single_variable(store, full, shape, request, request.initializer)


def _check_reused_dtype(kind: str, full: str, dtype, found) -> None:
    if not dtype.is_compatible_with(found):
        raise ValueError(f"Trying to {kind} variable {full}, but specified dtype "
                         f"{dtype.name} and found dtype {found.name}.")


def _already_exists(full, existing) -> ValueError:
    """TF's error for creating `full` again; a ref variable's points at where it was made."""
    message = (f"Variable {full} already exists, disallowed. Did you mean to set reuse=True or "
               "reuse=tf.AUTO_REUSE in VarScope?")
    if isinstance(existing, ResourceVariable):
        return ValueError(message)
    file, line = existing.op.creation_site  # TF lists up to 5 frames; we keep the user's
    return ValueError(f"{message} Originally defined at:\n\n  File \"{file}\", line {line}\n")


def _get_single_variable(store, full, shape, request: _Request, initializer,
                         partition_info=None):
    """The Variable `full` (a whole variable or one part), found or made."""
    from_value = initializer is not None and not callable(initializer)
    if shape is not None and from_value:
        raise ValueError("If initializer is a constant, do not specify shape.")
    reuse, dtype = request.reuse, request.dtype
    existing = store.vars.get(full)
    if existing is not None:
        if reuse is False or reuse is None:
            raise _already_exists(full, existing)
        if shape is not None and not existing.shape.is_compatible_with(_ts.as_shape(shape)):
            raise ValueError(f"Trying to share variable {full}, but specified shape "
                             f"{_ts.as_shape(shape)} and found shape {existing.shape}.")
        _check_reused_dtype("share", full, dtype, existing.dtype)
        return existing
    if reuse is True:
        raise ValueError(f"Variable {full} does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                         "VarScope?")
    init_value, dtype = _initial_value(full, shape, dtype, initializer, partition_info)
    graph = get_default_graph()
    with control_dependencies(None), name_scope(None):
        variable = Variable(initial_value=init_value, trainable=request.trainable,
                            collections=request.collections,
                            validate_shape=request.validate_shape, name=full, dtype=dtype,
                            use_resource=default_use_resource()
                            if request.use_resource is None else bool(request.use_resource),
                            constraint=request.constraint,
                            synchronization=request.synchronization,
                            aggregation=request.aggregation)
    store.vars[full] = variable
    # TF calls the regularizer once where it is (to see whether it returns a loss), then again
    # under the variable's Regularizer scope for the loss it keeps.
    if request.regularizer and request.regularizer(variable) is not None:
        with name_scope(f"{full}/Regularizer/"):
            graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES,
                                    request.regularizer(variable))
    return variable


def _get_partitioned_variable(store, full, shape, partitioner, request: _Request):
    """The PartitionedVariable `full`, found (checked against the request) or made."""
    initializer = request.initializer
    if full in store.vars:
        raise ValueError(f"A partitioner was provided, but an unpartitioned version of the "
                         f"variable was found: {full}.  Perhaps a variable of the same name "
                         "was already created without partitioning?")
    shape = _ts.as_shape(shape)
    if isinstance(initializer, Tensor):
        shape = shape.merge_with(initializer.get_shape())
    partitions = None
    if not request.reuse or partitioner:
        partitions = call_partitioner(partitioner, shape, request.dtype)
    existing = store.partitioned_vars.get(full)
    if existing is not None:
        return _check_reused_partitioned(existing, shape, partitions, request)
    if request.reuse is True:
        raise ValueError(f"PartitionedVariable {full} does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=False or "
                         "reuse=tf.AUTO_REUSE in VarScope?")
    slice_dim, num_slices = slice_dim_and_num_slices(partitions)
    _check_existing_parts(store, full, num_slices)
    parts, dtype = [], request.dtype
    for i, (offset, part_shape) in enumerate(iter_slices(shape.as_list(), num_slices,
                                                         slice_dim)):
        part_name = f"{full}/part_{i}"
        with name_scope(f"{part_name}/PartitionedInitializer"):
            init, init_shape, dtype = _part_initializer(initializer, offset, part_shape, dtype)
        with name_scope(None):
            part = _get_single_variable(store, part_name, init_shape,
                                        dataclasses.replace(request, dtype=dtype), init,
                                        PartitionInfo(shape.as_list(), offset))
        part._save_slice_info = SaveSliceInfo(full, shape.as_list(), offset, part_shape)
        parts.append(part)
    partitioned = PartitionedVariable(full, shape, dtype, parts, partitions)
    store.partitioned_vars[full] = partitioned
    return partitioned


def _check_reused_partitioned(existing, shape, partitions, request: _Request):
    name = existing.name
    if request.reuse is False or request.reuse is None:
        raise ValueError(f"Partitioned variable with name {name} already exists. Did you mean "
                         "to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
    if not shape.is_compatible_with(existing.get_shape()):
        raise ValueError(f"Trying to reuse partitioned variable {name}, but specified shape "
                         f"{shape} and found shape {existing.get_shape()}.")
    _check_reused_dtype("reuse partitioned", name, request.dtype, existing.dtype)
    if partitions is not None and existing._get_partitions() != list(partitions):
        raise ValueError(f"Trying to reuse partitioned variable {name}, but specified "
                         f"partitions {list(partitions)} and found partitions "
                         f"{existing._get_partitions()}.")
    return existing


def _check_existing_parts(store, full, num_slices) -> None:
    """Parts left in the store (by create_partitioned_variables) must match the new count."""
    if f"{full}/part_0" not in store.vars:
        return
    if f"{full}/part_{num_slices - 1}" not in store.vars:
        raise ValueError(f"Partitioner returned a different partitioning than what was already "
                         f"found.  Partitioner returned {num_slices} shards, and shard "
                         f"{full}/part_0 was found, but {full}/part_{num_slices - 1} was not.")
    if f"{full}/part_{num_slices}" in store.vars:
        raise ValueError(f"Partitioner returned a different partitioning than what was already "
                         f"found.  Partitioner returned {num_slices} shards, and shard "
                         f"{full}/part_0 was found, but so was the extra shard "
                         f"{full}/part_{num_slices}.")


def _part_initializer(initializer, offset, part_shape, dtype):
    """(initializer or value, shape to request, dtype) for one part: an initializer is called
    with the part's shape; a Tensor or value is sliced (a Tensor keeps its own dtype)."""
    from tensorweave.framework.tensor_conversion import convert_to_tensor
    from tensorweave.ops.array_slicing_ops import slice as slice_op
    if initializer is None or callable(initializer):
        return initializer, part_shape, dtype
    if isinstance(initializer, Tensor):
        return slice_op(initializer, offset, part_shape), None, initializer.dtype.base_dtype
    return slice_op(convert_to_tensor(initializer, dtype=dtype), offset, part_shape), None, dtype


def _initial_value(full, shape, dtype, initializer, partition_info=None):
    """(initial value, dtype to give the Variable): a callable building the value under the
    variable's Initializer scope, or the value itself (whose own dtype the Variable takes).

    Raises:
      ValueError: in TF's words, without a shape where one is needed.
    """
    from tensorweave.ops import init_ops
    if initializer is None:
        if shape is None:
            raise ValueError(f"Variable {full} did not get an initializer, so its `shape` "
                             "argument must be specified.")
        if dtype.is_floating:
            initializer = init_ops.glorot_uniform_initializer()
        elif dtype.is_integer or dtype.is_bool or dtype == _dtypes.string:
            initializer = init_ops.zeros_initializer()
        else:
            raise ValueError(f"An initializer for variable {full} of {dtype} is required")
    if not callable(initializer):
        return initializer, None
    if isinstance(initializer, type):
        initializer = initializer(dtype=dtype)
    shape = _ts.as_shape(shape) if shape is not None else None
    if shape is not None and shape.is_fully_defined():
        by_name = _accepts(initializer, "partition_info", via_kwargs=False)
        extra = {"partition_info": partition_info} if by_name else {}
        return (lambda: initializer(shape.as_list(), dtype=dtype, **extra)), dtype
    if _needs_no_arguments(initializer):
        return initializer, None
    raise ValueError("The initializer passed is not valid. It should be a callable with no "
                     "arguments and the shape should not be provided or an instance of "
                     "`tf.keras.initializers.*' and `shape` should be fully defined.")


def _needs_no_arguments(fn) -> bool:
    """Whether `fn` can be called without arguments."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in params)


def get_partitioned_variable(name, shape, dtype, initializer, trainable, collections,
                             partitioner):
    """The PartitionedVariable `<scope>/<name>` (the scope's name itself when `name` is None),
    made or reused as the scope's reuse says (TF's private _get_partitioned_variable, behind
    create_partitioned_variables).

    Raises:
      ValueError: the scope has a custom getter.
    """
    scope = get_variable_scope()
    if scope.custom_getter is not None:
        raise ValueError(
            "Private access to _get_partitioned_variable is not allowed when a custom getter "
            f"is set.  Current custom getter: {scope.custom_getter}.  It is likely that you're "
            "using create_partitioned_variables.  If so, consider instead using get_variable "
            "with a non-empty partitioner parameter instead.")
    full = "/".join(part for part in (scope.name, name) if part)
    synchronization, aggregation, trainable = validate_synchronization_aggregation_trainable(
        None, None, trainable, full)
    request = _request(scope, dtype, initializer, None, scope.reuse, trainable, collections,
                       True, None, scope.constraint, synchronization, aggregation)
    with name_scope(None):
        return _get_partitioned_variable(_store(get_default_graph()), full, shape, partitioner,
                                         request)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                       trainable=False, collections=None, **kwargs):
    """get_variable in LOCAL_VARIABLES (not saved, not trained)."""
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape, dtype, initializer, regularizer, False, collections,
                        **kwargs)


@contextlib.contextmanager
def variable_op_scope(values, name_or_scope, default_name=None, initializer=None,
                      regularizer=None, caching_device=None, partitioner=None,
                      custom_getter=None, reuse=None, dtype=None, use_resource=None,
                      constraint=None):
    """TF1's deprecated tf.variable_op_scope: tf.variable_scope(name_or_scope, default_name,
    values, ...)."""
    logging.getLogger("tensorflow").warning(
        "tf.variable_op_scope(values, name, default_name) is deprecated, use "
        "tf.variable_scope(name, default_name, values)")
    with variable_scope(name_or_scope, default_name=default_name, values=values,
                        initializer=initializer, regularizer=regularizer,
                        caching_device=caching_device, partitioner=partitioner,
                        custom_getter=custom_getter, reuse=reuse, dtype=dtype,
                        use_resource=use_resource, constraint=constraint) as scope:
        yield scope
