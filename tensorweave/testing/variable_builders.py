"""OpCase builders for ops that take a variable: its value after an update, or a read's result.

An OpCase row passes input tensors to its builder; a variable op needs a variable instead.
These wrap the op so that its first input becomes a fresh variable holding that tensor (a ref
variable of unknown shape, or a resource variable for resource ops) and the row's output is
the variable's value after the update, or the op's result. Optimizer updates also read their
slots after the update; `run_update` runs an update once outside any OpCase.
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


def ref_apply_updated(apply_fn, n_refs: int):
    """builder(*inputs) for an optimizer update op: its first n_refs inputs become fresh ref
    variables (the variable, then its slots), `apply_fn(*refs, *rest)` runs once, and the row
    reads the variable and every slot after it."""
    import tensorweave as tf

    def build(*inputs):
        refs = [fresh_ref(x) for x in inputs[:n_refs]]
        out = apply_fn(*refs, *inputs[n_refs:])
        with tf.control_dependencies([out]):
            return [tf.identity(out)] + [tf.identity(r) for r in refs[1:]]
    return build


def resource_apply_updated(apply_fn, n_refs: int):
    """`ref_apply_updated` through resource variables: the op's resource twin updates them."""
    import tensorweave as tf

    def build(*inputs):
        variables = [tf.Variable(x, use_resource=True) for x in inputs[:n_refs]]
        with tf.control_dependencies([v.initializer for v in variables]):
            update = apply_fn(*variables, *inputs[n_refs:])
        with tf.control_dependencies([update]):
            return [v.read_value() for v in variables]
    return build


def run_update(update, init, *args, use_resource: bool = False) -> tuple:
    """(what `update(variable, *args)` returns, the variable's value after it), run once on a
    fresh variable (ref or resource) initialized to `init`, as lists."""
    import tensorweave as tf

    with tf.Graph().as_default():
        v = tf.Variable(init, use_resource=use_resource)
        result = update(v, *args)
        with tf.Session() as sess:
            sess.run(v.initializer)
            return sess.run(result).tolist(), sess.run(v).tolist()
