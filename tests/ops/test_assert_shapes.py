"""tf.debugging.assert_shapes: static outcomes while building, run-time outcomes through
Session.run, and TensorFlow 2.21's messages (recorded from tf.compat.v1 with v2 behaviour off)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors


def _z(*shape):
    return np.zeros(shape, np.float32)


def _static_ok_deps(op, name="group_deps"):
    """The control inputs of a statically satisfied assert_shapes result."""
    assert (op.name, op.type) == (name, "NoOp")
    assert not op.inputs
    return sorted(i.name for i in op.control_inputs)


def test_static_pass_returns_group_of_rank_noops():
    with tf.Graph().as_default():
        x, y = tf.zeros([10, 3]), tf.ones([10, 7])
        op = tf.debugging.assert_shapes([(x, ("N", "Q")), (y, ("N", "D")), (1.0, ())])
        assert _static_ok_deps(op) == [
            "assert_shapes/assert_rank/static_checks_determined_all_ok",
            "assert_shapes/assert_rank_1/static_checks_determined_all_ok",
            "assert_shapes/assert_rank_in/static_checks_determined_all_ok"]
        assert not [o for o in tf.get_default_graph().get_operations() if o.type == "Assert"]
        # No constraints at all (and None specs) still give the NoOp.
        assert _static_ok_deps(tf.debugging.assert_shapes([(x, None)]), "group_deps_1") == []
        assert tf.compat.v1.debugging.assert_shapes is tf.debugging.assert_shapes


def test_name_scopes_the_checks():
    with tf.Graph().as_default():
        op = tf.debugging.assert_shapes([(_z(2, 3), (2, 3))], name="chk")
        assert _static_ok_deps(op) == ["chk/chk/static_checks_determined_all_ok"]


@pytest.mark.parametrize("pairs,message,error", [
    ([("zeros", ("N", "D")), ("ones", ("N", "D"))], None,
     "^Specified by tensor zeros:0 dimension 1.  Tensor ones:0 dimension 1 must have size 3.  "
     r"Received size 7, shape \(10, 7\)$"),
    ([("zeros", (10, 4))], None,
     "^Specified explicitly.  Tensor zeros:0 dimension 1 must have size 4.  Received size 3, "
     r"shape \(10, 3\)$"),
    ([("zeros", (10, 4))], "oops", "^oops.  Specified explicitly.  Tensor zeros:0 dimension 1"),
    ([("zeros", ("10", "4"))], None, "Specified explicitly.  Tensor zeros:0 dimension 1 must "
                                     "have size 4"),
    ([("zeros", "NQR")], None,
     r"^Tensor zeros:0 must have rank 3.  Received rank 2, shape \(10, 3\)$"),
    ([("zeros", ("N",) * 3)], "oops", "^oops.  Tensor zeros:0 must have rank 3."),
    ([("zeros", ())], None,
     r"^Tensor zeros:0 must have rank in \(0, 1\).  Received rank 2, shape \(10, 3\)$"),
    ([("zeros", (..., 4))], None,
     "^Specified explicitly.  Tensor zeros:0 dimension -1 must have size 4.  Received size 3"),
    ([("zeros", ("*", 10, 3, 1))], None,
     r"^Tensor zeros:0 must have rank at least 3.  Received rank 2, shape \(10, 3\)$"),
    # A bare `...` is read as (..., 1): the last dimension must be 1 (as in TensorFlow).
    ([("zeros", (...,))], None, "^Specified explicitly.  Tensor zeros:0 dimension -1 must "
                                "have size 1.  Received size 3"),
    ([("zeros", (..., "N")), ("ones", ("N", 7))], None,
     "^Specified by tensor zeros:0 dimension -1.  Tensor ones:0 dimension 0 must have size 3.  "
     "Received size 10"),
    ([("zeros", (10, ...))], None,
     "^Tensor zeros:0 specified shape index 1.  Symbol `...` or `\\*` for a variable number of "
     "unspecified dimensions is only allowed as the first entry$"),
    ([("zeros", 3)], "oops",
     "^oops.  Tensor zeros:0.  Specified shape must be an iterable.  An iterable has the "
     "attribute `__iter__` or `__getitem__`.  Received specified shape: 3$"),
    ([("placeholder", ("N", 4))], None,
     "^Specified explicitly.  Tensor Placeholder:0 dimension 1 must have size 4.  Received "
     r"size 3, shape \(\?, 3\)$"),
    # The rank checks of all tensors come before any size check.
    ([("ones", (10, 8)), ("zeros", ("N",))], None, "^Tensor zeros:0 must have rank in"),
])
def test_static_violations_raise_value_error(pairs, message, error):
    with tf.Graph().as_default():
        tensors = {"zeros": tf.zeros([10, 3]), "ones": tf.ones([10, 7]),
                   "placeholder": tf.placeholder(tf.float32, [None, 3])}
        with pytest.raises(ValueError, match=error):
            tf.debugging.assert_shapes([(tensors[k], s) for k, s in pairs], message=message)
        assert not [o for o in tf.get_default_graph().get_operations() if o.type == "Assert"]


@pytest.mark.parametrize("value,spec,error", [
    (1.0, (), None),
    (1.0, (1,), None),
    (np.zeros([1]), (), None),
    (1.0, (..., 1), None),
    (_z(2, 1), (...,), None),
    (1.0, (2,), r"dimension 0 must have size 2.  Received size 1, shape \(\)$"),
    (np.zeros([3]), (), r"dimension 0 must have size 1.  Received size 3, shape \(3,\)$"),
    (1.0, (..., 2), r"dimension -1 must have size 2.  Received size 1, shape \(\)$"),
    (_z(3, 2), [], r"must have rank in \(0, 1\).  Received rank 2"),
])
def test_scalars_count_as_shape_one(value, spec, error):
    with tf.Graph().as_default():
        if error is None:
            assert tf.debugging.assert_shapes([(value, spec)]).type == "NoOp"
        else:
            with pytest.raises(ValueError, match="Tensor assert_shapes/Const:0 .*" + error):
                tf.debugging.assert_shapes([(value, spec)])


def test_dict_form_variables_and_spec_types():
    with tf.Graph().as_default():
        v = tf.Variable(_z(2, 3))
        op = tf.debugging.assert_shapes({v: ("A", "B"), tf.ones([3, 2]): np.array(["B", "."])})
        assert op.type == "NoOp"
        assert tf.debugging.assert_shapes([(v, tf.TensorShape([2, None]))]).type == "NoOp"
        # '.' and None are "any size", not symbols that must agree.
        op = tf.debugging.assert_shapes([(_z(2, 3), (".", ".")), (_z(4, 5), (None, None))])
        assert op.type == "NoOp"
        with pytest.raises(ValueError, match="Tensor Variable/read:0 dimension 1 must have size "
                                             "4.  Received size 3"):
            tf.debugging.assert_shapes({v: (2, 4)})
        with pytest.raises(ValueError, match="dimension 0 must have size 3.  Received size 2"):
            tf.debugging.assert_shapes([(v, tf.TensorShape([3, None]))])


def _run_outcomes(check, feeds_list):
    """'ok' or the 'assertion failed: ...' text of each run."""
    outcomes = []
    with tf.Session() as sess:
        for feeds in feeds_list:
            try:
                sess.run(check, feeds)
                outcomes.append("ok")
            except errors.InvalidArgumentError as e:
                outcomes.append(str(e)[str(e).index("assertion failed"):].split("\n")[0])
    return outcomes


def test_symbolic_dims_that_disagree_only_at_run_time():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, 3], name="a")
        b = tf.placeholder(tf.float32, [None], name="b")
        check = tf.debugging.assert_shapes([(a, ("N", "Q")), (b, ("N",))])
        assert (check.name, check.type) == ("group_deps", "NoOp")
        assert [o.type for o in check.control_inputs].count("Assert") == 1
        assert _run_outcomes(check, [{a: _z(2, 3), b: _z(2)}, {a: _z(2, 3), b: _z(4)}]) == [
            "ok",
            "assertion failed: [] [Specified by tensor a:0 dimension 0] [Tensor b:0 dimension] "
            "[0] [must have size] [2] [Received shape: ] [4]"]


def test_unknown_ranks_checked_at_run_time():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, name="a")
        b = tf.placeholder(tf.float32, name="b")
        check = tf.debugging.assert_shapes([(a, ("N", 3)), (b, ("N",))])
        feeds = [(_z(2, 3), _z(2)), (_z(2, 3), _z(5)), (_z(2, 4), _z(2)), (_z(2, 3, 1), _z(2)),
                 (_z(2, 3), _z()), (_z(1, 3), _z()), (_z(1, 3), _z(1, 1))]
        assert _run_outcomes(check, [{a: x, b: y} for x, y in feeds]) == [
            "ok",
            "assertion failed: [] [Specified by tensor a:0 dimension 0] [Tensor b:0 dimension] "
            "[0] [must have size] [2] [Received shape: ] [5]",
            "assertion failed: [] [Specified explicitly] [Tensor a:0 dimension] [1] "
            "[must have size] [3] [Received shape: ] [2 4]",
            "assertion failed: [] [Tensor a:0 must have rank] [2] [Received shape: ] [2 3 1]",
            "assertion failed: [] [Specified by tensor a:0 dimension 0] [Tensor b:0 dimension] "
            "[0] [must have size] [2] [Received shape: ] []",
            "ok",  # the scalar b counts as shape [1]
            "assertion failed: [] [Tensor b:0 must have rank in] [0] [1] [Received shape: ] "
            "[1 1]"]


def test_ellipsis_star_dot_and_none_at_run_time():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, name="a")
        b = tf.placeholder(tf.float32, [None, None], name="b")
        check = tf.debugging.assert_shapes([(a, (..., "K", 2)), (b, ("K", "."))])
        feeds = [(_z(3, 4, 2), _z(4, 9)), (_z(4, 2), _z(4, 1)), (_z(3, 4, 3), _z(4, 9)),
                 (_z(3, 5, 2), _z(4, 9)), (_z(2), _z(4, 9))]
        assert _run_outcomes(check, [{a: x, b: y} for x, y in feeds]) == [
            "ok", "ok",
            "assertion failed: [] [Specified explicitly] [Tensor a:0 dimension] [-1] "
            "[must have size] [2] [Received shape: ] [3 4 3]",
            "assertion failed: [] [Specified by tensor a:0 dimension -2] [Tensor b:0 dimension] "
            "[0] [must have size] [5] [Received shape: ] [4 9]",
            "assertion failed: [] [Tensor a:0 must have rank at least] [2] [Received shape: ] "
            "[2]"]
    with tf.Graph().as_default():
        c = tf.placeholder(tf.float32, [None, None, None], name="c")
        d = tf.placeholder(tf.float32, name="d")
        check = tf.debugging.assert_shapes({c: (".", ".", 4), d: ("*", "N")})
        outcomes = _run_outcomes(check, [{c: _z(1, 2, 4), d: _z(7)}, {c: _z(1, 2, 3), d: _z()}])
        assert outcomes == ["ok", "assertion failed: [] [Specified explicitly] [Tensor c:0 "
                                  "dimension] [2] [must have size] [4] [Received shape: ] [1 2 3]"]


def test_scalar_spec_at_run_time():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, name="a")
        check = tf.debugging.assert_shapes([(a, ())])
        assert _run_outcomes(check, [{a: _z()}, {a: _z(1)}, {a: _z(2)}, {a: _z(1, 1)}]) == [
            "ok", "ok",
            "assertion failed: [] [Specified explicitly] [Tensor a:0 dimension] [0] "
            "[must have size] [1] [Received shape: ] [2]",
            "assertion failed: [] [Tensor a:0 must have rank in] [0] [1] [Received shape: ] "
            "[1 1]"]


def test_message_data_and_summarize_at_run_time():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, name="a")
        b = tf.placeholder(tf.float32, [None], name="b")
        with_message = tf.debugging.assert_shapes([(a, ("N", 2)), (b, ("N",))], message="custom")
        with_data = tf.debugging.assert_shapes([(a, ("N", 2)), (b, ("N",))],
                                               data=["mydata", b], summarize=2)
        feeds = [{a: _z(3, 2), b: _z(3)}, {a: _z(3, 2), b: _z(4)}, {a: _z(3), b: _z(3)}]
        assert _run_outcomes(with_message, feeds) == [
            "ok",
            "assertion failed: [custom.  ] [Specified by tensor a:0 dimension 0] "
            "[Tensor b:0 dimension] [0] [must have size] [3] [Received shape: ] [4]",
            "assertion failed: [custom.  ] [Tensor a:0 must have rank] [2] [Received shape: ] "
            "[3]"]
        assert _run_outcomes(with_data, feeds) == [
            "ok", "assertion failed: [mydata] [0 0...]", "assertion failed: [mydata] [0 0...]"]


def test_sparse_tensors():
    with tf.Graph().as_default():
        sp = tf.SparseTensor(indices=[[0, 0]], values=[1.0], dense_shape=[3, 4])
        assert tf.debugging.assert_shapes([(sp, (3, 4))]).type == "NoOp"
        with pytest.raises(ValueError, match=r"^Specified explicitly.  Tensor shape=\(3, 4\) "
                                             "dtype=float32 dimension 1 must have size 5"):
            tf.debugging.assert_shapes([(sp, (3, 5))])
        with pytest.raises(ValueError, match=r"^Tensor  must have rank in \(0, 1\)"):
            tf.debugging.assert_shapes([(sp, ("N",))])
    with tf.Graph().as_default():
        sp = tf.sparse_placeholder(tf.float32)
        d = tf.placeholder(tf.float32, [None], name="d")
        check = tf.debugging.assert_shapes([(sp, ("N", 4)), (d, ("N",))])

        def feed(shape, n):
            value = tf.SparseTensorValue(np.zeros([1, len(shape)], np.int64), _z(1),
                                         np.array(shape, np.int64))
            return {sp: value, d: _z(n)}

        assert _run_outcomes(check, [feed((3, 4), 3), feed((3, 4), 2), feed((3, 4, 1), 3)]) == [
            "ok",
            "assertion failed: [] [Specified by tensor shape=<unknown> dtype=float32 dimension "
            "0] [Tensor d:0 dimension] [0] [must have size] [3] [Received shape: ] [2]",
            "assertion failed: [] [Tensor  must have rank] [2] [Received shape: ] [3 4 1]"]


def test_result_works_under_control_dependencies():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, 2], name="a")
        with tf.control_dependencies([tf.debugging.assert_shapes([(a, (3, 2))])]):
            out = tf.identity(a) * 2.0
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out, {a: np.ones([3, 2], np.float32)}),
                                          np.full([3, 2], 2.0, np.float32))
            with pytest.raises(errors.InvalidArgumentError,
                               match=r"\[Specified explicitly\] \[Tensor a:0 dimension\] \[0\] "
                                     r"\[must have size\] \[3\] \[Received shape: \] \[4 2\]"):
                sess.run(out, {a: np.ones([4, 2], np.float32)})
