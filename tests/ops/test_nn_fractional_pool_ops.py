"""FractionalMaxPool / FractionalAvgPool and their gradient ops: pooled values against a NumPy
reference given the pooling sequences, the sequences' distribution (window lengths k or k + 1,
deterministic or drawn per run), and TF's build- and run-time errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tensorweave.framework.apply_op import apply_op
from tensorweave.ops.nn_fractional_pool_ops import FractionalAvgPoolGrad, FractionalMaxPoolGrad
from tensorweave.testing.op_case import OpCase, case_tests

ALL = (tf.float32, tf.float64, tf.int32, tf.int64)


def _windows(cum, length, overlapping):
    """(start, stop) of each window, stop exclusive."""
    return [(int(a), min(int(b) + (1 if overlapping else 0), length))
            for a, b in zip(cum[:-1], cum[1:])]


def _trunc_mean(values):
    total = values.sum(axis=(1, 2))
    if values.dtype.kind == "i":
        return (np.sign(total) * (np.abs(total) // (values.shape[1] * values.shape[2])))
    return total / (values.shape[1] * values.shape[2])


def ref_pool(x, rows, cols, overlapping, mean):
    """Loops over the windows the sequences define (the reference the kernel must match)."""
    reduce = _trunc_mean if mean else (lambda v: v.max(axis=(1, 2)))
    out = [[reduce(x[:, r0:r1, c0:c1]) for c0, c1 in _windows(cols, x.shape[2], overlapping)]
           for r0, r1 in _windows(rows, x.shape[1], overlapping)]
    return np.stack([np.stack(row, 1) for row in out], 1).astype(x.dtype)


def ref_grad(x, dy, rows, cols, overlapping, mean):
    """Max: dy to each window's first maximum (scan order); mean: dy / size to each element."""
    dx = np.zeros(x.shape, np.float64)
    for i, (r0, r1) in enumerate(_windows(rows, x.shape[1], overlapping)):
        for j, (c0, c1) in enumerate(_windows(cols, x.shape[2], overlapping)):
            for b in range(x.shape[0]):
                for c in range(x.shape[3]):
                    patch = x[b, r0:r1, c0:c1, c]
                    if mean:
                        dx[b, r0:r1, c0:c1, c] += dy[b, i, j, c] / patch.size
                    else:
                        r, q = np.unravel_index(np.argmax(patch), patch.shape)
                        dx[b, r0 + r, c0 + q, c] += dy[b, i, j, c]
    return dx.astype(x.dtype)


def _x(shape):
    return lambda rng, dt: (rng.permutation(np.prod(shape)).reshape(shape) - 7).astype(dt)


def _even(n, k):
    return np.arange(0, n + 1, k)


EVEN = dict(pooling_ratio=[1.0, 2.0, 2.0, 1.0])
SEEDED = dict(pooling_ratio=[1.0, 1.6, 1.4, 1.0], deterministic=True, seed=3, seed2=7)


def _seeded_sequences(pool, shape, **kw):
    with tf.Graph().as_default(), tf.Session() as sess:
        out = pool(tf.zeros(shape, tf.float64), **kw)
        return sess.run([out.row_pooling_sequence, out.col_pooling_sequence])


ROWS, COLS = _seeded_sequences(tf.nn.fractional_max_pool, [1, 7, 6, 1], overlapping=True,
                               **SEEDED)


def _grad(pool, **kw):
    def build(x, dy):
        return tf.gradients(pool(x, **kw).output, x, grad_ys=dy)[0]
    return build


def _pool_rows(kind, pool, mean):
    """Forward rows of one op: even windows (with and without overlap) and seeded ones, and
    its gradient op given the seeded windows."""
    return [
        OpCase(f"fractional_{kind}_pool_even",
               lambda x: pool(x, **EVEN).output,
               lambda x: ref_pool(x, _even(4, 2), _even(6, 2), False, mean),
               [_x((2, 4, 6, 3))], ALL),
        OpCase(f"fractional_{kind}_pool_even_overlapping",
               lambda x: pool(x, overlapping=True, **EVEN).output,
               lambda x: ref_pool(x, _even(4, 2), _even(6, 2), True, mean),
               [_x((2, 4, 6, 3))], ALL),
        OpCase(f"fractional_{kind}_pool_seeded",
               lambda x: pool(x, overlapping=True, **SEEDED).output,
               lambda x: ref_pool(x, ROWS, COLS, True, mean), [_x((2, 7, 6, 2))], ALL),
        OpCase(f"fractional_{kind}_pool_grad",
               _grad(pool, overlapping=True, **SEEDED),
               lambda x, dy: ref_grad(x, dy, ROWS, COLS, True, mean),
               [_x((2, 7, 6, 2)), _x((2, 4, 4, 2))], (tf.float32, tf.float64), grad=False),
    ]


CASES = [
    *_pool_rows("max", tf.nn.fractional_max_pool, False),
    *_pool_rows("avg", tf.nn.fractional_avg_pool, True),
    OpCase("fractional_max_pool_sequences",
           lambda x: list(tf.nn.fractional_max_pool(x, **EVEN))[1:],
           lambda x: [_even(4, 2), _even(6, 2)], [_x((1, 4, 6, 1))], (tf.float32,),
           grad=False),
    OpCase("fractional_max_pool_ratio_one",
           lambda x: tf.nn.fractional_max_pool(x, [1.0, 1.0, 1.0, 1.0], True).output,
           lambda x: x, [_x((1, 3, 2, 2))], ALL),
    OpCase("fractional_avg_pool_grad_even",
           _grad(tf.nn.fractional_avg_pool, **EVEN),
           lambda x, dy: ref_grad(x, dy, _even(4, 2), _even(6, 2), False, True),
           [_x((1, 4, 6, 2)), _x((1, 2, 3, 2))], (tf.float32,), grad=False),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def test_seeded_sequences_match_the_seeded_gradient_rows():
    """The seeded rows above rely on one sequence per seed pair, for every input dtype."""
    again = _seeded_sequences(tf.nn.fractional_avg_pool, [3, 7, 6, 2], overlapping=False,
                              **SEEDED)
    np.testing.assert_array_equal(again[0], ROWS)
    np.testing.assert_array_equal(again[1], COLS)
    assert len(set(np.diff(ROWS))) == 2 or len(set(np.diff(COLS))) == 2


@pytest.mark.parametrize("pseudo_random", [False, True])
@pytest.mark.parametrize("pool,mean", [(tf.nn.fractional_max_pool, False),
                                       (tf.nn.fractional_avg_pool, True)])
def test_random_sequences(pool, mean, pseudo_random):
    """Each run draws new windows of length k or k + 1 that tile the axis exactly.

    The graph seed makes the draws reproducible: a pseudo-random row sequence has few distinct
    values, so unseeded runs could repeat one by chance."""
    x = np.random.RandomState(0).uniform(-1, 1, (2, 50, 23, 3))
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.set_random_seed(5)
        out = pool(tf.constant(x), [1.0, 1.44, 1.73, 1.0], pseudo_random, overlapping=True)
        assert out.output.op.type == ("FractionalAvgPool" if mean else "FractionalMaxPool")
        runs = [sess.run(out) for _ in range(3)]
    for y, rows, cols in runs:
        for seq, length, n in ((rows, 50, 34), (cols, 23, 13)):
            assert seq[0] == 0 and seq[-1] == length and len(seq) == n + 1
            diff = np.diff(seq)
            assert set(diff) <= {length // n, length // n + 1}
        np.testing.assert_allclose(y, ref_pool(x, rows, cols, True, mean), rtol=1e-12)
    assert any(not np.array_equal(runs[0][1], r[1]) or not np.array_equal(runs[0][2], r[2])
               for r in runs[1:])


def test_deterministic_without_seeds_repeats_its_draw():
    with tf.Graph().as_default(), tf.Session() as sess:
        out = tf.nn.fractional_max_pool(tf.zeros([1, 40, 40, 1]), [1, 1.5, 1.5, 1],
                                        deterministic=True)
        first, *rest = [sess.run(out) for _ in range(4)]
    for again in rest:
        np.testing.assert_array_equal(first.row_pooling_sequence, again.row_pooling_sequence)
        np.testing.assert_array_equal(first.col_pooling_sequence, again.col_pooling_sequence)


def test_static_shapes_and_names():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, 5, None, 3])
        out = tf.nn.fractional_max_pool(p, [1.0, 1.4, 1.3, 1.0])
        assert out.output.shape.as_list() == [None, 3, None, 3]
        assert out.row_pooling_sequence.shape.as_list() == [4]
        assert out.col_pooling_sequence.shape.as_list() == [None]
        assert out.output.op.name == "FractionalMaxPool"
        assert tf.nn.fractional_avg_pool(p, [1, 2, 1, 1], name="fap").output.op.name == "fap"


def test_build_errors():
    with tf.Graph().as_default():
        x = tf.zeros([1, 4, 4, 1])
        with pytest.raises(ValueError, match="pooling_ratio cannot be smaller than 1, got: 0.5"):
            tf.nn.fractional_max_pool(x, [1.0, 0.5, 1.0, 1.0])
        with pytest.raises(ValueError, match="passed list of length 3 less than minimum 4"):
            tf.nn.fractional_avg_pool(x, [1.0, 1.0, 1.0])
        with pytest.raises(ValueError, match="must be rank 4 but is rank 3"):
            tf.nn.fractional_max_pool(tf.zeros([4, 4, 1]), [1.0, 2.0, 2.0, 1.0])
        with pytest.raises(TypeError):
            tf.nn.fractional_avg_pool(tf.zeros([1, 4, 4, 1], tf.float16), [1.0, 2.0, 2.0, 1.0])
        with pytest.raises(LookupError, match="FractionalMaxPoolGrad"):
            out = tf.nn.fractional_max_pool(x, [1.0, 2.0, 2.0, 1.0])
            tf.gradients(tf.gradients(out.output, x)[0], x)


def _run_error(build, error, match):
    with tf.Graph().as_default(), tf.Session() as sess:
        out = build()
        with pytest.raises(error, match=match):
            sess.run(out)


def test_run_errors():
    x = np.zeros([1, 4, 4, 1], np.float32)
    _run_error(lambda: tf.nn.fractional_max_pool(x, [2.0, 1.5, 1.5, 2.0]),
               errors.UnimplementedError, "not yet supported on the batch nor channel")
    _run_error(lambda: tf.nn.fractional_avg_pool(x, [1.0, 1.5, 1.5, 1.0], seed=3),
               errors.InvalidArgumentError, "Both seed and seed2 should be 0")
    _run_error(lambda: tf.nn.fractional_max_pool(
        tf.placeholder_with_default(x[:, :2], [None] * 4), [1.0, 3.0, 1.5, 1.0]),
        errors.InvalidArgumentError, "Pooling ratio is higher than input dimension size for "
        "dimension 1. Input dim size: 2 pooling ratio: 3")
    seq = np.array([0, 2, 4], np.int64)
    _run_error(lambda: apply_op(FractionalMaxPoolGrad, [x, tf.ones([1, 2, 2, 1]),
                                                        tf.ones([1, 2, 2, 1]), seq, seq]),
               errors.InvalidArgumentError, "tensor_out_dup is not the same as tensor_out")
    _run_error(lambda: apply_op(FractionalMaxPoolGrad, [x, tf.zeros([1, 2, 2, 1]),
                                                        tf.ones([1, 2, 2, 1]), seq[:2], seq]),
               errors.InvalidArgumentError, "row_seq_tensor must have at least 3 elements")
    _run_error(lambda: apply_op(FractionalAvgPoolGrad, [
        tf.placeholder_with_default(np.array([1, 4, 4], np.int64), None),
        tf.ones([1, 2, 2, 1]), seq, seq]),
        errors.InvalidArgumentError, "must be1-dimensional and 4 elements")
