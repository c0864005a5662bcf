"""Graph: the node store of the front end — names, versions, finalize, collections.

Scope state (name, device, control-dependency and colocation stacks) lives in a per-thread
`ScopeState` owned by the graph; the context managers that push it are in `scopes.py`.
"""
from __future__ import annotations

import contextlib
import re
import threading

from tensorweave.framework.operation import Operation, Tensor


class GraphKeys:
    """Standard collection names (TF1's tf.GraphKeys)."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    VARIABLES = GLOBAL_VARIABLES


class ScopeState:
    """The scope stacks of one thread building one graph."""

    __slots__ = ("name_stack", "device_stack", "control_stack", "colocation_stack",
                 "gradient_override", "control_flow_context")

    def __init__(self):
        self.name_stack = ""
        self.device_stack: list = []            # strings (canonical) or functions
        self.control_stack: list = []           # lists of Operations; None entry clears
        self.colocation_stack: list = []        # Operations
        self.gradient_override: dict = {}
        self.control_flow_context = None        # the innermost cond/while being built


class Graph:
    """A TensorFlow computation, represented as a dataflow graph (TF1's tf.Graph)."""

    def __init__(self):
        self._ops: list[Operation] = []
        self._ops_by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._collections: dict[str, list] = {}
        self._finalized = False
        self._version = 0
        self._structure_version = 0
        self._thread_state = threading.local()
        self._lock = threading.RLock()
        self.seed = None
        self._variable_store = None
        self._building_function = False
        self._unfetchable_ops: set = set()
        self._unfeedable_tensors: set = set()
        self._container = ""   # stateful ops made now get it as their container attr

    # --- scope state ----------------------------------------------------------------------
    @property
    def _scopes(self) -> ScopeState:
        state = getattr(self._thread_state, "scopes", None)
        if state is None:
            state = self._thread_state.scopes = ScopeState()
        return state

    # --- versions and finalize --------------------------------------------------------------
    @property
    def version(self) -> int:
        """Changes whenever an op is added."""
        return self._version

    @property
    def _last_id(self) -> int:
        return self._version

    @property
    def structure_version(self) -> int:
        """Changes when an existing op is edited (control input, device, attr)."""
        return self._structure_version

    def _mutated(self) -> None:
        self._structure_version += 1

    @property
    def finalized(self) -> bool:
        return self._finalized

    def finalize(self) -> None:
        """Makes the graph read-only: adding an op afterwards raises RuntimeError."""
        self._finalized = True

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    # --- names ----------------------------------------------------------------------------
    def get_name_scope(self) -> str:
        return self._scopes.name_stack

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """`name` under the current name scope, suffixed `_N` if taken (case-insensitively)."""
        stack = self._scopes.name_stack
        if stack:
            name = f"{stack}/{name}"
        key = name.lower()
        used = self._names_in_use
        i = used.get(key, 0)
        if mark_as_used:
            used[key] = i + 1
        if i > 0:
            base = key
            while key in used:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                used[key] = 1
            name = f"{name}_{i - 1}"
        return name

    # --- ops ------------------------------------------------------------------------------
    def _add_op(self, op: Operation) -> None:
        with self._lock:
            if self._finalized:
                raise RuntimeError("Graph is finalized and cannot be modified.")
            if op.name in self._ops_by_name:
                raise ValueError(f"Duplicate node name in graph: '{op.name}'")
            self._version += 1
            op._id = self._version
            self._ops.append(op)
            self._ops_by_name[op.name] = op

    def _drop_ops_after(self, count: int) -> None:
        """Removes the ops added after the first `count` (an import that failed half-way),
        and their uses of the ops before them. Op ids keep increasing."""
        with self._lock:
            dropped, self._ops = self._ops[count:], self._ops[:count]
            for op in reversed(dropped):
                del self._ops_by_name[op.name]
                for tensor in op.inputs:
                    if op in tensor._consumers:
                        tensor._consumers.remove(op)
            self._structure_version += 1

    def _check_not_finalized(self) -> None:
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        element = self.as_graph_element(name, allow_tensor=False, allow_operation=True)
        return element

    def get_tensor_by_name(self, name: str) -> Tensor:
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor: bool = True, allow_operation: bool = True):
        """The Tensor or Operation `obj` names or is, checked to belong to this graph."""
        if allow_tensor and allow_operation:
            kinds = "Tensor or Operation"
        elif allow_tensor:
            kinds = "Tensor"
        else:
            kinds = "Operation"
        conv = getattr(obj, "_as_graph_element", None)
        if conv is not None:
            obj = conv()
        if isinstance(obj, str):
            return self._element_from_name(obj, allow_tensor, allow_operation, kinds)
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {kinds}.")

    def _element_from_name(self, name, allow_tensor, allow_operation, kinds):
        if ":" in name:
            if not allow_tensor:
                raise ValueError(f"Name '{name}' appears to refer to a Tensor, not a {kinds}.")
            op_name, _, index = name.rpartition(":")
            try:
                index = int(index)
            except ValueError:
                raise ValueError(f"The name '{name}' looks a like a Tensor name, but is not "
                                 "a valid one. Tensor names must be of the form "
                                 "\"<op_name>:<output_index>\".") from None
            op = self._ops_by_name.get(op_name)
            if op is None:
                raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. "
                               f"The operation, '{op_name}', does not exist in the graph.")
            if index >= len(op._outputs) or index < 0:
                raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. "
                               f"The operation, '{op_name}', exists but only has "
                               f"{len(op._outputs)} outputs.")
            return op._outputs[index]
        if not allow_operation:
            if name in self._ops_by_name:
                raise ValueError(f"The name '{name}' refers to an Operation, not a {kinds}. "
                                 "Tensor names must be of the form \"<op_name>:<output_index>\".")
            raise ValueError(f"The name '{name}' looks like an (invalid) Operation name, "
                             f"not a {kinds}.")
        op = self._ops_by_name.get(name)
        if op is None:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.")
        return op

    # --- collections ----------------------------------------------------------------------
    def add_to_collection(self, name: str, value) -> None:
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value) -> None:
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name: str) -> list:
        return self._collections.setdefault(name, [])

    def get_collection(self, name: str, scope: str | None = None) -> list:
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        return [item for item in items
                if getattr(item, "name", None) is not None and pattern.match(item.name)]

    def get_all_collection_keys(self) -> list[str]:
        return [k for k, v in self._collections.items() if isinstance(v, list)]

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    # --- scopes (delegating to scopes.py) -------------------------------------------------
    def name_scope(self, name):
        from tensorweave.framework import scopes
        return scopes.graph_name_scope(self, name)

    def device(self, device_name_or_function):
        from tensorweave.framework import scopes
        return scopes.graph_device(self, device_name_or_function)

    @contextlib.contextmanager
    def container(self, container_name: str):
        """Stateful ops created inside get `container_name` as their `container` attr (when
        they have one and it is empty): their resources live in that container."""
        saved, self._container = self._container, container_name
        try:
            yield container_name
        finally:
            self._container = saved

    def control_dependencies(self, control_inputs):
        from tensorweave.framework import scopes
        return scopes.graph_control_dependencies(self, control_inputs)

    def colocate_with(self, op, ignore_existing: bool = False):
        from tensorweave.framework import scopes
        return scopes.graph_colocate_with(self, op, ignore_existing)

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: dict):
        """Uses the gradient registered under another name for the given op types."""
        state = self._scopes
        saved = dict(state.gradient_override)
        state.gradient_override.update(op_type_map)
        try:
            yield
        finally:
            state.gradient_override = saved

    # --- default graph --------------------------------------------------------------------
    def as_default(self):
        """Makes this graph the default graph of the calling thread inside a `with` block."""
        return _default_graph_context(self)

    def as_graph_def(self, from_version=None, add_shapes: bool = False):
        from tensorweave.framework import graph_io
        return graph_io.graph_to_graph_def(self, from_version, add_shapes)

    @property
    def graph_def_versions(self):
        from tensorweave.framework import graph_io
        return graph_io.versions_def()

    def prevent_fetching(self, op) -> None:
        """Marks `op` (and its outputs) as not fetchable by `Session.run`."""
        self._unfetchable_ops.add(op)

    def prevent_feeding(self, tensor) -> None:
        """Marks `tensor` as not feedable by `Session.run`."""
        self._unfeedable_tensors.add(tensor)

    def is_fetchable(self, tensor_or_op) -> bool:
        """False for ops built inside a cond branch or a loop (and their outputs)."""
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable_ops

    def is_feedable(self, tensor) -> bool:
        """False for the tensors of a while loop's frame (a feed cannot reach one iteration)."""
        return tensor not in self._unfeedable_tensors

    @property
    def building_function(self) -> bool:
        return self._building_function


# --- the per-thread default-graph stack ----------------------------------------------------
class _DefaultGraphStack(threading.local):
    def __init__(self):
        self.stack: list[Graph] = []


_default_stack = _DefaultGraphStack()
_global_default: list[Graph | None] = [None]


def get_default_graph() -> Graph:
    """The innermost graph made default in this thread, or the process-wide default graph."""
    stack = _default_stack.stack
    if stack:
        return stack[-1]
    graph = _global_default[0]
    if graph is None:
        graph = _global_default[0] = Graph()
    return graph


def graph_from_inputs(values, default: Graph | None = None) -> Graph:
    """The graph an op on `values` belongs in (TF's ops._get_graph_from_inputs).

    That is the default graph if it is building a function (it captures outer tensors); else
    the graph of the first Tensor, Operation or graph element (a Variable) among `values`, the
    default graph if there is none. So an op on tensors of a graph `g` goes into `g` even
    outside `with g.as_default()` or in another thread.

    Raises:
      ValueError: if `values` hold graph elements of two graphs.
    """
    if default is None:
        default = get_default_graph()
    if default._building_function:
        return default
    first = graph = None
    for value in values:
        if isinstance(value, Tensor):
            value_graph = value._op._graph
        elif isinstance(value, Operation):
            value_graph = value._graph
        else:
            conv = getattr(value, "_as_graph_element", None)
            if conv is None or not callable(conv):
                continue
            value = conv()
            value_graph = getattr(value, "graph", None)
        if graph is None:
            first, graph = value, value_graph
        elif value_graph is not None and value_graph is not graph:
            raise ValueError(f"{value} must be from the same graph as {first} (graphs are "
                             f"{value_graph} and {graph}).")
    return graph or default


def container(container_name: str):
    """The default graph's `container` context (Graph.container)."""
    return get_default_graph().container(container_name)


def reset_default_graph() -> None:
    """Clears the default graph; not allowed inside a `with graph.as_default()` block."""
    if _default_stack.stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. "
                             "If you need a cleared graph, exit the nesting and create a new "
                             "graph.")
    _global_default[0] = Graph()


@contextlib.contextmanager
def _default_graph_context(graph: Graph):
    _default_stack.stack.append(graph)
    try:
        yield graph
    finally:
        _default_stack.stack.pop()


# --- collection helpers on the default graph (TF1's module-level functions) ----------------
def add_to_collection(name: str, value) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value) -> None:
    get_default_graph().add_to_collections(names, value)


def get_collection(key: str, scope: str | None = None) -> list:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list:
    return get_default_graph().get_collection_ref(key)
