"""TensorFlow Serving's gRPC API: PredictionService's Predict and GetModelMetadata.

The service is `tensorflow.serving.PredictionService` with TF Serving's messages
(protos/prediction_service.proto), registered as generic handlers, so TensorFlow Serving's
gRPC clients and stubs call it unchanged. Tensors travel as TensorProtos. Errors are gRPC
statuses: NOT_FOUND for an unknown model or version, INVALID_ARGUMENT for a bad request or
an error running the model. It shares the REST server's loaded versions.
"""
from __future__ import annotations

from concurrent import futures

from tensorweave.distributed import security, wire
from tensorweave.framework import errors
from tensorweave.framework.tensor_util import make_tensor_proto
from tensorweave.protos import prediction_service_pb2 as apis
from tensorweave.serving.versions import ServedVersions

__all__ = ["GrpcPredictionServer"]

SERVICE = "tensorflow.serving.PredictionService"
MAX_MESSAGE_BYTES = 64 << 20


class GrpcPredictionServer:
    """PredictionService over gRPC on `host:port` (port 0: any free port, then read
    `port`), for the model `versions` serves."""

    def __init__(self, versions: ServedVersions, port: int, host: str = "127.0.0.1",
                 threads: int = 8):
        import grpc
        self._grpc = grpc
        self.versions = versions
        secured = security.Security.from_environment()
        self._server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="tw-grpc"),
            options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                     ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)],
            interceptors=security.server_interceptors(secured))
        handlers = {
            "Predict": grpc.unary_unary_rpc_method_handler(
                self._predict, request_deserializer=apis.PredictRequest.FromString,
                response_serializer=apis.PredictResponse.SerializeToString),
            "GetModelMetadata": grpc.unary_unary_rpc_method_handler(
                self._metadata, request_deserializer=apis.GetModelMetadataRequest.FromString,
                response_serializer=apis.GetModelMetadataResponse.SerializeToString)}
        self._server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE, handlers),))
        self.port = security.add_port(self._server, f"{host}:{port}", secured)
        if not self.port:
            raise OSError(f"Could not listen on {host}:{port}")
        secured.warn_if_exposed(host, self.port, "The model server's gRPC API")

    def start(self) -> GrpcPredictionServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop(grace=None).wait()

    def _model(self, spec, context):
        """The served version `spec` asks for, or the call aborted with NOT_FOUND."""
        model = self.versions.current()
        wanted = spec.version.value if spec.HasField("version") else None
        if spec.name != model.name or (wanted is not None and wanted != model.version):
            what = f"Specific({spec.name}, {wanted})" if wanted is not None else \
                f"Latest({spec.name})"
            context.abort(self._grpc.StatusCode.NOT_FOUND,
                          f"Servable not found for request: {what}")
        return model

    def _predict(self, request, context):
        model = self._model(request.model_spec, context)
        try:
            key, signature = model.signature(request.model_spec.signature_name)
            inputs = {name: wire.ndarray(proto, f"Input {name}")
                      for name, proto in request.inputs.items()}
            outputs = model.run(key, inputs)
            wanted = list(request.output_filter) or sorted(outputs)
            unknown = [name for name in wanted if name not in outputs]
            if unknown:
                raise errors.InvalidArgumentError(None, None, f"output tensor alias not found "
                                                  f"in signature: {unknown[0]}")
        except (errors.OpError, ValueError, TypeError) as e:
            context.abort(self._grpc.StatusCode.INVALID_ARGUMENT,
                          e.message if isinstance(e, errors.OpError) else str(e))
        response = apis.PredictResponse(model_spec=self._spec(model, key))
        for name in wanted:
            response.outputs[name].CopyFrom(make_tensor_proto(outputs[name]))
        return response

    def _metadata(self, request, context):
        model = self._model(request.model_spec, context)
        fields = set(request.metadata_field)
        if fields != {"signature_def"}:
            context.abort(self._grpc.StatusCode.INVALID_ARGUMENT,
                          "Metadata field(s) requested must be exactly ['signature_def'], got "
                          f"{sorted(fields)}")
        response = apis.GetModelMetadataResponse(model_spec=self._spec(model, ""))
        response.metadata["signature_def"].Pack(
            apis.SignatureDefMap(signature_def=model.signatures))
        return response

    @staticmethod
    def _spec(model, signature_name: str):
        spec = apis.ModelSpec(name=model.name, signature_name=signature_name)
        spec.version.value = model.version
        return spec
