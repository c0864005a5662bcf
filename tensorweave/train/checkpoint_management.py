"""The checkpoint state file and checkpoint discovery (TF1's tf.train checkpoint functions).

A directory of checkpoints has a state file, `checkpoint` by default: a CheckpointState proto
in text format naming the newest checkpoint and every kept one, oldest first. It is replaced
atomically and only after the checkpoints it names are complete, so it never points at a
half-written checkpoint. Paths in it are absolute unless saved relative (`save_relative_paths`),
in which case readers resolve them against the state file's directory.
"""
from __future__ import annotations

import glob
import os
import re

from google.protobuf import text_format

from tensorweave.platform import tf_logging as logging
from tensorweave.platform.atomic_file import write_atomically
from tensorweave.protos import checkpoint_state_pb2
from tensorweave.protos.saver_pb2 import SaverDef
from tensorweave.train import checkpoint_format as _fmt

__all__ = ["checkpoint_exists", "generate_checkpoint_state_proto", "get_checkpoint_mtimes",
           "get_checkpoint_state", "latest_checkpoint", "remove_checkpoint",
           "update_checkpoint_state"]

CheckpointState = checkpoint_state_pb2.CheckpointState


def _state_path(save_dir: str, latest_filename: str | None) -> str:
    return os.path.join(save_dir, latest_filename or "checkpoint")


def generate_checkpoint_state_proto(save_dir, model_checkpoint_path,
                                    all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None,
                                    last_preserved_timestamp=None):
    """A CheckpointState naming `model_checkpoint_path` as the newest checkpoint.

    The newest path is appended to `all_model_checkpoint_paths` if it is not its last entry.
    When `save_dir` is relative, absolute paths under it are made relative to it.

    Returns:
      The CheckpointState proto.
    """
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if all_model_checkpoint_timestamps is not None and \
            len(all_model_checkpoint_timestamps) != len(paths):
        raise ValueError(f"Checkpoint timestamps, if provided, must match checkpoint paths "
                         f"({len(all_model_checkpoint_timestamps)} vs {len(paths)})")
    if not os.path.isabs(save_dir):
        if not os.path.isabs(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir)
        paths = [p if os.path.isabs(p) else os.path.relpath(p, save_dir) for p in paths]
    state = CheckpointState(model_checkpoint_path=model_checkpoint_path,
                            all_model_checkpoint_paths=paths)
    if all_model_checkpoint_timestamps is not None:
        state.all_model_checkpoint_timestamps.extend(all_model_checkpoint_timestamps)
    if last_preserved_timestamp is not None:
        state.last_preserved_timestamp = last_preserved_timestamp
    return state


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None, save_relative_paths=False):
    """Atomically writes the state file of `save_dir` (TF1's tf.train.update_checkpoint_state).

    Args:
      save_dir: the directory of the state file.
      model_checkpoint_path: the newest checkpoint's prefix.
      all_model_checkpoint_paths: the kept checkpoints, oldest first.
      latest_filename: the state file's name; default "checkpoint".
      all_model_checkpoint_timestamps: optional creation times of the kept checkpoints.
      last_preserved_timestamp: optional time of the last checkpoint kept every N hours.
      save_relative_paths: store paths relative to `save_dir`.

    Raises:
      RuntimeError: the checkpoint prefix is the state file's own path.
    """
    path = _state_path(save_dir, latest_filename)
    paths = list(all_model_checkpoint_paths or [])
    if save_relative_paths:
        def relative(p):
            return os.path.relpath(p, save_dir) if os.path.isabs(p) else p
        model_checkpoint_path = relative(model_checkpoint_path)
        paths = [relative(p) for p in paths]
    state = generate_checkpoint_state_proto(save_dir, model_checkpoint_path, paths,
                                            all_model_checkpoint_timestamps,
                                            last_preserved_timestamp)
    if os.path.abspath(path) == os.path.abspath(
            os.path.join(save_dir, state.model_checkpoint_path)):
        raise RuntimeError(f"Save path '{model_checkpoint_path}' conflicts with path used for "
                           "checkpoint state.  Please use a different save path.")
    write_atomically(path, text_format.MessageToString(state).encode())


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of `checkpoint_dir`, or None if it has no (readable) state file.

    Relative paths in the file are returned joined to `checkpoint_dir`.

    Raises:
      ValueError: the state file names no checkpoint.
    """
    path = _state_path(os.fspath(checkpoint_dir), latest_filename)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        logging.warning("%s: %s", type(e).__name__, e)
        logging.warning("%s: Checkpoint ignored", path)
        return None
    state = CheckpointState()
    try:
        text_format.Merge(text, state)
    except text_format.ParseError as e:
        logging.warning("%s: %s", type(e).__name__, e)
        logging.warning("%s: Checkpoint ignored", path)
        return None
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    if not os.path.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = os.path.join(checkpoint_dir, state.model_checkpoint_path)
    for i, p in enumerate(state.all_model_checkpoint_paths):
        if not os.path.isabs(p):
            state.all_model_checkpoint_paths[i] = os.path.join(checkpoint_dir, p)
    return state


def checkpoint_exists(checkpoint_prefix) -> bool:
    """Whether a complete checkpoint exists at `checkpoint_prefix` (its index is the proof).

    As in TF, the prefix is a glob pattern, and a path that matches files itself (a V1
    checkpoint's, or anything else) also counts."""
    prefix = os.fspath(checkpoint_prefix)
    return bool(glob.glob(_fmt.index_path(prefix)) or glob.glob(prefix))


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint in `checkpoint_dir`'s state file, or None."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and state.model_checkpoint_path:
        if checkpoint_exists(state.model_checkpoint_path):
            return state.model_checkpoint_path
        logging.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def get_checkpoint_mtimes(checkpoint_prefixes) -> list:
    """The modification times (seconds) of the checkpoints that exist: of the first file
    matching the prefix's index, else the prefix itself (globs, as in TF)."""
    out = []
    for prefix in map(os.fspath, checkpoint_prefixes):
        found = sorted(glob.glob(_fmt.index_path(prefix))) or sorted(glob.glob(prefix))
        if found:
            out.append(os.stat(found[0]).st_mtime_ns / 1e9)
    return out


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=SaverDef.V2,
                      meta_graph_suffix="meta") -> None:
    """Deletes a checkpoint's files: its index first (so it stops existing), data, .meta."""
    del checkpoint_format_version  # one format
    prefix = os.fspath(checkpoint_prefix)
    files = _fmt.checkpoint_files(prefix)
    files.sort(key=lambda p: not p.endswith(".index"))
    meta = meta_graph_filename(prefix, meta_graph_suffix)
    for path in files + [meta]:
        try:
            os.remove(path)
        except FileNotFoundError:
            continue
        except OSError as e:
            logging.warning("Ignoring: failed to delete %s: %s", path, e)


def meta_graph_filename(checkpoint_filename, meta_graph_suffix="meta") -> str:
    """The .meta file of a checkpoint: its prefix (without a shard suffix) + '.meta'."""
    base = re.sub(r"-[\d?]+-of-\d+$", "", os.fspath(checkpoint_filename))
    return f"{base}.{meta_graph_suffix}"

