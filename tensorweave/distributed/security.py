"""Who may talk to a server: a shared token and TLS, for cluster tasks and model servers.

TensorFlow's `tf.train.Server` has neither: "anybody with access to the network can execute
arbitrary code with the privileges of the process" (its SECURITY.md), and TF Serving is the
same. Here every server and every client in a process reads one configuration, from the
environment, so a TF1 program runs unchanged and each process of a cluster is set up alike:

  TENSORWEAVE_TOKEN_FILE  a file holding a shared secret (or TENSORWEAVE_TOKEN, the secret
                          itself): servers refuse calls that do not carry it (gRPC metadata
                          `authorization: Bearer <token>`, or that HTTP header) with
                          UNAUTHENTICATED / 401; clients send it.
  TENSORWEAVE_TLS_CERT    PEM certificate chain and private key of this process: its servers
  TENSORWEAVE_TLS_KEY     speak TLS (and its clients present them when a server asks).
  TENSORWEAVE_TLS_CA      PEM certificates clients verify servers against: its clients speak
                          TLS.
  TENSORWEAVE_TLS_CLIENT_AUTH=1   servers also require a client certificate signed by the CA
                          (mutual TLS).

Nothing set: plaintext and no token, as TensorFlow. A server listening beyond loopback that
way logs a warning. The token is compared in constant time. Sessions in the server's own
process call its master directly and need neither.
"""
from __future__ import annotations

import dataclasses
import hmac
import logging
import os

from tensorweave.framework import errors

_log = logging.getLogger("tensorweave.distributed")
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "[::1]", "ip6-localhost"})


@dataclasses.dataclass(frozen=True)
class Security:
    """One process's settings (`from_environment`); PEM contents as bytes, or None."""

    token: str | None = None
    cert: bytes | None = None
    key: bytes | None = None
    ca: bytes | None = None
    client_auth: bool = False
    files: tuple = (None, None, None)   # the cert, key and CA paths (for Python's ssl)

    @classmethod
    def from_environment(cls, environ=None) -> Security:
        """The settings the TENSORWEAVE_* variables give; InvalidArgumentError for an
        unreadable file, a certificate without its key, or client auth without a CA."""
        env = os.environ if environ is None else environ
        token = env.get("TENSORWEAVE_TOKEN") or None
        if env.get("TENSORWEAVE_TOKEN_FILE"):
            token = _read(env["TENSORWEAVE_TOKEN_FILE"], "TENSORWEAVE_TOKEN_FILE").decode(
                errors="replace").strip() or None
        files = tuple(env.get(name) or None for name in (
            "TENSORWEAVE_TLS_CERT", "TENSORWEAVE_TLS_KEY", "TENSORWEAVE_TLS_CA"))
        cert, key, ca = (_read(path, name) if path else None for path, name in zip(
            files, ("TENSORWEAVE_TLS_CERT", "TENSORWEAVE_TLS_KEY", "TENSORWEAVE_TLS_CA")))
        client_auth = env.get("TENSORWEAVE_TLS_CLIENT_AUTH", "") not in ("", "0", "false")
        if (cert is None) != (key is None):
            raise errors.InvalidArgumentError(None, None, "TENSORWEAVE_TLS_CERT and "
                                              "TENSORWEAVE_TLS_KEY go together")
        if client_auth and (ca is None or cert is None):
            raise errors.InvalidArgumentError(None, None, "TENSORWEAVE_TLS_CLIENT_AUTH needs "
                                              "TENSORWEAVE_TLS_CA, TENSORWEAVE_TLS_CERT and "
                                              "TENSORWEAVE_TLS_KEY")
        return cls(token, cert, key, ca, client_auth, files)

    @property
    def serves_tls(self) -> bool:
        return self.cert is not None

    def accepts(self, authorization: str | None) -> bool:
        """Whether a call or request carrying this authorization value may proceed."""
        if self.token is None:
            return True
        return authorization is not None and hmac.compare_digest(
            authorization.encode(), f"Bearer {self.token}".encode())

    def warn_if_exposed(self, host: str, port: int, what: str) -> None:
        if host not in _LOOPBACK and self.token is None and not self.serves_tls:
            _log.warning("%s listens on %s:%d without a token or TLS: anyone who can reach it "
                         "can run anything it runs. Set TENSORWEAVE_TOKEN_FILE and "
                         "TENSORWEAVE_TLS_* (tensorweave/distributed/security.py).", what,
                         host, port)


def ssl_server_context(security: Security):
    """An ssl.SSLContext for an HTTP server of this process, or None without a certificate."""
    if not security.serves_tls:
        return None
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert_file, key_file, ca_file = security.files
    context.load_cert_chain(cert_file, key_file)
    if security.client_auth:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(ca_file)
    return context


def _read(path: str, name: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise errors.InvalidArgumentError(None, None, f"{name}: cannot read {path}: "
                                          f"{e.strerror}") from None


# --- gRPC -------------------------------------------------------------------------------------
def add_port(grpc_server, address: str, security: Security) -> int:
    """Listens on `address` in plaintext or TLS; the port, or 0 if it cannot."""
    import grpc
    if not security.serves_tls:
        return grpc_server.add_insecure_port(address)
    credentials = grpc.ssl_server_credentials(
        [(security.key, security.cert)],
        root_certificates=security.ca if security.client_auth else None,
        require_client_auth=security.client_auth)
    return grpc_server.add_secure_port(address, credentials)


def server_interceptors(security: Security) -> list:
    """The interceptors a gRPC server of this process runs every call through."""
    return [] if security.token is None else [_token_check(security)]


def _token_check(security: Security):
    import grpc

    def refuse(request, context):
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "Missing or wrong token: set "
                      "TENSORWEAVE_TOKEN_FILE to the cluster's token")

    denied = grpc.unary_unary_rpc_method_handler(refuse)

    class TokenCheck(grpc.ServerInterceptor):
        def intercept_service(self, continuation, details):
            metadata = dict(details.invocation_metadata or ())
            if security.accepts(metadata.get("authorization")):
                return continuation(details)
            return denied

    return TokenCheck()


def channel(address: str, options: list, security: Security):
    """A channel to `address`: TLS when this process has a CA, carrying the token if any."""
    import grpc
    if security.ca is not None:
        credentials = grpc.ssl_channel_credentials(
            root_certificates=security.ca, private_key=security.key,
            certificate_chain=security.cert)
        made = grpc.secure_channel(address, credentials, options=options)
    else:
        made = grpc.insecure_channel(address, options=options)
    if security.token is None:
        return made
    return grpc.intercept_channel(made, _token_sender(f"Bearer {security.token}"))


def _token_sender(value: str):
    import grpc

    class SendToken(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
        def _with_token(self, details):
            metadata = [*(details.metadata or ()), ("authorization", value)]
            return _CallDetails(details.method, details.timeout, metadata,
                                details.credentials, details.wait_for_ready,
                                details.compression)

        def intercept_unary_unary(self, continuation, details, request):
            return continuation(self._with_token(details), request)

        def intercept_unary_stream(self, continuation, details, request):
            return continuation(self._with_token(details), request)

    return SendToken()


@dataclasses.dataclass(frozen=True)
class _CallDetails:
    """grpc.ClientCallDetails with the token added (its fields, as grpc reads them)."""

    method: str
    timeout: float | None
    metadata: list
    credentials: object
    wait_for_ready: bool | None
    compression: object
