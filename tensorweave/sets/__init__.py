"""tf.sets: set operations over a tensor's last dimension (re-exports only)."""
from tensorweave.ops.set_ops import set_difference, set_intersection, set_size, set_union

difference = set_difference
intersection = set_intersection
size = set_size
union = set_union
