"""The ops that save and restore a tf.data iterator's position (TensorFlow's names).

`SerializeIterator` reads an iterator resource's state as one tensor, `DeserializeIterator`
puts such a tensor back into an iterator; data/iterator_checkpoint.py wraps them as the
SaveableObject a Saver checkpoints. TensorFlow's ops carry a variant (its C++ iterators'
serialized state); here the state is a string scalar in tensorweave's own versioned format
(kernels/iterator_checkpoint.py), so the checkpoint holds an ordinary string tensor.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Arg, Attr, define_op
from tensorweave.framework.shape_fns import scalar

__all__: list[str] = []


# external_state_policy: ExternalStatePolicy's value (WARN 0, IGNORE 1, FAIL 2), as TF's attr.
SerializeIterator = define_op(
    "SerializeIterator", inputs=[Arg("resource_handle", dtype=_dtypes.resource)],
    outputs=[Arg("serialized", dtype=_dtypes.string)],
    attrs=[Attr("external_state_policy", "int", 0)], shape_fn=scalar, is_stateful=True,
    not_differentiable=True)

DeserializeIterator = define_op(
    "DeserializeIterator", inputs=[Arg("resource_handle", dtype=_dtypes.resource),
                                   Arg("serialized", dtype=_dtypes.string)],
    is_stateful=True, not_differentiable=True)


def serialize_iterator(iterator, external_state_policy: int, name=None):
    """A string scalar: the state of the iterator resource `iterator` when the op runs.

    Running it raises FailedPreconditionError before the iterator is initialized, and for
    state a restore cannot reproduce as `external_state_policy` says (see
    tf.data.experimental.ExternalStatePolicy).
    """
    return apply_op(SerializeIterator, [iterator],
                    {"external_state_policy": external_state_policy}, name=name)


def deserialize_iterator(iterator, serialized, name=None):
    """An op that moves the (initialized) iterator resource `iterator` to the position of the
    state `serialized` (a SerializeIterator value)."""
    return apply_op(DeserializeIterator, [iterator, serialized], name=name)
