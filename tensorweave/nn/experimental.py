"""tf.nn.experimental: TensorFlow 2.x's dropout forms (ops/nn_stateless_dropout_ops.py)."""
from tensorweave.ops.nn_stateless_dropout_ops import general_dropout, stateless_dropout

__all__ = ["general_dropout", "stateless_dropout"]
