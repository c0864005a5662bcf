"""Variables: VariableV2 storage, Assign/AssignAdd/AssignSub, initialization, variable scopes."""
import numpy as np
import pytest

import tensorweave as tf


def test_variable_is_variablev2_assign_and_read_identity():
    with tf.Graph().as_default() as g:
        v = tf.Variable([1.0, 2.0], name="v")
    ops = {op.name: op.type for op in g.get_operations()}
    assert ops["v"] == "VariableV2" and ops["v/Assign"] == "Assign"
    assert ops["v/read"] == "Identity"
    assert v.dtype == tf.float32._as_ref and v.dtype.base_dtype == tf.float32
    assert v.initializer.name == "v/Assign" and v.value().name == "v/read:0"
    assert v.value().op.get_attr("_class") == [b"loc:@v"]


def test_assign_add_sub_and_is_variable_initialized():
    with tf.Graph().as_default():
        v = tf.Variable(np.array([1, 2], np.int64), name="v")
        ready = tf.is_variable_initialized(v)
        add = tf.assign_add(v, [10, 10])
        sub = v.assign_sub([1, 1])
        put = tf.assign(v, [7, 7])
        with tf.Session() as sess:
            assert not sess.run(ready)
            with pytest.raises(tf.errors.FailedPreconditionError, match="v"):
                sess.run(add)
            sess.run(v.initializer)
            assert sess.run(ready)
            np.testing.assert_array_equal(sess.run(add), [11, 12])
            np.testing.assert_array_equal(sess.run(sub), [10, 11])
            np.testing.assert_array_equal(sess.run(put), [7, 7])
            assert sess.run(v).dtype == np.int64


def test_assign_checks_shapes_statically_and_unless_told_otherwise():
    with tf.Graph().as_default():
        v = tf.Variable(tf.zeros([2]))
        with pytest.raises(ValueError):
            tf.assign(v, tf.zeros([3]))
        loose = tf.Variable(tf.zeros([2]), validate_shape=False)
        grow = tf.assign(loose, tf.zeros([4]), validate_shape=False)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(grow).shape == (4,)


def test_initializing_a_constant_does_not_alias_it():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        inc = tf.assign_add(v, [1.0, 1.0])
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(inc)
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_variable_scope_reuse_and_auto_reuse():
    with tf.Graph().as_default():
        with tf.variable_scope("layer"):
            w = tf.get_variable("w", [2, 3])
            c = tf.constant(1.0, name="c")
        with tf.variable_scope("layer", reuse=True):
            assert tf.get_variable("w") is w
            with pytest.raises(ValueError, match="does not exist"):
                tf.get_variable("nope", [1])
        with tf.variable_scope("layer"), pytest.raises(ValueError, match="already exists"):
            tf.get_variable("w", [2, 3])
        with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
            a = tf.get_variable("a", [1], initializer=tf.ones_initializer())
        with tf.variable_scope("auto", reuse=tf.AUTO_REUSE):
            assert tf.get_variable("a", [1]) is a
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            limit = np.sqrt(6.0 / 5.0)
            assert np.all(np.abs(sess.run(w)) <= limit)  # glorot_uniform default
            np.testing.assert_array_equal(sess.run(a), [1.0])
    assert w.name == "layer/w:0" and c.op.name == "layer/c"


def test_collections_and_initializers():
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2, name="b", trainable=False)
        loc = tf.Variable(0.0, name="loc", trainable=False,
                          collections=[tf.GraphKeys.LOCAL_VARIABLES])
        assert tf.global_variables() == [a, b] and tf.trainable_variables() == [a]
        assert tf.local_variables() == [loc]
        report = tf.report_uninitialized_variables()
        with tf.Session() as sess:
            assert set(sess.run(report)) == {b"a", b"b", b"loc"}
            sess.run(tf.global_variables_initializer())
            assert list(sess.run(report)) == [b"loc"]
            sess.run(tf.local_variables_initializer())
            assert len(sess.run(report)) == 0


def test_is_variable_initialized_op():
    """IsVariableInitialized reads the variable's ref: a bool scalar, False until assigned."""
    with tf.Graph().as_default():
        v = tf.Variable([1.0], name="v")
        ready = tf.is_variable_initialized(v)
        assert (ready.name, ready.op.type, ready.dtype) == ("IsVariableInitialized:0",
                                                            "IsVariableInitialized", tf.bool)
        assert ready.shape.ndims == 0 and ready.op.get_attr("dtype") == tf.float32
        assert [t.name for t in ready.op.inputs] == ["v:0"]
        with tf.Session() as sess:
            assert sess.run(ready) is np.False_
            sess.run(v.initializer)
            assert sess.run(ready) is np.True_


def test_reentered_variable_scope_counts_default_names_afresh():
    """As TF1's _VariableScopeStore: leaving a named scope zeroes its sub-scopes' counts, so
    `default_name` scopes repeat (m2/blk) on re-entry, and count up within one entry."""
    with tf.Graph().as_default():
        with tf.variable_scope("m2"):
            with tf.variable_scope(None, default_name="blk"):
                p = tf.get_variable("w", [1])
            with tf.variable_scope(None, default_name="blk"):
                p1 = tf.get_variable("w", [1])
        with tf.variable_scope("m2", reuse=True):
            with tf.variable_scope(None, default_name="blk") as blk:
                assert tf.get_variable("w", [1]) is p
                c = tf.constant(1.0, name="c")
            with tf.variable_scope(None, default_name="blk"):
                assert tf.get_variable("w", [1]) is p1
        assert (p.name, p1.name) == ("m2/blk/w:0", "m2/blk_1/w:0")
        # the name scope is still made unique by the graph
        assert (blk.name, blk.original_name_scope, c.name) == ("m2/blk", "m2_1/blk/",
                                                                "m2_1/blk/c:0")
        with tf.variable_scope("m2"), tf.variable_scope(None, default_name="blk"), \
                pytest.raises(ValueError, match="m2/blk/w already exists"):
            tf.get_variable("w", [1])
        with pytest.raises(ValueError, match="reuse=True cannot be used without a name"):
            with tf.variable_scope(None, default_name="blk", reuse=True):
                pass


def test_variable_scope_object_restores_the_counts_it_found():
    """Entering a VariableScope object opens a fresh name scope (vso_1) but keeps the object's
    original_name_scope; on exit the default-name counts return to what they were."""
    with tf.Graph().as_default():
        with tf.variable_scope("vso") as vso:
            with tf.variable_scope(None, default_name="blk"):
                w = tf.get_variable("w", [1])
        with tf.variable_scope(vso, reuse=True) as again:
            with tf.variable_scope(None, default_name="blk") as blk:
                assert tf.get_variable("w", [1]) is w
            c = tf.constant(1.0, name="c")
        assert (blk.name, again.original_name_scope, c.name) == ("vso/blk", "vso/", "vso_1/c:0")
        with tf.variable_scope("outer"):
            with tf.variable_scope(vso):
                pass
            with tf.variable_scope(None, default_name="blk") as outer_blk:
                pass
        assert outer_blk.name == "outer/blk"


@pytest.mark.parametrize("initializer,dtype", [
    (np.array([1, 2], np.int32), tf.int32), (np.array([1.0, 2.0]), tf.float64),
    ([1, 2], tf.int32), (1.5, tf.float32), (np.int64(3), tf.int64)])
def test_get_variable_from_a_value_takes_its_dtype(initializer, dtype):
    with tf.Graph().as_default():
        with tf.variable_scope("s", dtype=tf.float64):
            assert tf.get_variable("v", initializer=initializer).dtype.base_dtype == dtype
        assert tf.get_variable("t", initializer=tf.constant(initializer)).dtype.base_dtype \
            == tf.constant(initializer).dtype


def test_get_variable_explicit_dtype_must_match_the_value():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Initializer type '<dtype: 'int32'>' and explicit "
                                             "dtype '<dtype: 'float32'>' don't match."):
            tf.get_variable("v", initializer=np.array([1, 2], np.int32), dtype=tf.float32)
        assert tf.get_variable("w", initializer=[1.0], dtype=tf.float32).dtype == \
            tf.float32_ref


def test_variable_creator_scopes_chain_from_the_innermost_as_in_tensorflow():
    seen = []

    def outer(next_creator, **kwargs):
        seen.append(("outer", kwargs["name"], kwargs["trainable"], kwargs["use_resource"],
                     kwargs["dtype"], sorted(kwargs)))
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        seen.append(("inner", kwargs["name"]))
        return next_creator(**{**kwargs, "trainable": False})

    with tf.Graph().as_default():
        with tf.variable_creator_scope(outer):
            with tf.variable_creator_scope(inner):
                a = tf.Variable(1.0, name="a")
                tf.get_variable("b", [2], initializer=tf.zeros_initializer())
            c = tf.Variable(2.0, name="c", use_resource=True)
        with tf.variable_creator_scope(lambda next_creator, **kwargs: tf.constant(5.0)):
            d = tf.Variable(1.0, name="d")
        # What TensorFlow 2.21 shows the creators for the same program.
        keys = ["aggregation", "caching_device", "collections", "constraint", "dtype",
                "expected_shape", "experimental_enable_variable_lifting", "import_scope",
                "initial_value", "name", "shape", "synchronization", "trainable",
                "use_resource", "validate_shape", "variable_def"]
        assert seen == [("inner", "a"), ("outer", "a", False, None, None, keys),
                        ("inner", "b"), ("outer", "b", False, False, tf.float32, keys),
                        ("outer", "c", None, True, None, keys)]
        assert [v.op.name for v in tf.trainable_variables()] == ["c"]
        assert [v.op.name for v in tf.global_variables()] == ["a", "b", "c"]
        assert type(c).__name__ == "ResourceVariable" and isinstance(d, tf.Tensor)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run([a, c, d]) == [1.0, 2.0, 5.0]
        a2 = tf.Variable(3.0, name="a2")   # outside the scopes: made as usual
        assert a2.op.name == "a2" and a2 in tf.trainable_variables()
