"""One measurement in a fresh process; the runner starts one per repeat.

Usage:
  python -m bench.worker FRAMEWORK WORKLOAD   run WORKLOAD's function for FRAMEWORK once and print
                                              one JSON line: {"framework", "workload", "version",
                                              "metrics": {metric: value}}
  python -m bench.worker --probe FRAMEWORK    import FRAMEWORK only and print one JSON line:
                                              {"framework", "version", "python"}

Exit status: 0 measured, 1 the workload raised (traceback on stderr), 2 usage error, 3 the
framework cannot be imported in this interpreter (reason on stderr), 4 the workload has no
function for this framework.
"""
import importlib
import json
import sys
import traceback
from types import ModuleType

from bench import lockstep
from bench.frameworks import FRAMEWORKS, Framework

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_NOT_APPLICABLE = 0, 1, 2, 3, 4


def load_workload(name: str) -> ModuleType:
    """Import bench.workloads.NAME (workload modules import no framework at module level)."""
    if not name.isidentifier():
        raise ValueError(f"bad workload name {name!r}")
    return importlib.import_module(f"bench.workloads.{name}")


def _load_framework(framework: Framework) -> ModuleType:
    """Import the framework, or exit EXIT_UNAVAILABLE with the reason on stderr."""
    try:
        return framework.load()
    except Exception as e:  # ImportError, or a broken install failing on import
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(EXIT_UNAVAILABLE)


def _version(module: ModuleType) -> str:
    """The framework's version string, "?" when it has none."""
    return str(getattr(module, "__version__", "?"))


def probe(framework: Framework) -> dict:
    """Import the framework and say which version this interpreter has."""
    module = _load_framework(framework)
    return {"framework": framework.name, "version": _version(module), "python": sys.executable}


def measure(framework: Framework, workload: str) -> dict:
    """Run one workload function for the framework and return its JSON record."""
    module = load_workload(workload)
    run = getattr(module, framework.entry, None)
    if run is None:
        print(f"{workload} has no {framework.entry}()", file=sys.stderr)
        sys.exit(EXIT_NOT_APPLICABLE)
    fw_module = _load_framework(framework)
    metrics = run(fw_module)
    unknown = set(metrics) - set(module.METRICS)
    if unknown:
        raise ValueError(f"{workload}.{framework.entry} returned undeclared metrics {unknown}")
    return {"framework": framework.name, "workload": workload, "version": _version(fw_module),
            "metrics": {k: float(v) for k, v in metrics.items()}}


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--probe" and argv[1] in FRAMEWORKS:
        record = probe(FRAMEWORKS[argv[1]])
    elif len(argv) == 2 and argv[0] in FRAMEWORKS:
        lockstep.next_turn()   # under the runner's lockstep, import only on our turn
        try:
            record = measure(FRAMEWORKS[argv[0]], argv[1])
        except Exception:
            traceback.print_exc()
            return EXIT_FAILED
    else:
        print(__doc__, file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.flush()  # whatever the framework printed comes before our line
    print(json.dumps(record), flush=True)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
