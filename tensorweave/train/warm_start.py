"""tf.train.warm_start and tf.train.VocabInfo: initialize a new model's variables from an older
model's checkpoint, by name (optionally renamed), and remap the rows (or columns) of
vocabulary-indexed matrices when the vocabulary changed.

Variables without a VocabInfo are handed to `init_from_checkpoint` (their initializers restore
the checkpoint tensor when run). A VocabInfo variable is remapped here, when `warm_start` is
called: the checkpoint matrix is read with the checkpoint reader, row (axis 0) or column
(axis 1) k of the new matrix takes the old entry of the k-th token of the new vocabulary when
the old vocabulary (its first `old_vocab_size` lines) has it, and everything else (new tokens,
the `num_oov_buckets` trailing OOV entries) comes from `backup_initializer` (zeros by default).
The variable's initializer then assigns that value. TensorFlow does the same remapping in a
LoadAndRemapMatrix op when the initializer runs, and draws the backup values only for the
missing entries; here they are drawn for the whole matrix and the missing entries kept.
"""
from __future__ import annotations

import collections

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import GraphKeys, get_collection
from tensorweave.ops.sliced_variables import PartitionedVariable
from tensorweave.ops.variables import Variable, is_resource_variable
from tensorweave.platform import tf_logging as logging
from tensorweave.train.checkpoint_reader import load_checkpoint
from tensorweave.train.init_from_checkpoint import init_from_checkpoint

__all__ = ["VocabInfo", "warm_start"]


class VocabInfo(collections.namedtuple("VocabInfo", [
        "new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab", "old_vocab_size",
        "backup_initializer", "axis"])):
    """How to warm-start a vocabulary-indexed variable (TF1's tf.train.VocabInfo).

    Fields:
      new_vocab: the path of the new vocabulary file (one token per line).
      new_vocab_size: how many of its first tokens the variable covers.
      num_oov_buckets: the number of OOV entries after them (initialized by the backup).
      old_vocab: the path of the vocabulary the checkpoint was trained with.
      old_vocab_size: how many of its first tokens to use (-1: all).
      backup_initializer: the initializer of entries not found in the old vocabulary.
      axis: 0 to remap rows, 1 to remap columns.
    """

    def __new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                old_vocab_size=-1, backup_initializer=None, axis=0):
        if axis not in (0, 1):
            raise ValueError(f"The only supported values for the axis argument are 0 and 1.  "
                             f"Provided axis: {axis}")
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                               old_vocab_size, backup_initializer, axis)


def _var_name(var) -> str:
    """The checkpoint name of a variable, a partition of one, or a PartitionedVariable."""
    if isinstance(var, PartitionedVariable):
        return var.name
    info = getattr(var, "_save_slice_info", None)
    return info.full_name if info is not None else var.op.name


def _grouped_variables(vars_to_warm_start) -> dict:
    """{checkpoint name: [variable or its partitions]} for the variables to warm-start."""
    if isinstance(vars_to_warm_start, str) or vars_to_warm_start is None:
        logging.info("Warm-starting variables only in TRAINABLE_VARIABLES.")
        variables = get_collection(GraphKeys.TRAINABLE_VARIABLES, scope=vars_to_warm_start)
    elif isinstance(vars_to_warm_start, list):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            variables = [v for pattern in vars_to_warm_start
                         for v in get_collection(GraphKeys.GLOBAL_VARIABLES, scope=pattern)]
        elif all(isinstance(v, Variable) for v in vars_to_warm_start):
            variables = vars_to_warm_start
        else:
            raise ValueError(f"If `vars_to_warm_start` is a list, it must be all `Variable` or "
                             f"all `str`.  Given types are "
                             f"{[type(v) for v in vars_to_warm_start]}")
    else:
        raise ValueError(f"`vars_to_warm_start must be a `list` or `str`.  Given type is "
                         f"{type(vars_to_warm_start)}")
    grouped: dict = {}
    for v in variables:
        grouped.setdefault(_var_name(v), []).append(v)
    return grouped


def _read_vocab(path: str, size: int) -> list[str]:
    """The first `size` tokens (all for -1) of a vocabulary file, one per line."""
    with open(path, encoding="utf-8") as f:
        tokens = f.read().splitlines()
    if size > len(tokens):
        raise ValueError(f"Vocabulary file {path} has {len(tokens)} tokens, fewer than the "
                         f"{size} requested")
    return tokens if size == -1 else tokens[:size]


def _old_index(new_tokens, old_tokens) -> np.ndarray:
    """For each new token, its index in the old vocabulary, or -1."""
    first = {}
    for i, token in enumerate(old_tokens):
        first.setdefault(token, i)
    return np.array([first.get(t, -1) for t in new_tokens], np.int64)


def _remapped(part, old_matrix, index, info: VocabInfo, total_rows: int):
    """The initial value of one part (rows [offset, offset + rows) of the full matrix)."""
    from tensorweave.ops.array_index_ops import where
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.init_ops import Zeros
    shape = part.get_shape().as_list()
    if part.dtype.base_dtype != _dtypes.float32:
        raise TypeError(f"Currently, only float32 is supported. Received dtype: "
                        f"{part.dtype.base_dtype}")
    if len(shape) != 2:
        raise ValueError(f"Expected 2-dim shape, but received: {shape}")
    slice_info = getattr(part, "_save_slice_info", None)
    offset = slice_info.var_offset[0] if slice_info is not None else 0
    backup = info.backup_initializer or Zeros()
    if info.axis == 0:
        if offset + shape[0] > total_rows:
            raise ValueError(f"Trying to initialize {shape[0]} additional rows after {offset} "
                             f"rows have already been initialized, which would exceed expected "
                             f"total row count of new_row_vocab_size ({info.new_vocab_size}) + "
                             f"num_row_oov_buckets ({info.num_oov_buckets}) = {total_rows}.")
        rows = np.full(shape[0], -1, np.int64)
        known = index[offset:offset + shape[0]]
        rows[:len(known)] = known
        value = np.zeros(shape, np.float32)
        value[rows >= 0] = old_matrix[rows[rows >= 0]]
        mask = np.broadcast_to((rows >= 0)[:, None], shape)
    else:
        cols = np.concatenate([index, np.full(info.num_oov_buckets, -1, np.int64)])
        if shape[1] != len(cols):
            raise ValueError(f"Expected 2nd dim of shape to be new_col_vocab_size "
                             f"({info.new_vocab_size}) + num_col_oov_buckets "
                             f"({info.num_oov_buckets}) = {len(cols)}, but received shape: "
                             f"{shape}")
        value = np.zeros(shape, np.float32)
        value[:, cols >= 0] = old_matrix[offset:offset + shape[0]][:, cols[cols >= 0]]
        mask = np.broadcast_to((cols >= 0)[None, :], shape)
    if mask.all():
        return constant(value)
    return where(constant(mask), constant(value), backup(shape, _dtypes.float32))


def _warm_start_with_vocab(parts, ckpt, prev_tensor_name, info: VocabInfo) -> None:
    """Makes each part's initializer assign its remapped rows (or columns)."""
    from tensorweave.ops.state_ops import assign
    if not (info.new_vocab and info.new_vocab_size and ckpt and info.old_vocab):
        raise ValueError("Invalid args: Must provide all of [current_vocab_path, "
                         "current_vocab_size, prev_ckpt, prev_vocab_path}.")
    old_matrix = load_checkpoint(ckpt).get_tensor(prev_tensor_name)
    new_tokens = _read_vocab(info.new_vocab, info.new_vocab_size)
    index = _old_index(new_tokens, _read_vocab(info.old_vocab, info.old_vocab_size))
    if info.axis == 0:
        total_rows = info.new_vocab_size + info.num_oov_buckets
    else:
        total_rows = sum(p.get_shape().as_list()[0] for p in parts)
    for part in parts:
        value = _remapped(part, old_matrix, index, info, total_rows)
        part._initializer_op = part.assign(value, read_value=False) \
            if is_resource_variable(part) else assign(part._ref(), value).op
        part._initial_value = value


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
               var_name_to_prev_var_name=None):
    """Warm-starts a model from a checkpoint (TF1's tf.train.warm_start).

    Must be called while building the graph, before the variables' initializers run; the
    chosen variables' initializers are replaced.

    Args:
      ckpt_to_initialize_from: a checkpoint prefix or a directory (its latest checkpoint).
      vars_to_warm_start: a regex matched against the start of the names of the
        TRAINABLE_VARIABLES (".*": all; None: only the variables of var_name_to_vocab_info), a
        list of such regexes (matched against the GLOBAL_VARIABLES), or a list of Variables.
      var_name_to_vocab_info: {variable name: VocabInfo} for vocabulary-indexed variables.
      var_name_to_prev_var_name: {variable name: its name in the checkpoint} where it changed.

    Raises:
      ValueError: a bad vars_to_warm_start, a key of the two dicts that names no variable to
        warm-start, a variable or tensor missing from the checkpoint, or mismatched shapes.
    """
    logging.info("Warm-starting from: %s", ckpt_to_initialize_from)
    grouped = _grouped_variables(vars_to_warm_start)
    vocab_infos = var_name_to_vocab_info or {}
    prev_names = var_name_to_prev_var_name or {}
    count = 0
    vocabless: list = []
    for var_name, variable in grouped.items():
        prev_name = prev_names.get(var_name) or var_name
        info = vocab_infos.get(var_name)
        if info:
            count += 1
            _warm_start_with_vocab(variable, ckpt_to_initialize_from, prev_name, info)
        elif vars_to_warm_start:
            count += 1
            vocabless.append((prev_name, variable[0] if len(variable) == 1 else variable))
    init_from_checkpoint(ckpt_to_initialize_from, vocabless)
    logging.info("Warm-started %d variables.", count)
    for what, given in (("var_name_to_prev_var_name", prev_names),
                        ("var_name_to_vocab_info", vocab_infos)):
        unused = set(given) - set(grouped)
        if unused:
            raise ValueError(f"You provided the following variables in {what} that were not "
                             f"used: {unused}.  Perhaps you misspelled them?  Here is the list "
                             f"of viable variable names: {grouped.keys()}")
