"""A session's warning when the graph grows between its runs (ops built in a training loop)."""
from __future__ import annotations

import logging

_log = logging.getLogger("tensorweave")

_GROWTH_RUNS_BEFORE_WARNING = 10


class GraphGrowthWatch:
    """Mixin for a session core with a `graph`: `note_graph_growth()` before each run."""

    def watch_graph_growth(self, graph) -> None:
        self._last_version = graph.version
        self._growth_runs = 0
        self._growth_warned = False

    def note_graph_growth(self) -> None:
        """Warns once when the graph keeps growing between runs (ops built in a loop)."""
        version = self.graph.version
        if version == self._last_version:
            self._growth_runs = 0
            return
        self._last_version = version
        self._growth_runs += 1
        if self._growth_runs >= _GROWTH_RUNS_BEFORE_WARNING and not self._growth_warned:
            self._growth_warned = True
            newest = self.graph._ops[-1]
            file, line = newest.creation_site
            _log.warning(
                "The graph grew between each of the last %d runs of this session: ops are "
                "being created inside the training loop (the newest, %r, at %s:%d). Build them "
                "once before the loop; every new op costs memory and a new run plan.",
                self._growth_runs, newest.name, file, line)
