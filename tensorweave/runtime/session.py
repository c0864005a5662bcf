"""Session, InteractiveSession and the default-session stack (TF1's client API).

`Session.run` normalizes fetches and feeds, asks the runtime for the cached plan of that
signature and runs one step; `partial_run_setup` / `partial_run` run one step over several
calls (runtime/partial_run.py). Target '' is the in-process runtime (`DirectSessionCore`).
"""
from __future__ import annotations

import contextlib
import threading

from tensorweave.framework import errors
from tensorweave.framework.dtypes import string
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from tensorweave.framework.operation import Tensor
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.protos import config_pb2
from tensorweave.runtime.direct_session import DirectSessionCore
from tensorweave.runtime.fetches import FetchStructure, check_fetchable, to_result
from tensorweave.runtime.tensor_handle import TensorHandle


def _core_for(target: str, graph, config):
    """The runtime behind a session's target: '' in this process, 'grpc://host:port' a
    tf.train.Server's master (TensorFlow's session factories)."""
    if not target:
        return DirectSessionCore(graph, config)
    if target.startswith("grpc://"):
        from tensorweave.distributed.grpc_session import GrpcSessionCore
        return GrpcSessionCore(target, graph, config)
    raise errors.NotFoundError(None, None, "No session factory registered for the given "
                               f'session options: {{target: "{target}"}} Registered factories '
                               "are {DIRECT_SESSION, GRPC_SESSION}.")


class _DefaultSessionStack(threading.local):
    def __init__(self):
        self.stack: list = []


_default_sessions = _DefaultSessionStack()


def get_default_session():
    """The innermost session made default in this thread, or None."""
    stack = _default_sessions.stack
    return stack[-1] if stack else None


def run_in_session(element, feed_dict, session):
    """Tensor.eval / Operation.run: run `element` in `session` or the default session."""
    session = session or get_default_session()
    if session is None:
        raise ValueError("Cannot evaluate tensor using `eval()`: No default session is "
                         "registered. Use `with sess.as_default()` or pass an explicit session "
                         "to `eval(session=sess)`")
    if session.graph is not element.graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's graph "
                         "is different from the session's graph.")
    return session.run(element, feed_dict)


def _sparse_feed_value(key, value) -> tuple:
    """A SparseTensor feed's (indices, values, dense_shape): a SparseTensorValue or a triple."""
    if not isinstance(value, (SparseTensorValue, tuple, list)) or len(value) != 3:
        raise TypeError(f"The value of a SparseTensor feed {key} must be a SparseTensorValue "
                        f"or an (indices, values, dense_shape) tuple, got {type(value)}")
    return tuple(value)


def _slices_feed(key, value) -> tuple[tuple, tuple]:
    """(tensors, values) of an IndexedSlices feed: an IndexedSlicesValue or a (values, indices[,
    dense_shape]) tuple, the dense shape fed only when the slices have one and it is given."""
    if not isinstance(value, (IndexedSlicesValue, tuple, list)) or len(value) not in (2, 3):
        raise TypeError(f"The value of an IndexedSlices feed {key} must be an "
                        f"IndexedSlicesValue or a (values, indices[, dense_shape]) tuple, got "
                        f"{type(value)}")
    tensors, values = [key.values, key.indices], [value[0], value[1]]
    shape = value[2] if len(value) == 3 else None
    if shape is not None:
        if key.dense_shape is None:
            raise ValueError(f"Cannot feed a dense_shape to {key}, which has none")
        tensors.append(key.dense_shape)
        values.append(shape)
    return tuple(tensors), tuple(values)


def _check_feed_count(values, keys) -> None:
    if len(values) != len(keys):
        raise TypeError(f"Expected {len(keys)} feed values, got {len(values)}")


# Garbage-collected TensorHandles freed together, as TensorFlow's session does.
DEAD_HANDLES_THRESHOLD = 10


class BaseSession:
    """A connection to the runtime that runs steps of one graph (TF1's tf.Session)."""

    def __init__(self, target: str = "", graph=None, config=None):
        if graph is None:
            graph = get_default_graph()
        if config is not None and not isinstance(config, config_pb2.ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
        self._graph = graph
        self._config = config
        self._target = target or ""
        self._closed = False
        self._core = _core_for(self._target, graph, config)
        self._fast_plans: dict = {}
        self._handle_ops: dict = {}   # readers and deleters of kept tensors, made once
        self._dead_handles: list[str] = []
        self._context_stack: list = []

    # --- properties -----------------------------------------------------------------------
    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return self._target

    def list_devices(self) -> list:
        """The session's devices: name, device_type, memory_limit_bytes, incarnation.

        Raises:
          CancelledError: if the session is closed (as TF's TF_SessionListDevices).
        """
        if self._closed:
            raise errors.CancelledError(None, None, "Session has been closed.")
        return self._core.list_devices()

    # --- run ------------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the ops and evaluates the tensors in `fetches`, feeding `feed_dict`.

        Args:
          fetches: a graph element (Tensor, Operation, name) or a nested list, tuple,
            namedtuple or dict of them.
          feed_dict: maps graph elements (Tensors or their names) to values.
          options: a `RunOptions` proto (timeout_in_ms is honoured).
          run_metadata: a `RunMetadata` proto to fill.

        Returns:
          `fetches` with each Tensor replaced by its NumPy value and each Operation by None.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if len(self._dead_handles) >= DEAD_HANDLES_THRESHOLD:
            self._free_dead_handles()
        if type(fetches) is Tensor and options is None and fetches.graph is self._graph:
            return self._run_single(fetches, feed_dict)
        structure = FetchStructure(self._graph, fetches)
        feeds, args = self._feeds(feed_dict)
        core = self._core
        core.note_graph_growth()
        plan = core.plan(feeds, tuple(structure.tensors), tuple(structure.targets))
        values = core.run_step(plan, self._convert(plan, args), options, run_metadata)
        return structure.build(self._results(structure.tensors, values))

    def _results(self, tensors, values) -> list:
        """Fetched values as TF returns them; a kept tensor's handle as a TensorHandle."""
        results = [to_result(v) for v in values]
        for i, tensor in enumerate(tensors):
            if tensor._op.type == "GetSessionHandle":
                results[i] = TensorHandle(results[i], tensor._op._inputs[0].dtype, self)
        return results

    def handle_reader(self, handle):
        """(placeholder, tensor) reading kept tensors of `handle`'s device and dtype in this
        session's graph, made once."""
        from tensorweave.ops import session_ops
        key = ("read", session_ops._handle_device(handle), handle._dtype)
        made = self._handle_ops.get(key)
        if made is None:
            with self._graph.as_default():
                made = self._handle_ops[key] = session_ops.get_session_tensor(
                    handle.handle, handle._dtype)
        return made

    def handle_deleter(self, handle: str, slot: int):
        """(placeholder, op) number `slot` deleting kept tensors of `handle`'s device, made
        once (a batch of dead handles uses one per handle, as TensorFlow's)."""
        from tensorweave.ops import session_ops
        key = ("delete", session_ops._handle_device(handle), slot)
        made = self._handle_ops.get(key)
        if made is None:
            with self._graph.as_default():
                made = self._handle_ops[key] = session_ops.delete_session_tensor(handle)
        return made

    def register_dead_handle(self, handle: str) -> None:
        """A garbage-collected TensorHandle's value: freed with the others at the next run
        once DEAD_HANDLES_THRESHOLD have piled up."""
        if not self._closed:
            self._dead_handles.append(handle)

    def _free_dead_handles(self) -> None:
        dead, self._dead_handles = self._dead_handles, []
        feeds, deleters = {}, []
        for slot, handle in enumerate(dead):
            holder, deleter = self.handle_deleter(handle, slot)
            feeds[holder] = handle
            deleters.append(deleter)
        self.run(deleters, feeds)

    def _run_single(self, tensor, feed_dict):
        """The common `sess.run(tensor, feed_dict)` without building a fetch structure."""
        if tensor._op.type == "GetSessionHandle" or feed_dict and any(
                type(v) is TensorHandle for v in feed_dict.values()):
            return self.run([tensor], feed_dict)[0]
        core = self._core
        if feed_dict:
            keys = tuple(feed_dict)
            plan = self._fast_plans.get((tensor, keys))
            if plan is None:
                check_fetchable(self._graph, tensor)
                feeds, values = self._feeds(feed_dict)
                plan = core.plan(feeds, (tensor,), ())
                if len(feeds) != len(keys):   # a sparse key: no positional fast path
                    return to_result(core.run_plan(plan, self._convert(plan, values))[0])
                self._fast_plans[(tensor, keys)] = plan
            specs = plan.feed_specs
            args = [spec.convert(v) for spec, v in zip(specs, feed_dict.values())]
        else:
            plan = self._fast_plans.get(tensor)
            if plan is None:
                check_fetchable(self._graph, tensor)
                plan = self._fast_plans[tensor] = core.plan((), (tensor,), ())
            args = []
        if core.graph._version != core._last_version:
            core.note_graph_growth()
        return to_result(core.run_plan(plan, args)[0])

    def _feeds(self, feed_dict):
        if not feed_dict:
            return (), []
        tensors, values = [], []
        for key, value in feed_dict.items():
            if isinstance(key, SparseTensor):   # fed component-wise
                tensors.extend((key.indices, key.values, key.dense_shape))
                values.extend(_sparse_feed_value(key, value))
                continue
            if isinstance(key, IndexedSlices):
                parts, part_values = _slices_feed(key, value)
                tensors.extend(parts)
                values.extend(part_values)
                continue
            tensor = self._feed_tensor(key)
            if type(value) is TensorHandle:   # its string for a handle placeholder, else
                value = value.handle if tensor.dtype == string else value.eval()   # its value
            tensors.append(tensor)
            values.append(value)
        return tuple(tensors), values

    def _feed_tensor(self, key) -> Tensor:
        try:
            element = self._graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
        except (KeyError, ValueError, TypeError) as e:
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e}") from None
        if not isinstance(element, Tensor):
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {key!r}")
        if not self._graph.is_feedable(element):
            raise ValueError(f"Tensor {element.name} may not be fed.")
        return element

    @staticmethod
    def _convert(plan, values) -> list:
        return [spec.convert(v) for spec, v in zip(plan.feed_specs, values)]

    def make_callable(self, fetches, feed_list=None, accept_options: bool = False):
        """A function running `fetches` with positional feed values for `feed_list`."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        keys = list(feed_list or ())
        if any(isinstance(k, (SparseTensor, IndexedSlices)) for k in keys):
            # Fed component-wise, as `run` feeds them (TensorFlow's generic path too).
            def call(*feed_values, options=None, run_metadata=None):
                _check_feed_count(feed_values, keys)
                return self.run(fetches, dict(zip(keys, feed_values)), options, run_metadata)
            return call if accept_options else (lambda *feed_values: call(*feed_values))
        structure = FetchStructure(self._graph, fetches)
        feeds = tuple(self._feed_tensor(k) for k in keys)
        core = self._core
        plan = core.plan(feeds, tuple(structure.tensors), tuple(structure.targets))
        convert = self._convert

        def call(*feed_values, options=None, run_metadata=None):
            if self._closed:
                raise RuntimeError("Attempted to use a closed Session.")
            _check_feed_count(feed_values, feeds)
            values = core.run_step(plan, convert(plan, feed_values), options, run_metadata)
            return structure.build(self._results(structure.tensors, values))
        if not accept_options:
            return lambda *feed_values: call(*feed_values)
        return call

    # --- partial runs (runtime/partial_run.py) ---------------------------------------------
    def partial_run_setup(self, fetches, feeds=None) -> str:
        """Starts a step that later `partial_run` calls feed and fetch a part at a time.

        Args:
          fetches: every tensor the calls will fetch, and ops to run (nested structures are
            flattened); each runs once, when its inputs are there.
          feeds: every tensor (or name) the calls will feed.

        Returns:
          The partial run's handle, for `partial_run`.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        structure = FetchStructure(self._graph, fetches)
        feed_tensors = tuple(self._feed_tensor(k) for k in (feeds or ()))
        return self._core.partial_run_setup(feed_tensors, tuple(structure.tensors),
                                            tuple(structure.targets))

    def partial_run(self, handle: str, fetches, feed_dict=None):
        """Feeds `feed_dict` to the partial run `handle` and returns `fetches` (tensors named
        in its setup, in any nested structure) once computed. Each feed and fetch of the setup
        is given or taken once; the step ends after the last.

        Raises:
          InvalidArgumentError: for an unknown handle, a feed or fetch not in the setup or
            already used, or a fetch that needs a feed not fed yet.
          RuntimeError: when `fetches` holds an op (ops run as targets of the setup).
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        structure = FetchStructure(self._graph, fetches)
        if structure.targets:
            raise RuntimeError("partial_run() requires empty `target_list`. Received: "
                               f"target_list={structure.targets} (non-empty)")
        feeds, values = self._feeds(feed_dict)
        results = self._core.partial_run(handle, feeds, values, tuple(structure.tensors))
        return structure.build(self._results(structure.tensors, results))

    # --- lifetime -------------------------------------------------------------------------
    def close(self) -> None:
        """Frees the session's resources; later runs raise RuntimeError."""
        if not self._closed:
            self._closed = True
            self._core.close()   # cancels the steps of partial runs too
            self._fast_plans.clear()

    @staticmethod
    def reset(target, containers=None, config=None) -> None:
        """Frees the resources of `containers` (the default container when None) on the
        server at `target` ("grpc://host:port") and closes its sessions.

        Raises:
          InvalidArgumentError: for the in-process target, whose sessions each own their
            devices and free them on close.
        """
        if not target or not target.startswith("grpc://"):
            raise errors.InvalidArgumentError(None, None, "Session.reset needs a grpc:// "
                                              f"target, got {target!r}: in-process sessions "
                                              "free their resources when they close.")
        from tensorweave.distributed.grpc_session import reset
        reset(target, containers, config)

    def as_default(self):
        """A context manager making this the default session (not closed on exit)."""
        return _default_session_context(self)

    def __enter__(self):
        graph_ctx = self._graph.as_default()
        graph_ctx.__enter__()
        session_ctx = self.as_default()
        session_ctx.__enter__()
        self._context_stack.append((graph_ctx, session_ctx))
        return self

    def __exit__(self, exc_type, exc, tb):
        graph_ctx, session_ctx = self._context_stack.pop()
        session_ctx.__exit__(exc_type, exc, tb)
        graph_ctx.__exit__(exc_type, exc, tb)
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


@contextlib.contextmanager
def _default_session_context(session):
    _default_sessions.stack.append(session)
    try:
        yield session
    finally:
        stack = _default_sessions.stack
        if session in stack:
            stack.remove(session)


class Session(BaseSession):
    """TF1's tf.Session: runs graph steps in this process."""


class InteractiveSession(BaseSession):
    """A Session that makes itself (and its graph) the default on creation, for shells."""

    def __init__(self, target: str = "", graph=None, config=None):
        super().__init__(target, graph, config)
        self._graph_ctx = self._graph.as_default()
        self._graph_ctx.__enter__()
        self._session_ctx = self.as_default()
        self._session_ctx.__enter__()

    def close(self) -> None:
        if not self._closed:
            super().close()
            self._session_ctx.__exit__(None, None, None)
            self._graph_ctx.__exit__(None, None, None)
