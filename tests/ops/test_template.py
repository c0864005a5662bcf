"""tf.make_template (variable sharing across calls, scope naming, create_scope_now_,
unique_name_, custom_getter_, bound kwargs, errors) and tf.init_scope, against the names and
values TensorFlow 2.21 produces for the same programs."""
import numpy as np
import pytest

import tensorweave as tf


def _linear(x, scale=1.0):
    w = tf.get_variable("w", [2], initializer=tf.constant_initializer(2.0))
    return x * w * scale


def _names(variables):
    return [v.name for v in variables]


def test_calls_share_the_first_calls_variables():
    with tf.Graph().as_default():
        t = tf.make_template("lin", _linear, scale=3.0)
        a, b = t(tf.ones([2])), t(tf.ones([2]))
        assert (a.name, b.name) == ("lin/mul_1:0", "lin_1/mul_1:0")
        assert _names(tf.global_variables()) == ["lin/w:0"]
        assert t.variable_scope_name == "lin/" and t.name == "lin"
        assert _names(t.trainable_variables) == _names(t.variables) == ["lin/w:0"]
        assert t.non_trainable_variables == [] and t.local_variables == []
        # A second template of the same name gets a scope of its own.
        t2 = tf.make_template("lin", _linear)
        c = t2(tf.ones([2]))
        assert c.name == "lin_2/mul_1:0" and t2.variable_scope.name == "lin_1"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run([a, b, c]), [[6, 6], [6, 6], [2, 2]])


def test_create_scope_now_and_unique_name():
    with tf.Graph().as_default():
        t = tf.make_template("now", _linear, create_scope_now_=True)
        assert t.variable_scope.name == "now" and t.variable_scope_name == "now/"
        assert tf.get_default_graph().get_operations() == []
        d, e = t(tf.ones([2])), t(tf.ones([2]))
        assert (d.name, e.name) == ("now/mul_1:0", "now_1/mul_1:0")
        assert _names(t.global_variables) == ["now/w:0"]
        shared_a = tf.make_template("x", _linear, unique_name_="shared")
        shared_b = tf.make_template("y", _linear, unique_name_="shared")
        with tf.variable_scope("outer"):
            g = shared_a(tf.ones([2]))
        assert g.name == "outer/shared/mul_1:0"
        assert _names(tf.global_variables()) == ["now/w:0", "outer/shared/w:0"]
        assert shared_b.variable_scope is None and shared_b.variables == []


def test_custom_getter_sees_every_variable():
    seen = []

    def getter(getter, name, *args, **kwargs):  # TF passes the next getter as `getter=`
        seen.append(name)
        return getter(name, *args, **kwargs)
    with tf.Graph().as_default():
        tf.make_template("cg", _linear, custom_getter_=getter)(tf.ones([2]))
    assert seen == ["cg/w"]


def test_errors_carry_the_definition_site():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="name cannot be None"):
            tf.make_template(None, _linear)
        t = tf.make_template("bad", lambda x: x * tf.Variable(1.0))
        t(1.0)
        with pytest.raises(ValueError, match="Trainable variable created when calling a "
                                             "template after the first time") as info:
            t(1.0)
        assert "originally defined at:" in str(info.value)

        def boom(x):
            raise TypeError("boom")
        with pytest.raises(TypeError, match="boom\n\noriginally defined at:"):
            tf.make_template("boom", boom)(1)


def test_a_failed_first_call_can_be_retried():
    calls = []

    def flaky(x):
        calls.append(x)
        if len(calls) == 1:
            raise RuntimeError("first")
        return _linear(x)
    with tf.Graph().as_default():
        t = tf.make_template("flaky", flaky)
        with pytest.raises(RuntimeError):
            t(tf.ones([2]))
        assert t(tf.ones([2])).name == "flaky_1/mul_1:0"
        assert _names(tf.global_variables()) == ["flaky/w:0"]


def test_init_scope_lifts_out_of_cond_and_control_dependencies():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.bool, [])
        with tf.name_scope("outer"):
            with tf.control_dependencies([tf.no_op(name="dep")]):
                def branch():
                    with tf.init_scope():
                        k = tf.constant(3.0, name="k")
                    return k + 1.0
                r = tf.cond(x, branch, lambda: tf.constant(0.0))
        k = g.get_operation_by_name("outer/cond/k")
        assert list(k.control_inputs) == [] and list(k.inputs) == []
        with tf.Session() as sess:
            assert sess.run(r, {x: True}) == 4.0
            assert sess.run(k.outputs[0]) == 3.0
