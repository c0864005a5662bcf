"""The graph a Saver adds: save and restore ops under one name scope, described by a SaverDef.

For variables {key: variable} (keys are checkpoint names) it builds, with TF1's names:

    save/filename/input   Const "model"          (the default prefix)
    save/filename         PlaceholderWithDefault
    save/Const            PlaceholderWithDefault  <- SaverDef.filename_tensor_name; fed by save()
    save/SaveV2           SaveV2(save/Const, names, slices, variables...)
    save/control_dependency  Identity(save/Const) after SaveV2  <- save_tensor_name
    save/RestoreV2        RestoreV2(save/Const, names, slices) -> one tensor per key
    save/Assign, save/Assign_1, ...   Assign(variable, restored)
    save/restore_all      NoOp after every Assign  <- restore_op_name

A partitioned variable is saved as slices of one tensor under its full name (or its key): one
SaveV2/RestoreV2 entry per part, with the part's slice spec ("10 5 4,3:0,5") from its
SaveSliceInfo, so it restores into any partitioning. Keys are sorted (the slices of a key by
offset), so the checkpoint and the op order do not depend on dict order. With
`sharded=True` the variables are grouped by device: each device's shard is saved on its task's
CPU:0 as `<prefix>_temp/part-0000k-of-0000n` (ShardedFilename), and MergeV2Checkpoints joins
them into one checkpoint and removes the temporary directory; `save/Identity` is then the save
tensor and each device's Assigns are grouped in a `restore_shard` NoOp. RestoreV2 runs on
CPU:0, as in TF. Every Assign
waits for every RestoreV2 (which verifies all its data first), so a damaged checkpoint assigns
nothing; `restore_sequentially` trades that for one tensor in memory at a time.

A SaveableObject (e.g. a mutable lookup table's, from the SAVEABLE_OBJECTS collection) is saved
as its specs' tensors under their own names and restored by its `restore` op instead of
Assigns. A Trackable (a mutable lookup table itself) in var_list is saved through the
SaveableObject it makes. As in TensorFlow, of two SaveableObjects of one name the later one is
saved (with a warning here; TensorFlow is silent). A resource variable is saved as TF saves
it, through a SaveableObject: its `Read/ReadVariableOp` is saved, and `save/Identity` +
`save/AssignVariableOp` restore it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import colocate_with, control_dependencies, device, name_scope
from tensorweave.ops import io_ops, state_ops
from tensorweave.platform import tf_logging as logging
from tensorweave.protos import saver_pb2

__all__ = ["BaseSaverBuilder", "BulkSaverBuilder", "SaveSpec", "SaveableObject", "Trackable",
           "op_list_to_dict"]


@dataclass
class SaveSpec:
    """One checkpointed tensor: its checkpoint key, ref tensor, dtype and static shape, and
    for a part of a partitioned variable its SaveSliceInfo (None for a whole variable)."""

    name: str
    ref: Tensor
    dtype: _dtypes.DType
    shape: _ts.TensorShape
    slice_info: object = None
    saveable: object = None     # the SaveableObject that restores this tensor, if any

    @property
    def device(self) -> str:
        return self.ref.device

    @property
    def slice_spec(self) -> str:
        """The `shape_and_slices` entry: "" for a whole variable."""
        return self.slice_info.spec if self.slice_info is not None else ""

    @property
    def full_shape(self) -> _ts.TensorShape:
        """The shape of the checkpoint tensor: the full variable's for a slice."""
        if self.slice_info is None:
            return self.shape
        return _ts.TensorShape(self.slice_info.full_shape)


class SaveableObject:
    """Something a Saver saves as tensors and restores with its own ops (TF's SaveableObject):
    `specs` are the SaveSpecs of the tensors to save (read when the save op runs), `restore`
    builds the op that takes the restored tensors back, in the order of `specs`."""

    def __init__(self, op, specs: list, name: str):
        self.op = op
        self.specs = specs
        self.name = name

    def restore(self, restored_tensors, restored_shapes=None):
        raise NotImplementedError


class Trackable:
    """Something other than a variable that a Saver takes in `var_list` (TF's Trackable, e.g. a
    mutable lookup table): it has a `name` (its place in a sorted var_list) and makes the
    SaveableObject that saves it, with checkpoint keys prefixed by `name`: the key in a
    var_list dict, "" in a list (so a table in a list is saved as "-keys", as in TF)."""

    name: str

    def saveable_object(self, name: str) -> SaveableObject:
        raise NotImplementedError


class _ResourceVariableSaveable(SaveableObject):
    """A resource variable (or a part of a partitioned one) in a checkpoint under `name`: its
    value, read when the save runs, restored by an AssignVariableOp (TF's
    ResourceVariableSaveable)."""

    def __init__(self, variable, name: str, slice_info=None):
        spec = SaveSpec(name, variable._as_graph_element(), variable.dtype, variable.shape,
                        slice_info)
        super().__init__(variable, [spec], name)
        spec.saveable = self

    def restore(self, restored_tensors, restored_shapes=None):
        """`save/Identity` of the restored tensor, then `save/AssignVariableOp`, on the
        variable's device."""
        from tensorweave.ops.array_ops import identity
        variable = self.op
        with device(variable.device):
            value = identity(restored_tensors[0])
            variable.shape.assert_is_compatible_with(value.shape)
            return state_ops.assign_variable_op(variable.handle, value)


def _variable_spec(key: str, var, slice_info=None) -> SaveSpec:
    """The SaveSpec of a variable (a Variable, its ref Tensor or its op) under `key`."""
    from tensorweave.ops.variables import is_resource_variable
    if is_resource_variable(var):
        return _ResourceVariableSaveable(var, key, slice_info).specs[0]
    ref = _ref_of(var)
    return SaveSpec(key, ref, ref.dtype.base_dtype, ref.shape, slice_info)


def _ref_of(var):
    """The ref tensor of a variable given as a Variable (a resource variable's handle), its
    ref Tensor or its op."""
    from tensorweave.framework.operation import Operation
    from tensorweave.ops.variables import Variable
    if isinstance(var, Variable):
        return var._ref()
    if isinstance(var, Operation) and var.type in ("VariableV2", "Variable"):
        return var.outputs[0]
    if isinstance(var, Tensor) and var.op.type in ("VariableV2", "Variable"):
        return var
    raise TypeError(f"Saver can only save and restore variables (tf.Variable or a variable's "
                    f"ref tensor), got {var!r}")


def _slice_info(var):
    """The SaveSliceInfo of a Variable that is a part of a partitioned variable, else None."""
    from tensorweave.ops.variables import Variable
    return var._save_slice_info if isinstance(var, Variable) else None


def _sort_key(var) -> str:
    from tensorweave.ops.sliced_variables import PartitionedVariable
    if isinstance(var, (SaveableObject, Trackable)):
        return var.name
    return var.name if isinstance(var, PartitionedVariable) else _ref_of(var).op.name


def op_list_to_dict(op_list, convert_variable_to_tensor=True) -> dict:
    """{checkpoint key: variable} for a list of variables, keyed by their op names; parts of a
    partitioned variable are grouped into a list under the full variable's name, a
    PartitionedVariable is keyed by its name, and a SaveableObject (or a Trackable's) by its
    name; of two SaveableObjects of one name the later in `op_list` is kept, as in TF.

    Raises:
      ValueError: two variables share a name, or parts and a whole variable do.
      TypeError: an element is not a variable.
    """
    del convert_variable_to_tensor
    if not isinstance(op_list, (list, tuple, set)):
        raise TypeError(f"Variables to save should be passed in a dict or a list: {op_list}")
    out: dict = {}
    for var in sorted(op_list, key=_sort_key):
        if isinstance(var, Trackable):
            var = var.saveable_object("")
        if isinstance(var, SaveableObject):
            if var.name in out:
                logging.warning(f"Two saveable objects are named {var.name!r}; only the last "
                                f"one is saved, as in TensorFlow.")
            out[var.name] = var
            continue
        info = _slice_info(var)
        if info is not None:
            parts = out.setdefault(info.full_name, [])
            if not isinstance(parts, list):
                raise ValueError(f"Mixing slices and non-slices with the same name: "
                                 f"{info.full_name}")
            parts.append(var)
            continue
        name = _sort_key(var)
        if name in out:    # also one variable given twice, as TF has it
            raise ValueError(f"At least two variables have the same name: {name}")
        out[name] = var
    return out


def _specs_of(key: str, value) -> list:
    """The SaveSpecs of one checkpoint key: one for a variable, one per part for a
    PartitionedVariable or a list of parts (all slices of one full variable), a
    SaveableObject's own (named by it, not by the key), a Trackable's prefixed by the key."""
    from tensorweave.ops.sliced_variables import PartitionedVariable
    from tensorweave.ops.variables import Variable
    if isinstance(value, Trackable):
        value = value.saveable_object(key)
    if isinstance(value, SaveableObject):
        return [SaveSpec(spec.name, spec.ref, spec.dtype.base_dtype, spec.shape,
                         saveable=value) for spec in value.specs]
    if not isinstance(value, (list, tuple, PartitionedVariable)):
        return [_variable_spec(key, value)]
    specs, full_name = [], None
    for var in value:
        if not isinstance(var, Variable):
            raise ValueError(f"Slices must all be Variables: {var}")
        info = _slice_info(var)
        if info is None:
            raise ValueError(f"Slices must all be slices: {var}")
        if full_name is not None and info.full_name != full_name:
            raise ValueError(f"Slices must all be from the same tensor: {full_name} != "
                             f"{info.full_name}")
        full_name = info.full_name
        specs.append(_variable_spec(key, var, info))
    return sorted(specs, key=lambda s: s.slice_info.var_offset)


def specs_for(var_list) -> list:
    """SaveSpecs sorted by key, from a dict {key: variable} or a list of variables; a
    partitioned variable (or a list of its parts) gives one spec per part."""
    if isinstance(var_list, dict):
        named = var_list
        for key in named:
            if not isinstance(key, str):
                raise TypeError(f"Checkpoint keys must be strings, got {key!r}")
    else:
        named = op_list_to_dict(var_list)
    specs, seen = [], set()
    for key in sorted(named):
        for spec in _specs_of(key, named[key]):
            if spec.ref in seen:
                raise ValueError(f"The same saveable will be restored with two names: {key}")
            seen.add(spec.ref)
            specs.append(spec)
    return specs


class BaseSaverBuilder:
    """Builds a Saver's save and restore ops and returns their SaverDef."""

    def __init__(self, write_version=saver_pb2.SaverDef.V2):
        self._write_version = write_version

    def build(self, specs, reshape=False, sharded=False, max_to_keep=5,
              keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
              filename="model") -> saver_pb2.SaverDef:
        """Adds the save and restore ops for `specs` (SaveSpecs); returns the SaverDef."""
        with name_scope(name, "save", [s.ref for s in specs]):
            default = _filename_placeholder(filename or "model", "filename")
            filename_tensor = _filename_placeholder(default, "Const")
            if sharded:
                groups = _group_by_device(specs)
                save_tensor = self._add_sharded_save(filename_tensor, groups)
                restore_op = self._add_sharded_restore(filename_tensor, groups, reshape,
                                                       restore_sequentially)
            else:
                save_tensor = self._add_save(filename_tensor, specs)
                restore_op = self._add_restore(filename_tensor, specs, reshape,
                                               restore_sequentially, "restore_all")
        return saver_pb2.SaverDef(
            filename_tensor_name=filename_tensor.name, save_tensor_name=save_tensor.name,
            restore_op_name=restore_op.name, max_to_keep=max_to_keep, sharded=sharded,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            version=saver_pb2.SaverDef.V2)

    # --- save --------------------------------------------------------------------------------
    def _save_op(self, filename_tensor, specs):
        return io_ops.save_v2(filename_tensor, [s.name for s in specs],
                              [s.slice_spec for s in specs], [s.ref for s in specs])

    def _add_save(self, filename_tensor, specs):
        from tensorweave.ops.control_flow_ops import with_dependencies
        save = self._save_op(filename_tensor, specs)
        return with_dependencies([save], filename_tensor)

    def _add_sharded_save(self, filename_tensor, groups):
        """Each device's shard is saved (on its host's CPU:0) under `<prefix>_temp/part`, as
        in TF ("<prefix>.part" for s3:// paths), then merged into `<prefix>`."""
        from tensorweave.ops.array_index_ops import where
        from tensorweave.ops.array_join_ops import stack
        from tensorweave.ops.array_ops import identity
        from tensorweave.ops.constant_op import constant
        from tensorweave.ops.control_flow_ops import with_dependencies
        from tensorweave.ops.string_ops import string_join
        from tensorweave.ops.string_regex_ops import regex_full_match
        with device("CPU"):
            suffix = where(regex_full_match(filename_tensor, "^s3://.*"), constant(".part"),
                           constant(os.path.normpath("_temp/part")))
            temp_prefix = string_join([filename_tensor, suffix])
        num_shards = constant(len(groups), name="num_shards")
        shard_files, done = [], []
        for k, (dev, specs) in enumerate(groups):
            with device(_cpu0(dev)):
                shard_file = io_ops.sharded_filename(temp_prefix, k, num_shards)
                save = self._save_op(shard_file, specs)
                done.append(with_dependencies([save], shard_file))
                shard_files.append(shard_file)
        with device(_cpu0(groups[-1][0])):
            with control_dependencies(done):
                merge = io_ops.merge_v2_checkpoints(
                    stack(shard_files, name="MergeV2Checkpoints/checkpoint_prefixes"),
                    filename_tensor)
            with control_dependencies(done + [merge]):
                return identity(filename_tensor)

    # --- restore -----------------------------------------------------------------------------
    def _add_restore(self, filename_tensor, specs, reshape, restore_sequentially, name):
        from tensorweave.ops.control_flow_ops import group
        assigns = []
        if restore_sequentially:
            for unit in _restore_units(specs):
                with control_dependencies(assigns[-1:]):
                    values = _restore_v2(filename_tensor, unit)
                    assigns.extend(self._restore_ops(unit, values, reshape))
        else:
            values = _restore_v2(filename_tensor, specs)
            assigns = self._restore_ops(specs, values, reshape)
        return group(*assigns, name=name)

    def _restore_ops(self, specs, values, reshape) -> list:
        """An Assign per variable spec; one `restore` op per SaveableObject (all its specs)."""
        ops, done = [], set()
        for spec, value in zip(specs, values):
            saveable = spec.saveable
            if saveable is None:
                ops.append(self._assign(spec, value, reshape))
            elif id(saveable) not in done:
                done.add(id(saveable))
                mine = [v for s, v in zip(specs, values) if s.saveable is saveable]
                ops.append(saveable.restore(mine, [s.shape for s in saveable.specs]))
        return ops

    def _assign(self, spec, value, reshape):
        with colocate_with(spec.ref.op):
            if reshape and spec.shape.is_fully_defined():
                from tensorweave.ops.array_ops import reshape as reshape_op
                value = reshape_op(value, spec.shape.as_list())
            # A variable of unknown shape (validate_shape=False) takes the stored shape.
            return state_ops.assign(spec.ref, value,
                                    validate_shape=spec.shape.is_fully_defined())

    def _add_sharded_restore(self, filename_tensor, groups, reshape, restore_sequentially):
        """One RestoreV2 per device; no Assign runs before every shard's data is verified."""
        from tensorweave.ops.control_flow_ops import group
        if restore_sequentially:
            shard_ops = []
            for dev, specs in groups:
                with device(dev):
                    shard_ops.append(self._add_restore(filename_tensor, specs, reshape, True,
                                                       "restore_shard"))
            return group(*shard_ops, name="restore_all")
        shard_values = []
        for dev, specs in groups:
            with device(dev):
                shard_values.append(_restore_v2(filename_tensor, specs))
        reads = [values[0].op for values in shard_values]
        shard_ops = []
        for (dev, specs), values in zip(groups, shard_values):
            with device(dev), control_dependencies(reads):
                assigns = self._restore_ops(specs, values, reshape)
                shard_ops.append(group(*assigns, name="restore_shard"))
        return group(*shard_ops, name="restore_all")


class BulkSaverBuilder(BaseSaverBuilder):
    """TF1's default builder: one RestoreV2 reads every variable (the base does the same)."""


def _restore_v2(filename_tensor, specs):
    """RestoreV2 of `specs`, on CPU:0 (of the enclosing device's task), as TF places it."""
    with device("cpu:0"):
        return io_ops.restore_v2(filename_tensor, [s.name for s in specs],
                                 [s.slice_spec for s in specs], [s.dtype for s in specs])


def _cpu0(device_name: str) -> str:
    """CPU:0 of the task of `device_name` (TF's set_cpu0): where a shard is saved."""
    from tensorweave.framework.device_spec import DeviceSpec
    spec = DeviceSpec.from_string(device_name or "")
    return DeviceSpec(job=spec.job, replica=spec.replica, task=spec.task, device_type="CPU",
                      device_index=0).to_string()


def _filename_placeholder(default, name):
    """A scalar string PlaceholderWithDefault; a Python default becomes `<name>/input`."""
    from tensorweave.ops.constant_op import PlaceholderWithDefault, constant
    with name_scope(name) as scope:
        if not isinstance(default, Tensor):
            default = constant(default, name="input")
        return apply_op(PlaceholderWithDefault, [default], {"shape": _ts.TensorShape([])},
                        name=scope)


def _restore_units(specs) -> list:
    """The specs grouped for a sequential restore: one per variable spec, and all specs of a
    SaveableObject together (its restore takes them at once)."""
    units: list = []
    for spec in specs:
        if spec.saveable is not None and units and units[-1][0].saveable is spec.saveable:
            units[-1].append(spec)
        else:
            units.append([spec])
    return units


def _group_by_device(specs) -> list:
    """[(device, specs)] in first-seen device order; specs keep their sorted order."""
    from tensorweave.framework.device_spec import DeviceSpec
    groups: dict = {}
    for spec in specs:
        dev = spec.device
        if dev:
            parsed = DeviceSpec.from_string(dev)
            dev = parsed.to_string()
        groups.setdefault(dev, []).append(spec)
    return list(groups.items())
