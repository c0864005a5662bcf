"""DirectSession: the local runtime pipeline, built once per run signature and cached.

Per unique (feeds, fetches, targets, graph structure): prune → place → optimize (passes) →
partition → one Executor per partition, plus the feed validators and the list of variables the
step reads before assigning. A step then fills the call frame, checks variables, runs the
executors and reads the call frame back.
"""
from __future__ import annotations

import concurrent.futures
import itertools
import logging
import os
import threading

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.operation import Operation, Tensor
from tensorweave.framework.tensor_util import to_numpy
from tensorweave.platform import debug_switches
from tensorweave.protos import config_pb2
from tensorweave.runtime import (
    blas_threads,
    cost_model,
    float_env,
    parallel_lines,
    partial_run,
    placement,
    prune,
)
from tensorweave.runtime import partition as _partition
from tensorweave.runtime import passes as _passes
from tensorweave.runtime.cooperative import CooperativeSchedule, link_sends
from tensorweave.runtime.devices import DeviceMgr, describe_devices
from tensorweave.runtime.executor.executor import Executor
from tensorweave.runtime.executor.frames import CONTROL_FLOW_OPS
from tensorweave.runtime.executor.values import copy_storage_fetches, storage_fetch_indices
from tensorweave.runtime.graph_growth import GraphGrowthWatch
from tensorweave.runtime.merged_line import mergeable
from tensorweave.runtime.rendezvous import LocalRendezvous
from tensorweave.runtime.step import StepState
from tensorweave.runtime.step_stats import StepStatsCollector

_log = logging.getLogger("tensorweave")

# Ops that may take an uninitialized variable: they write it, ask about it, or route its
# reference into a cond branch or loop (the read behind them fails itself if it runs).
_WRITES_OR_PROBES = frozenset({"Assign", "IsVariableInitialized", "RefSwitch", "RefMerge",
                               "RefEnter", "RefExit", "RefNextIteration"})
_PARTITION_THREADS = 256
# BLAS work (estimated flops) that makes a partition worth a thread of its own: about 0.2 ms,
# several times what handing a partition to another thread costs.
_PARALLEL_PARTITION_FLOPS = 1e7


class FeedSpec:
    """How to convert and validate values fed to one tensor."""

    __slots__ = ("tensor", "np_dtype", "dims", "is_string")

    def __init__(self, tensor):
        self.tensor = tensor
        dtype = tensor.dtype.base_dtype
        self.is_string = dtype == _dtypes.string
        self.np_dtype = None if self.is_string else _dtypes.numpy_dtype(dtype)
        shape = tensor.shape
        self.dims = None if shape.ndims is None else tuple(shape.as_list())

    def convert(self, value):
        if self.is_string:
            arr = to_numpy(value, _dtypes.string)
        elif type(value) is np.ndarray and value.dtype == self.np_dtype:
            arr = value
        else:
            arr = self._as_array(value)
        dims = self.dims
        if dims is not None:
            shape = arr.shape
            if len(shape) != len(dims) or any(d is not None and d != s
                                               for d, s in zip(dims, shape)):
                raise ValueError(
                    f"Cannot feed value of shape {shape} for Tensor {self.tensor.name}, "
                    f"which has shape ({', '.join('?' if d is None else str(d) for d in dims)}"
                    f"{',' if len(dims) == 1 else ''})")
        return arr


    def _as_array(self, value) -> np.ndarray:
        """`value` in the tensor's dtype; TypeError, as TF, for a graph tensor or a Python
        int the dtype cannot hold."""
        if isinstance(value, (Tensor, Operation)):
            raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable feed "
                            "values include Python scalars, strings, lists, numpy ndarrays, "
                            "or TensorHandles.")
        try:
            return np.asarray(value, dtype=self.np_dtype)
        except OverflowError:
            raise TypeError(f"Type of feed value {value} with type {type(value)} is not "
                            f"compatible with Tensor type {self.np_dtype}. Try explicitly "
                            "setting the type of the feed tensor to a larger type (e.g. "
                            "int64).") from None


class RunPlan:
    """Everything one run signature needs, computed once."""

    __slots__ = ("feed_specs", "n_fetches", "executors", "var_checks", "partitions",
                 "_partition_graph_defs", "placement", "blas_limit", "cooperative",
                 "parallel", "storage_fetches")

    def __init__(self, feed_specs, n_fetches, executors, var_checks, partitions=(),
                 placement=None):
        self.placement = placement or {}   # node name -> why it landed on its device
        self.blas_limit = 0                  # BLAS threads while a step runs (0: no limit)
        self.cooperative = None              # a CooperativeSchedule: one thread for all
        self.parallel = None                 # ParallelLines: a thread per partition
        self.feed_specs = feed_specs
        self.n_fetches = n_fetches
        self.executors = executors
        self.storage_fetches = storage_fetch_indices(executors)
        self.var_checks = var_checks
        self.partitions = list(partitions)   # the optimized RGraph of each executor
        self._partition_graph_defs = None

    def partition_graph_defs(self) -> list:
        """GraphDefs of the optimized partition graphs (built on first request, then kept)."""
        if self._partition_graph_defs is None:
            from tensorweave.runtime.passes.graph_def import graph_def_of
            self._partition_graph_defs = [graph_def_of(g) for g in self.partitions]
        return self._partition_graph_defs


class DirectSessionCore(GraphGrowthWatch):
    """Devices, resources, the plan cache and the step loop of one local session."""

    def __init__(self, graph, config, device_mgr: DeviceMgr | None = None):
        """`device_mgr`: devices shared with other sessions (a server's), whose resources
        outlive this session; by default the session makes its own."""
        self.graph = graph
        self.config = config
        self._log_placement = debug_switches.logs_device_placement(config)
        self._owns_devices = device_mgr is None
        if device_mgr is None:
            device_count = dict(config.device_count) if config is not None else {}
            device_mgr = DeviceMgr.local(device_count)
        self.device_mgr = device_mgr
        self._plans: dict = {}
        self._feed_specs: dict = {}
        self._shared_kernels: dict = {}
        self._lock = threading.Lock()
        # Separate from _lock: shared kernels are created while _lock is held to build a plan.
        self._kernels_lock = threading.Lock()
        self._pools_lock = threading.Lock()
        self._pool = None
        self._partition_pool = None
        self.watch_graph_growth(graph)
        self._op_timeout_ms = config.operation_timeout_in_ms if config is not None else 0
        # Steps in flight, so close() can cancel the ones blocked (on a queue, a recv ...).
        self._live_steps: set = set()
        self._partial_runs: dict = {}
        self._partial_serial = itertools.count()

    # --- kernels shared by all executors of this session -----------------------------------
    def shared_kernel(self, key, create):
        with self._kernels_lock:
            kernel = self._shared_kernels.get(key)
            if kernel is None:
                kernel = self._shared_kernels[key] = create()
            return kernel

    @property
    def pool(self):
        pool = self._pool
        if pool is None:
            threads = self.config.inter_op_parallelism_threads if self.config else 0
            pool = self._made_pool("_pool", threads if threads > 0 else (os.cpu_count() or 2),
                                   "tw-inter-op")
        return pool

    def _made_pool(self, attr: str, workers: int, prefix: str):
        """The session's thread pool `attr`, made on first use: under the lock, so steps that
        start at once share one pool rather than each making (and leaking) its own."""
        with self._pools_lock:
            pool = getattr(self, attr)
            if pool is None:
                pool = concurrent.futures.ThreadPoolExecutor(
                    max_workers=workers, thread_name_prefix=prefix,
                    initializer=float_env.flush_in_this_thread)
                setattr(self, attr, pool)
            return pool

    def feed_spec(self, tensor) -> FeedSpec:
        spec = self._feed_specs.get(tensor)
        if spec is None:
            spec = self._feed_specs[tensor] = FeedSpec(tensor)
        return spec

    # --- the pipeline -------------------------------------------------------------------------
    def plan(self, feeds: tuple, fetches: tuple, targets: tuple,
             partial: bool = False) -> RunPlan:
        """The cached plan of a run signature; `partial`: a partial run's, whose feeds and
        fetches go through the step's rendezvous (runtime/partial_run.py)."""
        key = (feeds, fetches, targets, self.graph.structure_version, partial)
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                plan = self._plans.get(key)
                if plan is None:
                    saved = float_env.enter()   # constant folding computes as kernels do
                    try:
                        plan = self._plans[key] = self._build_plan(feeds, fetches, targets,
                                                                   partial)
                    finally:
                        float_env.leave(saved)
        return plan

    def _partitions(self, feeds, fetches, targets, partial: bool):
        """(optimized graph, {device: partition}, placement reasons) of a run signature:
        pruned, optimized, placed and split by device; `partial`: feeds and fetches go through
        the step's rendezvous instead of the call frame."""
        client = prune.prune(feeds, fetches, targets)
        pass_options = _passes.options_for(client, self.config,
                                           len(self.graph.get_operations()))
        client = _passes.run_passes(client, self.config, _passes.PRE_PLACEMENT, pass_options)
        reasons = self._place(client)
        optimized = _passes.run_passes(client, self.config, _passes.POST_PLACEMENT,
                                       pass_options)
        if partial:
            partial_run.client_terminated(optimized, feeds, fetches)
        parts = _partition.partition(optimized,
                                     lambda dev: self.device_mgr.lookup(dev).incarnation)
        parts = {dev: _passes.run_passes(g, self.config, _passes.POST_PARTITION, pass_options)
                 for dev, g in parts.items()}
        return optimized, parts, reasons

    def _build_plan(self, feeds, fetches, targets, partial: bool) -> RunPlan:
        optimized, parts, reasons = self._partitions(feeds, fetches, targets, partial)
        pool = self.pool if (os.cpu_count() or 1) > 1 else None
        # Dead tokens may cross devices: every partition of a graph with control flow runs
        # under the frames executors.
        control_flow = any(n.op in CONTROL_FLOW_OPS for n in optimized)
        executors = [Executor(g, self.device_mgr.lookup(dev), self, self.graph, pool, dev,
                              control_flow)
                     for dev, g in parts.items()]
        var_checks = self._variables_read_before_written(optimized)
        plan = RunPlan([self.feed_spec(t) for t in feeds], len(fetches), executors,
                       var_checks, parts.values(), reasons)
        self._choose_threads(plan)
        return plan

    def _choose_threads(self, plan: RunPlan) -> None:
        """How the plan's partitions share threads, and the BLAS threads while a step runs.

        Partitions run at once when the config asks for it (intra-op threads set, inter-op
        threads other than 1) or, unless inter-op threads are 1, when two or more of them have
        BLAS work to share out (towers). Untraced steps whose only asynchronous kernels are
        linked receives then run as parallel lines: the step's nodes scheduled over as many
        threads as there are cores (fewer if inter-op threads say so; at least two); other
        steps run each partition on a thread of its own. Otherwise partitions run together on
        the calling thread (cooperative), except partitions with control flow. Concurrent
        threads share the cores' BLAS threads; `intra_op_parallelism_threads`, when set,
        limits BLAS in every step.
        """
        config = self.config
        intra = config.intra_op_parallelism_threads if config is not None else 0
        inter = config.inter_op_parallelism_threads if config is not None else 0
        executors = plan.executors
        plan.blas_limit = max(intra, 0)
        if len(executors) < 2:
            return
        frames = any(ex.frame_graph is not None for ex in executors)
        busy = sum(1 for ex in executors if sum(cost_model.blas_flops(it.node)
                                                for it in ex.items) >= _PARALLEL_PARTITION_FLOPS)
        parallel = inter != 1 and (intra > 0 or busy >= 2)
        if not parallel and not frames:
            plan.cooperative = CooperativeSchedule(executors)
            return
        cores = os.cpu_count() or 1
        threads = len(executors)   # a thread per partition, unless parallel lines
        if parallel and not frames:
            links = link_sends(executors)
            if mergeable(executors, links):
                lines = max(2, min(cores, inter if inter > 0 else cores))
                plan.parallel = parallel_lines.schedule(executors, links, lines)
                if plan.parallel is not None:
                    threads = lines
        if intra <= 0:
            plan.blas_limit = max(1, cores // threads)

    def _placement_task(self) -> tuple:
        """(job, task) that completes a device request naming neither: this session's."""
        spec = self.device_mgr.devices[0].spec
        return spec.job, spec.task

    def _place(self, client) -> dict[str, str]:
        soft = bool(self.config.allow_soft_placement) if self.config is not None else False
        devices = self.device_mgr.devices
        job, task = self._placement_task()
        reasons = placement.place(client, devices, soft, job, task)
        if self._log_placement:
            for node in client:   # as TensorFlow's placer: a line on stdout, and the log
                line = f"{node.name}: ({node.op}): {node.device}"
                print(line)
                _log.info(line)
        return reasons

    def placement_for(self, node_name: str) -> dict[str, str]:
        """Placement reasons for the subgraph that running op `node_name` needs, with every
        placeholder fed."""
        op = self.graph.get_operation_by_name(node_name)
        fed = tuple(p.outputs[0] for p in self.graph.get_operations()
                    if p.type == "Placeholder" and p is not op)
        return self._place(prune.prune(fed, (), (op,)))

    def _variables_read_before_written(self, graph) -> list:
        """The variable refs this step reads that no assign in the step precedes."""
        consumers = graph.consumers()
        assigned_before: dict[str, set[str]] = {}

        def ancestors(name, seen):
            stack = [name]
            while stack:
                n = stack.pop()
                if n in seen:
                    continue
                seen.add(n)
                node = graph.nodes[n]
                stack.extend(s for s, _ in node.inputs)
                stack.extend(node.control_inputs)
            return seen

        checks = []
        for node in graph:
            if node.op not in ("VariableV2", "Variable"):
                continue
            readers = [c for c in consumers[node.name] if c.op not in _WRITES_OR_PROBES]
            if not readers:
                continue
            writers = {c.name for c in consumers[node.name] if c.op == "Assign"}
            for reader in readers:
                if reader.name not in assigned_before:
                    assigned_before[reader.name] = ancestors(reader.name, set())
                if not writers & assigned_before[reader.name]:
                    device = self.device_mgr.lookup(node.device)
                    if device.resource_mgr is None:
                        break   # another process's variable: its own read checks it
                    container = node.attrs.get("container") or ""
                    name = node.attrs.get("shared_name") or node.name
                    checks.append(device.resource_mgr.lookup(container, name))
                    break
        return checks

    def list_devices(self) -> list:
        return describe_devices(self.device_mgr.devices)

    # --- partial runs (runtime/partial_run.py) ---------------------------------------------
    def partial_run_setup(self, feeds: tuple, fetches: tuple, targets: tuple) -> str:
        """Starts a partial run's step (it runs on a thread of its own); returns its handle."""
        plan = self.plan(feeds, fetches, targets, partial=True)
        run = partial_run.PartialRun(
            partial_run.make_handle(feeds, fetches, targets, next(self._partial_serial)),
            plan, feeds, fetches)
        self._partial_runs[run.handle] = run
        run.start(lambda rendezvous: self.run_plan(plan, [], rendezvous=rendezvous))
        return run.handle

    def partial_run(self, handle: str, feeds, values, fetches) -> list:
        """Feeds `values` to tensors `feeds` of partial run `handle`; returns the values of
        `fetches`. The step is forgotten once all its feeds and fetches have been used.

        Raises:
          InvalidArgumentError: for an unknown handle and TF's other misuses (PartialRun).
        """
        run = self._partial_runs.get(handle)
        if run is None:
            raise errors.InvalidArgumentError(
                None, None, "Must run 'setup' before performing partial runs!")
        run.check([t.name for t in feeds], [t.name for t in fetches])
        for tensor, value in zip(feeds, values):
            run.feed(tensor.name, value)
        results = [run.fetch(t.name) for t in fetches]
        if run.done():
            del self._partial_runs[handle]
            run.finish()
        return results

    # --- the step -----------------------------------------------------------------------------
    def run_step(self, plan: RunPlan, args: list, options=None, run_metadata=None) -> list:
        """`run_plan` with TF1's RunOptions (timeout, tracing, partition graphs) and a
        RunMetadata to fill."""
        traced = (run_metadata is not None and options is not None and
                  options.trace_level != config_pb2.RunOptions.NO_TRACE)
        stats = StepStatsCollector() if traced else None
        values = self.run_plan(plan, args, options.timeout_in_ms if options is not None else 0,
                               stats)
        if stats is not None:
            stats.fill(run_metadata.step_stats)
        if run_metadata is not None and options is not None and \
                options.output_partition_graphs:
            run_metadata.partition_graphs.extend(plan.partition_graph_defs())
        return values

    def run_plan(self, plan: RunPlan, args: list, timeout_ms: int = 0, stats=None,
                 rendezvous=None) -> list:
        """Runs one step of `plan` on `args` (the feeds' values, in order); returns the fetched
        values. `rendezvous`: the step's own, given by a partial run, whose client sends the
        feeds and receives the fetches through it (every partition then runs on its own
        thread: the parallel lines and cooperative schedules keep their own transfers)."""
        if plan.var_checks:
            check_initialized(plan.var_checks)
        rets = [None] * plan.n_fetches
        executors = plan.executors
        cooperative = plan.cooperative if rendezvous is None else None
        parallel = plan.parallel if stats is None and rendezvous is None else None
        if rendezvous is None:
            if parallel is not None:
                rendezvous = parallel.mailbox()
            elif len(executors) > 1 and cooperative is None:
                rendezvous = LocalRendezvous()
        step = StepState(timeout_ms or self._op_timeout_ms, rendezvous, stats)
        live = self._live_steps
        live.add(step)
        limit = plan.blas_limit
        if limit:
            blas_threads.limiter.acquire(limit)
        float_env_saved = float_env.enter()
        try:
            if not executors:
                return rets
            if len(executors) == 1:
                executors[0].run(args, rets, step)
            elif cooperative is not None:
                cooperative.run(args, rets, step)
            elif parallel is not None:
                parallel.run(args, rets, step, self._partition_threads())
            else:
                run_concurrently(executors, args, rets, step, self._partition_threads())
            copy_storage_fetches(rets, plan.storage_fetches)
        except KeyboardInterrupt:
            step.cancel(errors.CancelledError(None, None, "Step interrupted (Ctrl-C)"))
            raise
        finally:
            live.discard(step)
            float_env.leave(float_env_saved)
            if limit:
                blas_threads.limiter.release(limit)
        return rets

    def _partition_threads(self):
        """The pool whose threads run partitions other than the first, one each."""
        pool = self._partition_pool
        if pool is None:
            pool = self._made_pool("_partition_pool", _PARTITION_THREADS, "tw-partition")
        return pool

    def close(self) -> None:
        """Cancels the steps still running (CancelledError), then frees pools and resources."""
        for step in list(self._live_steps):
            step.cancel(errors.CancelledError(None, None, "Session has been closed."))
        for pool in (self._pool, self._partition_pool):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        self._pool = self._partition_pool = None
        self._plans.clear()
        self._shared_kernels.clear()
        self._partial_runs.clear()
        if self._owns_devices:
            self.device_mgr.clear_resources()


def run_concurrently(executors, args, rets, step, pool) -> None:
    """Runs every partition of a step at once, the first on this thread and each other on a
    thread of `pool`: a partition waits for its receives while holding its thread, so
    partitions must not share one with each other or with the kernels they wait for (the
    inter-op pool). The first error cancels the step and is raised."""
    futures = [pool.submit(ex.run, args, rets, step) for ex in executors[1:]]
    first_error = None
    try:
        executors[0].run(args, rets, step)
    except errors.OpError as e:
        first_error = e
        step.cancel(e)
    for f in futures:
        try:
            f.result()
        except errors.OpError as e:
            if first_error is None:
                first_error = e
                step.cancel(e)
    if first_error is not None:
        raise first_error


def check_initialized(variables) -> None:
    """FailedPreconditionError naming every variable of `variables` never assigned."""
    missing = [r.name for r in variables if r.value is None]
    if missing:
        raise errors.FailedPreconditionError(
            None, None, "Attempting to use uninitialized value"
            f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
