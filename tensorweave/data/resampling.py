"""Dataset.rejection_resample: elements resampled towards a target class distribution.

TensorFlow 2.21's composition of other transformations. Each element becomes a pair
(class_func(element), element). With `initial_dist` p (or, without it, p estimated while
running: class counts smoothed by 10 per class, updated every 32 elements) and the target t,
the ratios r = t / p give a mixing probability m = min(r): each output is drawn, with
probability m, from the input as it is, and otherwise from a rejection-sampled copy of it
that keeps an element of class i with probability (r_i - m) / (max(r) - m). The draws between
the two come from Dataset.random and stateless_multinomial, TensorFlow's bits; the rejections
from random_uniform, its distribution but not its bits. So the element order is TensorFlow's
where every acceptance is 0 or 1, and otherwise only the output distribution is. When p and
t are constants giving m = 1 (or 0), the result is the input alone (or the rejection-sampled
copy alone), as in TensorFlow. TensorFlow also prints the proportion rejected while it is
high (a Print op); that diagnostic is left out.
"""
from __future__ import annotations

import numpy as np

from tensorweave.data.dataset_ops import Dataset
from tensorweave.data.random_dataset import RandomDataset
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops import (
    array_creation_ops,
    array_index_ops,
    array_ops,
    array_tile_pad_ops,
    math_ops,
    math_unary_ops,
    random_ops,
    reduction_ops,
)
from tensorweave.ops.stateless_random_ops import stateless_multinomial

_ESTIMATION_BATCH = 32   # elements per update of the estimated class distribution
_SMOOTHING = 10          # the count each class starts from


def rejection_resample(dataset, class_func, target_dist, initial_dist=None, seed=None):
    """(class, element) pairs of `dataset`, resampled so the classes follow `target_dist`.

    Args:
      dataset: the input `Dataset`.
      class_func: element -> its class, an int32 (or int64) scalar in [0, num_classes).
      target_dist: the wanted class probabilities, a float `[num_classes]` tensor.
      initial_dist: the input's class probabilities; None: estimated while running.
      seed: the op seed of the random choices (with the graph seed).

    Returns:
      A `Dataset` of (class, element) pairs; it may drop or repeat input elements' classes in
      other proportions, never change an element.
    """
    target = _float32(target_dist, "target_dist")
    static = None
    if initial_dist is not None:
        initial = _float32(initial_dist, "initial_dist")
        accept, mixing = _acceptance_and_mixing(initial, target)
        accept_ds = Dataset.from_tensors(accept).repeat()
        mixing_ds = Dataset.from_tensors(mixing).repeat()
        static = _static_mixing(initial, target)
    else:
        initial_ds = _estimated_distribution(target, dataset.map(class_func))
        both = initial_ds.map(lambda initial: _acceptance_and_mixing(initial, target))
        accept_ds = both.map(lambda accept, _: accept)
        mixing_ds = both.map(lambda _, mixing: mixing)

    def with_class(*element):
        return class_func(*element), element[0] if len(element) == 1 else element

    if static == 1:
        return dataset.map(with_class)
    filtered = _rejection_sampled(dataset, accept_ds, class_func, seed).prefetch(3)
    if static == 0:
        return filtered
    selector = Dataset.zip((mixing_ds, RandomDataset(seed).batch(2))).map(_choose_source)
    return Dataset.choose_from_datasets([dataset.map(with_class), filtered], selector,
                                        stop_on_empty_dataset=True)


def _float32(dist, name: str):
    return math_unary_ops.cast(convert_to_tensor(dist, name=name), _dtypes.float32)


def _static_mixing(initial, target):
    """m when both distributions are known when the graph is built, else None."""
    initial, target = constant_value(initial), constant_value(target)
    if initial is None or target is None:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.min(target / initial)


def _acceptance_and_mixing(initial, target):
    """Per-class acceptance (r - m) / (max(r) - m) and m = min(r), for r = target / initial
    (initial nudged off zero)."""
    ratio = target / (initial + np.finfo(np.float32).tiny)
    low, high = reduction_ops.reduce_min(ratio), reduction_ops.reduce_max(ratio)
    return (ratio - low) / (high - low), low


def _estimated_distribution(target, classes):
    """The class distribution seen so far, per element: counts (from _SMOOTHING each) updated
    once per _ESTIMATION_BATCH classes, that batch's elements all given the updated estimate."""
    num_classes = target.shape[0].value or array_ops.shape(target)[0]
    counts = array_creation_ops.fill([num_classes], np.int64(_SMOOTHING))

    def update(counts, batch):
        counts = counts + reduction_ops.reduce_sum(
            array_index_ops.one_hot(batch, num_classes, dtype=_dtypes.int64), 0)
        dist = math_unary_ops.cast(math_ops.truediv(counts, reduction_ops.reduce_sum(counts)),
                                   _dtypes.float32)
        return counts, array_tile_pad_ops.tile(array_ops.expand_dims(dist, 0),
                                               [_ESTIMATION_BATCH, 1])

    return classes.batch(_ESTIMATION_BATCH).scan(counts, update).unbatch()


def _rejection_sampled(dataset, accept_ds, class_func, seed):
    """(class, element) pairs of the elements kept with their class's acceptance."""
    def gather_and_copy(accept, element):
        value = class_func(*element) if isinstance(element, tuple) else class_func(element)
        return value, array_index_ops.gather(accept, value), element

    def keep(_, p, __):
        return math_ops.less(random_ops.random_uniform([], seed=seed, dtype=p.dtype), p)

    return Dataset.zip((accept_ds, dataset)).map(gather_and_copy).filter(keep).map(
        lambda value, _, element: (value, element))


def _choose_source(mixing, seeds):
    """0 (the input as it is) with probability `mixing`, else 1 (the rejection-sampled)."""
    logits = math_unary_ops.log([[mixing, 1.0 - mixing]])
    return array_ops.squeeze(stateless_multinomial(logits, 1, seed=seeds), axis=[0, 1])
