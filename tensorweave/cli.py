"""The `tensorweave` command.

    tensorweave inspect-checkpoint PATH [--tensor NAME] [--all]
    tensorweave to-tensorflow-checkpoint PATH
    tensorweave serve --model_name NAME --model_base_path PATH [--rest_api_port 8501] [--port P]
    tensorweave server --cluster_spec SPEC --job_name JOB [--task_id N]
    tensorweave saved-model show --dir DIR [--tag_set TAGS [--signature_def KEY]] [--all]
    tensorweave saved-model run --dir DIR --tag_set TAGS --signature_def KEY --input_exprs E
    tensorweave explain-placement GRAPH NODE... [--cpus N] [--soft]

inspect-checkpoint: PATH is a checkpoint prefix or a directory (its newest checkpoint). Without
options it lists every tensor with its dtype and shape; `--tensor NAME` prints one tensor's
value, `--all` every tensor's value.

to-tensorflow-checkpoint: rewrites the checkpoint at PATH (a prefix or a directory's newest
checkpoint) in TensorFlow's format, for TensorFlow's Saver and readers; tensorweave reads both.

serve: serves the newest SavedModel version under PATH (PATH/<version>/) over TensorFlow
Serving's REST API on 127.0.0.1 (`--rest_api_host 0.0.0.0` to listen on every interface) until
interrupted, switching to a newer version when one appears (checked every
`--file_system_poll_wait_seconds`); with `--port`, TensorFlow Serving's gRPC API as well.

server: runs task N of job JOB of the cluster SPEC (TensorFlow's grpc_tensorflow_server
syntax, e.g. "ps|localhost:2222,worker|localhost:2223;localhost:2224") until interrupted,
printing its target for `tf.Session(target)`.

saved-model: TensorFlow's saved_model_cli show and run, with its output (TAGS is a
comma-separated tag-set; E is `name=<Python literal>` items separated by ';').

explain-placement: GRAPH is a GraphDef file (binary or text, as tf.train.write_graph writes);
prints, for each NODE, the device a session with N CPU devices places it on and why.

Exit status 0 on success, 1 when the input cannot be read or placed (the reason goes to stderr),
2 for a usage error.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

_SECURITY_EPILOG = ("A shared token and TLS come from the environment: TENSORWEAVE_TOKEN_FILE "
                    "(or TENSORWEAVE_TOKEN), TENSORWEAVE_TLS_CERT, TENSORWEAVE_TLS_KEY, "
                    "TENSORWEAVE_TLS_CA and TENSORWEAVE_TLS_CLIENT_AUTH=1 "
                    "(tensorweave/distributed/security.py).")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tensorweave",
                                     description="tensorweave command-line tools")
    commands = parser.add_subparsers(dest="command", required=True)
    inspect = commands.add_parser(
        "inspect-checkpoint", help="list or print the tensors of a checkpoint",
        description="Lists the tensors of a checkpoint (name, dtype, shape) or prints values.")
    inspect.add_argument("path", help="checkpoint prefix, or a directory with a 'checkpoint' "
                         "state file")
    inspect.add_argument("--tensor", metavar="NAME", help="print the value of this tensor")
    inspect.add_argument("--all", action="store_true", help="print every tensor's value")
    convert = commands.add_parser(
        "to-tensorflow-checkpoint", help="rewrite a checkpoint in TensorFlow's format",
        description="Rewrites a checkpoint in TensorFlow's format (tensorweave reads both).")
    convert.add_argument("path", help="checkpoint prefix, or a directory with a 'checkpoint' "
                         "state file")
    serve = commands.add_parser(
        "serve", help="serve a SavedModel over TensorFlow Serving's REST API",
        description="Serves the newest version of a SavedModel base path over TensorFlow "
        "Serving's REST API.", epilog=_SECURITY_EPILOG)
    serve.add_argument("--model_name", required=True, help="the name requests use")
    serve.add_argument("--model_base_path", required=True,
                       help="directory of integer-named SavedModel versions")
    serve.add_argument("--rest_api_port", type=int, default=8501, help="port (default 8501)")
    serve.add_argument("--port", type=int, default=None,
                       help="also serve TensorFlow Serving's gRPC API on this port")
    serve.add_argument("--rest_api_host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--file_system_poll_wait_seconds", type=float, default=1.0,
                       help="how often to look for a newer version (default 1; 0: never)")
    server = commands.add_parser(
        "server", help="run one task of a cluster (tf.train.Server) until interrupted",
        description="Runs the tf.train.Server of one task of a cluster, as TensorFlow's "
        "grpc_tensorflow_server does.", epilog=_SECURITY_EPILOG)
    server.add_argument("--cluster_spec", required=True,
                        help="JOB|HOST:PORT;HOST:PORT,JOB|HOST:PORT... (tasks of a job are "
                        "separated by ';', jobs by ',')")
    server.add_argument("--job_name", required=True, help="this task's job")
    server.add_argument("--task_id", type=int, default=0, help="this task's index (default 0)")
    saved_model = commands.add_parser(
        "saved-model", help="show or run a SavedModel, as saved_model_cli does",
        description="Shows or runs a SavedModel, as TensorFlow's saved_model_cli does.")
    actions = saved_model.add_subparsers(dest="action", required=True)
    for action in ("show", "run"):
        sub = actions.add_parser(action)
        sub.add_argument("--dir", required=True, help="the SavedModel directory")
        sub.add_argument("--tag_set", required=action == "run",
                            help="comma-separated tags of a MetaGraphDef")
        sub.add_argument("--signature_def", required=action == "run",
                            help="a SignatureDef key")
        if action == "show":
            sub.add_argument("--all", action="store_true", help="show everything")
        else:
            sub.add_argument("--input_exprs", required=True,
                                help="'name=<Python literal>' items separated by ';'")
    explain = commands.add_parser(
        "explain-placement", help="say why nodes of a graph land on their devices",
        description="Places a GraphDef's nodes as a session would and says why each named "
        "node landed on its device.")
    explain.add_argument("graph", help="GraphDef file, binary or text")
    explain.add_argument("nodes", nargs="+", metavar="NODE", help="node names to explain")
    explain.add_argument("--cpus", type=int, default=1, help="number of CPU devices")
    explain.add_argument("--soft", action="store_true", help="allow soft placement")
    return parser


def _print_value(name: str, value, out) -> None:
    print(f"tensor_name:  {name}", file=out)
    print(value if not isinstance(value, np.ndarray) else np.array2string(value, threshold=1000),
          file=out)


def inspect_checkpoint(path: str, tensor: str | None = None, all_tensors: bool = False,
                       out=None) -> int:
    """Prints what `tensorweave inspect-checkpoint` prints; returns the exit status."""
    from tensorweave.framework import errors
    from tensorweave.train.checkpoint_reader import load_checkpoint
    out = out or sys.stdout
    try:
        reader = load_checkpoint(path)
        if tensor is not None:
            _print_value(tensor, reader.get_tensor(tensor), out)
        elif all_tensors:
            for name in sorted(reader.get_variable_to_shape_map()):
                _print_value(name, reader.get_tensor(name), out)
        else:
            out.write(reader.debug_string().decode())
    except (errors.OpError, ValueError, OSError) as e:
        message = e.message if isinstance(e, errors.OpError) else str(e)
        print(f"tensorweave inspect-checkpoint: {type(e).__name__}: {message}",
              file=sys.stderr)
        return 1
    return 0


def to_tensorflow_checkpoint(path: str, out=None) -> int:
    """Does what `tensorweave to-tensorflow-checkpoint` does; returns the exit status."""
    from tensorweave.framework import errors
    from tensorweave.train.checkpoint_reader import checkpoint_prefix
    from tensorweave.train.tf_bundle_writer import rewrite_as_tensorflow
    out = out or sys.stdout
    try:
        prefix = checkpoint_prefix(path)
        rewrite_as_tensorflow(prefix)
    except (errors.OpError, ValueError, OSError) as e:
        message = e.message if isinstance(e, errors.OpError) else str(e)
        print(f"tensorweave to-tensorflow-checkpoint: {type(e).__name__}: {message}",
              file=sys.stderr)
        return 1
    print(f"{prefix}: in TensorFlow's checkpoint format", file=out)
    return 0


def serve(name: str, base_path: str, port: int, host: str, poll_seconds: float = 1.0,
          grpc_port: int | None = None, out=None) -> int:
    """Does what `tensorweave serve` does: serves until interrupted; returns the exit status."""
    from tensorweave.framework import errors
    from tensorweave.serving import ModelServer
    out = out or sys.stdout
    try:
        server = ModelServer(name, base_path, port=port, host=host, poll_seconds=poll_seconds,
                             grpc_port=grpc_port)
    except (errors.OpError, OSError, RuntimeError) as e:
        message = e.message if isinstance(e, errors.OpError) else str(e)
        print(f"tensorweave serve: {type(e).__name__}: {message}", file=sys.stderr)
        return 1
    print(f"Serving {name} version {server.model.version} at http://{host}:{server.port}"
          f"/v1/models/{name}" + (f" and gRPC {host}:{server.grpc_port}"
                                  if server.grpc_port is not None else ""),
          file=out, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def parse_cluster_spec(spec: str) -> dict:
    """{job: [addresses]} of TensorFlow's grpc_tensorflow_server `--cluster_spec` syntax.

    Raises:
      ValueError: for a job without `|` or without addresses.
    """
    jobs = {}
    for job in spec.split(","):
        name, bar, addresses = job.partition("|")
        tasks = [a for a in addresses.split(";") if a]
        if not bar or not name or not tasks:
            raise ValueError(f"Invalid job specification in --cluster_spec: {job!r} (expected "
                             "JOB|HOST:PORT;HOST:PORT)")
        jobs[name] = tasks
    return jobs


def run_server(spec: str, job_name: str, task_id: int, out=None) -> int:
    """Does what `tensorweave server` does: serves until interrupted; returns the status."""
    from tensorweave.distributed.server import Server
    from tensorweave.framework import errors
    out = out or sys.stdout
    try:
        server = Server(parse_cluster_spec(spec), job_name=job_name, task_index=task_id)
    except (ValueError, errors.OpError) as e:
        message = e.message if isinstance(e, errors.OpError) else str(e)
        print(f"tensorweave server: {type(e).__name__}: {message}", file=sys.stderr)
        return 1
    print(f"Started server with target: {server.target}", file=out, flush=True)
    try:
        server.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def saved_model_command(args, out=None) -> int:
    """Does what `tensorweave saved-model show|run` does; returns the exit status."""
    from tensorweave.framework import errors
    from tensorweave.saved_model import cli as saved_model_cli
    out = out or sys.stdout
    try:
        if args.action == "show":
            text = saved_model_cli.show(args.dir, args.tag_set, args.signature_def, args.all)
        else:
            text = saved_model_cli.run(args.dir, args.tag_set, args.signature_def,
                                       args.input_exprs)
    except (errors.OpError, ValueError, RuntimeError, OSError) as e:
        message = e.message if isinstance(e, errors.OpError) else str(e)
        print(f"tensorweave saved-model {args.action}: {type(e).__name__}: {message}",
              file=sys.stderr)
        return 1
    out.write(text)
    return 0


def _read_graph_def(path: str):
    from google.protobuf import text_format
    from google.protobuf.message import DecodeError

    from tensorweave.protos.graph_pb2 import GraphDef
    with open(path, "rb") as f:
        content = f.read()
    graph_def = GraphDef()
    try:
        graph_def.ParseFromString(content)
    except DecodeError:
        text_format.Merge(content.decode("utf-8"), graph_def)
    return graph_def


def explain_placement(path: str, nodes: list[str], cpus: int = 1, soft: bool = False,
                      out=None) -> int:
    """Prints what `tensorweave explain-placement` prints; returns the exit status."""
    import tensorweave as tf
    from tensorweave.runtime.placement import explain
    out = out or sys.stdout
    try:
        graph = tf.Graph()
        with graph.as_default():
            tf.import_graph_def(_read_graph_def(path), name="")
        config = tf.ConfigProto(device_count={"CPU": cpus}, allow_soft_placement=soft)
        with tf.Session(graph=graph, config=config) as sess:
            for name in nodes:
                print(explain(sess, name), file=out)
    except (tf.errors.OpError, ValueError, KeyError, OSError) as e:
        message = e.message if isinstance(e, tf.errors.OpError) else str(e)
        print(f"tensorweave explain-placement: {type(e).__name__}: {message}", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "inspect-checkpoint":
        return inspect_checkpoint(args.path, args.tensor, args.all)
    if args.command == "to-tensorflow-checkpoint":
        return to_tensorflow_checkpoint(args.path)
    if args.command == "serve":
        return serve(args.model_name, args.model_base_path, args.rest_api_port,
                     args.rest_api_host, args.file_system_poll_wait_seconds, args.port)
    if args.command == "server":
        return run_server(args.cluster_spec, args.job_name, args.task_id)
    if args.command == "saved-model":
        return saved_model_command(args)
    if args.command == "explain-placement":
        return explain_placement(args.graph, args.nodes, args.cpus, args.soft)
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
