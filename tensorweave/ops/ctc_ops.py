"""Connectionist temporal classification: CTCLoss, CTCGreedyDecoder, CTCBeamSearchDecoder.

CTCLoss computes the loss and its gradient with respect to the logits in one kernel; the
registered gradient scales that saved gradient by the incoming one, as TensorFlow does. The
decoders have no gradient. `ctc_loss_v2` with dense labels converts them to a SparseTensor
and rotates the blank class to the end, so every loss goes through CTCLoss. Kernels live in
`kernels/ctc.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import dims_with_rank
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["collapse_repeated", "ctc_beam_search_decoder", "ctc_beam_search_decoder_v2",
           "ctc_greedy_decoder", "ctc_loss", "ctc_loss_v2", "ctc_unique_labels"]

TensorShape = _ts.TensorShape
_FLOAT = [_dtypes.float32, _dtypes.float64]


def _batch(ctx, inputs_index: int, lengths_index: int):
    """The [T, B, C] logits' dims and B merged with the length vector's size."""
    dims = list(dims_with_rank(ctx.input_shape(inputs_index)._dims, 3))
    (length,) = dims_with_rank(ctx.input_shape(lengths_index)._dims, 1)
    if dims[1] is not None and length is not None and dims[1] != length:
        raise ValueError(f"Dimensions must be equal, but are {dims[1]} and {length}")
    dims[1] = dims[1] if dims[1] is not None else length
    return dims


# --- CTCLoss -----------------------------------------------------------------------------------
def _ctc_loss_shape(ctx):
    n = dims_with_rank(ctx.input_shape(1)._dims, 2)[0]
    (m,) = dims_with_rank(ctx.input_shape(2)._dims, 1)
    if n is not None and m is not None and n != m:
        raise ValueError(f"Dimensions must be equal, but are {n} and {m}")
    dims = _batch(ctx, 0, 3)
    return [TensorShape([dims[1]]), TensorShape(dims)]


CTCLoss = define_op(
    "CTCLoss",
    inputs=["inputs: T", "labels_indices: int64", "labels_values: int32",
            "sequence_length: int32"],
    outputs=["loss: T", "gradient: T"],
    attrs=[Attr("preprocess_collapse_repeated", "bool", False),
           Attr("ctc_merge_repeated", "bool", True),
           Attr("ignore_longer_outputs_than_inputs", "bool", False),
           TypeAttr("T", _FLOAT, _dtypes.float32)],
    shape_fn=_ctc_loss_shape)


@CTCLoss.gradient
def _ctc_loss_grad(op, grad_loss, _):
    """The kernel's saved d loss / d logits, scaled per batch entry by the incoming gradient."""
    from tensorweave.ops.array_ops import expand_dims
    return [expand_dims(grad_loss, -1) * op.outputs[1], None, None, None]


def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False,
             ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False,
             time_major=True, logits=None):
    """Computes the CTC (Connectionist Temporal Classification) loss (TF1's tf.nn.ctc_loss).

    The softmax is applied for you: `inputs` are unscaled logits. The last class,
    `num_classes - 1`, is the blank; a label >= num_classes - 1 ends a label sequence.

    Args:
      labels: an int32 SparseTensor; `labels.indices[i] == [b, t]` means `labels.values[i]`
        is label t of batch entry b, with values in [0, num_classes - 1).
      inputs: 3-D float Tensor of logits, [max_time, batch, num_classes] (time_major) or
        [batch, max_time, num_classes].
      sequence_length: 1-D int32 Tensor [batch] of sequence lengths (each <= max_time).
      preprocess_collapse_repeated: collapse repeated labels before computing the loss.
      ctc_merge_repeated: if False, repeated non-blank labels are never merged.
      ignore_longer_outputs_than_inputs: give zero loss and gradient to entries whose labels
        are longer than their sequence instead of failing.
      time_major: whether `inputs` is [max_time, batch, num_classes].
      logits: alias of `inputs`.

    Returns:
      A 1-D float Tensor [batch] of negative log probabilities.

    Raises:
      TypeError: if `labels` is not a SparseTensor.
      ValueError: if both or neither of `inputs` and `logits` are given, or shapes disagree.
      InvalidArgumentError: at run time, for invalid labels or lengths, or (unless ignored)
        labels longer than their sequence.
    """
    from tensorweave.ops.array_ops import transpose
    from tensorweave.ops.math_ops import cast
    if not isinstance(labels, SparseTensor):
        raise TypeError("Expected argument `labels` to be a SparseTensor. Received "
                        f"labels={labels} of type: {type(labels).__name__}")
    if inputs is not None and logits is not None:
        raise ValueError("Cannot specify both 'inputs' and 'logits'.")
    if inputs is None and logits is None:
        raise ValueError("None values not supported.")
    inputs = convert_to_tensor(logits if inputs is None else inputs, name="logits")
    if not time_major:
        inputs = transpose(inputs, [1, 0, 2])
    low = inputs.dtype.base_dtype in (_dtypes.float16, _dtypes.bfloat16)
    attrs = {"preprocess_collapse_repeated": preprocess_collapse_repeated,
             "ctc_merge_repeated": ctc_merge_repeated,
             "ignore_longer_outputs_than_inputs": ignore_longer_outputs_than_inputs}
    loss, _ = apply_op(CTCLoss, [cast(inputs, _dtypes.float32) if low else inputs,
                                 labels.indices, labels.values, sequence_length], attrs)
    return cast(loss, inputs.dtype) if low else loss


def _num_classes(logits):
    from tensorweave.ops.array_ops import shape
    return logits.shape.as_list()[2] if logits.shape.ndims == 3 and \
        logits.shape.as_list()[2] is not None else shape(logits)[2]


def _blank_last(labels: SparseTensor, logits, blank_index: int):
    """Logits with class `blank_index` moved last and the labels above it shifted down."""
    from tensorweave.ops.array_index_ops import where
    from tensorweave.ops.array_join_ops import concat
    num_classes = _num_classes(logits)
    if blank_index < 0:
        blank_index += num_classes
    if isinstance(num_classes, int) and blank_index == num_classes - 1:
        return labels, logits
    logits = concat([logits[:, :, :blank_index], logits[:, :, blank_index + 1:],
                     logits[:, :, blank_index:blank_index + 1]], axis=2)
    values = where(labels.values < blank_index, labels.values, labels.values - 1)
    return SparseTensor(labels.indices, values, labels.dense_shape), logits


def _dense_to_sparse(labels, label_length) -> SparseTensor:
    """The first `label_length[b]` labels of each row of a dense [batch, max_len] Tensor."""
    from tensorweave.ops.array_index_ops import boolean_mask, sequence_mask, where
    from tensorweave.ops.array_join_ops import stack
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.math_ops import cast
    from tensorweave.ops.reduction_ops import reduce_max
    mask = sequence_mask(label_length, maxlen=shape(labels)[1])
    dense_shape = stack([cast(shape(labels)[0], _dtypes.int64),
                         cast(reduce_max(label_length), _dtypes.int64)])
    return SparseTensor(where(mask), cast(boolean_mask(labels, mask), _dtypes.int32),
                        dense_shape)


def ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major=True,
                unique=None, blank_index=None, name=None):
    """Computes the CTC loss with dense or sparse labels (TF1's tf.nn.ctc_loss_v2).

    Classic CTC (no collapsing, repeated labels merged). Dense labels are zero-padded rows
    with their lengths in `label_length`; their blank defaults to class 0. Sparse labels
    need an explicit `blank_index`.

    Args:
      labels: an int Tensor [batch, max_label_length] or an int32 SparseTensor.
      logits: a float Tensor [frames, batch, num_classes] ([batch, frames, num_classes] if
        not `logits_time_major`).
      label_length: an int Tensor [batch] (None for sparse labels).
      logit_length: an int32 Tensor [batch], the number of frames of each entry.
      logits_time_major: whether `logits` is time major.
      unique: accepted for compatibility (`ctc_unique_labels(labels)`); only a TPU
        optimisation in TensorFlow, it does not change the result.
      blank_index: the blank class; negative values count from num_classes. Default 0 for
        dense labels; required for sparse ones.
      name: the name scope for dense labels (default "ctc_loss_dense").

    Returns:
      A 1-D float Tensor [batch] of negative log probabilities.

    Raises:
      ValueError: if `labels` is sparse and `blank_index` is None.
    """
    from tensorweave.ops.array_ops import transpose
    del unique   # a TPU memory optimisation in TensorFlow; the loss is the same without it
    if isinstance(labels, SparseTensor):
        if blank_index is None:
            raise ValueError("Argument `blank_index` must be provided when labels is a "
                             "SparseTensor.")
        labels, logits = _blank_last(labels, convert_to_tensor(logits), blank_index)
        return ctc_loss(labels=labels, inputs=logits, sequence_length=logit_length,
                        time_major=logits_time_major)
    with name_scope(name, "ctc_loss_dense", [logits, labels, label_length, logit_length]):
        logits = convert_to_tensor(logits, name="logits")
        if not logits_time_major:
            logits = transpose(logits, [1, 0, 2])
        sparse = _dense_to_sparse(convert_to_tensor(labels, name="labels"),
                                  convert_to_tensor(label_length, name="label_length"))
        sparse, logits = _blank_last(sparse, logits, blank_index or 0)
        return ctc_loss(sparse, logits, logit_length)


# --- Decoders ----------------------------------------------------------------------------------
def _decoded_shapes(batch, paths: int):
    """[N, 2] indices, [N] values and a [2] dense shape per path."""
    return ([TensorShape([None, 2])] * paths, [TensorShape([None])] * paths,
            [TensorShape([2])] * paths)


def _greedy_shape(ctx):
    batch = _batch(ctx, 0, 1)[1]
    (indices,), (values,), (shape,) = _decoded_shapes(batch, 1)
    return [indices, values, shape, TensorShape([batch, 1])]


def _beam_shape(ctx):
    batch, paths = _batch(ctx, 0, 1)[1], ctx.attr("top_paths")
    indices, values, shapes = _decoded_shapes(batch, paths)
    return [*indices, *values, *shapes, TensorShape([batch, paths])]


CTCGreedyDecoder = define_op(
    "CTCGreedyDecoder", inputs=["inputs: T", "sequence_length: int32"],
    outputs=["decoded_indices: int64", "decoded_values: int64", "decoded_shape: int64",
             "log_probability: T"],
    attrs=[Attr("merge_repeated", "bool", False), Attr("blank_index", "int", -1),
           TypeAttr("T", _FLOAT, _dtypes.float32)],
    shape_fn=_greedy_shape, not_differentiable=True)
CTCBeamSearchDecoder = define_op(
    "CTCBeamSearchDecoder", inputs=["inputs: T", "sequence_length: int32"],
    outputs=["decoded_indices: top_paths * int64", "decoded_values: top_paths * int64",
             "decoded_shape: top_paths * int64", "log_probability: T"],
    attrs=[Attr("beam_width", "int", minimum=1), Attr("top_paths", "int", minimum=1),
           Attr("merge_repeated", "bool", True), TypeAttr("T", _FLOAT, _dtypes.float32)],
    shape_fn=_beam_shape, not_differentiable=True)


def _sparse_results(outputs, paths: int):
    """The decoder's flat outputs as ([SparseTensor per path], log_probability)."""
    indices, values, shapes = (outputs[k * paths:(k + 1) * paths] for k in range(3))
    return [SparseTensor(i, v, s) for i, v, s in zip(indices, values, shapes)], outputs[-1]


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """Performs greedy (best path) decoding on the logits (TF1's tf.nn.ctc_greedy_decoder).

    The arg-max class of each frame is emitted, blanks are dropped and, with
    `merge_repeated`, a run of the same class is emitted once. Blanks count as ordinary
    classes in the path's probability.

    Args:
      inputs: 3-D float Tensor [max_time, batch, num_classes] of logits.
      sequence_length: 1-D int32 Tensor [batch] of sequence lengths.
      merge_repeated: emit a repeated class once per run.
      blank_index: the blank class (default num_classes - 1); negative values count from
        num_classes.

    Returns:
      A tuple (decoded, neg_sum_logits): `decoded` is a one-element list holding a
      SparseTensor [batch, max_decoded_length] of the decoded classes; `neg_sum_logits` is a
      float Tensor [batch, 1], minus the sum of each frame's greatest logit.

    Raises:
      InvalidArgumentError: at run time for an out-of-range blank_index or bad lengths.
    """
    attrs = {"merge_repeated": merge_repeated,
             "blank_index": -1 if blank_index is None else blank_index}
    return _sparse_results(apply_op(CTCGreedyDecoder, [inputs, sequence_length], attrs), 1)


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1,
                            merge_repeated=True):
    """Performs beam search decoding on the logits (TF1's tf.nn.ctc_beam_search_decoder).

    Prefix beam search keeping `beam_width` label prefixes; the blank is the last class and,
    unlike the greedy decoder, ends a label instead of counting as one.

    Args:
      inputs: 3-D float Tensor [max_time, batch, num_classes] of logits.
      sequence_length: 1-D int32 Tensor [batch] of sequence lengths.
      beam_width: the beam width (>= 1).
      top_paths: how many paths to return (>= 1, <= beam_width).
      merge_repeated: merge repeated classes in the returned paths.

    Returns:
      A tuple (decoded, log_probabilities): `decoded` is a list of `top_paths`
      SparseTensors [batch, max_decoded_length[j]]; `log_probabilities` is a float Tensor
      [batch, top_paths] of the paths' log probabilities, best first.

    Raises:
      ValueError: if beam_width or top_paths is < 1.
      InvalidArgumentError: at run time if top_paths > beam_width or fewer paths than
        requested survive.
      FailedPreconditionError: at run time if a sequence length exceeds max_time.
    """
    attrs = {"beam_width": beam_width, "top_paths": top_paths,
             "merge_repeated": merge_repeated}
    outputs = apply_op(CTCBeamSearchDecoder, [inputs, sequence_length], attrs)
    return _sparse_results(outputs, top_paths)


def ctc_beam_search_decoder_v2(inputs, sequence_length, beam_width=100, top_paths=1):
    """Beam search decoding without merging repeated classes (TF1's
    tf.nn.ctc_beam_search_decoder_v2).

    Args:
      inputs: 3-D float Tensor [max_time, batch, num_classes] of logits.
      sequence_length: 1-D int32 Tensor [batch] of sequence lengths.
      beam_width: the beam width (>= 1).
      top_paths: how many paths to return (>= 1, <= beam_width).

    Returns:
      A tuple (decoded, log_probabilities) as `ctc_beam_search_decoder`.
    """
    return ctc_beam_search_decoder(inputs, sequence_length=sequence_length,
                                   beam_width=beam_width, top_paths=top_paths,
                                   merge_repeated=False)


# --- Label helpers -----------------------------------------------------------------------------
def collapse_repeated(labels, seq_length, name=None):
    """Merges runs of repeated labels into one label (TF1's tf.nn.collapse_repeated).

    Args:
      labels: a Tensor [batch, max_length] of labels.
      seq_length: an int Tensor [batch], the length of each row.
      name: the name scope (default "collapse_repeated_labels").

    Returns:
      A tuple (collapsed_labels, new_seq_length): the rows with runs collapsed, zero-padded
      to the longest new length, and the new lengths (of `seq_length`'s dtype).
    """
    from tensorweave.ops.array_creation_ops import ones_like
    from tensorweave.ops.array_creation_ops import range as _range
    from tensorweave.ops.array_index_ops import boolean_mask, scatter_nd, sequence_mask
    from tensorweave.ops.array_join_ops import concat, stack
    from tensorweave.ops.array_ops import expand_dims, reshape, shape
    from tensorweave.ops.math_ops import cast, logical_and, not_equal
    from tensorweave.ops.reduction_ops import reduce_max, reduce_sum
    with name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        labels = convert_to_tensor(labels, name="labels")
        seq_length = convert_to_tensor(seq_length, name="seq_length")
        # Keep the first label of each run, within the row's length.
        starts = concat([ones_like(labels[:, :1], dtype=_dtypes.bool),
                         not_equal(labels[:, 1:], labels[:, :-1])], axis=1)
        keep = logical_and(starts, sequence_mask(seq_length, maxlen=shape(labels)[1]))
        new_length = reduce_sum(cast(keep, _dtypes.int32), axis=1)
        new_max = reduce_max(new_length)
        # Scatter the kept labels, flattened, into the first new_length[b] slots of each row.
        slots = reshape(sequence_mask(new_length, maxlen=new_max), [-1])
        targets = boolean_mask(_range(shape(slots)[0]), slots)
        flat = scatter_nd(expand_dims(targets, 1),
                          boolean_mask(reshape(labels, [-1]), reshape(keep, [-1])),
                          shape(slots))
        return (reshape(flat, stack([shape(labels)[0], new_max])),
                cast(new_length, seq_length.dtype))


def ctc_unique_labels(labels, name=None):
    """Unique labels of each row and each label's index among them (TF1's
    tf.nn.ctc_unique_labels), for `ctc_loss_v2`'s `unique` argument.

    Args:
      labels: an int Tensor [batch, max_label_length], zero-padded.
      name: the name scope (default "ctc_unique_labels").

    Returns:
      A tuple (unique, indices): int64 [batch, max_label_length], each row's distinct labels
      in order of first appearance, zero-padded; int32 [batch, max_label_length], the
      position of each label among them.
    """
    from tensorweave.ops.array_index_ops import unique
    from tensorweave.ops.array_join_ops import stack
    from tensorweave.ops.array_ops import shape
    from tensorweave.ops.array_tile_pad_ops import pad
    from tensorweave.ops.functional_ops import map_fn
    from tensorweave.ops.math_ops import cast
    with name_scope(name, "ctc_unique_labels", [labels]):
        labels = convert_to_tensor(labels, name="labels")

        def _unique(row):
            y, idx = unique(row)
            padded = pad(y, stack([stack([0, shape(idx)[0] - shape(y)[0]])]))
            return [cast(padded, _dtypes.int64), idx]
        return map_fn(_unique, labels, dtype=[_dtypes.int64, _dtypes.int32])
