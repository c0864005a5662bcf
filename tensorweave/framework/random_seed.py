"""Graph-level and op-level random seeds with TensorFlow 2.21's compat.v1 rules.

A random op's two seed attrs (`seed`, `seed2`) come from `get_seed(op_seed)`:

| graph seed | op seed | (seed, seed2)                                     |
|------------|---------|---------------------------------------------------|
| set        | given   | (graph seed, op seed)                             |
| set        | None    | (graph seed, n: this graph's n-th such call, from 0) |
| None       | given   | (DEFAULT_GRAPH_SEED, op seed)                     |
| None       | None    | (None, None): nondeterministic; the attrs are 0   |

Seeds are reduced modulo 2**31 - 1, and (0, 0) becomes (0, 2**31 - 1) because kernels read
(0, 0) as "no seed". Counting the calls that needed a seed makes a rebuilt identical graph
repeat its numbers while two unseeded ops of one graph still draw different streams.
(TensorFlow 1.x used `graph._last_id`, the number of ops created so far; TensorFlow 2.21's
compat.v1, the reference here, counts these calls, so its seeds and ours agree.)
"""
from __future__ import annotations

import weakref

from tensorweave.framework.graph import get_default_graph

__all__ = ["get_seed", "set_random_seed"]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
_unseeded_calls: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # graph -> count


def _truncate_seed(seed: int) -> int:
    return int(seed) % _MAXINT32


def get_seed(op_seed):
    """The (graph seed, op seed) pair a random op should use (TF1's tf.get_seed).

    Args:
      op_seed: the op-level seed, an integer or None.

    Returns:
      A pair of integers, or (None, None) when neither the graph nor the op has a seed (the op
      is then nondeterministic).
    """
    graph = get_default_graph()
    graph_seed = graph.seed
    if graph_seed is not None:
        if op_seed is None:
            op_seed = _unseeded_calls.get(graph, 0)
            _unseeded_calls[graph] = op_seed + 1
        seeds = _truncate_seed(graph_seed), _truncate_seed(op_seed)
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, _truncate_seed(op_seed)
    else:
        return None, None
    if seeds == (0, 0):
        return 0, _MAXINT32
    return seeds


def seed_attrs(op_seed) -> dict:
    """The `seed`/`seed2` attrs for a random op: `get_seed` with (None, None) written as 0s."""
    seed, seed2 = get_seed(op_seed)
    return {"seed": seed or 0, "seed2": seed2 or 0}


def set_random_seed(seed):
    """Sets the graph-level random seed of the default graph (TF1's tf.set_random_seed).

    Random ops created afterwards derive their seeds from it (see `get_seed`), so the same graph
    built twice with the same graph seed produces the same random sequences in fresh sessions.

    Args:
      seed: an integer, or None to clear the graph-level seed.
    """
    get_default_graph().seed = None if seed is None else int(seed)
