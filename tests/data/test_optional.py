"""tf.data Optionals: IteratorGetNextAsOptional, OptionalFromValue, OptionalNone,
OptionalHasValue and OptionalGetValue, through Iterator.get_next_as_optional() and
tf.data.experimental.Optional.

Expected values, names and errors are TensorFlow 2.21's on the same programs (tf.compat.v1, run
with /work/shared/programs/run_with_tf.py). Every run checks each fetched tensor's static shape
and dtype (the shape functions) against the value its kernel produced.
"""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def import OP_REGISTRY

D = tf.data.Dataset
E = tf.data.experimental
EMPTY = "The given optional does not have a value."
UNINITIALIZED = ("GetNext() failed because the iterator has not been initialized. Ensure that "
                 "you have run the initializer operation for this iterator before getting the "
                 "next element.")


pytestmark = pytest.mark.usefixtures("graph")


def _flat(structure) -> list:
    """The leaves of a fetch (or of its result) in order; a SparseTensor (or its value) as its
    indices, values and dense_shape."""
    if isinstance(structure, (list, tuple)) and not hasattr(structure, "indices"):
        return [leaf for s in structure for leaf in _flat(s)]
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in _flat(structure[k])]
    if isinstance(structure, (tf.SparseTensor, tf.SparseTensorValue)):
        return [structure.indices, structure.values, structure.dense_shape]
    return [structure]


def run(sess, fetch, feed=None):
    """sess.run(fetch), checking every tensor's static shape and dtype against the value its
    kernel returned."""
    result = sess.run(fetch, feed)
    for t, value in zip(_flat(fetch), _flat(result), strict=True):
        assert t.shape.is_compatible_with(np.shape(value)), f"{t.name}: {t.shape} vs " \
            f"{np.shape(value)}"
        assert np.asarray(value).dtype == t.dtype.as_numpy_dtype, t.name
    return result


def test_op_types_names_and_attrs_match_tensorflow(graph):
    it = D.range(3).make_initializable_iterator()
    opt = it.get_next_as_optional()
    assert opt._variant_tensor.op.type == "IteratorGetNextAsOptional"
    assert opt._variant_tensor.dtype == tf.variant and opt._variant_tensor.shape == []
    assert opt._variant_tensor.op.get_attr("output_types") == [tf.int64]
    assert opt.has_value().name == "OptionalHasValue:0"
    assert opt.has_value(name="h").name == "h:0"
    assert opt.get_value().name == "OptionalGetValue:0"
    assert opt.get_value(name="v").op.type == "OptionalGetValue"
    value = E.Optional.from_value(5)
    assert value._variant_tensor.name == "optional:0"
    assert value._variant_tensor.op.type == "OptionalFromValue"
    assert value._variant_tensor.op.get_attr("Toutput_types") == [tf.int32]
    assert E.Optional.empty(value.element_spec)._variant_tensor.name == "OptionalNone:0"
    # The GraphDef keeps TensorFlow's attrs.
    node = next(n for n in graph.as_graph_def().node if n.op == "OptionalGetValue")
    assert sorted(node.attr) == ["output_shapes", "output_types"]
    assert E.get_next_as_optional(it)._variant_tensor.op.type == "IteratorGetNextAsOptional"


def test_values_then_an_empty_optional_at_the_end():
    it = D.range(2).make_initializable_iterator()
    opt = it.get_next_as_optional()
    has, value = opt.has_value(), opt.get_value()
    with tf.Session() as sess:
        sess.run(it.initializer)
        assert run(sess, [has, value]) == [True, 0]
        assert run(sess, [has, value]) == [True, 1]
        assert not run(sess, has)
        with pytest.raises(tf.errors.InvalidArgumentError, match=EMPTY):
            sess.run(value)
        sess.run(it.initializer)   # restarts from the beginning
        assert run(sess, value) == 0


def test_uninitialized_iterator_is_a_failed_precondition():
    it = D.range(2).make_initializable_iterator()
    opt = it.get_next_as_optional()
    with tf.Session() as sess:
        for fetch in (opt.has_value(), opt.get_value()):
            with pytest.raises(tf.errors.FailedPreconditionError) as info:
                sess.run(fetch)
            assert info.value.message.startswith(UNINITIALIZED)


def test_nested_elements_keep_their_structure_dtypes_and_shapes():
    features = np.arange(6, dtype=np.float32).reshape(3, 2)
    ds = D.from_tensor_slices(({"a": features, "b": [b"x", b"y", b"z"]},
                               np.array([1, 2, 3], np.int32))).batch(2)
    it = tf.data.make_initializable_iterator(ds)
    opt = E.get_next_as_optional(it)
    assert opt.element_spec is it.element_spec
    (parts, label) = opt.get_value(name="gv")
    assert parts["a"].name == "gv:0" and parts["b"].name == "gv:1" and label.name == "gv:2"
    assert parts["a"].shape.as_list() == [None, 2] and parts["b"].dtype == tf.string
    assert label.shape.as_list() == [None] and label.dtype == tf.int32
    with tf.Session() as sess:
        sess.run(it.initializer)
        first = run(sess, {"h": opt.has_value(), "v": opt.get_value()})
        second = run(sess, opt.get_value())
        assert first["h"]
        np.testing.assert_array_equal(first["v"][0]["a"], features[:2])
        assert list(first["v"][0]["b"]) == [b"x", b"y"] and list(first["v"][1]) == [1, 2]
        np.testing.assert_array_equal(second[0]["a"], features[2:])
        assert second[1].dtype == np.int32 and list(second[1]) == [3]
        assert not run(sess, opt.has_value())


def test_from_value_and_empty():
    value = E.Optional.from_value((tf.constant(1.5), {"k": tf.constant([1, 2])}))
    assert repr(value.element_spec) == (
        "(TensorSpec(shape=(), dtype=tf.float32, name=None), "
        "{'k': TensorSpec(shape=(2,), dtype=tf.int32, name=None)})")
    empty = E.Optional.empty(value.element_spec)
    assert empty.element_spec == value.element_spec
    unknown = E.Optional.empty(tf.TensorSpec([None, 3], tf.float32)).get_value()
    assert unknown.shape.as_list() == [None, 3]
    assert E.Optional.from_value(5).element_spec == tf.TensorSpec([], tf.int32)
    assert E.Optional.from_value(np.zeros((2, 3))).element_spec == \
        tf.TensorSpec([2, 3], tf.float64)
    assert E.Optional.from_value([1, 2]).element_spec == tf.TensorSpec([2], tf.int32)
    with tf.Session() as sess:
        has, (x, k) = run(sess, [value.has_value(), value.get_value()])
        assert has and x == np.float32(1.5) and list(k["k"]) == [1, 2]
        assert not run(sess, empty.has_value())
        for fetch in (empty.get_value(), unknown):
            with pytest.raises(tf.errors.InvalidArgumentError, match=EMPTY):
                sess.run(fetch)


def test_from_value_with_nothing_in_it():
    with pytest.raises(ValueError, match="Attr 'Toutput_types' of 'OptionalFromValue' Op "
                                         "passed list of length 0 less than minimum 1."):
        E.Optional.from_value(())


def test_static_shapes_of_fed_values():
    rows = tf.placeholder(tf.float32, [None, 3])
    anything = tf.placeholder(tf.int64, None)
    rows_value, any_value = (E.Optional.from_value(p).get_value() for p in (rows, anything))
    assert rows_value.shape.as_list() == [None, 3] and anything.shape.ndims is None
    with tf.Session() as sess:
        got = run(sess, [rows_value, any_value], {rows: np.ones((2, 3)),
                                                  anything: [[1, 2]]})
    assert got[0].shape == (2, 3) and got[1].tolist() == [[1, 2]]


def test_constant_values_are_right_when_folded():
    """OptionalFromValue of constants is folded into a Const holding the optional."""
    value = E.Optional.from_value((tf.constant(3), tf.constant([1.0, 2.0])))
    with tf.Session() as sess:
        has, (three, pair) = run(sess, [value.has_value(), value.get_value()])
    assert has and three == 3 and pair.tolist() == [1.0, 2.0]


def test_element_spec_and_optional_structure():
    value = E.Optional.from_value({"a": tf.constant(1), "b": tf.constant([1.0])})
    spec = value._type_spec
    assert isinstance(spec, E.OptionalStructure) and spec.value_type is E.Optional
    assert spec == E.OptionalStructure(value.element_spec) == E.OptionalStructure.from_value(value)
    assert spec != E.OptionalStructure(tf.TensorSpec([], tf.int64))
    assert repr(E.OptionalStructure(tf.TensorSpec([], tf.int32))) == \
        "OptionalSpec(TensorSpec(shape=(), dtype=tf.int32, name=None),)"
    assert isinstance(D.range(2).make_one_shot_iterator().get_next_as_optional(), E.Optional)


def test_sparse_and_optional_values():
    sparse = tf.SparseTensor([[0, 1], [2, 0]], [5, 6], [3, 2])
    value = E.Optional.from_value({"s": sparse, "d": tf.constant(1.0)})
    assert repr(value.element_spec["s"]) == \
        "SparseTensorSpec(TensorShape([Dimension(3), Dimension(2)]), tf.int32)"
    got = value.get_value()
    assert isinstance(got["s"], tf.SparseTensor) and got["s"].shape.as_list() == [3, 2]
    outer = E.Optional.from_value(value)
    assert outer.element_spec == E.OptionalStructure(value.element_spec)
    it = tf.data.make_initializable_iterator(D.from_tensor_slices(sparse))
    row = it.get_next_as_optional()
    with tf.Session() as sess:
        sess.run(it.initializer)
        s = run(sess, got)["s"]
        assert s.indices.tolist() == [[0, 1], [2, 0]] and s.values.tolist() == [5, 6]
        assert run(sess, outer.get_value().get_value()["d"]) == 1.0
        rows = [run(sess, row.get_value()) for _ in range(3)]
        assert [r.values.tolist() for r in rows] == [[5], [], [6]]
        assert not run(sess, row.has_value())


# Until WhileContext.add_op gives an op whose inputs are all loop invariants a control input on
# the loop's pivot (TensorFlow's _MaybeAddControlDependency), IteratorGetNextAsOptional in a loop
# body runs in iterations the condition ended: the first loop never stops, the second reads ahead.
def test_while_loop_drains_an_iterator_while_it_has_values():
    it = D.range(1, 6).make_initializable_iterator()

    def body(has, total):
        opt = it.get_next_as_optional()
        value = tf.cond(opt.has_value(), opt.get_value, lambda: tf.constant(0, tf.int64))
        return opt.has_value(), total + value

    out = tf.while_loop(lambda has, total: has, body,
                        [tf.constant(True), tf.constant(0, tf.int64)])
    with tf.Session() as sess:
        sess.run(it.initializer)
        assert run(sess, out) == (False, 15)
        assert run(sess, out) == (False, 0)   # the iterator is at its end


def test_optional_as_a_loop_variable_reads_no_element_ahead():
    it = D.range(1, 20).make_initializable_iterator()

    def cond(opt, total):
        return tf.logical_and(opt.has_value(), total < 3)

    def body(opt, total):
        return it.get_next_as_optional(), total + opt.get_value()

    last, total = tf.while_loop(cond, body, [it.get_next_as_optional(),
                                             tf.constant(0, tf.int64)])
    assert isinstance(last, E.Optional)
    following = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer)
        assert run(sess, [total, last.get_value()]) == [3, 3]
        # The loop took 1, 2 and 3: 4 is next, as in TensorFlow.
        assert run(sess, following) == 4


def test_cond_returns_an_optional():
    pred = tf.placeholder(tf.bool, [])
    opt = tf.cond(pred, lambda: E.Optional.from_value(tf.constant(3)),
                  lambda: E.Optional.empty(tf.TensorSpec([], tf.int32)))
    with tf.Session() as sess:
        assert run(sess, [opt.has_value(), opt.get_value()], {pred: True}) == [True, 3]
        assert not run(sess, opt.has_value(), {pred: False})


def test_string_handle_and_one_shot_iterators():
    one_shot = D.range(2).make_one_shot_iterator()
    handle = tf.placeholder(tf.string, [])
    feedable = tf.data.Iterator.from_string_handle(handle, tf.int64, [])
    opt = feedable.get_next_as_optional()
    with tf.Session() as sess:
        feed = {handle: sess.run(one_shot.string_handle())}
        assert [run(sess, [opt.has_value(), opt.get_value()], feed) for _ in range(2)] == \
            [[True, 0], [True, 1]]
        assert not run(sess, opt.has_value(), feed)
        assert not run(sess, one_shot.get_next_as_optional().has_value())


def test_gradients_flow_through_from_value_and_get_value():
    x, y = tf.constant([2.0, 3.0]), tf.constant(4.0)
    a, d = E.Optional.from_value((x, {"y": y})).get_value()
    grads = tf.gradients(tf.reduce_sum(a * a) * 3.0, [x, y])
    assert grads[0].op.type == "OptionalGetValue"
    with tf.Session() as sess:
        gx, gy = run(sess, grads)
    assert gx.tolist() == [12.0, 18.0] and gy == 0.0   # the unused component: zeros
    for op_type in ("IteratorGetNextAsOptional", "OptionalNone", "OptionalHasValue"):
        assert OP_REGISTRY[op_type].not_differentiable
