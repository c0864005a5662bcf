"""tf.random: TF 2.21 compat.v1's tf.random names of the random ops tensorweave implements
(re-exports, plus tf.random.categorical, which has no top-level name)."""
# ruff: noqa: F401 - re-exports
from tensorweave.framework.scopes import name_scope as _name_scope
from tensorweave.ops.nn_sampled_ops import (
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from tensorweave.ops.random_gamma_ops import random_gamma as gamma
from tensorweave.ops.random_gamma_ops import random_poisson as poisson
from tensorweave.ops.random_gamma_ops import stateless_random_gamma as stateless_gamma
from tensorweave.ops.random_gamma_ops import stateless_random_poisson as stateless_poisson
from tensorweave.ops.random_ops import get_seed, multinomial, set_random_seed, truncated_normal
from tensorweave.ops.random_ops import multinomial_op as _multinomial_op
from tensorweave.ops.random_ops import random_normal as normal
from tensorweave.ops.random_ops import random_shuffle as shuffle
from tensorweave.ops.random_ops import random_uniform as uniform
from tensorweave.ops.stateless_random_ops import (
    stateless_categorical,
    stateless_multinomial,
    stateless_truncated_normal,
)
from tensorweave.ops.stateless_random_ops import stateless_random_normal as stateless_normal
from tensorweave.ops.stateless_random_ops import stateless_random_uniform as stateless_uniform


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """Draws samples from categorical distributions (tf.random.categorical).

    Args:
      logits: A 2-D Tensor `[batch_size, num_classes]` of unnormalized log-probabilities.
      num_samples: A scalar int32: how many samples to draw per row.
      dtype: int32 or int64, the type of the result (default int64).
      seed: The op-level seed, combined with the graph seed.
      name: A name scope (default "categorical").

    Returns:
      A `[batch_size, num_samples]` Tensor of class indices.
    """
    with _name_scope(name, "categorical", [logits]):
        return _multinomial_op(logits, num_samples, seed=seed, output_dtype=dtype)
