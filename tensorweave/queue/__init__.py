"""tf.queue: the TF1 queue classes (re-exports only)."""
from tensorweave.ops.data_flow_ops import (
    FIFOQueue,
    PaddingFIFOQueue,
    PriorityQueue,
    QueueBase,
    RandomShuffleQueue,
)
