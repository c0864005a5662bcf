"""OpCase builders for ops that take a variable: its value after an update, or what a read of
it returns.

An OpCase row passes input tensors to its builder; a variable op needs a variable instead.
These wrap the op so that its first input becomes a fresh variable holding that tensor (a ref
variable of unknown shape, or a resource variable for resource ops) and the row's output is
the variable's value after the update, or the op's result.
"""
from __future__ import annotations


def fresh_ref(value):
    """A new ref variable of unknown shape holding `value`: the ref an update op mutates."""
    import tensorweave as tf
    from tensorweave.ops import state_ops

    var = state_ops.variable_op_v2(tf.TensorShape(None), value.dtype.base_dtype)
    return tf.assign(var, value, validate_shape=False)


def ref_updated(fn):
    """builder(value, *args): the value of a fresh ref variable after `fn(ref, *args)`."""
    import tensorweave as tf

    def build(value, *args):
        return tf.identity(fn(fresh_ref(value), *args))
    return build


def on_resource_variable(fn):
    """builder(value, *args): what `fn(variable, *args)` returns for a fresh resource variable
    initialized to `value` first (the scatter methods return the updated value, a read the
    rows read)."""
    import tensorweave as tf

    def build(value, *args):
        var = tf.Variable(value, use_resource=True)
        with tf.control_dependencies([var.initializer]):
            return fn(var, *args)
    return build
