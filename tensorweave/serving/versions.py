"""The versions of a served model: the newest under the base path, replaced when a newer one
appears, as TensorFlow Serving's default "latest" policy does.

A poller thread looks for a newer integer-named SavedModel directory every `poll_seconds`
(TensorFlow Serving's --file_system_poll_wait_seconds, 1 by default), loads it beside the
serving one and swaps it in; requests already running on the old version finish on it, and
it is closed RETIRE_SECONDS later. A version that fails to load is logged and skipped (the
old one keeps serving). A SavedModel directory becomes visible when its saved_model.pb
appears, which SavedModelBuilder writes last and atomically.
"""
from __future__ import annotations

import threading

from tensorweave.framework import errors
from tensorweave.platform import tf_logging as logging
from tensorweave.serving.model import ServedModel, latest_version

__all__ = ["ServedVersions"]

RETIRE_SECONDS = 30.0


class ServedVersions:
    """The served model of `name`: `current()` is its newest loaded version."""

    def __init__(self, name: str, base_path: str, poll_seconds: float = 1.0):
        self.name, self.base_path = name, base_path
        self._model = ServedModel(name, base_path)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._failed: set = set()
        self._retiring: list = []   # (timer, model) of replaced versions
        self._thread = None
        if poll_seconds > 0:
            self._thread = threading.Thread(target=self._poll, args=(poll_seconds,),
                                            daemon=True, name=f"tensorweave-poll-{name}")
            self._thread.start()

    def current(self) -> ServedModel:
        with self._lock:
            return self._model

    def check(self) -> bool:
        """Loads and swaps in a newer version if there is one; returns whether it did."""
        try:
            newest = latest_version(self.base_path)
        except errors.NotFoundError:
            return False
        if newest <= self.current().version or newest in self._failed:
            return False
        try:
            model = ServedModel(self.name, self.base_path, newest)
        except Exception as e:  # noqa: BLE001 - a broken version must not stop serving
            logging.error("Loading version %d of servable %s failed; still serving version "
                          "%d: %s", newest, self.name, self.current().version, e)
            self._failed.add(newest)
            return False
        with self._lock:
            old, self._model = self._model, model
        timer = threading.Timer(RETIRE_SECONDS, old.close)
        timer.daemon = True
        timer.start()
        self._retiring.append((timer, old))
        logging.info("Serving version %d of servable %s (was %d)", newest, self.name,
                     old.version)
        return True

    def _poll(self, seconds: float) -> None:
        while not self._stop.wait(seconds):
            self.check()

    def close(self) -> None:
        """Stops polling and closes every loaded version."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        for timer, model in self._retiring:
            timer.cancel()
            model.close()
        self.current().close()
