"""TensorFlow's MasterService and WorkerService on a gRPC server, under TF's wire names.

TF names its methods by hand "/tensorflow.MasterService/<Rpc>" and
"/tensorflow.WorkerService/<Rpc>" (its protos' package is tensorflow.grpc, which protoc would
have put in the path), so the handlers are registered as generic ones with exactly those
names. A request's OpError becomes its gRPC status; RunStep carries it in the response body
when the request asks (`store_errors_in_response_body`), as TF's clients do, so long messages
are never cut.
"""
from __future__ import annotations

from tensorweave.distributed import wire
from tensorweave.distributed.channels import TENSORWEAVE_WORKER_SERVICE
from tensorweave.framework import errors
from tensorweave.protos import worker_pb2

MASTER_SERVICE = "tensorflow.MasterService"
WORKER_SERVICE = "tensorflow.WorkerService"


def add_services(grpc_server, master) -> None:
    """Registers the requests of `master` and of its task's worker on `grpc_server`."""
    import grpc

    def unary(handle, request_type, response_type):
        return grpc.unary_unary_rpc_method_handler(
            handle, request_deserializer=request_type.FromString,
            response_serializer=response_type.SerializeToString)

    master_handlers = {
        method: unary(_master_handler(master, method), request_type, response_type)
        for method, (request_type, response_type) in master.REQUEST_TYPES.items()}

    worker = master.worker
    worker_handlers = {
        method: unary(_worker_handler(worker, method), request_type, response_type)
        for method, (request_type, response_type) in worker.REQUEST_TYPES.items()}
    extensions = {   # their messages are encoded by hand (tensor_coding.py)
        "RecvTensors": grpc.unary_stream_rpc_method_handler(
            _streaming(worker.recv_tensors),
            request_deserializer=worker_pb2.RecvTensorsRequest.FromString,
            response_serializer=None),
        "SendTensors": grpc.stream_unary_rpc_method_handler(
            _answering(worker.send_tensors, worker_pb2.SendTensorsResponse, in_body=False),
            request_deserializer=None,
            response_serializer=worker_pb2.SendTensorsResponse.SerializeToString)}
    grpc_server.add_generic_rpc_handlers((
        grpc.method_handlers_generic_handler(MASTER_SERVICE, master_handlers),
        grpc.method_handlers_generic_handler(WORKER_SERVICE, worker_handlers),
        grpc.method_handlers_generic_handler(TENSORWEAVE_WORKER_SERVICE, extensions)))


def _master_handler(master, method: str):
    return _answering(lambda request, context: master.call(method, request),
                      master.REQUEST_TYPES[method][1], in_body=method == "RunStep")


def _worker_handler(worker, method: str):
    def handle(request, context):
        if method != "RunGraph":
            return worker.call(method, request, context)
        # The master cancels the call when another task failed: stop this task's part too.
        # (The callback also runs when the call ends normally; the step is over then.)
        answered = []

        def cancelled():
            if not answered:
                worker.abort_step(request.step_id, errors.CancelledError(
                    None, None, f"Step {request.step_id} was cancelled"))
        context.add_callback(cancelled)
        try:
            return worker.call(method, request, context)
        finally:
            answered.append(True)
    return _answering(handle, worker.REQUEST_TYPES[method][1], in_body=method == "RunGraph")


def _streaming(generate):
    """A gRPC stream handler yielding what `generate(request, context)` yields; an OpError
    ends the call with its status."""
    def stream(request, context):
        try:
            yield from generate(request, context)
        except errors.OpError as e:
            context.abort(wire.grpc_code(e.error_code), e.message)
    return stream


def _answering(handle, response_type, in_body: bool):
    """A gRPC handler running `handle(request, context)`: an OpError becomes the call's
    status, or the response's status fields when the request stores errors in the body."""
    def answer(request, context):
        try:
            return handle(request, context)
        except errors.OpError as e:
            code, message = e.error_code, e.message
        except Exception as e:  # noqa: BLE001 - a server answers every request
            code, message = errors.INTERNAL, f"{type(e).__name__}: {e}"
        if in_body and request.store_errors_in_response_body:
            return response_type(status_code=code, status_error_message=message)
        context.abort(wire.grpc_code(code), message)
    return answer
