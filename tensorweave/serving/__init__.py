"""Serving SavedModels over TensorFlow Serving's REST API (`tensorweave serve`).

`ModelServer(name, base_path, port)` serves the newest version under `base_path` (TensorFlow
Serving's `<base_path>/<version>/` layout, newer versions picked up as they appear) and answers
predict, classify, regress, status and metadata requests in TensorFlow Serving's JSON; clients
written for TensorFlow Serving work unchanged. Not provided: gRPC, model config files, version
policies other than the latest, and request batching.
"""
from tensorweave.serving.http_server import ModelServer
from tensorweave.serving.model import ServedModel

__all__ = ["ModelServer", "ServedModel"]
