"""Checkpointing a tf.data iterator with tf.train.Saver (make_saveable_from_iterator).

`make_saveable_from_iterator(it)` returns a SaveableObject that a Saver saves as one tensor,
"<iterator resource name>_STATE" (e.g. "IteratorV2:0_STATE", TensorFlow's key), read by a
SerializeIterator op made with it; the Saver restores it with a DeserializeIterator op. Put it
in the SAVEABLE_OBJECTS collection for Savers of the default var_list (and so for a
MonitoredTrainingSession's scaffold), or pass it in `var_list`.

Restoring replays the pipeline: the restoring iterator's dataset is rebuilt (its nodes drawing
the same random seeds as the saved iterator's, where the pipeline gave none) and the elements
the saved iterator had produced since its initialization are produced again and dropped, so a
restore costs about as much as producing those elements once (a batched pipeline replays
whole batches, through its batched fast paths). TensorFlow instead
serializes the internal state of its C++ iterators; here the pipeline's runtime nodes are
Python generators, whose state cannot be saved, only reproduced.

As in TensorFlow, the iterator must be initialized when saving and restoring (a one-shot
iterator initializes itself), restoring puts the iterator in the position saved whatever it
did since, and re-running the initializer starts it over.
"""
from __future__ import annotations

from tensorweave.data.iterator_ops import Iterator
from tensorweave.data.options import ExternalStatePolicy
from tensorweave.framework.scopes import colocate_with
from tensorweave.ops import iterator_checkpoint_ops
from tensorweave.train.saver_builder import SaveableObject, SaveSpec

__all__ = ["make_saveable_from_iterator"]

_POLICIES = {"warn": ExternalStatePolicy.WARN, "ignore": ExternalStatePolicy.IGNORE,
             "fail": ExternalStatePolicy.FAIL}


class _IteratorSaveable(SaveableObject):
    """An iterator's state as the checkpoint tensor "<name>_STATE" (TensorFlow's
    _IteratorSaveable): SerializeIterator saves it, DeserializeIterator restores it."""

    def __init__(self, iterator_resource, name: str, policy: ExternalStatePolicy):
        serialized = iterator_checkpoint_ops.serialize_iterator(iterator_resource,
                                                                policy.value)
        spec = SaveSpec(f"{name}_STATE", serialized, serialized.dtype, serialized.shape)
        super().__init__(iterator_resource, [spec], name)

    def restore(self, restored_tensors, restored_shapes=None):
        """DeserializeIterator of the restored state, colocated with the iterator."""
        with colocate_with(self.op.op):
            return iterator_checkpoint_ops.deserialize_iterator(self.op, restored_tensors[0])


def _policy(external_state_policy) -> ExternalStatePolicy:
    if external_state_policy is None:
        return ExternalStatePolicy.FAIL
    if isinstance(external_state_policy, ExternalStatePolicy):
        return external_state_policy
    if isinstance(external_state_policy, str) and external_state_policy in _POLICIES:
        return _POLICIES[external_state_policy]
    raise ValueError("Invalid `ExternalStatePolicy.` Supported values include 'warn', "
                     f"'ignore', and 'fail.' Received {external_state_policy}.")


def make_saveable_from_iterator(iterator, external_state_policy=None):
    """Returns a SaveableObject for saving/restoring iterator state using Saver.

    The iterator must be initialized (or be a one-shot iterator) when the Saver saves or
    restores it. Restoring rebuilds the iterator's pipeline and replays the elements the saved
    iterator had produced since its initialization (see this module's docstring).

    Args:
      iterator: an `Iterator` (from `make_initializable_iterator`, `make_one_shot_iterator`,
        `Iterator.from_structure` or `Iterator.from_string_handle`).
      external_state_policy: what saving does when the pipeline has state a restore cannot
        reproduce (stateful random ops or `py_func` in its functions): 'fail' (the default,
        also for None) raises FailedPreconditionError, 'warn' logs a warning, 'ignore' saves
        silently; a `tf.data.experimental.ExternalStatePolicy` is taken too. A pipeline with
        `from_generator` cannot be saved (UnimplementedError) unless the policy is 'fail'
        (FailedPreconditionError).

    Returns:
      A SaveableObject named after the iterator's resource tensor (e.g. "IteratorV2:0") that
      saves the checkpoint tensor "<name>_STATE". Add it to the
      `tf.GraphKeys.SAVEABLE_OBJECTS` collection or pass it to `tf.train.Saver`.

    Raises:
      TypeError: `iterator` is not an Iterator.
      ValueError: `external_state_policy` is none of the above.
    """
    if not isinstance(iterator, Iterator):
        raise TypeError(f"make_saveable_from_iterator() expects a tf.data Iterator, got "
                        f"{type(iterator).__name__}.")
    policy = _policy(external_state_policy)
    resource = iterator._resource
    return _IteratorSaveable(resource, resource.name, policy)
