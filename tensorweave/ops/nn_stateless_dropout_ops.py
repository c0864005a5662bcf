"""tf.nn.experimental.stateless_dropout and general_dropout: TensorFlow 2.x's dropout form.

As tf.nn.dropout (ops/nn_dropout_ops.py, whose body they share), these keep an element where a
uniform sample in [0, 1) is at least `rate`: select(U >= rate, x * 1/(1 - rate), 0), the graph
TensorFlow 2.21 builds (Mul or RealDiv, GreaterEqual, SelectV2). stateless_dropout samples U
with tf.random.stateless_uniform, so its mask is TensorFlow's bit for bit for the same seed;
general_dropout takes the sampler from the caller. A Python `rate` of 0 returns `x` itself.
"""
from __future__ import annotations

from tensorweave.ops.nn_dropout_ops import dropout_with_sampler
from tensorweave.ops.stateless_random_ops import stateless_random_uniform

__all__: list[str] = []

# rng_alg values that select Philox, the only counter-based generator with a CPU kernel.
_PHILOX = (None, "philox", "auto_select", 1, 3)


def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """Zeroes elements of `x` with probability `rate`, scaling the rest by 1 / (1 - rate),
    with a mask that depends only on `seed` (and the shapes).

    Args:
      x: a floating Tensor.
      rate: the probability of dropping each element: a float in [0, 1) or a scalar Tensor.
      seed: a shape [2] integer Tensor, as for tf.random.stateless_uniform.
      rng_alg: the generator: None, "auto_select" or "philox" (all Philox on the CPU).
      noise_shape: the mask's shape, broadcast against x; None entries take x's dimension.
      name: the op name scope (default "stateless_dropout").

    Returns:
      A Tensor of x's shape and dtype.

    Raises:
      ValueError: for a Python rate outside [0, 1), a non-floating x, or an rng_alg other
        than Philox's names ("threefry" has no CPU kernel, in TensorFlow either).
    """
    if rng_alg not in _PHILOX:
        if rng_alg in ("threefry", 2):
            raise ValueError("rng_alg 'threefry' has no CPU kernel (TensorFlow 2.21's CPU "
                             "kernels fail on it too); use 'philox' or 'auto_select'.")
        raise ValueError(f"Argument `alg` got unsupported value {rng_alg}. Supported values are "
                         "philox for the Philox algorithm, threefry for the ThreeFry algorithm, "
                         "and auto_select for auto-selection.")
    return dropout_with_sampler(x, rate, noise_shape, name, "stateless_dropout",
                    lambda shape, dtype: stateless_random_uniform(shape, seed, dtype=dtype))


def general_dropout(x, rate, uniform_sampler, noise_shape=None, name=None):
    """Dropout whose mask compares `uniform_sampler(shape=..., dtype=...)` (values in
    [0, 1)) with `rate`; see stateless_dropout for the other arguments (default name scope
    "general_dropout")."""
    return dropout_with_sampler(x, rate, noise_shape, name, "general_dropout", uniform_sampler)
