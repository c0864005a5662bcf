"""tf.train.SessionManager: create a session whose model is initialized or restored and ready.

The chief `prepare_session`s (restore the latest checkpoint, else run the init op), a worker
`wait_for_session`s until the chief has made the model ready; `recover_session` only restores.
"Ready" means `ready_op` returns an empty vector (the names of uninitialized variables).
"""
from __future__ import annotations

import time

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import get_default_graph
from tensorweave.platform import tf_logging as logging
from tensorweave.train import checkpoint_management

__all__ = ["SessionManager"]


def _maybe_name(obj) -> str:
    """The op or tensor name of `obj` for messages, else its repr."""
    if obj is None:
        return "None"
    return getattr(obj, "name", f"<no name for {obj}>")


def _ready(op, sess, msg):
    """(is_ready, message): runs the readiness op `op`; None is always ready."""
    if op is None:
        return True, None
    try:
        ready_value = sess.run(op)
    except errors.FailedPreconditionError as e:
        if "uninitialized" not in str(e):
            logging.warning("%s raised: %s", msg, e)
            raise
        return False, str(e)
    value = np.asarray(ready_value) if ready_value is not None else None
    if value is None or value.dtype == np.int32 or value.size == 0:
        return True, None
    names = ", ".join(v.decode("utf-8") if isinstance(v, bytes) else str(v)
                      for v in value.ravel())
    return False, "Variables not initialized: " + names


class SessionManager:
    """Training helper that restores from a checkpoint or initializes, then checks readiness.

    Args:
      local_init_op: op run in every new session once `ready_for_local_init_op` is ready
        (initializes local variables and tables).
      ready_op: 1-D string tensor of what is not initialized; empty when the model is ready.
      ready_for_local_init_op: like `ready_op`, for what `local_init_op` needs.
      graph: the graph (default graph).
      recovery_wait_secs: seconds between checks while waiting for a checkpoint or the chief.
      local_init_run_options: RunOptions for `local_init_op`.
      local_init_feed_dict: feeds for `local_init_op`.

    Raises:
      ValueError: `ready_for_local_init_op` without a `local_init_op`.
    """

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs=30, local_init_run_options=None,
                 local_init_feed_dict=None):
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError(f"If you pass a ready_for_local_init_op you must also pass a "
                             f"local_init_op , ready_for_local_init_op "
                             f"[{ready_for_local_init_op}]")
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        self._target = None

    def _new_session(self, master, config):
        from tensorweave.runtime.session import Session
        self._target = master
        return Session(master, graph=self._graph, config=config)

    def _restore_checkpoint(self, master, saver=None, checkpoint_dir=None,
                            checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                            max_wait_secs=7200, config=None):
        """(session, restored): a new session, restored from the latest checkpoint if any."""
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        sess = self._new_session(master, config)
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        waited = 0
        ckpt = checkpoint_management.get_checkpoint_state(checkpoint_dir)
        while not ckpt or not ckpt.model_checkpoint_path:
            if not wait_for_checkpoint or waited >= max_wait_secs:
                return sess, False
            logging.info("Waiting for checkpoint to be available.")
            time.sleep(self._recovery_wait_secs)
            waited += self._recovery_wait_secs
            ckpt = checkpoint_management.get_checkpoint_state(checkpoint_dir)
        saver.restore(sess, ckpt.model_checkpoint_path)
        saver.recover_last_checkpoints(list(ckpt.all_model_checkpoint_paths))
        return sess, True

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None, init_feed_dict=None, init_fn=None):
        """A session with the model restored from a checkpoint or initialized, and ready.

        Args:
          master: the session target.
          init_op: op run when nothing was restored.
          saver: the Saver restoring the checkpoint.
          checkpoint_dir: directory searched for the latest checkpoint.
          checkpoint_filename_with_path: a checkpoint to restore (not with checkpoint_dir).
          wait_for_checkpoint: wait up to `max_wait_secs` for a checkpoint to appear.
          max_wait_secs: see `wait_for_checkpoint`.
          config: ConfigProto of the session.
          init_feed_dict: feeds for `init_op`.
          init_fn: `init_fn(sess)` called after `init_op` when nothing was restored.

        Raises:
          RuntimeError: if the model cannot be initialized or is not ready afterwards.
        """
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir, checkpoint_filename_with_path,
            wait_for_checkpoint, max_wait_secs, config)
        if not restored:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or "
                                   "local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        ok, msg = self._try_run_local_init_op(sess)
        if not ok:
            raise RuntimeError(f"Init operations did not make model ready for local_init.  "
                               f"Init op: {_maybe_name(init_op)}, init fn: {init_fn}, "
                               f"error: {msg}")
        ok, msg = _ready(self._ready_op, sess, "Model not ready")
        if not ok:
            raise RuntimeError(f"Init operations did not make model ready.  Init op: "
                               f"{_maybe_name(init_op)}, init fn: {init_fn}, local_init_op: "
                               f"{self._local_init_op}, error: {msg}")
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False,
                        max_wait_secs=7200, config=None):
        """(session, initialized): restores from a checkpoint if possible, never initializes.

        `initialized` is True when the model was restored and is ready.
        """
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir, checkpoint_filename_with_path,
            wait_for_checkpoint, max_wait_secs, config)
        ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        source = checkpoint_dir or checkpoint_filename_with_path
        if not ok:
            logging.info("Restoring model from %s did not make model ready for local init: %s",
                         source, msg)
            return sess, False
        ok, msg = _ready(self._ready_op, sess, "Model not ready")
        if not ok:
            logging.info("Restoring model from %s did not make model ready: %s", source, msg)
            return sess, False
        logging.info("Restored model from %s", source)
        return sess, True

    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """A session once the model is ready (initialized by another process, the chief).

        Raises:
          DeadlineExceededError: if the model is not ready within `max_wait_secs`.
        """
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = self._new_session(master, config)
            ok, local_msg = self._try_run_local_init_op(sess)
            msg = None
            if ok:
                ok, msg = _ready(self._ready_op, sess, "Model not ready")
                if ok:
                    return sess
            sess.close()
            if deadline - time.monotonic() - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None,
                    f"Session was not ready after waiting {int(max_wait_secs)} secs.")  # TF: %d
            logging.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s, "
                         "ready: %s", local_msg, msg)
            time.sleep(self._recovery_wait_secs)

    def _try_run_local_init_op(self, sess):
        """(ok, message): runs local_init_op if the model is ready for it."""
        if self._local_init_op is None:
            return True, None
        ok, msg = _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")
        if not ok:
            return False, msg
        logging.info("Running local_init_op.")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        logging.info("Done running local_init_op.")
        return True, None
