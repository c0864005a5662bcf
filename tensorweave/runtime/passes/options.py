"""Which passes run, with which limits, and the log of what they rewrote.

TensorFlow users switch the optimizer through `ConfigProto.graph_options`, which holds the
switches of TensorFlow's two optimizers, and tensorweave follows each as TF 2.21 does:

* `rewrite_options` (RewriterConfig) switches Grappler, which does nearly everything. Per pass:
  DEFAULT and ON run it, AGGRESSIVE too (and allows rewrites that round differently, e.g.
  dropping x * 1.0, which passes a denormal x through), OFF turns it off.
  `constant_folding` also owns Grappler's algebra on constants (constant_push_down.py: x / c ->
  x * (1 / c), constants of add/mul chains combined). `disable_model_pruning`,
  `disable_meta_optimizer` (every Grappler pass off), `memory_optimization` (NO_MEM_OPT turns
  the in-place pass off), `meta_optimizer_iterations` (ONE or TWO rounds of the main group),
  `min_graph_nodes` (Grappler leaves a graph of fewer nodes alone: 0 means TF's 4, a negative
  value never skips; counted over the whole tf.Graph, as TF counts the graph it optimizes) and
  `fail_on_optimizer_errors`.
* `optimizer_options` switches the older graph optimizer, which only folds constants and
  eliminates common subexpressions: `opt_level` L1 (the default) runs both, L0 neither,
  `do_constant_folding` and `do_common_subexpression_elimination` turn one back on.
  `max_folded_constant_in_bytes` caps a folded constant (0 means 10 MiB). So L0 alone changes
  nothing while Grappler runs (a known TF wart, kept): the way to switch every rewrite off is
  L0 together with `disable_meta_optimizer`, as bench/workloads/optimizer_gain.py does.

A pass toggled by `ANY` (fed_shapes) is no optimization but what the others rely on: it runs
whenever any switch is on, and no switch turns it off alone.

For benchmarks, two environment variables override the config: `TW_OPT_LEVEL=0` turns every
pass off (1 changes nothing), and `TW_PASSES_OFF=constant_folding,remapping` turns the named
switches off. `TW_LOG_REWRITES=1` logs every rewrite (logger `tensorweave.passes`, INFO, to
stderr if nothing else handles it); `PassOptions.log` keeps them for tests either way.
"""
from __future__ import annotations

import logging
import os
import sys

_log = logging.getLogger("tensorweave.passes")

# Switch names: RewriterConfig's field names, plus model_pruning for disable_model_pruning.
MODEL_PRUNING = "model_pruning"
DEPENDENCY = "dependency_optimization"
CONSTANT_FOLDING = "constant_folding"
# Grappler's constant-folding algebra, on with its constant folding only (not the old optimizer's).
CONSTANT_PUSH_DOWN = "constant_push_down"
# Grappler's canonical order of commutative inputs, on with its subgraph elimination only.
COMMUTATIVE_ORDER = "canonical_inputs"
ARITHMETIC = "arithmetic_optimization"
CSE = "common_subgraph_elimination"
LAYOUT = "layout_optimizer"
REMAPPING = "remapping"
MEMORY = "memory_optimization"
# Not a switch: a pass toggled by ANY runs whenever any switch is on (the passes that keep the
# others' assumptions true, such as shapes that hold under this run's feeds).
ANY = "any"
SWITCHES = (MODEL_PRUNING, DEPENDENCY, CONSTANT_FOLDING, CONSTANT_PUSH_DOWN, ARITHMETIC, CSE,
            COMMUTATIVE_ORDER, LAYOUT, REMAPPING, MEMORY)
_TOGGLE_FIELDS = (DEPENDENCY, CONSTANT_FOLDING, ARITHMETIC, CSE, LAYOUT, REMAPPING)

DEFAULT_MAX_FOLDED_BYTES = 10 << 20
# RewriterConfig.Toggle and MemOptType values (TensorFlow's numbers).
_DEFAULT, _ON, _OFF, _AGGRESSIVE = 0, 1, 2, 3
_NO_MEM_OPT = 1
_L0 = -1
_ONE_ITERATION = 1
_GRAPPLER_MIN_GRAPH_NODES = 4    # what RewriterConfig.min_graph_nodes = 0 stands for


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false", "False")


class RewriteLog:
    """Every rewrite of every pass, in order: (pass, rewrite kind, node, detail)."""

    def __init__(self, echo: bool | None = None):
        self.entries: list[tuple[str, str, str, str]] = []
        self.current_pass = ""
        self.echo = _env_flag("TW_LOG_REWRITES") if echo is None else echo
        if self.echo:
            _ensure_handler()

    @property
    def count(self) -> int:
        return len(self.entries)

    def record(self, kind: str, node: str, detail: str = "") -> None:
        self.entries.append((self.current_pass, kind, node, detail))
        if self.echo:
            _log.info("[%s] %s %s%s", self.current_pass, kind, node,
                      f": {detail}" if detail else "")
        elif _log.isEnabledFor(logging.DEBUG):
            _log.debug("[%s] %s %s%s", self.current_pass, kind, node,
                       f": {detail}" if detail else "")

    def kinds(self, pass_name: str | None = None) -> list[str]:
        """The rewrite kinds recorded (by one pass, or all): what tests assert on."""
        return [k for p, k, _, _ in self.entries if pass_name is None or p == pass_name]

    def __iter__(self):
        return iter(self.entries)


def _ensure_handler() -> None:
    if _log.level == logging.NOTSET or _log.level > logging.INFO:
        _log.setLevel(logging.INFO)
    logger, handled = _log, False
    while logger is not None:
        if logger.handlers:
            handled = True
            break
        logger = logger.parent if logger.propagate else None
    if not handled:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("tensorweave.passes: %(message)s"))
        _log.addHandler(handler)


class PassOptions:
    """The switches and limits of one run signature's optimization, and its rewrite log.

    `preserve` holds the names of the run's target nodes (the sinks of the pruned graph that
    are not `_Retval`s): passes never remove or rename them. Nodes read by a `_Retval` are
    preserved too (rewrite.py checks that directly).
    """

    def __init__(self, switches=SWITCHES, preserve=(), max_folded_bytes=DEFAULT_MAX_FOLDED_BYTES,
                 meta_iterations: int = 2, fail_on_errors: bool = False,
                 aggressive=(), log: RewriteLog | None = None):
        self.switches = frozenset(switches)
        self.preserve = frozenset(preserve)
        self.max_folded_bytes = max_folded_bytes
        self.meta_iterations = meta_iterations
        self.fail_on_errors = fail_on_errors
        self.aggressive = frozenset(aggressive)   # switches set to AGGRESSIVE
        self.log = log if log is not None else RewriteLog()
        self.pass_seconds: dict[str, float] = {}

    def enabled(self, switch: str) -> bool:
        if switch == ANY:
            return bool(self.switches)
        return switch in self.switches

    @classmethod
    def defaults(cls, graph=None, **kwargs) -> PassOptions:
        """Every pass on, targets taken from `graph`'s sinks (for running a pass alone)."""
        return cls(preserve=targets_of(graph) if graph is not None else (), **kwargs)

    @classmethod
    def from_config(cls, config, graph=None, graph_nodes: int | None = None) -> PassOptions:
        """The options a ConfigProto (or None) asks for; see the module docstring.
        `graph_nodes`: the size of the user's whole graph (None: large enough for Grappler)."""
        switches, kwargs, aggressive = set(SWITCHES), {}, set()
        graph_options = config.graph_options if config is not None else None
        if graph_options is not None:
            opt = graph_options.optimizer_options
            rw = graph_options.rewrite_options
            switches = _grappler_switches(rw, aggressive)
            min_nodes = rw.min_graph_nodes or _GRAPPLER_MIN_GRAPH_NODES
            if graph_nodes is not None and graph_nodes < min_nodes:
                switches.clear()
            level_on = opt.opt_level != _L0
            if level_on or opt.do_constant_folding:
                switches.add(CONSTANT_FOLDING)
            if level_on or opt.do_common_subexpression_elimination:
                switches.add(CSE)
            if opt.max_folded_constant_in_bytes > 0:
                kwargs["max_folded_bytes"] = opt.max_folded_constant_in_bytes
            if rw.meta_optimizer_iterations == _ONE_ITERATION:
                kwargs["meta_iterations"] = 1
            kwargs["fail_on_errors"] = rw.fail_on_optimizer_errors
        elif graph_nodes is not None and graph_nodes < _GRAPPLER_MIN_GRAPH_NODES:
            switches = {CONSTANT_FOLDING, CSE}      # the old optimizer's, at its default L1
        level = os.environ.get("TW_OPT_LEVEL", "")
        if level == "0":
            switches.clear()
        for name in os.environ.get("TW_PASSES_OFF", "").split(","):
            switches.discard(name.strip())
        _drop_orphans(switches)
        return cls(switches, targets_of(graph) if graph is not None else (),
                   aggressive=aggressive, **kwargs)


def _drop_orphans(switches: set) -> None:
    """Grappler's parts of a switch go with it: the push-down with constant folding, the input
    order with subgraph elimination."""
    if CONSTANT_FOLDING not in switches:
        switches.discard(CONSTANT_PUSH_DOWN)
    if CSE not in switches:
        switches.discard(COMMUTATIVE_ORDER)


def _grappler_switches(rw, aggressive: set) -> set:
    """The passes Grappler runs under RewriterConfig `rw` (AGGRESSIVE ones added to
    `aggressive`)."""
    if rw.disable_meta_optimizer:
        return set()
    switches = set(SWITCHES)
    for field in _TOGGLE_FIELDS:
        value = getattr(rw, field)
        if value == _OFF:
            switches.discard(field)
        elif value == _AGGRESSIVE:
            aggressive.add(field)
    _drop_orphans(switches)
    if rw.disable_model_pruning:
        switches.discard(MODEL_PRUNING)
    if rw.memory_optimization == _NO_MEM_OPT:
        switches.discard(MEMORY)
    return switches


def targets_of(graph) -> set[str]:
    """The run's targets in a pruned graph: nodes nothing consumes, other than `_Retval`s."""
    consumed = set()
    for node in graph:
        consumed.update(s for s, _ in node.inputs)
        consumed.update(node.control_inputs)
    return {n.name for n in graph if n.name not in consumed and n.op != "_Retval"}
