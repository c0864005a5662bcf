"""Benchmark tensorweave against TensorFlow and PyTorch: medians and ratios per workload.

Each measurement runs in a fresh process; the table gives medians over processes and the ratio
tensorweave / other framework.

Usage:
  python -m bench.run [WORKLOAD ...] [--frameworks tensorweave,tensorflow,torch] [--repeats 8]
                      [--json OUT.json] [--timeout 900] [--list] [--opt-off]
                      [--pass-contribution]

--opt-off adds tensorweave with its graph optimizer off (column "tw/opt-off": below 1 means
the optimizer makes the workload faster); --pass-contribution adds tensorweave with each pass
switched off in turn (column "tw/no-<pass>": below 1 means that pass helps).

With no WORKLOAD, every module in bench/workloads/ runs. For each workload, `--repeats` rounds
each start one `python -m bench.worker FRAMEWORK WORKLOAD` per framework, all at once, and run
them in lockstep (bench/lockstep.py): one at a time, taking turns of at least a second of
timed batches, so a drift of the machine hits every framework alike; each process prints one
JSON line of metrics. tensorweave runs with this interpreter; TensorFlow and PyTorch run with
`$TW_BENCH_REF_PYTHON` (see bench/README.md). A framework that does not import there is reported
as "not installed"; a workload that fails is reported as "failed" with its last error line. Neither
is an error of the runner, which exits 0 unless its own arguments are wrong.
"""
import argparse
import json
import os
import pkgutil
import platform
import subprocess
import sys
from pathlib import Path

import bench.workloads
from bench import lockstep, worker
from bench.frameworks import (
    BASE_FRAMEWORKS,
    FRAMEWORKS,
    OPT_OFF,
    OURS,
    PASS_VARIANTS,
    Framework,
    ref_python,
)
from bench.metrics import ratio
from bench.report import (
    FAILED,
    NOT_APPLICABLE,
    NOT_INSTALLED,
    OK,
    Outcome,
    format_table,
    ratio_columns,
)

REPO_ROOT = Path(__file__).resolve().parent.parent


def discover_workloads() -> list[str]:
    """Names of the workload modules in bench/workloads/, sorted."""
    return sorted(m.name for m in pkgutil.iter_modules(bench.workloads.__path__)
                  if not m.name.startswith("_"))


def _last_line(text: str) -> str:
    """The last non-empty line: a traceback's exception, or the worker's reason."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _command(fw: Framework, args: list[str]) -> tuple[list[str], dict]:
    """The argv and environment of `python -m bench.worker ARGS` for the framework."""
    return [fw.python(), "-m", "bench.worker", *args], {**os.environ, **dict(fw.env)}


def _result(returncode: int, stdout: str, stderr: str) -> tuple[int, dict | None, str]:
    """(exit code, record, reason) of a worker that exited."""
    if returncode != worker.EXIT_OK:
        return returncode, None, _last_line(stderr) or f"exit {returncode}"
    try:
        return returncode, json.loads(_last_line(stdout)), ""
    except json.JSONDecodeError:
        return worker.EXIT_FAILED, None, f"no JSON line on stdout: {_last_line(stdout)!r}"


def run_worker(fw: Framework, args: list[str], timeout: float) -> tuple[int, dict | None, str]:
    """Run `python -m bench.worker ARGS` alone; return (exit code, record, reason)."""
    command, env = _command(fw, args)
    try:
        proc = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=timeout, env=env)
    except FileNotFoundError:
        return worker.EXIT_UNAVAILABLE, None, f"no interpreter {fw.python()}"
    except subprocess.TimeoutExpired:
        return worker.EXIT_FAILED, None, f"timed out after {timeout:g} s"
    return _result(proc.returncode, proc.stdout, proc.stderr)


def run_round(workload: str, frameworks: list[str], timeout: float
              ) -> dict[str, tuple[int, dict | None, str]]:
    """One worker per framework on `workload`, run in lockstep (bench/lockstep.py)."""
    commands = {fw: _command(FRAMEWORKS[fw], [fw, workload]) for fw in frameworks}
    finished = lockstep.run_round(commands, REPO_ROOT, timeout)
    return {fw: (worker.EXIT_FAILED, None, f"a turn took over {timeout:g} s") if f.timed_out
            else _result(f.returncode, f.stdout, f.stderr) for fw, f in finished.items()}


def probe(fw: Framework, timeout: float) -> dict:
    """Whether the framework imports in its interpreter, and which version it is."""
    code, record, reason = run_worker(fw, ["--probe", fw.name], timeout)
    if code == worker.EXIT_OK:
        return {"status": OK, **record}
    return {"status": NOT_INSTALLED, "python": fw.python(), "detail": reason}


def _log(message: str) -> None:
    """Progress goes to stderr, so stdout holds only the tables."""
    print(message, file=sys.stderr, flush=True)


def run_workload(name: str, frameworks: list[str], probes: dict[str, dict], repeats: int,
                 timeout: float) -> dict[str, Outcome]:
    """Measure one workload in `repeats` rounds, each running a worker per available framework
    in lockstep."""
    module = worker.load_workload(name)
    outcomes: dict[str, Outcome] = {}
    for fw_name in frameworks:
        fw = FRAMEWORKS[fw_name]
        if probes[fw_name]["status"] != OK:
            outcomes[fw_name] = Outcome(NOT_INSTALLED, detail=probes[fw_name]["detail"])
        elif not hasattr(module, fw.entry):
            outcomes[fw_name] = Outcome(NOT_APPLICABLE)
        else:
            outcomes[fw_name] = Outcome()
    for round_ in range(1, repeats + 1):
        running = [fw for fw, outcome in outcomes.items() if outcome.status == OK]
        if not running:
            break
        _log(f"{name}: round {round_}/{repeats} ({', '.join(running)})")
        for fw_name, (code, record, reason) in run_round(name, running, timeout).items():
            outcome = outcomes[fw_name]
            if code == worker.EXIT_OK:
                outcome.samples.append(record["metrics"])
            else:  # failures are deterministic enough: do not repeat them
                outcome.status, outcome.detail = FAILED, reason
    return outcomes


def environment(probes: dict[str, dict]) -> dict:
    """Where the numbers were measured."""
    return {"python": sys.executable, "ref_python": ref_python(), "cpu_count": os.cpu_count(),
            "platform": platform.platform(), "frameworks": probes}


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n")[0])
    parser.add_argument("workloads", nargs="*", help="workload modules (default: all)")
    parser.add_argument("--frameworks", default=",".join(BASE_FRAMEWORKS),
                        help="comma-separated, from: " + ", ".join(FRAMEWORKS))
    parser.add_argument("--opt-off", action="store_true",
                        help=f"also run tensorweave with its graph optimizer off ({OPT_OFF})")
    parser.add_argument("--pass-contribution", action="store_true",
                        help="also run tensorweave with each optimizer pass off in turn")
    parser.add_argument("--repeats", type=int, default=8, help="processes per framework")
    parser.add_argument("--json", metavar="OUT", help="also write all samples and medians here")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per process")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    args = parser.parse_args(argv)
    available = discover_workloads()
    args.workloads = args.workloads or available
    args.frameworks = [f.strip() for f in args.frameworks.split(",") if f.strip()]
    if args.opt_off and OPT_OFF not in args.frameworks:
        args.frameworks.append(OPT_OFF)
    if args.pass_contribution:
        args.frameworks += [v for v in PASS_VARIANTS if v not in args.frameworks]
    for bad in [w for w in args.workloads if w not in available]:
        parser.error(f"unknown workload {bad!r}; known: {', '.join(available)}")
    for bad in [f for f in args.frameworks if f not in FRAMEWORKS]:
        parser.error(f"unknown framework {bad!r}; known: {', '.join(FRAMEWORKS)}")
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.list:
        for name in args.workloads:
            module = worker.load_workload(name)
            print(f"{name}: {(module.__doc__ or '').strip().splitlines()[0]}")
            for metric, m in module.METRICS.items():
                print(f"  {metric} ({m.unit}): {m.description}")
        return 0
    probes = {fw: probe(FRAMEWORKS[fw], args.timeout) for fw in args.frameworks}
    for fw, p in probes.items():
        where = p["python"]
        print(f"# {fw}: {p.get('version', p['status'])} ({where})"
              + (f": {p['detail']}" if p["status"] != OK else ""))
    if os.environ.get("OPENBLAS_CORETYPE"):
        print(f"# OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']}: NumPy's OpenBLAS runs "
              "that core's kernels, whatever this CPU could run (see bench/README.md)")
    results = {}
    for name in args.workloads:
        module = worker.load_workload(name)
        outcomes = run_workload(name, args.frameworks, probes, args.repeats, args.timeout)
        title = f"\n{name}: {(module.__doc__ or '').strip().splitlines()[0]}"
        print("\n".join(format_table(title, module.METRICS, outcomes)), flush=True)
        results[name] = {
            "metrics": {m: vars(metric) for m, metric in module.METRICS.items()},
            "results": {fw: o.to_json(module.METRICS) for fw, o in outcomes.items()},
            "ratios": {fw: {m: ratio(outcomes[OURS].median(m), outcomes[fw].median(m))
                            for m in module.METRICS}
                       for fw in ratio_columns(args.frameworks)},
        }
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": environment(probes), "repeats": args.repeats,
                       "workloads": results}, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
