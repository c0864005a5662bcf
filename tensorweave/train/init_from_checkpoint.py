"""tf.train.init_from_checkpoint: make variables' initializers load values from a checkpoint.

Nothing is read when it is called (beyond the checkpoint's index, to check names and shapes):
each chosen variable gets a new initializer, `Assign(var, RestoreV2(...))` (the RestoreV2
named "checkpoint_initializer", on the CPU of the variable's device), and its initial value
becomes the restored tensor, so `global_variables_initializer()` or `var.initializer` loads
the checkpoint's value. Names, graph structure and errors are TensorFlow's
(`checkpoint_utils.init_from_checkpoint`). A partitioned variable (named, under a mapped scope,
a PartitionedVariable or a list of its parts) loads each part as its slice of the checkpoint
tensor (RestoreV2 with the part's slice spec), whatever partitioning the checkpoint has.
"""
from __future__ import annotations

import os
from collections import abc

from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.scopes import device
from tensorweave.ops.sliced_variables import PartitionedVariable
from tensorweave.ops.variables import Variable, is_resource_variable
from tensorweave.train import checkpoint_management
from tensorweave.train.checkpoint_reader import load_checkpoint

__all__ = ["init_from_checkpoint"]


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Replaces variables' initializers so that they load values from a checkpoint.

    Values are loaded when the initializers run (typically
    `tf.global_variables_initializer()`), not now. Forms of `assignment_map` entries:

    * `'checkpoint_scope/': 'scope/'`: every variable under `scope/` made by `get_variable`
      from the checkpoint tensor of the same name under `checkpoint_scope/`;
    * `'checkpoint_scope/name': 'scope/variable'`: that variable (made by `get_variable`)
      from that tensor;
    * `'checkpoint_scope/name': variable`: the given Variable (also one made by tf.Variable);
    * `'/': 'scope/'`: the variables under `scope/` from the checkpoint's root.

    Args:
      ckpt_dir_or_file: a checkpoint prefix, or a directory (its newest checkpoint).
      assignment_map: a dict, or a list of (checkpoint name, variable or name) pairs (to load
        one tensor into several variables).

    Raises:
      ValueError: for a tensor the checkpoint lacks, a shape that does not match the
        variable's, a name that is neither a variable nor a scope mapped to a scope, or a
        directory without checkpoints.
      NotFoundError: if there is no checkpoint at `ckpt_dir_or_file`.
    """
    ckpt_file = _checkpoint_filename(ckpt_dir_or_file)
    variable_map = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    if isinstance(assignment_map, abc.Mapping):
        assignment_map = assignment_map.items()
    from tensorweave.ops.variable_scope import variable_store
    store_vars = variable_store(get_default_graph()).vars
    for tensor_name, current in sorted(assignment_map, key=lambda pair: pair[0]):
        if isinstance(current, PartitionedVariable):
            current = list(current)
        if isinstance(current, Variable) or _is_variable_list(current):
            var = current
        else:
            var = store_vars.get(current)
            if var is None:
                var = _partitioned_parts(current, store_vars)
        if var is not None:
            _initialize_one(var, tensor_name, variable_map, ckpt_dir_or_file, ckpt_file)
        else:
            _initialize_scope(current, tensor_name, store_vars, variable_map, ckpt_dir_or_file,
                              ckpt_file)


def _is_variable_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, Variable) for v in value)


def _partitioned_parts(name, store_vars):
    """The parts `<name>/part_0, part_1, ...` of a partitioned variable, or None."""
    parts = []
    while f"{name}/part_{len(parts)}" in store_vars:
        parts.append(store_vars[f"{name}/part_{len(parts)}"])
    return parts or None


def _checkpoint_filename(ckpt_dir_or_file):
    """The checkpoint prefix: the path itself, or a directory's newest checkpoint."""
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        return checkpoint_management.latest_checkpoint(path)
    return path


def _initialize_one(var, tensor_name, variable_map, ckpt_dir_or_file, ckpt_file) -> None:
    """One 'name': variable entry: checks the tensor's presence and shape, then overrides."""
    if tensor_name not in variable_map:
        raise ValueError(f"Tensor {tensor_name} is not found in {ckpt_dir_or_file} checkpoint "
                         f"{variable_map}")
    if isinstance(var, list):
        _set_slices_initializers(var, ckpt_file, tensor_name)
        return
    if not var.get_shape().is_compatible_with(variable_map[tensor_name]):
        raise ValueError(f"Shape of variable {var.name} ({var.get_shape()}) doesn't match with "
                         f"shape of tensor {tensor_name} ({variable_map[tensor_name]}) from "
                         "checkpoint reader.")
    _set_checkpoint_initializer(var, ckpt_file, tensor_name)


def _initialize_scope(scope_name, tensor_scope, store_vars, variable_map, ckpt_dir_or_file,
                      ckpt_file) -> None:
    """One 'checkpoint_scope/': 'scope/' entry ('/' is the root on either side): every
    get_variable variable under the scope, from the tensor of the same relative name."""
    scopes = scope_name[:scope_name.rindex("/")] if "/" in scope_name else ""
    if not tensor_scope.endswith("/"):
        raise ValueError(f"Assignment map with scope only name {scopes} should map to scope "
                         f"only {tensor_scope}. Should be 'scope/': 'other_scope/'.")
    names = {n[:n.index("/part_")] if "/part_" in n else n
             for n in store_vars if not scopes or n.startswith(scopes + "/")}
    for var_name in sorted(names):
        full_tensor_name = var_name[len(scopes):]
        if scope_name != "/":
            full_tensor_name = full_tensor_name[1:]
        if tensor_scope != "/":
            full_tensor_name = tensor_scope + full_tensor_name
        if full_tensor_name.endswith("/"):
            full_tensor_name = full_tensor_name[:-1]
        if full_tensor_name not in variable_map:
            raise ValueError(f"Tensor {full_tensor_name} ({var_name[len(scopes) + 1:]} in "
                             f"{tensor_scope}) is not found in {ckpt_dir_or_file} checkpoint")
        parts = _partitioned_parts(var_name, store_vars)
        if parts is not None:
            _set_slices_initializers(parts, ckpt_file, full_tensor_name)
        else:
            _set_checkpoint_initializer(store_vars[var_name], ckpt_file, full_tensor_name)


def _set_slices_initializers(parts, ckpt_file, tensor_name) -> None:
    """Each part of one partitioned variable loads its slice of the checkpoint tensor."""
    full_names = {getattr(v, "_save_slice_info", None) and v._save_slice_info.full_name
                  for v in parts}
    if None in full_names or len(full_names) != 1:
        raise ValueError(f"Slices must all be from the same tensor: {sorted(map(str, full_names))}")
    for part in parts:
        _set_checkpoint_initializer(part, ckpt_file, tensor_name, part._save_slice_info.spec)


def _set_checkpoint_initializer(variable, ckpt_file, tensor_name, slice_spec="") -> None:
    """Makes `Assign(variable, RestoreV2(ckpt_file, tensor_name, slice_spec))` (for a
    resource variable an AssignVariableOp) the variable's initializer and the restored tensor
    (given the variable's static shape) its initial value."""
    from tensorweave.ops.io_ops import restore_v2
    from tensorweave.ops.state_ops import assign
    with device(variable.device), device("/cpu:0"):
        restored = restore_v2(ckpt_file, [tensor_name], [slice_spec],
                              [variable.dtype.base_dtype], name="checkpoint_initializer")[0]
    if is_resource_variable(variable):
        variable._initializer_op = variable.assign(restored, read_value=False)
    else:
        variable._initializer_op = assign(
            variable._ref(), restored, validate_shape=variable.get_shape().is_fully_defined()).op
    restored.set_shape(variable.get_shape())
    variable._initial_value = restored
