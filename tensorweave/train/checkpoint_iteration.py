"""tf.train.checkpoints_iterator: yields each new checkpoint of a directory as it appears
(for evaluation jobs that follow a training job), polling `latest_checkpoint` once a second.
"""
from __future__ import annotations

import time

from tensorweave.platform import tf_logging as logging
from tensorweave.train.checkpoint_management import latest_checkpoint

__all__ = ["checkpoints_iterator"]


def wait_for_new_checkpoint(checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1,
                            timeout=None):
    """Waits until the latest checkpoint of `checkpoint_dir` is not `last_checkpoint`.

    Args:
      checkpoint_dir: the directory checkpoints are saved in.
      last_checkpoint: the path of the last checkpoint seen, or None.
      seconds_to_sleep: the polling interval.
      timeout: the most seconds to wait, or None to wait forever.

    Returns:
      The new checkpoint's path, or None on timeout.
    """
    logging.info("Waiting for new checkpoint at %s", checkpoint_dir)
    stop_time = time.time() + timeout if timeout is not None else None
    while True:
        checkpoint_path = latest_checkpoint(checkpoint_dir)
        if checkpoint_path is not None and checkpoint_path != last_checkpoint:
            logging.info("Found new checkpoint at %s", checkpoint_path)
            return checkpoint_path
        if stop_time is not None and time.time() + seconds_to_sleep > stop_time:
            return None
        time.sleep(seconds_to_sleep)


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Continuously yields new checkpoint files as they appear (TF1's tf.train.
    checkpoints_iterator).

    Args:
      checkpoint_dir: the directory checkpoints are saved in.
      min_interval_secs: the least number of seconds between two yields (the caller's work on
        a checkpoint counts towards it).
      timeout: the most seconds to wait for a new checkpoint, or None to wait forever.
      timeout_fn: called after a timeout; iteration ends if it returns True (or if there is no
        timeout_fn), else waiting starts again.

    Yields:
      The path of each new checkpoint, the latest one at the time it is found.
    """
    checkpoint_path = None
    while True:
        new_path = wait_for_new_checkpoint(checkpoint_dir, checkpoint_path, timeout=timeout)
        if new_path is None:
            if not timeout_fn:
                logging.info("Timed-out waiting for a checkpoint.")
                return
            if timeout_fn():
                return
            continue
        start = time.time()
        checkpoint_path = new_path
        yield checkpoint_path
        time_to_next = start + min_interval_secs - time.time()
        if time_to_next > 0:
            time.sleep(time_to_next)
