"""variable_scope and get_variable: named, shareable variables (TF1's variable store).

Each graph has a store mapping full variable names to Variables. `variable_scope` prefixes
names, carries defaults (initializer, regularizer, dtype, reuse) and opens a matching name
scope; `get_variable` creates a variable under the current scope or, with reuse, returns the
existing one. `partitioner` is accepted but partitioned variables are not supported (it raises).
"""
from __future__ import annotations

import contextlib
import enum
import threading

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.scopes import control_dependencies, name_scope

__all__ = ["variable_scope", "get_variable", "get_variable_scope", "VariableScope",
           "AUTO_REUSE", "get_local_variable", "no_regularizer"]


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
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    dtype = property(lambda self: self._dtype)
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

    def get_variable(self, name, *args, **kwargs):
        with _scope_state().entered(self):
            return get_variable(name, *args, **kwargs)


class _VariableStore:
    """Full name -> Variable for one graph, and how often each variable scope is open.

    The counts (TF1's `_VariableScopeStore.variable_scopes_count`) make `default_name` scopes
    unique: `dense`, `dense_1`, ... within one entry of the enclosing scope. Leaving a scope
    entered by name zeroes the counts of its sub-scopes, so re-entering `model` makes
    `model/dense` again (and, with reuse, finds its variables); leaving a scope entered as a
    VariableScope object restores the counts it found.
    """

    def __init__(self):
        self.vars: dict = {}
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
      reuse: True, AUTO_REUSE or None (inherit). False is treated like None, as in TF1.
      initializer, regularizer, dtype, constraint, ...: defaults for variables in the scope.

    Yields:
      The VariableScope.
    """
    del values, use_resource
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
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
            inherited = base.reuse or parent.reuse
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
        custom_getter=custom_getter if custom_getter is not None else base.custom_getter,
        dtype=_dtypes.as_dtype(dtype) if dtype is not None else base.dtype,
        constraint=constraint if constraint is not None else base.constraint)
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


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=None, aggregation=None):
    """Gets an existing variable or creates a new one (TF1's tf.get_variable).

    Raises:
      ValueError: when creating a variable that exists without reuse, when reusing one that
        does not exist, or when a reused variable's shape or dtype differs from the request.
    """
    scope = get_variable_scope()
    full = f"{scope.name}/{name}" if scope.name else name
    getter = custom_getter or scope.custom_getter
    kwargs = dict(shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                  trainable=trainable, collections=collections, caching_device=caching_device,
                  partitioner=partitioner, validate_shape=validate_shape, constraint=constraint)
    if getter is not None:
        return getter(_true_getter, full, **kwargs)
    return _true_getter(full, **kwargs)


def _true_getter(full, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, constraint=None, **_):
    from tensorweave.ops.variables import Variable
    scope = get_variable_scope()
    graph = get_default_graph()
    store = _store(graph)
    reuse = scope.reuse
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else scope.dtype
    existing = store.vars.get(full)
    if existing is not None:
        if reuse is False or reuse is None:
            raise ValueError(f"Variable {full} already exists, disallowed. Did you mean to set "
                             "reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
        if shape is not None and not existing.shape.is_compatible_with(_ts.as_shape(shape)):
            raise ValueError(f"Trying to share variable {full}, but specified shape "
                             f"{_ts.as_shape(shape)} and found shape {existing.shape}.")
        if dtype != existing.dtype.base_dtype and dtype != scope.dtype:
            raise ValueError(f"Trying to share variable {full}, but specified dtype "
                             f"{dtype.name} and found dtype {existing.dtype.base_dtype.name}.")
        return existing
    if reuse is True:
        raise ValueError(f"Variable {full} does not exist, or was not created with "
                         "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                         "VarScope?")
    if (partitioner or scope.partitioner) is not None:
        raise NotImplementedError("Partitioned variables are not supported by tensorweave.")
    initializer = initializer if initializer is not None else scope.initializer
    init_value = _initial_value(full, shape, dtype, initializer)
    with control_dependencies(None), name_scope(None):
        variable = Variable(initial_value=init_value, trainable=trainable,
                            collections=collections, validate_shape=validate_shape,
                            name=full, dtype=dtype, constraint=constraint or scope.constraint)
    store.vars[full] = variable
    regularizer = regularizer if regularizer is not None else scope.regularizer
    if regularizer is not None:
        with name_scope(f"{full}/Regularizer/"):
            loss = regularizer(variable)
        if loss is not None:
            graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return variable


def _initial_value(full, shape, dtype, initializer):
    """A callable building the initial value under the variable's Initializer scope."""
    from tensorweave.ops import init_ops
    if initializer is None:
        if dtype.is_floating:
            initializer = init_ops.glorot_uniform_initializer()
        elif dtype.is_integer or dtype.is_bool or dtype == _dtypes.string:
            initializer = init_ops.zeros_initializer()
        else:
            raise ValueError(f"An initializer for variable {full} of {dtype.name} is required")
    if isinstance(initializer, type):
        initializer = initializer(dtype=dtype)
    if callable(initializer):
        if shape is None:
            raise ValueError(f"Shape of a new variable ({full}) must be fully defined, but "
                             "instead was None.")
        shape = _ts.as_shape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"Shape of a new variable ({full}) must be fully defined, but "
                             f"instead was {shape}.")
        return lambda: initializer(shape.as_list(), dtype=dtype)
    return initializer  # a Tensor or value: its own shape


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                       trainable=False, collections=None, **kwargs):
    """get_variable in LOCAL_VARIABLES (not saved, not trained)."""
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape, dtype, initializer, regularizer, False, collections,
                        **kwargs)
