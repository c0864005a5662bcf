"""A served model: the newest version of a SavedModel base path, loaded once, run per request.

TensorFlow Serving's layout: `base_path/<version>/` (integer names) each hold a SavedModel; the
largest version is served. Loading imports the "serve" graph into a session of its own; each
signature gets a callable built on first use (feeds and fetches fixed), so a request is
one `Session` call with no per-request graph work.
"""
from __future__ import annotations

import os
import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import Graph
from tensorweave.runtime.session import Session
from tensorweave.saved_model import loader, signature_constants, tag_constants
from tensorweave.saved_model.utils import get_tensor_from_tensor_info

__all__ = ["ServedModel", "latest_version"]


def latest_version(base_path: str) -> int:
    """The largest integer-named subdirectory of `base_path` that holds a SavedModel.

    Raises:
      NotFoundError: there is none.
    """
    versions = [int(name) for name in _listdir(base_path)
                if name.isdigit() and loader.maybe_saved_model_directory(
                    os.path.join(base_path, name))]
    if not versions:
        raise errors.NotFoundError(None, None, f"No versions of servable found under base "
                                   f"path {base_path}")
    return max(versions)


def _listdir(path: str) -> list:
    try:
        return os.listdir(path)
    except OSError as e:
        raise errors.NotFoundError(None, None, f"Could not find base path {path} for servable "
                                   f"({e.strerror})") from None


class ServedModel:
    """Version `version` (default: the latest) of the model under `base_path`, loaded."""

    def __init__(self, name: str, base_path: str, version: int | None = None):
        self.name = name
        self.version = latest_version(base_path) if version is None else version
        self.path = os.path.join(base_path, str(self.version))
        self.graph = Graph()
        self.session = Session(graph=self.graph)
        self.meta_graph_def = loader.load(self.session, [tag_constants.SERVING], self.path)
        self.signatures = dict(self.meta_graph_def.signature_def)
        self._callables: dict = {}
        self._lock = threading.Lock()

    def signature(self, name: str | None):
        """(key, SignatureDef) for `name`, the default serving signature when None or "".

        Raises:
          InvalidArgumentError: the model has no such signature.
        """
        key = name or signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
        if key not in self.signatures:
            raise errors.InvalidArgumentError(None, None, f"Serving signature name: \"{key}\" "
                                              "not found in signature def")
        return key, self.signatures[key]

    def run(self, signature_name: str | None, inputs: dict) -> dict:
        """{output name: array} of the signature run on {input name: array}.

        Raises:
          InvalidArgumentError: inputs missing, unknown or not convertible, or a run error.
        """
        key, signature = self.signature(signature_name)
        missing = sorted(set(signature.inputs) - set(inputs))
        extra = sorted(set(inputs) - set(signature.inputs))
        if missing or extra:
            raise errors.InvalidArgumentError(
                None, None, f"Signature {key!r} takes inputs {sorted(signature.inputs)}: "
                + (f"missing {missing}" if missing else f"unknown {extra}"))
        input_names, output_names, call = self._callable(key, signature)
        values = call(*[inputs[name] for name in input_names])
        return dict(zip(output_names, values))

    def _callable(self, key, signature):
        with self._lock:
            made = self._callables.get(key)
            if made is None:
                input_names, output_names = sorted(signature.inputs), sorted(signature.outputs)
                feeds = [get_tensor_from_tensor_info(signature.inputs[n], self.graph)
                         for n in input_names]
                fetches = [get_tensor_from_tensor_info(signature.outputs[n], self.graph)
                           for n in output_names]
                made = (input_names, output_names,
                        self.session.make_callable(fetches, feed_list=feeds))
                self._callables[key] = made
        return made

    def input_dtypes(self, signature) -> dict:
        """{input name: NumPy dtype} of a signature's inputs (strings as object)."""
        from tensorweave.framework import dtypes
        return {name: np.dtype(dtypes.as_dtype(info.dtype).as_numpy_dtype)
                for name, info in signature.inputs.items()}

    def close(self) -> None:
        self.session.close()
