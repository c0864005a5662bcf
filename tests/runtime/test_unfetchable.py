"""Tensors built inside a cond branch or a while loop are not fetchable (and a loop's are not
feedable), as in TF 2.21: the checks, the errors, and what stays allowed."""
import pytest

import tensorweave as tf
from tensorweave.framework.errors import InaccessibleTensorError


def _loop_with_inner():
    inner = []

    def body(i):
        inner.append(i * 2)
        return i + 1
    result = tf.while_loop(lambda i: i < 3, body, [tf.constant(0)])
    return result, inner[0]


def _cond_with_inner():
    p = tf.placeholder(tf.bool, [])
    inner = []

    def true_fn():
        inner.append(tf.constant(5) * 3)
        return inner[0]
    return p, tf.cond(p, true_fn, lambda: tf.constant(1)), inner[0]


def test_loop_tensor_is_neither_fetchable_nor_feedable():
    with tf.Graph().as_default() as g:
        result, inner = _loop_with_inner()
        assert not g.is_fetchable(inner) and not g.is_fetchable(inner.op)
        assert not g.is_feedable(inner)
        assert g.is_fetchable(result) and g.is_feedable(result)
        with tf.Session() as sess:
            for fetch in (inner, inner.op, [inner], inner.name):
                with pytest.raises(InaccessibleTensorError,
                                   match="while/mul has been marked as not fetchable"):
                    sess.run(fetch)
            with pytest.raises(ValueError, match="Tensor while/mul:0 may not be fed"):
                sess.run(result, {inner: 4})
            assert sess.run(result) == 3


def test_inaccessible_error_is_a_value_error():
    assert issubclass(InaccessibleTensorError, ValueError)


def test_cond_branch_tensor_is_feedable_but_not_fetchable():
    with tf.Graph().as_default() as g:
        p, out, inner = _cond_with_inner()
        assert not g.is_fetchable(inner) and g.is_feedable(inner)
        assert g.is_fetchable(out)
        with tf.Session() as sess:
            with pytest.raises(InaccessibleTensorError, match="cond/mul"):
                sess.run(inner, {p: True})
            assert sess.run(out, {inner: 7, p: True}) == 7
            assert sess.run(out, {p: True}) == 15


def test_cond_bookkeeping_switches_are_not_fetchable():
    with tf.Graph().as_default() as g:
        _cond_with_inner()
        for name in ("cond/Switch", "cond/switch_t", "cond/switch_f", "cond/pred_id"):
            assert not g.is_fetchable(g.get_operation_by_name(name)), name


def test_nested_loop_exits_stay_inside_the_outer_loop():
    with tf.Graph().as_default() as g:
        inner_results = []

        def outer_body(i):
            inner_results.append(tf.while_loop(lambda j: j < 2, lambda j: j + 1, [i]))
            return i + 1
        result = tf.while_loop(lambda i: i < 3, outer_body, [tf.constant(0)])
        assert not g.is_fetchable(inner_results[0])
        assert not g.is_feedable(inner_results[0])
        assert g.is_fetchable(result)
