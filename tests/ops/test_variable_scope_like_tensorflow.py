"""tf.variable_scope, tf.get_variable and tf.make_template against TensorFlow 2.21's printed
behaviour: reuse of re-entered scopes, what nested scopes inherit, custom getters (called with
`getter=`, composed, outside the caller's name scope), regularizers, initializer checks and
the error texts."""
import numpy as np
import pytest

import tensorweave as tf


def _op_names(graph, keep):
    return [op.name for op in graph.get_operations() if keep(op.name)]


def test_reentered_scope_keeps_its_own_reuse():
    with tf.Graph().as_default():
        with tf.variable_scope("s") as s:
            pass
        with tf.variable_scope("outer", reuse=True):
            with tf.variable_scope(s) as reentered:
                assert reentered.reuse is False
            with tf.variable_scope("n") as nested:
                assert nested.reuse is True
        with tf.variable_scope("a", reuse=True) as a:
            pass
        with tf.variable_scope("b"):
            with tf.variable_scope(a) as reentered:
                assert reentered.reuse is True
        with tf.variable_scope("c", reuse=tf.AUTO_REUSE):
            with tf.variable_scope(s) as reentered:
                assert reentered.reuse is False


def test_constraint_is_not_inherited_by_nested_or_reentered_scopes():
    def clip(x):
        return tf.clip_by_value(x, 0.0, 1.0)
    with tf.Graph().as_default():
        with tf.variable_scope("s", constraint=clip) as s:
            v = tf.get_variable("v", [1])
            with tf.variable_scope("inner") as inner:
                w = tf.get_variable("w", [1])
        with tf.variable_scope(s) as reentered:
            u = tf.get_variable("u", [1])
    assert v.constraint is clip and s.constraint is clip
    assert w.constraint is None and inner.constraint is None
    assert u.constraint is None and reentered.constraint is None


def test_reuse_checks_the_requested_dtype():
    with tf.Graph().as_default():
        tf.get_variable("i", [2], dtype=tf.int32)
        tf.get_variable("z", initializer=tf.constant([1, 2]))
        tf.get_variable("f", [2], dtype=tf.float64)
        with tf.variable_scope("", reuse=True):
            # No dtype means the scope's float32, as in TF.
            with pytest.raises(ValueError, match=r"^Trying to share variable i, but specified "
                               r"dtype float32 and found dtype int32_ref\.$"):
                tf.get_variable("i")
            with pytest.raises(ValueError, match="found dtype int32_ref"):
                tf.get_variable("z")
            assert tf.get_variable("f", [2], dtype=tf.float64).dtype.name == "float64_ref"


def test_creating_twice_points_at_the_first_definition():
    with tf.Graph().as_default():
        tf.get_variable("v", [1])
        with pytest.raises(ValueError) as error:
            tf.get_variable("v", [1])
    message = str(error.value)
    assert message.startswith("Variable v already exists, disallowed. Did you mean to set "
                              "reuse=True or reuse=tf.AUTO_REUSE in VarScope? Originally "
                              "defined at:\n\n  File \"")
    assert message.split("\n")[2].startswith(f'  File "{__file__}", line ')


@pytest.mark.parametrize("kwargs, message", [
    (dict(), "Variable v did not get an initializer, so its `shape` argument must be "
             "specified."),
    (dict(shape=[None, 2]), "The initializer passed is not valid. It should be a callable "
                            "with no arguments and the shape should not be provided or an "
                            "instance of `tf.keras.initializers.*' and `shape` should be "
                            "fully defined."),
    (dict(initializer=tf.zeros_initializer()), "The initializer passed is not valid."),
    (dict(shape=[2], initializer=np.ones(2, np.float32)),
     "If initializer is a constant, do not specify shape."),
    (dict(shape=[2], initializer="bad"), "If initializer is a constant, do not specify shape."),
    (dict(shape=[2], dtype=tf.complex64),
     "An initializer for variable v of <dtype: 'complex64'> is required"),
])
def test_initializer_errors(kwargs, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as error:
            tf.get_variable("v", **kwargs)
        assert str(error.value).startswith(message)
        assert not tf.global_variables()


def test_tensor_initializer_with_a_shape_is_an_error():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="If initializer is a constant, do not specify"):
            tf.get_variable("v", [2], initializer=tf.constant([1.0, 2.0]))


def test_initializer_callable_without_arguments_needs_no_shape():
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=lambda: tf.constant([1.0, 2.0]))
        assert v.shape.as_list() == [2] and v.dtype.name == "float32_ref"
        with tf.Session() as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_name_must_be_a_string_or_a_scope():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="^VariableScope: name_or_scope must be a string or "
                                            "VariableScope.$"):
            with tf.variable_scope(123):
                pass


def test_explicit_dtype_is_checked_against_a_converted_initializer():
    with tf.Graph().as_default() as graph:
        with tf.name_scope("ns"):
            tf.get_variable("v", initializer=np.float32(2.0), dtype=tf.float32)
        assert _op_names(graph, lambda n: True) == ["Const", "v/initial_value", "v",
                                                    "v/Assign", "v/read"]
        with pytest.raises(ValueError, match=r"^Initializer type '<dtype: 'float32'>' and "
                                             r"explicit dtype '<dtype: 'int32'>' don't match\.$"):
            tf.get_variable("w", initializer=tf.constant([1.0, 2.0]), dtype=tf.int32)


def test_regularizer_runs_once_outside_scopes_then_under_regularizer():
    calls = []

    def reg(x):
        calls.append(x.op.name)
        return tf.reduce_sum(x)
    with tf.Graph().as_default() as graph:
        with tf.name_scope("ns"), tf.variable_scope("a"):
            tf.get_variable("v", [1], regularizer=reg)
            tf.get_variable("w", [1], regularizer=lambda x: None)
        assert calls == ["a/v", "a/v"]
        assert _op_names(graph, lambda n: "Sum" in n or "Const" in n) == [
            "Const", "Sum", "a/v/Regularizer/Const", "a/v/Regularizer/Sum"]
        assert [t.name for t in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)] == [
            "a/v/Regularizer/Sum:0"]


def test_custom_getters_compose_and_run_outside_the_name_scope():
    seen = []

    def outer(getter, name, *args, **kwargs):
        seen.append(("outer", name, sorted(kwargs)))
        tf.constant(1.0, name="in_outer")
        return getter(name + "_o", *args, **kwargs)

    def inner(getter, name, *args, **kwargs):
        seen.append(("inner", name))
        return getter(name + "_i", *args, **kwargs)

    def explicit(getter, name, shape=None, **kwargs):
        seen.append(("explicit", name))
        return getter(name, shape=shape, **kwargs)
    with tf.Graph().as_default() as graph:
        with tf.name_scope("ns"), tf.variable_scope("a", custom_getter=outer):
            with tf.name_scope("deeper"):
                v = tf.get_variable("v", [1])
            with tf.variable_scope("b", custom_getter=inner):
                w = tf.get_variable("w", [1])
                x = tf.get_variable("x", [1], custom_getter=explicit)
        assert _op_names(graph, lambda n: "in_outer" in n) == ["in_outer", "in_outer_1"]
    keys = ["aggregation", "caching_device", "collections", "constraint", "dtype",
            "initializer", "partitioner", "regularizer", "reuse", "shape", "synchronization",
            "trainable", "use_resource", "validate_shape"]
    assert (v.op.name, w.op.name, x.op.name) == ("a/v_o", "a/b/w_i_o", "a/b/x")
    assert seen == [("outer", "a/v", keys), ("inner", "a/b/w"), ("outer", "a/b/w_i", keys),
                    ("explicit", "a/b/x")]


def test_custom_getter_gets_the_next_getter_as_getter_and_filled_defaults():
    seen = {}

    def misnamed(next_getter, name, *args, **kwargs):
        return next_getter(name, *args, **kwargs)

    def recording(getter, *args, **kwargs):
        seen.update(kwargs, args=args)
        return getter(*args, **kwargs)

    def positional(getter, name, shape, dtype, initializer, regularizer, reuse, trainable,
                   collections, caching_device, partitioner, validate_shape, use_resource,
                   synchronization, aggregation):
        # Without a `constraint` parameter, TF does not pass one.
        return getter(name, shape, dtype, initializer, regularizer, reuse, trainable,
                      collections, caching_device, partitioner, validate_shape, use_resource)
    with tf.Graph().as_default():
        with tf.variable_scope("m", custom_getter=misnamed):
            with pytest.raises(TypeError, match="next_getter"):
                tf.get_variable("v", [1])
        with tf.variable_scope("r", custom_getter=recording, reuse=tf.AUTO_REUSE,
                               initializer=tf.zeros_initializer()):
            tf.get_variable("v", [2])
        with tf.variable_scope("p", custom_getter=positional):
            assert tf.get_variable("v", [1]).op.name == "p/v"
    assert seen["args"] == () and seen["name"] == "r/v"
    assert seen["dtype"] == tf.float32 and seen["reuse"] is tf.AUTO_REUSE
    assert seen["trainable"] is True
    assert isinstance(seen["initializer"], type(tf.zeros_initializer()))


def test_template_scope_names():
    def linear(x):
        w = tf.get_variable("w", [int(x.shape[-1]), 2], initializer=tf.ones_initializer())
        return tf.matmul(x, w)
    with tf.Graph().as_default():
        t = tf.make_template("lin", linear)
        t(tf.ones([1, 3]))
        assert t.var_scope is t.variable_scope and t.var_scope.original_name_scope == "lin/"
        now = tf.make_template("now", linear, create_scope_now_=True)
        with tf.variable_scope("outer"):
            first = now(tf.ones([1, 3]))
            second = now(tf.ones([1, 3]))
        assert (first.name, second.name) == ("outer/now/MatMul:0", "outer/now_1/MatMul:0")
        assert now.variable_scope.name == "now"
        assert now.variable_scope.original_name_scope == "now"
