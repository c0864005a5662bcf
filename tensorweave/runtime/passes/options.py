"""Which passes run, with which limits, and the log of what they rewrote.

TensorFlow users switch the optimizer through `ConfigProto.graph_options`:

* `optimizer_options.opt_level`: L1 (the default) runs every default pass; L0 turns all of them
  off. `do_constant_folding` and `do_common_subexpression_elimination` turn those two back on
  ("the flags applied are those the level implies OR'd with those set").
  `max_folded_constant_in_bytes` caps a folded constant (0 means 10 MiB).
* `rewrite_options` (RewriterConfig), per pass: DEFAULT follows the level, ON and AGGRESSIVE
  force it on (AGGRESSIVE also allows rewrites that round differently, e.g. dropping x * 1.0,
  which passes a denormal x through), OFF turns it off; `disable_model_pruning`,
  `disable_meta_optimizer` (every rewrite off), `memory_optimization` (NO_MEM_OPT turns the
  in-place pass off), `meta_optimizer_iterations` (ONE or TWO rounds of the main group),
  `min_graph_nodes` (smaller graphs are left alone) and `fail_on_optimizer_errors`.

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
ARITHMETIC = "arithmetic_optimization"
CSE = "common_subgraph_elimination"
LAYOUT = "layout_optimizer"
REMAPPING = "remapping"
MEMORY = "memory_optimization"
# Not a switch: a pass toggled by ANY runs whenever any switch is on (the passes that keep the
# others' assumptions true, such as shapes that hold under this run's feeds).
ANY = "any"
SWITCHES = (MODEL_PRUNING, DEPENDENCY, CONSTANT_FOLDING, ARITHMETIC, CSE, LAYOUT, REMAPPING,
            MEMORY)
_TOGGLE_FIELDS = (DEPENDENCY, CONSTANT_FOLDING, ARITHMETIC, CSE, LAYOUT, REMAPPING)

DEFAULT_MAX_FOLDED_BYTES = 10 << 20
# RewriterConfig.Toggle and MemOptType values (TensorFlow's numbers).
_DEFAULT, _ON, _OFF, _AGGRESSIVE = 0, 1, 2, 3
_NO_MEM_OPT = 1
_L0 = -1
_ONE_ITERATION = 1


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
                 meta_iterations: int = 2, fail_on_errors: bool = False, min_graph_nodes: int = 0,
                 aggressive=(), log: RewriteLog | None = None):
        self.switches = frozenset(switches)
        self.preserve = frozenset(preserve)
        self.max_folded_bytes = max_folded_bytes
        self.meta_iterations = meta_iterations
        self.fail_on_errors = fail_on_errors
        self.min_graph_nodes = min_graph_nodes
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
    def from_config(cls, config, graph=None) -> PassOptions:
        """The options a ConfigProto (or None) asks for; see the module docstring."""
        switches, kwargs, aggressive = set(SWITCHES), {}, set()
        graph_options = config.graph_options if config is not None else None
        if graph_options is not None:
            opt = graph_options.optimizer_options
            rw = graph_options.rewrite_options
            level_on = opt.opt_level != _L0
            if not level_on:
                switches.clear()
            for field in _TOGGLE_FIELDS:
                value = getattr(rw, field)
                if value in (_ON, _AGGRESSIVE):
                    switches.add(field)
                elif value == _OFF:
                    switches.discard(field)
                if value == _AGGRESSIVE:
                    aggressive.add(field)
            if rw.disable_model_pruning:
                switches.discard(MODEL_PRUNING)
            if rw.memory_optimization == _NO_MEM_OPT:
                switches.discard(MEMORY)
            elif rw.memory_optimization > _NO_MEM_OPT:
                switches.add(MEMORY)
            if rw.disable_meta_optimizer:
                switches.clear()
            if opt.do_constant_folding:
                switches.add(CONSTANT_FOLDING)
            if opt.do_common_subexpression_elimination:
                switches.add(CSE)
            if opt.max_folded_constant_in_bytes > 0:
                kwargs["max_folded_bytes"] = opt.max_folded_constant_in_bytes
            if rw.meta_optimizer_iterations == _ONE_ITERATION:
                kwargs["meta_iterations"] = 1
            kwargs["fail_on_errors"] = rw.fail_on_optimizer_errors
            kwargs["min_graph_nodes"] = max(rw.min_graph_nodes, 0)
        level = os.environ.get("TW_OPT_LEVEL", "")
        if level == "0":
            switches.clear()
        for name in os.environ.get("TW_PASSES_OFF", "").split(","):
            switches.discard(name.strip())
        return cls(switches, targets_of(graph) if graph is not None else (),
                   aggressive=aggressive, **kwargs)


def targets_of(graph) -> set[str]:
    """The run's targets in a pruned graph: nodes nothing consumes, other than `_Retval`s."""
    consumed = set()
    for node in graph:
        consumed.update(s for s, _ in node.inputs)
        consumed.update(node.control_inputs)
    return {n.name for n in graph if n.name not in consumed and n.op != "_Retval"}
