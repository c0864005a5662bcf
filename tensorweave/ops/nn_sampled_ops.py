"""Candidate sampling: samplers, accidental hits, and the sampled losses built on them.

`log_uniform_candidate_sampler` (Zipfian), `uniform_candidate_sampler` and
`learned_unigram_candidate_sampler` draw `num_sampled` classes and report, for the true and
the sampled classes, how often the sampler is expected to draw them. `nce_loss` and
`sampled_softmax_loss` (used by word2vec) score the true classes against the sampled ones
using only the looked-up rows of the weight matrix, so their gradients are IndexedSlices.
"""
from __future__ import annotations

import collections

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import random_seed
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, define_op
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.shape_checks import shape_with_rank
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["log_uniform_candidate_sampler", "uniform_candidate_sampler",
           "learned_unigram_candidate_sampler", "fixed_unigram_candidate_sampler",
           "all_candidate_sampler", "compute_accidental_hits", "nce_loss",
           "sampled_softmax_loss"]


def _sampler_shape(ctx):
    """[num_sampled], [batch, num_true], [num_sampled]; true_classes is [batch, num_true]."""
    num_true, num_sampled = ctx.attrs["num_true"], ctx.attrs["num_sampled"]
    true = shape_with_rank(ctx.input_shape(0), 2)
    batch, cols = true.as_list()
    if cols is not None and cols != num_true:
        raise ValueError(f"Dimension must be {num_true} but is {cols}")
    sampled = _ts.TensorShape([num_sampled])
    return [sampled, _ts.TensorShape([batch, num_true]), sampled]


_SAMPLER = dict(
    inputs=["true_classes: int64"],
    outputs=["sampled_candidates: int64", "true_expected_count: float32",
             "sampled_expected_count: float32"],
    attrs=[Attr("num_true", "int", minimum=1), Attr("num_sampled", "int", minimum=1),
           Attr("unique", "bool"), Attr("range_max", "int", minimum=1),
           Attr("seed", "int", 0), Attr("seed2", "int", 0)],
    shape_fn=_sampler_shape, is_stateful=True, not_differentiable=True)

LogUniformCandidateSampler = define_op("LogUniformCandidateSampler", **_SAMPLER)
UniformCandidateSampler = define_op("UniformCandidateSampler", **_SAMPLER)
LearnedUnigramCandidateSampler = define_op("LearnedUnigramCandidateSampler", **_SAMPLER)
ThreadUnsafeUnigramCandidateSampler = define_op("ThreadUnsafeUnigramCandidateSampler", **_SAMPLER)
FixedUnigramCandidateSampler = define_op(
    "FixedUnigramCandidateSampler",
    **{**_SAMPLER, "attrs": [*_SAMPLER["attrs"], Attr("vocab_file", "string", ""),
                             Attr("distortion", "float", 1.0),
                             Attr("num_reserved_ids", "int", 0),
                             Attr("num_shards", "int", 1, minimum=1),
                             Attr("shard", "int", 0, minimum=0),
                             Attr("unigrams", "list(float)", [])]})
AllCandidateSampler = define_op(
    "AllCandidateSampler",
    **{**_SAMPLER, "attrs": [a for a in _SAMPLER["attrs"] if a.name != "range_max"]})


def _hits_shape(ctx):
    shape_with_rank(ctx.input_shape(0), 2)
    shape_with_rank(ctx.input_shape(1), 1)
    return [_ts.TensorShape([None])] * 3


ComputeAccidentalHits = define_op(
    "ComputeAccidentalHits", inputs=["true_classes: int64", "sampled_candidates: int64"],
    outputs=["indices: int32", "ids: int64", "weights: float32"],
    attrs=[Attr("num_true", "int"), Attr("seed", "int", 0), Attr("seed2", "int", 0)],
    shape_fn=_hits_shape, not_differentiable=True)

_SamplerOutput = collections.namedtuple(
    "CandidateSamplerOutput", ["sampled_candidates", "true_expected_count",
                               "sampled_expected_count"])
_HitsOutput = collections.namedtuple("ComputeAccidentalHits", ["indices", "ids", "weights"])


def _sample(op_def, true_classes, num_true, num_sampled, unique, range_max, seed, name,
            **extra):
    attrs = {"num_true": num_true, "num_sampled": num_sampled, "unique": unique,
             **({} if range_max is None else {"range_max": range_max}), **extra,
             **random_seed.seed_attrs(seed)}
    return _SamplerOutput(*apply_op(op_def, [true_classes], attrs, name=name or op_def.name))


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """Samples classes from the log-uniform (Zipfian) distribution over [0, range_max).

    P(class) = (log(class + 2) - log(class + 1)) / log(range_max + 1): small ids (frequent
    words when the vocabulary is sorted by frequency) are drawn more often.

    Args:
      true_classes: int64 Tensor [batch_size, num_true], the target classes.
      num_true: the number of target classes per example.
      num_sampled: the number of classes to draw.
      unique: draw without repetition (then num_sampled <= range_max).
      range_max: the number of classes.
      seed: an op seed (see tf.set_random_seed).
      name: the op name.

    Returns:
      (sampled_candidates [num_sampled] int64, true_expected_count [batch_size, num_true]
      float32, sampled_expected_count [num_sampled] float32): the expected number of times
      each class would be drawn in num_sampled draws (with `unique`, in the number of draws
      that were needed).
    """
    return _sample(LogUniformCandidateSampler, true_classes, num_true, num_sampled, unique,
                   range_max, seed, name)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                              seed=None, name=None):
    """Samples classes uniformly from [0, range_max); see `log_uniform_candidate_sampler`."""
    return _sample(UniformCandidateSampler, true_classes, num_true, num_sampled, unique,
                   range_max, seed, name)


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                      seed=None, name=None):
    """Samples classes by their counts so far (every class starts with count 1; each run
    adds the true classes it saw); see `log_uniform_candidate_sampler`."""
    return _sample(LearnedUnigramCandidateSampler, true_classes, num_true, num_sampled,
                   unique, range_max, seed, name)


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                    vocab_file="", distortion=1.0, num_reserved_ids=0,
                                    num_shards=1, shard=0, unigrams=(), seed=None, name=None):
    """Samples classes by fixed unigram counts (tf.nn.fixed_unigram_candidate_sampler).

    Class i is drawn with probability proportional to count(i) ** distortion, the counts
    coming from `unigrams` or from the last comma-separated column of each line of
    `vocab_file` (exactly one of the two). The first `num_reserved_ids` classes have count 0.
    With `num_shards` > 1 only the ids with id % num_shards == shard are kept (in order), so
    range_max must be the number of kept ids.

    Args:
      true_classes: int64 Tensor [batch_size, num_true], the target classes.
      num_true: the number of target classes per example.
      num_sampled: the number of classes to draw.
      unique: draw without repetition.
      range_max: the number of classes (reserved ids included).
      vocab_file: a text file of one class per line whose last CSV column is its count.
      distortion: the exponent applied to every count (1: unigram, 0: uniform).
      num_reserved_ids: leading class ids that are never drawn.
      num_shards: the number of shards the classes are split into.
      shard: the shard this sampler serves, in [0, num_shards).
      unigrams: the counts, one per class after the reserved ones.
      seed: an op seed (see tf.set_random_seed).
      name: the op name (default "FixedUnigramCandidateSampler").

    Returns:
      (sampled_candidates, true_expected_count, sampled_expected_count), as for
      `log_uniform_candidate_sampler`.

    Raises:
      InvalidArgumentError (when run): neither or both of `vocab_file` and `unigrams`, a
        number of kept classes other than range_max, or true classes outside [0, range_max).
      NotFoundError (when run): `vocab_file` does not exist.
    """
    return _sample(FixedUnigramCandidateSampler, true_classes, num_true, num_sampled, unique,
                   range_max, seed, name, vocab_file=vocab_file, distortion=float(distortion),
                   num_reserved_ids=num_reserved_ids, num_shards=num_shards, shard=shard,
                   unigrams=[float(u) for u in unigrams])


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """Returns every class in [0, num_sampled) (tf.nn.all_candidate_sampler), for testing
    sampled losses against the full softmax.

    Args:
      true_classes: int64 Tensor [batch_size, num_true], the target classes (in
        [0, num_sampled)).
      num_true: the number of target classes per example.
      num_sampled: the number of classes, all of which are returned.
      unique: ignored (every class is returned once).
      seed: an op seed (unused by the op, kept as an attr as in TF).
      name: the op name (default "AllCandidateSampler").

    Returns:
      (sampled_candidates = range(num_sampled), true_expected_count of ones [batch_size,
      num_true], sampled_expected_count of ones [num_sampled]).
    """
    return _sample(AllCandidateSampler, true_classes, num_true, num_sampled, unique, None,
                   seed, name)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """Finds sampled candidates that equal one of an example's true classes.

    Returns:
      (indices int32, ids int64, weights float32), one entry per hit: the example row, the
      position in `sampled_candidates`, and -FLT_MAX (added to that sampled logit to remove
      it from a softmax).
    """
    attrs = {"num_true": num_true, **random_seed.seed_attrs(seed)}
    return _HitsOutput(*apply_op(ComputeAccidentalHits, [true_classes, sampled_candidates],
                                 attrs, name=name or "ComputeAccidentalHits"))


# --- sampled losses ---------------------------------------------------------------------------
def _sum_rows(x):
    """Row sums as a matmul with a ones column (TF's form: its gradient is a cheap matmul)."""
    from tensorweave.ops.array_creation_ops import ones
    from tensorweave.ops.array_join_ops import stack
    from tensorweave.ops.array_ops import reshape, shape
    from tensorweave.ops.linalg_ops import matmul
    cols = shape(x)[1]
    return reshape(matmul(x, ones(stack([cols, 1]), x.dtype)), [-1])


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                            num_true=1, sampled_values=None, subtract_log_q=True,
                            remove_accidental_hits=False, partition_strategy="mod", name=None,
                            seed=None):
    """Logits of the true and the sampled classes, and their target probabilities.

    Returns:
      out_logits [batch_size, num_true + num_sampled] and out_labels of the same shape
      (1/num_true for each true class, 0 for sampled ones).
    """
    from tensorweave.ops.array_creation_ops import ones_like, zeros_like
    from tensorweave.ops.array_join_ops import concat, stack
    from tensorweave.ops.array_ops import expand_dims, reshape, shape, stop_gradient
    from tensorweave.ops.array_slicing_ops import slice as slice_
    from tensorweave.ops.embedding_ops import embedding_lookup
    from tensorweave.ops.linalg_ops import matmul
    from tensorweave.ops.math_ops import multiply
    from tensorweave.ops.math_unary_ops import cast, log
    from tensorweave.ops.sliced_variables import PartitionedVariable
    from tensorweave.ops.sparse_ops import sparse_to_dense
    from tensorweave.ops.variables import Variable
    if isinstance(weights, PartitionedVariable):
        weights = list(weights)
    if isinstance(weights, Variable):
        weights = [weights]
    if not isinstance(weights, list):
        weights = [weights]
    with name_scope(name, "compute_sampled_logits"):
        labels, inputs = convert_to_tensor(labels), convert_to_tensor(inputs)
        if labels.dtype != _dtypes.int64:
            labels = cast(labels, _dtypes.int64)
        labels_flat = reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (
            stop_gradient(s) for s in sampled_values)
        sampled = cast(sampled, _dtypes.int64)
        all_ids = concat([labels_flat, sampled], 0)
        all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        if all_w.dtype != inputs.dtype:
            all_w = cast(all_w, inputs.dtype)
        n_true = shape(labels_flat)[0]
        true_w = slice_(all_w, [0, 0], stack([n_true, -1]))
        sampled_w = slice_(all_w, stack([n_true, 0]), [-1, -1])
        sampled_logits = matmul(inputs, sampled_w, transpose_b=True)
        all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype != inputs.dtype:
            all_b = cast(all_b, inputs.dtype)
        true_b = slice_(all_b, [0], shape(labels_flat))
        sampled_b = slice_(all_b, shape(labels_flat), [-1])
        dim = shape(true_w)[1:2]
        new_true_w_shape = concat([[-1, num_true], dim], 0)
        row_wise_dots = multiply(expand_dims(inputs, 1), reshape(true_w, new_true_w_shape))
        dots_as_matrix = reshape(row_wise_dots, concat([[-1], dim], 0))
        true_logits = reshape(_sum_rows(dots_as_matrix), [-1, num_true])
        true_b = reshape(true_b, [-1, num_true])
        true_logits += true_b
        sampled_logits += sampled_b
        if remove_accidental_hits:
            acc_indices, acc_ids, acc_weights = compute_accidental_hits(
                labels, sampled, num_true=num_true)
            acc_indices_2d = reshape(acc_indices, [-1, 1])
            acc_ids_2d_int32 = reshape(cast(acc_ids, _dtypes.int32), [-1, 1])
            sparse_indices = concat([acc_indices_2d, acc_ids_2d_int32], 1, "sparse_indices")
            sampled_logits_shape = concat(
                [shape(labels)[:1], expand_dims(num_sampled, 0)], 0)
            if sampled_logits.dtype != acc_weights.dtype:
                acc_weights = cast(acc_weights, sampled_logits.dtype)
            # As TF: a label repeated in a row hits once (the last write wins), not twice.
            sampled_logits += sparse_to_dense(sparse_indices, sampled_logits_shape, acc_weights,
                                              default_value=0.0, validate_indices=False)
        if subtract_log_q:
            true_logits -= log(true_expected_count)
            sampled_logits -= log(sampled_expected_count)
        out_logits = concat([true_logits, sampled_logits], 1)
        out_labels = concat([ones_like(true_logits) / num_true, zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss"):
    """Noise-contrastive estimation loss (tf.nn.nce_loss), per example.

    Each true class and each sampled class is a binary classification (logistic loss) of
    logit - log(expected count); the per-example loss sums them.

    Args:
      weights: a [num_classes, dim] Tensor or Variable, or a list of shards of it.
      biases: a [num_classes] Tensor.
      labels: int64 [batch_size, num_true] target classes.
      inputs: [batch_size, dim] activations.
      num_sampled: the number of classes drawn per batch.
      num_classes: the number of classes.
      num_true: target classes per example.
      sampled_values: a sampler's output to use instead of log-uniform sampling.
      remove_accidental_hits: drop sampled classes equal to a target class.
      partition_strategy: for sharded `weights`, see `embedding_lookup`.
      name: the name scope.

    Returns:
      A [batch_size] Tensor of losses.
    """
    from tensorweave.ops.nn_loss_ops import sigmoid_cross_entropy_with_logits
    logits, labels = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name)
    sampled_losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                       name="sampled_losses")
    return _sum_rows(sampled_losses)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                         num_true=1, sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """Softmax cross entropy over the true and the sampled classes only
    (tf.nn.sampled_softmax_loss); arguments as for `nce_loss`, plus the sampler's `seed`.

    Returns:
      A [batch_size] Tensor of losses.
    """
    from tensorweave.ops.array_ops import stop_gradient
    from tensorweave.ops.nn_loss_ops import softmax_cross_entropy_with_logits_v2
    logits, labels = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name, seed=seed)
    labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
