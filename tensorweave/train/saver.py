"""tf.train.Saver: saves and restores variables through graph ops run by a Session.

The Saver adds SaveV2/RestoreV2 ops to the graph (train/saver_builder.py), described by a
SaverDef; `save` feeds the checkpoint prefix to the filename tensor and runs the save tensor,
`restore` runs the restore op. Around that it keeps the list of its recent checkpoints, writes
the directory's state file (after the checkpoint and its .meta are complete) and deletes
checkpoints beyond `max_to_keep`, except one every `keep_checkpoint_every_n_hours`.

A restore is checked against the checkpoint's index before anything is assigned: all missing
keys, dtype and shape mismatches are reported at once and no variable changes. A partitioned
variable is saved as slices of its full tensor and restores into any partitioning (or none).
"""
from __future__ import annotations

import numbers
import os
import time

from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.platform import tf_logging as logging
from tensorweave.protos import saver_pb2
from tensorweave.train import checkpoint_format as _fmt
from tensorweave.train import checkpoint_management as _mgmt
from tensorweave.train.checkpoint_reader import read_index
from tensorweave.train.checkpoint_validation import check_restorable
from tensorweave.train.saver_builder import BulkSaverBuilder, specs_for

__all__ = ["Saver"]


def _all_saveable_variables(graph) -> list:
    return graph.get_collection(_graph.GraphKeys.GLOBAL_VARIABLES) + \
        graph.get_collection(_graph.GraphKeys.SAVEABLE_OBJECTS)


def _restore_error(err, likely_cause: str):
    """`err` (same class, op and node) with TF's explanation of a failed restore in front."""
    message = (f"Restoring from checkpoint failed. This is most likely due to {likely_cause} "
               "from the checkpoint. Please ensure that you have not altered the graph "
               f"expected based on the checkpoint. Original error:\n\n{err.message}")
    return type(err)(err.node_def, err.op, message)


class Saver:
    """Saves and restores variables (TF1's tf.train.Saver).

    Args:
      var_list: the variables to save: a list (keyed by op name; the parts of a partitioned
        variable by its full name) or a dict {key: variable, PartitionedVariable or list of
        its parts}; default all global variables and saveable objects.
      reshape: restore a tensor into a variable of another shape with the same element count.
      sharded: save one shard per device, merged into one checkpoint.
      max_to_keep: how many recent checkpoints to keep (None or 0: all).
      keep_checkpoint_every_n_hours: additionally keep one checkpoint per this many hours.
      name: the name scope of the added ops (default "save").
      restore_sequentially: restore one variable after another (less memory at once).
      saver_def: use the ops this SaverDef names instead of building new ones.
      builder: the SaverBuilder to build with (default BulkSaverBuilder).
      defer_build: build only when `build()` is called.
      allow_empty: with no variables, do nothing instead of raising.
      write_version: SaverDef.V2 (V1 is accepted and written as V2 with a warning).
      pad_step_number: write the global step as 8 digits.
      save_relative_paths: store relative paths in the state file.
      filename: the default prefix of the filename tensor.

    Raises:
      ValueError: no variables to save (and not `allow_empty`), duplicate names, or var_list
        with `defer_build`.
      TypeError: var_list holds something other than variables.
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=saver_pb2.SaverDef.V2, pad_step_number=False,
                 save_relative_paths=False, filename=None):
        if defer_build and var_list:
            raise ValueError("If `var_list` is provided then build cannot be deferred. Either "
                             "set defer_build=False or var_list=None.")
        if write_version == saver_pb2.SaverDef.V1:
            logging.warning("The V1 checkpoint format is not supported; writing V2 (the "
                            "tensorweave format) instead.")
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._restore_sequentially = restore_sequentially
        self.saver_def = saver_def
        self._builder = builder
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._is_built = False
        self._is_empty = False
        self._specs = None          # SaveSpecs when this Saver built its ops (for validation)
        self._graph = None
        self._last_checkpoints: list = []       # [(prefix, time)], oldest first
        self._checkpoints_to_be_deleted: list = []
        self._next_checkpoint_time = None
        if saver_def is not None:
            self._graph = _graph.get_default_graph()
            self._check_saver_def()
            self._is_built = True
            self._init_keep_time()
        elif not defer_build:
            self.build()

    # --- building ----------------------------------------------------------------------------
    def build(self) -> None:
        """Adds the save and restore ops (once); needed after `defer_build=True`."""
        if self._is_built:
            return
        self._is_built = True
        self._graph = _graph.get_default_graph()
        if self.saver_def is None:
            var_list = self._var_list
            if var_list is None:
                var_list = _all_saveable_variables(self._graph)
            if not var_list:
                if self._allow_empty:
                    self._is_empty = True
                    return
                raise ValueError("No variables to save")
            self._specs = specs_for(var_list)
            builder = self._builder or BulkSaverBuilder()
            self.saver_def = builder.build(
                self._specs, reshape=self._reshape, sharded=self._sharded,
                max_to_keep=self._max_to_keep or 0,
                keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours,
                name=self._name, restore_sequentially=self._restore_sequentially,
                filename=self._filename or "model")
        self._check_saver_def()
        self._init_keep_time()

    def _check_saver_def(self) -> None:
        if not isinstance(self.saver_def, saver_pb2.SaverDef):
            raise ValueError(f"saver_def must be a saver_pb2.SaverDef: {self.saver_def}")
        for field in ("save_tensor_name", "filename_tensor_name", "restore_op_name"):
            if not getattr(self.saver_def, field):
                raise ValueError(f"saver_def must specify the {field}: {self.saver_def}")

    def _init_keep_time(self) -> None:
        hours = self.saver_def.keep_checkpoint_every_n_hours
        self._next_checkpoint_time = time.time() + hours * 3600 if hours else None

    def as_saver_def(self) -> saver_pb2.SaverDef:
        """The SaverDef describing this Saver's ops."""
        return self.saver_def

    def to_proto(self, export_scope=None):
        """The SaverDef with `export_scope` stripped from its names (None if outside it)."""
        from tensorweave.framework.meta_graph import strip_name_scope
        if export_scope is None:
            return self.saver_def
        fields = ("filename_tensor_name", "save_tensor_name", "restore_op_name")
        if not all(getattr(self.saver_def, f).startswith(export_scope) for f in fields):
            return None
        out = saver_pb2.SaverDef()
        out.CopyFrom(self.saver_def)
        for f in fields:
            setattr(out, f, strip_name_scope(getattr(self.saver_def, f), export_scope))
        return out

    @staticmethod
    def from_proto(saver_def, import_scope=None):
        """A Saver for the (import-scoped) ops that `saver_def` names."""
        from tensorweave.framework.meta_graph import prepend_name_scope
        scoped = saver_pb2.SaverDef()
        scoped.CopyFrom(saver_def)
        for f in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
            setattr(scoped, f, prepend_name_scope(getattr(saver_def, f), import_scope))
        return Saver(saver_def=scoped)

    # --- the list of recent checkpoints ------------------------------------------------------
    @property
    def last_checkpoints(self) -> list:
        """The prefixes of the checkpoints this Saver keeps, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints) -> None:
        """Deprecated: sets the kept checkpoints (with the current time)."""
        if not isinstance(last_checkpoints, list):
            raise AssertionError()  # TF's bare assert
        self._last_checkpoints = [(p, None) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time) -> None:
        """Sets the kept checkpoints as [(prefix, timestamp)], oldest first."""
        if not isinstance(last_checkpoints_with_time, list):
            raise AssertionError()  # TF's bare assert
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths) -> None:
        """Takes over the checkpoints of `checkpoint_paths` that still exist (e.g. after a
        restart), with their files' times, so they are rotated out like this Saver's own."""
        found = []
        for path in checkpoint_paths:
            times = _mgmt.get_checkpoint_mtimes([path])
            if times:
                found.append((path, times[0]))
        self.set_last_checkpoints_with_time(found)

    def _record_last_checkpoint(self, prefix: str) -> None:
        if not self.saver_def.max_to_keep:
            return
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != prefix]
        self._last_checkpoints.append((prefix, time.time()))
        while len(self._last_checkpoints) > self.saver_def.max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _delete_old_checkpoints(self, meta_graph_suffix: str) -> None:
        """Deletes rotated-out checkpoints, keeping one per keep_checkpoint_every_n_hours."""
        while self._checkpoints_to_be_deleted:
            prefix, stamp = self._checkpoints_to_be_deleted.pop(0)
            keep_every = self.saver_def.keep_checkpoint_every_n_hours
            if self._next_checkpoint_time is not None and stamp is not None and \
                    stamp > self._next_checkpoint_time:
                self._next_checkpoint_time += keep_every * 3600
                continue
            _mgmt.remove_checkpoint(prefix, meta_graph_suffix=meta_graph_suffix)

    # --- save and restore --------------------------------------------------------------------
    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_suffix="meta", write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Saves the variables as the checkpoint `save_path[-global_step]`.

        Args:
          sess: the Session whose variable values are saved.
          save_path: the checkpoint prefix.
          global_step: int, or a tensor/variable evaluated in `sess`; appended as `-<step>`.
          latest_filename: the state file's name (default "checkpoint").
          meta_graph_suffix: the MetaGraphDef file's suffix.
          write_meta_graph: also write the MetaGraphDef (`<prefix>.meta`).
          write_state: update the directory's state file.

        Returns:
          The checkpoint prefix, or None if the Saver has nothing to save.

        Raises:
          TypeError: `sess` is not a Session.
          ValueError: the parent directory of `save_path` does not exist, or
            `latest_filename` has path components.
          RuntimeError: the Saver was deferred and never built.
        """
        del save_debug_info
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        if latest_filename is None:
            latest_filename = "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        if global_step is not None:
            if isinstance(global_step, numbers.Integral):  # also NumPy ints, as in TF
                global_step = int(global_step)
            else:
                from tensorweave.train.training_util import global_step as _step_value
                global_step = _step_value(sess, global_step)
            step = f"{global_step:08d}" if self._pad_step_number else str(global_step)
            checkpoint_file = f"{save_path}-{step}"
        else:
            checkpoint_file = save_path
            if os.path.basename(save_path) == latest_filename and not self.saver_def.sharded:
                raise ValueError(f"'latest_filename' collides with 'save_path': "
                                 f"'{latest_filename}' and '{save_path}'")
        if not hasattr(sess, "run"):
            raise TypeError(f"'sess' must be a Session; {sess}")
        if self._is_empty:
            return None
        save_dir = os.path.dirname(save_path)
        try:   # the save op creates a missing directory, as TensorFlow's does
            prefix = sess.run(self.saver_def.save_tensor_name,
                              {self.saver_def.filename_tensor_name: checkpoint_file})
        except (errors.FailedPreconditionError, errors.NotFoundError) as exc:
            if save_dir and not os.path.isdir(save_dir):
                raise ValueError(f"Parent directory of {save_path} doesn't exist, can't "
                                 "save.") from exc
            raise
        prefix = prefix.decode() if isinstance(prefix, bytes) else str(prefix)
        if write_meta_graph:
            self.export_meta_graph(_mgmt.meta_graph_filename(checkpoint_file, meta_graph_suffix),
                                   strip_default_attrs=strip_default_attrs)
        if write_state:
            _fmt.pause_point("state")
            self._record_last_checkpoint(prefix)
            _mgmt.update_checkpoint_state(
                save_dir=os.path.dirname(checkpoint_file), model_checkpoint_path=prefix,
                all_model_checkpoint_paths=self.last_checkpoints,
                latest_filename=latest_filename,
                save_relative_paths=self._save_relative_paths)
            self._delete_old_checkpoints(meta_graph_suffix)
        return prefix

    def restore(self, sess, save_path) -> None:
        """Restores the variables from the checkpoint `save_path`: all of them or none.

        Raises:
          ValueError: `save_path` is None or not a checkpoint.
          NotFoundError: variables are missing from the checkpoint (all are listed, after
            TF's "Restoring from checkpoint failed." preamble).
          InvalidArgumentError: dtypes or shapes differ from the checkpoint's (likewise).
          DataLossError: the checkpoint is truncated or corrupt.
        """
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if isinstance(save_path, bytes):
            save_path = save_path.decode()
        if not _mgmt.checkpoint_exists(save_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        logging.info("Restoring parameters from %s", save_path)
        try:
            if self._specs is not None:
                # The parts of a partitioned variable are checked once, as the full tensor.
                wanted = {s.name: (s.dtype, s.full_shape) for s in self._specs}
                check_restorable(read_index(save_path), list(wanted),
                                 [d for d, _ in wanted.values()],
                                 [s for _, s in wanted.values()], reshape=self._reshape)
            sess.run(self.saver_def.restore_op_name,
                     {self.saver_def.filename_tensor_name: save_path})
        except errors.NotFoundError as err:
            raise _restore_error(err, "a Variable name or other graph key that is "
                                      "missing") from None
        except errors.InvalidArgumentError as err:
            raise _restore_error(err, "a mismatch between the current graph and the "
                                      "graph") from None

    def export_meta_graph(self, filename=None, collection_list=None, as_text=False,
                          export_scope=None, clear_devices=False,
                          clear_extraneous_savers=False, strip_default_attrs=False,
                          save_debug_info=False):
        """Writes (if `filename`) and returns the MetaGraphDef of the graph with this SaverDef."""
        del save_debug_info
        from tensorweave.framework.meta_graph import export_meta_graph
        graph = self._graph or _graph.get_default_graph()
        return export_meta_graph(
            filename=filename, graph_def=graph.as_graph_def(add_shapes=True),
            saver_def=self.saver_def, collection_list=collection_list, as_text=as_text,
            graph=graph, export_scope=export_scope, clear_devices=clear_devices,
            clear_extraneous_savers=clear_extraneous_savers,
            strip_default_attrs=strip_default_attrs)
