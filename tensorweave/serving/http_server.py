"""TensorFlow Serving's REST API over HTTP, for one model (`tensorweave serve`).

    GET  /v1/models/NAME[/versions/N]            the version's status
    GET  /v1/models/NAME[/versions/N]/metadata   its signatures
    POST /v1/models/NAME[/versions/N]:predict    {"instances": ...} or {"inputs": ...}
    POST /v1/models/NAME[/versions/N]:classify   {"examples": [...], "context": {...}}
    POST /v1/models/NAME[/versions/N]:regress    the same

The newest version under the base path is served; a newer one that appears is loaded and
swapped in (serving/versions.py). Errors answer `{"error": message}` with 400 (bad request,
or an error running the model), 404 (no such model, version or path), 413 (a body over the
size limit), 401 (no token, when the server requires one) or 500 (anything else; the
connection is never dropped without an answer). The server listens on 127.0.0.1 unless told
otherwise, speaks TLS and requires a token as distributed/security.py configures, and each
request runs on its own thread.
"""
from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format

from tensorweave.distributed import security
from tensorweave.framework import errors
from tensorweave.serving import rest_json
from tensorweave.serving.model import ServedModel
from tensorweave.serving.versions import ServedVersions

__all__ = ["ModelServer"]

MAX_BODY_BYTES = 64 << 20
_PATH = re.compile(r"^/v1/models/(?P<name>[^/:]+)(?:/versions/(?P<version>\d+))?"
                   r"(?:(?P<metadata>/metadata)|:(?P<method>predict|classify|regress))?$")
_SIGNATURE_MAP_TYPE = "type.googleapis.com/tensorflow.serving.SignatureDefMap"


class ModelServer:
    """Serves the latest version of the SavedModel under `base_path` as `name` on
    `host:port` (port 0: any free port, then read `port`), looking for newer versions every
    `poll_seconds` (0: never); with `grpc_port`, TensorFlow Serving's gRPC API too."""

    def __init__(self, name: str, base_path: str, port: int = 8501, host: str = "127.0.0.1",
                 poll_seconds: float = 1.0, grpc_port: int | None = None):
        secured = security.Security.from_environment()
        self.versions = ServedVersions(name, base_path, poll_seconds)
        self._http = ThreadingHTTPServer((host, port), _handler_for(self.versions, secured))
        self._http.daemon_threads = True
        context = security.ssl_server_context(secured)
        if context is not None:   # handshakes on each connection's own thread
            self._http.socket = context.wrap_socket(self._http.socket, server_side=True,
                                                    do_handshake_on_connect=False)
        self.port = self._http.server_address[1]
        secured.warn_if_exposed(host, self.port, "The model server")
        self._thread: threading.Thread | None = None
        self._serving = False   # socketserver's shutdown() waits forever if it never served
        self._grpc = None
        if grpc_port is not None:   # TensorFlow Serving's gRPC API beside the REST one
            from tensorweave.serving.grpc_server import GrpcPredictionServer
            self._grpc = GrpcPredictionServer(self.versions, grpc_port, host).start()
        self.grpc_port = self._grpc.port if self._grpc is not None else None

    @property
    def model(self) -> ServedModel:
        """The version being served."""
        return self.versions.current()

    def start(self) -> ModelServer:
        """Serves on a background thread; returns self."""
        self._serving = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True,
                                        name=f"tensorweave-serve-{self.versions.name}")
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._serving = True
        self._http.serve_forever()

    def stop(self) -> None:
        if self._serving:
            self._http.shutdown()
        self._http.server_close()
        if self._thread is not None:
            self._thread.join()
        if self._grpc is not None:
            self._grpc.stop()
        self.versions.close()


def _handler_for(versions: ServedVersions, secured: security.Security):
    class Handler(_Handler):
        served_versions = versions
        settings = secured
    return Handler


class _Handler(BaseHTTPRequestHandler):
    served_versions: ServedVersions
    settings: security.Security
    protocol_version = "HTTP/1.1"
    server_version = "tensorweave-serving"

    def do_GET(self):   # noqa: N802 - http.server's name
        self._respond(lambda model, match, body: self._status(model) if not match["metadata"]
                      else self._metadata(model), method=None)

    def do_POST(self):   # noqa: N802 - http.server's name
        self._respond(self._call, method="POST")

    def log_message(self, format, *args):  # noqa: A002 - http.server's signature
        """Quiet: requests are not logged to stderr."""

    def _respond(self, action, method):
        match = _PATH.match(self.path)
        try:
            if not self.settings.accepts(self.headers.get("Authorization")):
                raise _Unauthorized("Missing or wrong token: send the header "
                                    "'Authorization: Bearer <token>'")
            if match is None or (method is None) != (match["method"] is None):
                raise errors.NotFoundError(None, None, f"Malformed request: {self.command} "
                                           f"{self.path}")
            model = self.served_versions.current()   # one version for the whole request
            self._check_model(model, match)
            body = self._body() if method else None
            code, payload = 200, action(model, match, body)
        except errors.NotFoundError as e:
            code, payload = 404, {"error": e.message}
        except errors.OpError as e:
            code, payload = 400, {"error": e.message}
        except (ValueError, TypeError) as e:   # a feed of the wrong shape or dtype
            code, payload = 400, {"error": str(e)}
        except _TooLarge as e:
            code, payload = 413, {"error": str(e)}
        except _Unauthorized as e:
            self.close_connection = True   # its body, if any, was not read
            code, payload = 401, {"error": str(e)}
        except Exception as e:  # noqa: BLE001 - any other failure still gets an answer
            code, payload = 500, {"error": f"{type(e).__name__}: {e}"}
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    @staticmethod
    def _check_model(model, match) -> None:
        if match["name"] != model.name:
            raise errors.NotFoundError(None, None, "Servable not found for request: "
                                       f"Latest({match['name']})")
        if match["version"] is not None and int(match["version"]) != model.version:
            raise errors.NotFoundError(None, None, "Servable not found for request: "
                                       f"Specific({match['name']}, {match['version']})")

    def _body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            raise _TooLarge(f"Request body of {length} bytes is over the limit of "
                            f"{MAX_BODY_BYTES}")
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except (ValueError, UnicodeDecodeError) as e:
            raise errors.InvalidArgumentError(None, None, f"JSON Parse error: {e}") from None
        if not isinstance(body, dict):
            raise errors.InvalidArgumentError(None, None, "JSON Value: the request must be a "
                                              "JSON object")
        return body

    @staticmethod
    def _status(model) -> dict:
        return {"model_version_status": [{
            "version": str(model.version), "state": "AVAILABLE",
            "status": {"error_code": "OK", "error_message": ""}}]}

    @staticmethod
    def _metadata(model) -> dict:
        signatures = {key: json_format.MessageToDict(signature,
                                                     preserving_proto_field_name=True)
                      for key, signature in sorted(model.signatures.items())}
        return {"model_spec": {"name": model.name, "signature_name": "",
                               "version": str(model.version)},
                "metadata": {"signature_def": {"signature_def": signatures,
                                               "@type": _SIGNATURE_MAP_TYPE}}}

    @staticmethod
    def _call(model, match, body) -> dict:
        name = body.get("signature_name")
        _, signature = model.signature(name)
        if match["method"] == "predict":
            inputs, row_format = rest_json.predict_inputs(body, model.input_dtypes(signature))
            return rest_json.predict_response(model.run(name, inputs), row_format)
        if len(signature.inputs) != 1:
            raise errors.InvalidArgumentError(None, None, f"A {match['method']} signature "
                                              "takes one input of serialized tf.Examples")
        (input_name,) = signature.inputs
        outputs = model.run(name, {input_name: rest_json.examples_input(body)})
        if match["method"] == "classify":
            return rest_json.classify_result(outputs)
        if "outputs" not in outputs:
            raise errors.InvalidArgumentError(None, None, "A regress signature has the output "
                                              "'outputs'")
        return rest_json.regress_result(outputs)


class _TooLarge(Exception):
    """A request body over MAX_BODY_BYTES."""


class _Unauthorized(Exception):
    """A request without the token the server requires (distributed/security.py)."""
