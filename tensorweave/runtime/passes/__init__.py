"""Graph optimization passes: a registry of Grappler-style rewrites of the runtime graph.

In: the pruned client graph of one run signature (an `RGraph`; feeds are `_Arg` nodes, fetches
`_Retval` nodes). Out: an equivalent RGraph. A pass is one public function
`fn(graph, options) -> graph` in its own module, registered here with a phase and an order and
runnable alone (`options=None` derives defaults from the graph). The session runs each phase once
per run signature, so no pass costs anything per step:

  PRE_PLACEMENT   before devices are chosen (nothing of ours: colocation groups name user nodes)
  POST_PLACEMENT  every rewrite; new nodes take the device of the nodes they replace
  POST_PARTITION  per device graph: the memory pass decides which kernels reuse dying buffers

Which passes run comes from `ConfigProto.graph_options` (see options.py). Every pass keeps the
rules in rewrite.py: fed tensors are `_Arg`s and never fold, fetched and target nodes keep their
names, stateful ops are never folded, merged or removed, control dependencies are kept, and
results are identical to the unoptimized graph or within the tolerance a rule documents. Static
shapes may be trusted: whenever any pass runs, fed_shapes.py first re-infers those built from a
value this run feeds.

A pass that raises is skipped (its phase reruns without it from a copy taken at the phase's
start) and logged, unless `RewriterConfig.fail_on_optimizer_errors` is set. Each rewrite is
logged (options.py).
"""
from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from tensorweave.runtime.passes.options import PassOptions

PRE_PLACEMENT = "pre_placement"
POST_PLACEMENT = "post_placement"
POST_PARTITION = "post_partition"
PHASES = (PRE_PLACEMENT, POST_PLACEMENT, POST_PARTITION)

_log = logging.getLogger("tensorweave.passes")


@dataclass(frozen=True)
class PassInfo:
    """One registered pass: its function, where it runs, and the switch that enables it.

    `toggle` names the `PassOptions` flag that enables it (derived from RewriterConfig and
    OptimizerOptions). Passes of `group` "main" run as a group up to `meta_iterations` times
    while they still change the graph, as Grappler's meta-optimizer does.
    """

    name: str
    fn: Callable
    phase: str
    order: int
    toggle: str
    group: str = ""


_PASSES: list[PassInfo] = []
_LOADED = False
# The modules that register the built-in passes (imported on first use, after the ops).
_BUILTIN = ("fed_shapes", "dependency", "canonical_inputs", "iterator_shapes", "constant_folding",
            "constant_push_down", "arithmetic", "cse", "layout", "remapper", "pool_grad_fusion",
            "update_fusion", "sum_update_fusion", "bias_grad_fusion", "elementwise_fusion",
            "memory")


def register_pass(name: str, phase: str = POST_PLACEMENT, order: int = 100, toggle: str = "",
                  group: str = ""):
    """Decorator registering `fn(graph, options) -> graph` as pass `name`."""
    if phase not in PHASES:
        raise ValueError(f"Unknown pass phase {phase!r}; one of {PHASES}")

    def decorate(fn):
        if any(p.name == name for p in _PASSES):
            raise ValueError(f"Pass {name!r} is already registered")
        _PASSES.append(PassInfo(name, fn, phase, order, toggle or name, group))
        _PASSES.sort(key=lambda p: (PHASES.index(p.phase), p.order))
        return fn
    return decorate


def registered_passes(phase: str | None = None) -> list[PassInfo]:
    """The registered passes in run order (of one phase, or all)."""
    _load_builtin()
    return [p for p in _PASSES if phase is None or p.phase == phase]


def _load_builtin() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        for module in _BUILTIN:
            importlib.import_module(f"{__name__}.{module}")


def options_for(graph, config, graph_nodes: int | None = None) -> PassOptions:
    """The options of one run signature: config switches and the nodes every pass preserves
    (`graph_nodes`: the size of the user's whole graph, which decides whether Grappler runs)."""
    return PassOptions.from_config(config, graph, graph_nodes)


def run_passes(graph, config, phase: str = POST_PLACEMENT, options: PassOptions | None = None):
    """Applies the enabled passes of `phase` in order and returns the rewritten graph.

    `config` is the session's ConfigProto (or None); `options` may be given instead, e.g. the
    PassOptions computed for an earlier phase of the same signature. The graph is copied once
    per phase: if a pass raises, the phase restarts from that copy without the failing pass.
    """
    if options is None:
        options = options_for(graph, config)
    enabled = [p for p in registered_passes(phase) if options.enabled(p.toggle)]
    if not enabled:
        return graph
    if options.fail_on_errors:
        return _run_all(enabled, graph, options)
    from tensorweave.runtime.passes.rewrite import clone_graph
    pristine = clone_graph(graph)
    while True:
        try:
            return _run_all(enabled, graph, options)
        except _PassFailed as failed:
            _log.warning("Graph pass %s failed and was skipped (%s: %s); the phase reruns "
                         "without it.", failed.info.name, type(failed.error).__name__,
                         failed.error)
            enabled = [p for p in enabled if p is not failed.info]
            graph = clone_graph(pristine)


def _run_all(enabled: list[PassInfo], graph, options: PassOptions):
    i = 0
    while i < len(enabled):
        end = i + 1
        if enabled[i].group:
            while end < len(enabled) and enabled[end].group == enabled[i].group:
                end += 1
        group = enabled[i:end]     # consecutive passes of one group run as a unit
        for _ in range(options.meta_iterations if enabled[i].group else 1):
            before = options.log.count
            for info in group:
                graph = _run_one(info, graph, options)
            if options.log.count == before:
                break
        i = end
    return graph


class _PassFailed(Exception):
    def __init__(self, info: PassInfo, error: Exception):
        super().__init__(info.name)
        self.info, self.error = info, error


def run_pass(name: str, graph, options: PassOptions | None = None):
    """Runs one registered pass by name (tests and tools); `options` defaults from the graph."""
    info = next((p for p in registered_passes() if p.name == name), None)
    if info is None:
        raise KeyError(f"No pass named {name!r}; registered: "
                       f"{', '.join(p.name for p in registered_passes())}")
    return info.fn(graph, options if options is not None else PassOptions.defaults(graph))


def _run_one(info: PassInfo, graph, options: PassOptions):
    start = time.perf_counter()
    options.log.current_pass = info.name
    try:
        return info.fn(graph, options)
    except Exception as exc:  # noqa: BLE001 - an optimizer bug must not fail the user's run
        if options.fail_on_errors:
            raise
        raise _PassFailed(info, exc) from exc
    finally:
        options.log.current_pass = ""
        options.pass_seconds[info.name] = options.pass_seconds.get(info.name, 0.0) + \
            time.perf_counter() - start
