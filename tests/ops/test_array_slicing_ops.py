"""Joining, splitting, slicing and indexing ops: forward against NumPy, shape functions against
the kernels, gradients against central differences, TF's construction-time and run-time errors,
default names, static shapes with unknown dimensions, and static values."""
import types

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.static_value import static_value
from tensorweave.kernels.registry import find_kernel
from tensorweave.ops import array_slicing_ops
from tensorweave.testing.op_case import (
    OpCase,
    check_forward,
    check_gradient,
    check_shapes,
    parametrize,
)

ALL = (tf.float32, tf.float64, tf.int32, tf.int64, tf.bool)
NUM = (tf.float32, tf.float64, tf.int32, tf.int64)


def _randn(*shape):
    return lambda rng, dt: np.asarray(rng.randn(*shape) * 3).astype(dt)


def _bools(*shape):
    return lambda rng, dt: rng.rand(*shape) > 0.5


def _ints(*shape, low=0, high=4):
    return lambda rng, dt: rng.randint(low, high, size=shape).astype(dt)


_WORDS = np.array([b"a", b"bb", b"", b"d"], dtype=object)
_GRID = lambda rng, dt: np.arange(24).reshape(2, 3, 4).astype(dt)  # noqa: E731


def _strided_slice_grad(spec, masks, index):
    """StridedSliceGrad into a [2, 3, 4] zero tensor, against NumPy's assignment at `index`."""
    def build(dy):
        return apply_op(array_slicing_ops.StridedSliceGrad,
                        [[2, 3, 4], *(np.array(v, np.int32) for v in spec), dy], masks)

    def ref(dy):
        out = np.zeros((2, 3, 4), dy.dtype)
        out[index] = dy
        return out
    return build, ref


def _bool_row(name, build, ref, inputs, dtypes=(tf.float32,), n_bool=1, **kw):
    """A row whose first `n_bool` inputs are bool whatever the row's dtype."""
    return OpCase(name, build, ref, inputs, dtypes=dtypes,
                  fixed_dtypes=(tf.bool,) * n_bool, **kw)


def _concat_offset(concat_dim, shapes):
    from tensorweave.ops.array_join_ops import ConcatOffset
    return apply_op(ConcatOffset, [concat_dim, shapes])


def _concat_offset_ref(concat_dim, shapes):
    axis = int(concat_dim) % len(shapes[0])
    starts = np.cumsum([0] + [int(s[axis]) for s in shapes[:-1]])
    return [np.eye(len(s), dtype=s.dtype)[axis] * start for s, start in zip(shapes, starts)]


CASES = [
    # --- ConcatV2 / Pack / Unpack
    OpCase("concat_axis0", lambda x, y: tf.concat([x, y], 0),
           lambda x, y: np.concatenate([x, y], 0), [_randn(2, 3), _randn(4, 3)], dtypes=ALL),
    OpCase("concat_neg_axis", lambda x, y, z: tf.concat([x, y, z], axis=-1),
           lambda x, y, z: np.concatenate([x, y, z], -1),
           [_randn(2, 1), _randn(2, 3), _randn(2, 0)], dtypes=NUM),
    OpCase("concat_empty", lambda x, y: tf.concat([x, y], 0),
           lambda x, y: np.concatenate([x, y]), [_randn(0, 3), _randn(2, 3)]),
    OpCase("concat_strings", lambda x, y: tf.concat([x, y], 0),
           lambda x, y: np.concatenate([x, y]), [_WORDS, _WORDS[:2]], dtypes=(tf.string,)),
    # ConcatOffset (ConcatV2's gradient): where each input starts along the axis.
    OpCase("concat_offset", lambda d, a, b, c: _concat_offset(d, [a, b, c]),
           lambda d, a, b, c: _concat_offset_ref(d, [a, b, c]),
           [np.array(-2), np.array([2, 2, 5]), np.array([2, 0, 5]), np.array([2, 4, 5])],
           dtypes=(tf.int32, tf.int64), fixed_dtypes=(tf.int32,), grad=False),
    OpCase("stack_axis0", lambda x, y: tf.stack([x, y]), lambda x, y: np.stack([x, y]),
           [_randn(2, 3), _randn(2, 3)], dtypes=ALL),
    OpCase("stack_axis1", lambda x, y: tf.stack([x, y], axis=1),
           lambda x, y: np.stack([x, y], 1), [_randn(2, 3), _randn(2, 3)]),
    OpCase("stack_neg_axis", lambda x, y, z: tf.stack([x, y, z], axis=-1),
           lambda x, y, z: np.stack([x, y, z], -1), [_randn(4), _randn(4), _randn(4)],
           dtypes=NUM),
    OpCase("stack_scalars", lambda x, y: tf.stack([x, y, x]), lambda x, y: np.stack([x, y, x]),
           [_randn(), _randn()]),
    OpCase("autopack_mixed", lambda x: tf.convert_to_tensor([[x, 2.0], [3.0, x]]),
           lambda x: np.array([[x, 2], [3, x]], np.float32), [_randn()]),
    OpCase("unstack_axis0", lambda x: tf.unstack(x, num=3), lambda x: list(x),
           [_randn(3, 2)], dtypes=ALL),
    OpCase("unstack_neg_axis", lambda x: tf.unstack(x, num=4, axis=-1),
           lambda x: [x[..., k] for k in range(4)], [_randn(2, 3, 4)]),
    OpCase("unstack_one", lambda x: tf.unstack(x, num=1, axis=1), lambda x: [x[:, 0]],
           [_randn(3, 1)]),
    # --- Split / SplitV
    OpCase("split_even", lambda x: tf.split(x, 3, axis=1), lambda x: np.split(x, 3, 1),
           [_randn(2, 6)], dtypes=ALL),
    OpCase("split_neg_axis", lambda x: tf.split(x, 2, axis=-1), lambda x: np.split(x, 2, -1),
           [_randn(2, 3, 4)]),
    OpCase("split_one", lambda x: tf.split(x, 1), lambda x: [x], [_randn(2, 3)]),
    OpCase("split_sizes", lambda x: tf.split(x, [1, -1, 2], axis=1),
           lambda x: [x[:, :1], x[:, 1:3], x[:, 3:]], [_randn(3, 5)], dtypes=NUM),
    OpCase("split_sizes_zero", lambda x: tf.split(x, [0, 2]),
           lambda x: [x[:0], x], [_randn(2, 2)]),
    OpCase("split_sizes_tensor", lambda x, s: tf.split(x, s, num=2),
           lambda x, s: [x[:1], x[1:]], [_randn(3, 2), np.array([1, 2])],
           fixed_dtypes=(None, tf.int32)),
    # --- Slice / StridedSlice
    OpCase("slice", lambda x: tf.slice(x, [1, 0, 2], [-1, 2, 1]),
           lambda x: x[1:, 0:2, 2:3], [_GRID], dtypes=ALL),
    OpCase("slice_fed_begin", lambda x, b: tf.slice(x, b, [1, -1]),
           lambda x, b: x[1:2, 2:], [_randn(3, 4), np.array([1, 2])],
           fixed_dtypes=(None, tf.int64)),
    OpCase("getitem_int", lambda x: x[1], lambda x: x[1], [_GRID], dtypes=ALL),
    OpCase("getitem_neg", lambda x: x[-1, -2:, 1:3], lambda x: x[-1, -2:, 1:3], [_GRID]),
    OpCase("getitem_reverse", lambda x: x[..., ::-1], lambda x: x[..., ::-1], [_GRID],
           dtypes=NUM),
    OpCase("getitem_newaxis", lambda x: x[:, tf.newaxis, 0], lambda x: x[:, None, 0], [_GRID]),
    OpCase("getitem_mixed", lambda x: x[None, 1, :, -1], lambda x: x[None, 1, :, -1], [_GRID]),
    OpCase("getitem_steps", lambda x: x[::-1, ::-2, 1:3], lambda x: x[::-1, ::-2, 1:3],
           [_GRID]),
    OpCase("getitem_scalar", lambda x: x[1, 2, 3], lambda x: x[1, 2, 3], [_GRID]),
    OpCase("getitem_ellipsis_newaxis", lambda x: x[0, ..., tf.newaxis],
           lambda x: x[0, ..., None], [_GRID]),
    OpCase("getitem_out_of_range_slice", lambda x: x[5:10, -9:1], lambda x: x[5:10, -9:1],
           [_GRID]),
    OpCase("getitem_empty_range", lambda x: x[:, 1:1], lambda x: x[:, 1:1], [_GRID]),
    OpCase("getitem_tensor_index", lambda x, i: x[i, 1:], lambda x, i: x[i, 1:],
           [_GRID, np.array(-1)], fixed_dtypes=(None, tf.int32)),
    OpCase("getitem_tensor_bounds", lambda x, i: x[:, i:i + 2], lambda x, i: x[:, i:i + 2],
           [_GRID, np.array(1)], fixed_dtypes=(None, tf.int64)),
    OpCase("getitem_empty_spec", lambda x: x[()], lambda x: x, [_randn(2, 3)]),
    OpCase("strided_slice_masks",
           lambda x: tf.strided_slice(x, [1, 0, 0], [2, 0, -1], [1, 1, 2], begin_mask=2,
                                      end_mask=2, shrink_axis_mask=1),
           lambda x: x[1, :, 0:-1:2], [_GRID]),
    OpCase("strided_slice_ellipsis_mask",
           lambda x: tf.strided_slice(x, [0, 1], [0, 3], [1, 1], ellipsis_mask=1),
           lambda x: x[..., 1:3], [_GRID]),
    OpCase("strided_slice_new_axis_mask",
           lambda x: tf.strided_slice(x, [0, 1], [0, 2], new_axis_mask=1),
           lambda x: x[None, 1:2], [_GRID]),
    OpCase("strided_slice_grad_shrink",
           *_strided_slice_grad(([1, 0, 0], [2, 0, -1], [1, 1, 2]),
                                {"begin_mask": 2, "end_mask": 2, "shrink_axis_mask": 1},
                                (1, slice(None), slice(0, -1, 2))),
           [_randn(3, 2)], dtypes=NUM),
    OpCase("strided_slice_grad_ellipsis_newaxis",
           *_strided_slice_grad(([0, 0, 0], [0, 0, 0], [1, 1, -2]),
                                {"ellipsis_mask": 1, "new_axis_mask": 2, "begin_mask": 4,
                                 "end_mask": 4}, (Ellipsis, None, slice(None, None, -2))),
           [_randn(2, 3, 1, 2)]),
    # --- GatherV2 / GatherNd / ScatterNd
    OpCase("gather_axis0", lambda x: tf.gather(x, [2, 0, 2]), lambda x: x[[2, 0, 2]],
           [_randn(3, 4)], dtypes=ALL),
    OpCase("gather_axis1_2d_indices", lambda x: tf.gather(x, [[3, 1], [0, 0]], axis=1),
           lambda x: x[:, [[3, 1], [0, 0]]], [_randn(3, 4)]),
    OpCase("gather_neg_axis_fed_indices", lambda x, i: tf.gather(x, i, axis=-1),
           lambda x, i: np.take(x, i, -1), [_randn(2, 3, 4), _ints(5)],
           fixed_dtypes=(None, tf.int64)),
    OpCase("gather_scalar_index", lambda x: tf.gather(x, 1), lambda x: x[1], [_randn(3, 2)]),
    OpCase("gather_empty_indices", lambda x: tf.gather(x, np.zeros([0], np.int32), axis=1),
           lambda x: x[:, :0], [_randn(3, 2)]),
    OpCase("gather_batch_dims", lambda x, i: tf.gather(x, i, axis=1, batch_dims=1),
           lambda x, i: np.stack([x[k][i[k]] for k in range(2)]),
           [_randn(2, 4, 3), _ints(2, 5)], fixed_dtypes=(None, tf.int32)),
    OpCase("gather_nd", lambda x: tf.gather_nd(x, [[0, 1], [2, 3]]),
           lambda x: np.array([x[0, 1], x[2, 3]]), [_randn(3, 4)], dtypes=ALL),
    OpCase("gather_nd_slices", lambda x, i: tf.gather_nd(x, i),
           lambda x, i: x[i[..., 0]], [_randn(3, 4), _ints(2, 2, 1, high=3)],
           fixed_dtypes=(None, tf.int64)),
    OpCase("scatter_nd_duplicates_sum", lambda u: tf.scatter_nd([[1], [3], [1]], u, [5]),
           lambda u: np.array([0, u[0] + u[2], 0, u[1], 0]), [_randn(3)], dtypes=NUM),
    OpCase("scatter_nd_slices", lambda u: tf.scatter_nd([[0], [2]], u, [3, 2]),
           lambda u: np.array([u[0], [0, 0], u[1]]), [_randn(2, 2)]),
    # --- OneHot
    OpCase("one_hot_last", lambda i: tf.one_hot(i, 4), lambda i: np.eye(4, dtype=np.float32)[i],
           [_ints(2, 3)], dtypes=(tf.int32, tf.int64, tf.uint8), grad=False),
    OpCase("one_hot_axis0_values",
           lambda i: tf.one_hot(i, 3, on_value=5.0, off_value=-1.0, axis=0),
           lambda i: np.where(np.arange(3)[:, None] == i, 5.0, -1.0).astype(np.float32),
           [np.array([0, 2, -1, 7])], dtypes=(tf.int32,), grad=False),
    OpCase("one_hot_axis_mid", lambda i: tf.one_hot(i, 3, axis=1, dtype=tf.int64),
           lambda i: np.moveaxis(np.eye(3, dtype=np.int64)[i], -1, 1),
           [_ints(2, 4, high=3)], dtypes=(tf.int32,), grad=False),
    # --- Where / Select / SelectV2
    _bool_row("where_coordinates", lambda c: tf.where(c), np.argwhere, [_bools(3, 4)],
              dtypes=(tf.bool,), grad=False),
    OpCase("where_numeric", lambda x: tf.where(x), np.argwhere, [_ints(2, 3, 2, high=2)],
           dtypes=(tf.float32, tf.int32), grad=False),
    _bool_row("select_same_shape", lambda c, x, y: tf.where(c, x, y), np.where,
              [_bools(3, 4), _randn(3, 4), _randn(3, 4)], dtypes=ALL),
    _bool_row("select_rows", lambda c, x, y: tf.where(c, x, y),
              lambda c, x, y: np.where(c[:, None, None], x, y),
              [_bools(3), _randn(3, 2, 2), _randn(3, 2, 2)]),
    _bool_row("select_scalar_cond", lambda c, x, y: tf.where(c, x, y), np.where,
              [np.array(False), _randn(2, 3), _randn(2, 3)]),
    _bool_row("select_v2_broadcast", lambda c, x: tf.where_v2(c, x, 0.5),
              lambda c, x: np.where(c, x, np.float32(0.5)), [_bools(3, 1), _randn(4)],
              dtypes=(tf.float32, tf.float64)),
    # --- Unique and composites
    OpCase("unique", lambda x: list(tf.unique(x)),
           lambda x: [np.array([3, 1, 2], x.dtype), np.array([0, 1, 0, 2, 1], np.int32)],
           [np.array([3, 1, 3, 2, 1])], dtypes=(tf.int32, tf.int64, tf.float32), grad=False),
    OpCase("unique_int64_idx", lambda x: list(tf.unique(x, out_idx=tf.int64)),
           lambda x: [x[:0], np.zeros([0], np.int64)], [np.zeros([0])], dtypes=(tf.int32,),
           grad=False),
    OpCase("unique_distinct_floats", lambda x: tf.unique(x).y, lambda x: x, [_randn(5)],
           dtypes=(tf.float32, tf.float64)),
    OpCase("boolean_mask", lambda x: tf.boolean_mask(x, [True, False, True]),
           lambda x: x[[0, 2]], [_randn(3, 4)], dtypes=ALL),
    OpCase("boolean_mask_axis", lambda x: tf.boolean_mask(x, [False, True, True, False], axis=1),
           lambda x: x[:, 1:3], [_randn(3, 4)]),
    OpCase("getitem_bool_tensor", lambda x, m: x[m], lambda x, m: x[m],
           [_randn(4, 2), np.array([True, False, False, True])],
           fixed_dtypes=(None, tf.bool), unknown_shapes=False),  # a mask needs a known rank
]
SHAPE_CASES = [c for c in CASES if c.unknown_shapes]


@parametrize(CASES)
def test_forward(case, dtype):
    check_forward(case, dtype)


@parametrize(SHAPE_CASES)
def test_shapes(case, dtype):
    check_shapes(case, dtype)


# Rows of floating dtypes whose op is differentiable: central differences in float64.
@pytest.mark.parametrize("case", [c for c in CASES if c.grad and
                                  any(d.is_floating for d in c.dtypes)], ids=str)
def test_gradient(case):
    check_gradient(case)


# --- default names ---------------------------------------------------------------------------
def test_default_op_names_and_types():
    with tf.Graph().as_default():
        x = tf.constant(np.zeros([2, 3], np.float32))
        i = tf.placeholder(tf.int32, [])
        made = {
            "concat:0": tf.concat([x, x], 0), "stack:0": tf.stack([x, x], 1),
            "unstack:0": tf.unstack(x)[0], "split:0": tf.split(x, 3, 1)[0],
            "split_1:1": tf.split(x, [1, 2], 1)[1], "Slice:0": tf.slice(x, [0, 0], [1, 1]),
            "strided_slice:0": x[0], "strided_slice_1:0": x[i],
            "StridedSlice:0": tf.strided_slice(x, [0], [1]),
            "GatherV2:0": tf.gather(x, [0]), "GatherNd:0": tf.gather_nd(x, [[0, 0]]),
            "ScatterNd:0": tf.scatter_nd([[0]], [1.0], [2]), "one_hot:0": tf.one_hot([0], 2),
            "Where:0": tf.where([True]), "Select:0": tf.where(True, x, x),
            "SelectV2:0": tf.where_v2(True, x, 0.0), "Unique:0": tf.unique([1, 1]).y,
            "boolean_mask/GatherV2:0": tf.boolean_mask(x, [True, False]),
            "packed:0": tf.convert_to_tensor([i, 2]),
        }
        for name, tensor in made.items():
            assert tensor.name == name
        types = {t.op.type for t in made.values()}
    assert types == {"ConcatV2", "Pack", "Unpack", "Split", "SplitV", "Slice", "StridedSlice",
                     "GatherV2", "GatherNd", "ScatterNd", "OneHot", "Where", "Select",
                     "SelectV2", "Unique"}


def test_getitem_builds_one_strided_slice_with_tf_masks():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [2, 3, 4])
        y = x[1:, ..., tf.newaxis, -1]
        op = y.op
        assert op.type == "StridedSlice" and op.name == "strided_slice"
        assert [op.get_attr(k) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                         "new_axis_mask", "shrink_axis_mask")] == [0, 1, 2, 4, 8]
        assert [t.op.name for t in op.inputs[1:]] == [
            "strided_slice/stack", "strided_slice/stack_1", "strided_slice/stack_2"]
        assert static_value(op.inputs[1]).tolist() == [1, 0, 0, -1]
        assert static_value(op.inputs[2]).tolist() == [0, 0, 0, 0]
        assert len(g.get_operations()) == 5
        assert y.shape.as_list() == [1, 3, 1]


# --- construction-time errors ---------------------------------------------------------------
def _zeros(*shape):
    return tf.constant(np.zeros(shape, np.float32))


@pytest.mark.parametrize("build,exc,match", [
    (lambda: tf.concat([_zeros(2, 3), _zeros(2, 4)], 0), ValueError,
     r"Dimension 0 in both shapes must be equal, but are 3 and 4. Shapes are \[3\] and \[4\]"),
    (lambda: tf.concat([_zeros(2, 3), _zeros(2, 3, 1)], 0), ValueError, "must be rank 2"),
    (lambda: tf.concat([_zeros(2), _zeros(2)], 1), ValueError, "at least rank 2"),
    (lambda: tf.concat([_zeros(), _zeros()], 0), ValueError, "Can't concatenate scalars"),
    (lambda: tf.concat([_zeros(2), tf.constant([1, 2])], 0), TypeError, "int32"),
    (lambda: tf.stack([_zeros(2, 3), _zeros(2, 4)]), ValueError, "Dimension 1"),
    (lambda: tf.stack([_zeros(2), _zeros(2)], axis=2), ValueError,
     r"Argument `axis` = 2 not in range \[-2, 2\)"),
    (lambda: tf.unstack(tf.placeholder(tf.float32, [None, 3])), ValueError,
     "Cannot infer argument `num` from shape"),
    (lambda: tf.unstack(_zeros(2, 3), num=3), ValueError, "Dimension must be 3 but is 2"),
    (lambda: tf.unstack(_zeros(2), axis=1), ValueError, "not in range"),
    (lambda: tf.split(_zeros(5), 2), ValueError, "evenly divisible by 2 but is 5"),
    (lambda: tf.split(_zeros(2, 3), 3, axis=2), ValueError, "must be in range"),
    (lambda: tf.split(_zeros(2, 3), [1, 1], axis=1), ValueError, "can't split axis of size 3"),
    (lambda: tf.split(_zeros(2, 3), [-1, -1], axis=1), ValueError, "only have one -1"),
    (lambda: tf.split(_zeros(2, 3), [4, -1], axis=1), ValueError, "must be >= 0"),
    (lambda: tf.split(_zeros(4), tf.placeholder(tf.int32, [None])), ValueError,
     "Cannot infer argument `num`"),
    (lambda: tf.slice(_zeros(2, 3), [0], [1, 1]), ValueError, "Dimension 0 in both shapes"),
    (lambda: tf.slice(_zeros(2, 3), [0, 0], [-2, 1]), ValueError, "-2"),
    (lambda: _zeros(2, 3)[5], ValueError, "slice index 5 of dimension 0 out of bounds"),
    (lambda: _zeros(2, 3)[:, -4], ValueError, "slice index -1 of dimension 1 out of bounds"),
    (lambda: _zeros(2, 3)[0, 0, 0], ValueError, "Index out of range using input dim 2"),
    (lambda: _zeros()[0], ValueError, "Attempting to slice scalar input"),
    (lambda: _zeros(2, 3)[..., ...], ValueError, "Multiple ellipses"),
    (lambda: _zeros(2, 3)[::0], ValueError, r"strides\[0\] must be non-zero"),
    (lambda: tf.strided_slice(_zeros(3), [1], [0], [-1], shrink_axis_mask=1), ValueError,
     "only stride 1 allowed"),
    (lambda: _zeros(2, 3)[1.5], TypeError, "Only integers, slices"),
    (lambda: _zeros(2, 3)[tf.constant([1])], TypeError, "scalar tf.int32/tf.int64"),
    (lambda: _zeros(2, 3)[tf.constant(1.0):], TypeError, "Only integers"),
    (lambda: _zeros(2, 3)[True], ValueError, "mask cannot be scalar"),
    (lambda: tf.gather(_zeros(2, 3), [0], axis=2), ValueError, "at least rank 3"),
    (lambda: tf.gather(_zeros(2, 3), [0.0]), TypeError, "float32"),
    (lambda: tf.gather_nd(_zeros(2, 3), [[0, 1, 2]]), ValueError,
     r"indices.shape\[-1\] must be <= params.rank"),
    (lambda: tf.gather_nd(_zeros(2, 3), 1), ValueError, "at least rank 1"),
    (lambda: tf.scatter_nd([[0]], [[1.0, 2.0]], [3, 3]), ValueError, "must match dimensions"),
    (lambda: tf.one_hot([0], 3, on_value=1, off_value=0.0), TypeError,
     "of on_value does not match dtype"),
    (lambda: tf.one_hot([0], 3, on_value=1.0, dtype=tf.int32), TypeError,
     "does not match dtype parameter"),
    (lambda: tf.one_hot([0], 3, axis=-2), ValueError, "axis must be >= -1"),
    (lambda: tf.one_hot([0], -1), ValueError, "must be non-negative"),
    (lambda: tf.one_hot([0.0], 3), TypeError, "float32"),
    (lambda: tf.where([True, False], _zeros(2)), ValueError, "both be non-None"),
    (lambda: tf.where(tf.constant([True, False]), _zeros(3, 2), _zeros(3, 2)), ValueError,
     "Dimension 0 in both shapes must be equal, but are 2 and 3"),
    (lambda: tf.where(tf.constant([[True, False]]), _zeros(2, 2), _zeros(2, 2)), ValueError,
     "Dimension 0"),
    (lambda: tf.where(True, _zeros(2, 3), _zeros(2, 4)), ValueError, "Dimension 1"),
    (lambda: tf.where_v2(True, _zeros(2, 3), _zeros(4)), ValueError, "Dimensions must be"),
    (lambda: tf.where(tf.constant(["a"])), TypeError, "string"),
    (lambda: tf.boolean_mask(_zeros(2, 3), True), ValueError, "mask cannot be scalar"),
    (lambda: tf.boolean_mask(_zeros(2, 3), tf.placeholder(tf.bool)), ValueError,
     "Number of mask dimensions must be specified"),
    (lambda: tf.boolean_mask(_zeros(2, 3), [True, False, True]), ValueError,
     "not compatible|incompatible"),
    (lambda: tf.unique(_zeros(2, 2)), ValueError, "must be rank 1"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build()


# --- run-time errors -------------------------------------------------------------------------
def _feed(value, shape):
    return tf.placeholder_with_default(np.asarray(value), shape)


@pytest.mark.parametrize("build,match", [
    (lambda f: tf.constant(np.zeros([2, 3]))[f.big], "slice index 7 of dimension 0 out of bounds"),
    (lambda f: tf.constant(np.zeros([2, 3]))[:, f.neg], "slice index -1 of dimension 1"),
    (lambda f: tf.gather([1, 2], [f.neg]), r"indices\[0\] = -4 is not in \[0, 2\)"),
    (lambda f: tf.gather([[1, 2]], [[0, f.big]], axis=1), r"indices\[0,1\] = 7 is not in \[0, 2\)"),
    (lambda f: tf.gather([1, 2], [0], axis=f.big), "Expected axis in the range"),
    (lambda f: tf.gather_nd([[1, 2]], [[0, f.big]]),
     r"indices\[0\] = \[0, 7\] does not index into param shape \[1,2\]"),
    (lambda f: tf.scatter_nd([[f.big]], [1], [3]),
     r"indices\[0\] = \[7\] does not index into shape"),
    (lambda f: tf.concat([[1, 2], [3]], f.big), "Expected concatenating dimensions"),
    (lambda f: tf.concat([np.zeros([2, 3]), _feed(np.zeros([2, 4]), [2, None])], 0),
     "ConcatOp : Dimension 1 in both shapes must be equal"),
    (lambda f: tf.stack([np.zeros(3), _feed(np.zeros(4), [None])]),
     "Shapes of all inputs must match"),
    (lambda f: tf.unstack(_feed(np.zeros([3, 2]), [None, 2]), num=2),
     "Input shape axis 0 must equal 2"),
    (lambda f: tf.split(_feed(np.zeros(7), [None]), 2), "evenly divide the split dimension"),
    (lambda f: tf.split(np.zeros(3), _feed([1, 1], [2])), "Determined shape must"),
    (lambda f: tf.slice(np.zeros([2, 3]), _feed([1, 1], [2]), [2, 1]),
     r"Expected size\[0\] in \[0, 1\], but got 2"),
    (lambda f: tf.slice(np.zeros([2, 3]), _feed([-1, 1], [2]), [1, 1]),
     r"Expected begin\[0\] in \[0, 2\], but got -1"),
    (lambda f: tf.strided_slice(np.zeros([2, 3]), _feed([0, 0], [None]), [1], [1]),
     "Expected begin, end, and strides to be 1D equal size tensors"),
    (lambda f: tf.strided_slice(np.zeros(3), [0], [1], [f.zero]), "must be non-zero"),
    (lambda f: tf.where(_feed([True, False], [None]), np.zeros([3, 2]), np.zeros([3, 2])),
     "Number of batches of 'then' must match size of 'cond'"),
    (lambda f: tf.where(_feed([[True]], [None, None]), np.zeros([2, 1]), np.zeros([2, 1])),
     "must have the same size and shape"),
    (lambda f: tf.where(_feed(True, None)), "Unhandled input dimensions: 0"),
    (lambda f: tf.one_hot([0], f.neg), "depth must be non-negative, got: -4"),
    (lambda f: tf.unique(_feed(np.zeros([2, 2]), None)), "unique expects a 1D vector"),
])
def test_runtime_errors(build, match):
    with tf.Graph().as_default():
        fed = {tf.placeholder(tf.int32, [], name=k): v
               for k, v in (("big", 7), ("neg", -4), ("zero", 0))}
        out = build(types.SimpleNamespace(**{t.op.name: t for t in fed}))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=match):
                sess.run(out, fed)


# --- static shapes with unknown dimensions -----------------------------------------------
def test_static_shapes_with_unknown_dims():
    with tf.Graph().as_default():
        t = tf.placeholder(tf.float32, [2, 3, 4])
        p = tf.placeholder(tf.float32, [None, 3])
        u = tf.placeholder(tf.float32)
        i = tf.placeholder(tf.int32, [])
        got = {
            "t[i]": t[i], "t[:, i:]": t[:, i:], "t[i, 1:3]": t[i, 1:3],
            "p[::2]": p[::2], "p[:, ::2]": p[:, ::2], "p[1:]": p[1:], "u[1]": u[1],
            "begin masked, dynamic": tf.strided_slice(t, tf.stack([i, 0]), [1, 2], [1, 1],
                                                      begin_mask=2, end_mask=2),
            "dynamic strides": tf.strided_slice(t, [0], [1], tf.stack([i])),
            "concat dyn axis": tf.concat([p, p], i), "concat unknown rank": tf.concat([u, p], 1),
            "concat partial": tf.concat([p, _zeros(2, 3)], 0),
            "stack partial": tf.stack([p, u], 1), "split dyn axis": tf.split(p, 3, axis=i)[0],
            "split unknown": tf.split(p, 3, axis=1)[0],
            "splitv dyn sizes": tf.split(p, tf.placeholder(tf.int32, [2]), axis=1)[1],
            "splitv -1 unknown": tf.split(p, [1, -1], axis=0)[1],
            "slice partial begin": tf.slice(p, tf.stack([i, 1]), [2, -1]),
            "slice dyn size": tf.slice(p, [0, 1], tf.stack([i, 1])),
            "gather dyn axis": tf.gather(_zeros(2, 3), [[0]], axis=i),
            "gather unknown": tf.gather(p, tf.placeholder(tf.int32, [None, 2])),
            "gather_nd unknown depth": tf.gather_nd(p, tf.placeholder(tf.int32, [4, None])),
            "scatter_nd partial": tf.scatter_nd([[0]], [[1.0, 2.0]], tf.stack([i, 2])),
            "one_hot dyn depth": tf.one_hot(tf.placeholder(tf.int32, [None, 2]), i),
            "where unknown": tf.where(tf.placeholder(tf.bool)),
            "select rows": tf.where(tf.placeholder(tf.bool, [None]), p, p),
            "select unknown cond": tf.where(tf.placeholder(tf.bool), p, _zeros(5, 3)),
            "boolean_mask": tf.boolean_mask(p, tf.placeholder(tf.bool, [None])),
            "unique": tf.unique(tf.placeholder(tf.int32, [None])).idx,
        }
        want = {
            "t[i]": [3, 4], "t[:, i:]": [2, None, 4], "t[i, 1:3]": [None, 4],
            "p[::2]": [None, 3], "p[:, ::2]": [None, 2], "p[1:]": [None, 3], "u[1]": None,
            "begin masked, dynamic": [None, 3, 4], "dynamic strides": None,
            "concat dyn axis": [None, None], "concat unknown rank": [None, None],
            "concat partial": [None, 3], "stack partial": [None, 2, 3],
            "split dyn axis": [None, None], "split unknown": [None, 1],
            "splitv dyn sizes": [None, None], "splitv -1 unknown": [None, 3],
            "slice partial begin": [2, 2], "slice dyn size": [None, 1],
            "gather dyn axis": [None, None, None], "gather unknown": [None, 2, 3],
            "gather_nd unknown depth": None, "scatter_nd partial": [None, 2],
            "one_hot dyn depth": [None, 2, None], "where unknown": [None, None],
            "select rows": [None, 3], "select unknown cond": [5, 3],
            "boolean_mask": [None, 3], "unique": [None],
        }
        for key, tensor in got.items():
            shape = tensor.shape
            assert (None if shape.ndims is None else shape.as_list()) == want[key], key


# --- static values ---------------------------------------------------------------------------
def test_static_values_fold_through_shape_arithmetic():
    with tf.Graph().as_default():
        c = tf.constant(np.arange(12, dtype=np.int32).reshape(3, 4))
        n = tf.placeholder(tf.int32, [])
        assert static_value(tf.concat([c, c], 1)).tolist() == np.concatenate([
            np.arange(12).reshape(3, 4)] * 2, 1).tolist()
        assert static_value(tf.stack([c[0, 1], 5, c[2, 3]])).tolist() == [1, 5, 11]
        assert static_value(tf.slice(c, [1, 1], [1, -1])).tolist() == [[5, 6, 7]]
        assert static_value(c[::-1, 2]).tolist() == [10, 6, 2]
        assert static_value(tf.gather(c, [2, 0], axis=1)).tolist() == [[2, 0], [6, 4], [10, 8]]
        assert static_value(tf.unstack(c)[1]).tolist() == [4, 5, 6, 7]
        assert static_value(tf.gather(c, [5])) is None  # out of range: left to the kernel
        assert static_value(tf.stack([n, 2])) is None
        assert static_value(c[n]) is None
        # A shape function sees a slice of constants: the size is static.
        x = tf.placeholder(tf.float32, [None, 6])
        assert tf.slice(x, [0, c[0, 1]], [-1, c[1, 0]]).shape.as_list() == [None, 4]


def test_static_value_of_partial_shape_slices():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, 3, 5])
        assert static_value(tf.shape(p)[1]) == 3
        assert static_value(tf.shape(p)[0]) is None
        assert static_value(tf.shape(p)[1:]).tolist() == [3, 5]
        flat = tf.reshape(p, tf.stack([tf.shape(p)[0], -1]))
        assert flat.shape.as_list() == [None, None]  # TF too: an unknown and a -1 entry
        rows = tf.reshape(p, [-1, tf.shape(p)[1] * 5])
        assert rows.shape.as_list() == [None, 15]


# --- behaviour details ------------------------------------------------------------------------
def test_strided_slice_kernel_cache_follows_fed_indices():
    with tf.Graph().as_default():
        arr = np.arange(24).reshape(2, 3, 4)
        i = tf.placeholder(tf.int32, [])
        j = tf.placeholder(tf.int32, [])
        out = tf.constant(arr)[i, j:, ::-1]
        with tf.Session() as sess:
            for a, b in [(0, 0), (1, 2), (-1, -2), (0, 0), (1, 5)]:
                np.testing.assert_array_equal(sess.run(out, {i: a, j: b}), arr[a, b:, ::-1])


def test_slicing_kernels_return_views():
    for op in ("StridedSlice", "Slice", "Split", "SplitV", "Unpack"):
        assert find_kernel(op, "CPU", {}).returns_view, op
    for op in ("ConcatV2", "Pack", "GatherV2"):
        assert not find_kernel(op, "CPU", {}).returns_view, op


def test_int64_tensor_index_promotes_the_whole_spec():
    with tf.Graph().as_default():
        x = tf.constant(np.arange(6).reshape(2, 3))
        k = tf.placeholder(tf.int64, [])
        y = x[1, k:]
        assert y.op.get_attr("Index") == tf.int64
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {k: 1}), [4, 5])


# TF merges the dims before and after the axis as two running subshapes; a clash names its
# index in that subshape and prints the two subshapes (texts from TF 2.21).
@pytest.mark.parametrize("build,reason", [
    (lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([3, 3])], 1),
     "Dimension 0 in both shapes must be equal, but are 2 and 3. Shapes are [2] and [3]."),
    (lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([3, 4])], 0),
     "Dimension 0 in both shapes must be equal, but are 3 and 4. Shapes are [3] and [4]."),
    (lambda: tf.concat([tf.zeros([2, 3, 4]), tf.zeros([2, 5, 4])], 2),
     "Dimension 1 in both shapes must be equal, but are 3 and 5. Shapes are [2,3] and [2,5]."),
    (lambda: tf.concat([tf.zeros([2, 3, 4, 5]), tf.zeros([2, 3, 4, 6])], 1),
     "Dimension 1 in both shapes must be equal, but are 5 and 6. Shapes are [4,5] and [4,6]."),
    (lambda: tf.concat([tf.placeholder(tf.float32, [None, 3, None]), tf.zeros([2, 3, 5]),
                        tf.zeros([3, 3, 4])], 1),
     "Dimension 0 in both shapes must be equal, but are 2 and 3. Shapes are [2] and [3]."),
])
def test_concat_mismatch_reason_matches_tf(build, reason):
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            build()
    assert str(info.value).startswith(reason + " for '{{node concat}} = ConcatV2[")


def test_one_hot_keeps_python_indices_int32_like_tf():
    """TI defaults to int64, but TF keeps the plain conversion when its dtype is allowed."""
    with tf.Graph().as_default():
        y = tf.one_hot([1, 2], 3)
        y64 = tf.one_hot(tf.constant([1, 2], tf.int64), 3)
        empty = tf.one_hot([], 3)   # float32 is not allowed: TF converts again, as int64
        assert y.op.get_attr("TI") == tf.int32 and y64.op.get_attr("TI") == tf.int64
        assert empty.op.get_attr("TI") == tf.int64
        assert [t.op.name for t in empty.op.inputs][:1] == ["one_hot_2/indices_1"]
        assert y.dtype == tf.float32 and y.shape.as_list() == [2, 3]
        with tf.Session() as sess:
            got, got64 = sess.run([y, y64])
    np.testing.assert_array_equal(got, np.eye(3, dtype=np.float32)[[1, 2]])
    np.testing.assert_array_equal(got64, got)


def test_gather_nd_and_scatter_nd_carry_bad_indices_policy():
    with tf.Graph().as_default():
        ops = [tf.scatter_nd([[0]], [1.0], [2]).op, tf.gather_nd(_zeros(2), [[0]]).op]
    for op in ops:
        assert op.get_attr("bad_indices_policy") == b""
        assert op.node_def.attr["bad_indices_policy"].s == b""


def test_concat_of_one_tensor_is_an_identity():
    with tf.Graph().as_default():
        x = _zeros(2)
        y = tf.concat([x], 0)
        assert y.op.type == "Identity" and y.name == "concat/concat:0"


def test_sequence_mask():
    with tf.Graph().as_default():
        given = tf.sequence_mask([1, 3], 4)
        default = tf.sequence_mask(tf.constant([[0, 2], [1, -1]]))
        floats = tf.sequence_mask([2], 3, dtype=tf.float32)
        assert given.dtype == tf.bool and given.shape.as_list() == [2, 4]
        assert default.shape.as_list() == [2, 2, 2]  # max(lengths) folds statically, as in TF
        assert floats.dtype == tf.float32
        with pytest.raises(ValueError, match="must be scalar"):
            tf.sequence_mask([1], [3])
        with tf.Session() as sess:
            g, d, f = sess.run([given, default, floats])
    np.testing.assert_array_equal(g, [[1, 0, 0, 0], [1, 1, 1, 0]])
    np.testing.assert_array_equal(d, [[[0, 0], [1, 1]], [[1, 0], [0, 0]]])
    np.testing.assert_array_equal(f, [[1.0, 1.0, 0.0]])


def test_boolean_mask_with_2d_mask():
    with tf.Graph().as_default():
        x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        mask = np.array([[True, False, True], [False, False, True]])
        out = tf.boolean_mask(tf.constant(x), mask)
        assert out.shape.as_list() == [None, 4]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), x[mask])
