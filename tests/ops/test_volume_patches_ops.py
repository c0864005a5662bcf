"""ExtractVolumePatches (tf.extract_volume_patches): forward against a tap-by-tap slicing
reference, shape function against the kernel, the gradient against central differences and
TensorFlow 2.21's sums, TF's errors and error types (checked with run_with_tf)."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, case_tests

REAL = (tf.float32, tf.float64, tf.int32, tf.int64, tf.uint8, tf.float16)


def _voxels(*shape):
    return lambda rng, dt: (np.arange(np.prod(shape)).reshape(shape) % 100).astype(dt)


def _patches_ref(ksize, stride, padding):
    """Tap (p, r, c) of every window, read with one strided slice of the padded volume."""
    def ref(x):
        spatial = x.shape[1:4]
        if padding == "VALID":
            out = [max(0, (size - k) // s + 1) for size, k, s in zip(spatial, ksize, stride)]
            pads = [(0, 0)] * 3
        else:
            out = [-(-size // s) for size, s in zip(spatial, stride)]
            total = [max(0, (o - 1) * s + k - size) for o, s, k, size in
                     zip(out, stride, ksize, spatial)]
            pads = [(t // 2, t - t // 2) for t in total]
        padded = np.pad(x, [(0, 0), *pads, (0, 0)])
        depth = x.shape[4]
        result = np.zeros((x.shape[0], *out, np.prod(ksize) * depth), x.dtype)
        for tap, (p, r, c) in enumerate(itertools.product(*map(range, ksize))):
            view = padded[:, p::stride[0], r::stride[1], c::stride[2]]
            result[..., tap * depth:(tap + 1) * depth] = view[:, :out[0], :out[1], :out[2]]
        return result
    return ref


def _case(name, shape, ksize, stride, padding, **kwargs):
    def build(x):
        return tf.extract_volume_patches(x, [1, *ksize, 1], [1, *stride, 1], padding)
    return OpCase(name, build, _patches_ref(ksize, stride, padding), [_voxels(*shape)],
                  **kwargs)


CASES = [
    _case("volume_valid", (2, 4, 5, 6, 2), (2, 3, 2), (2, 1, 3), "VALID", dtypes=REAL),
    _case("volume_same_strided", (1, 4, 5, 6, 2), (2, 3, 2), (2, 1, 3), "SAME"),
    _case("volume_same_window_past_edges", (1, 2, 3, 2, 1), (3, 4, 3), (1, 2, 1), "SAME"),
    _case("volume_1x1x1", (2, 3, 4, 4, 3), (1, 1, 1), (2, 3, 3), "VALID", dtypes=REAL),
    _case("volume_window_is_input", (1, 3, 2, 4, 2), (3, 2, 4), (1, 1, 1), "VALID"),
    # TensorFlow's gradient construction fails for an empty batch: see below.
    _case("volume_empty_batch", (0, 3, 3, 3, 2), (2, 2, 2), (1, 1, 1), "VALID", grad=False),
    _case("volume_no_channels", (1, 3, 3, 3, 0), (2, 2, 2), (1, 1, 1), "SAME"),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _patches(x, ksizes=(1, 2, 2, 2, 1), strides=(1, 1, 1, 1, 1), padding="VALID", name=None):
    return tf.extract_volume_patches(x, list(ksizes), list(strides), padding, name=name)


def test_op_type_name_and_static_shapes():
    """TF's shape function returns rank 4 when a spatial size is unknown (a TensorFlow bug):
    tensorweave keeps rank 5, with the batch and depth it knows."""
    with tf.Graph().as_default():
        made = [
            (_patches(tf.placeholder(tf.float32, [2, 5, 6, 7, 3]), (1, 2, 3, 2, 1),
                      (1, 2, 1, 3, 1)), [2, 2, 4, 2, 36]),
            (_patches(tf.placeholder(tf.float32, [2, 5, 6, 7, 3]), (1, 2, 3, 2, 1),
                      (1, 2, 1, 3, 1), "SAME"), [2, 3, 6, 3, 36]),
            (_patches(tf.placeholder(tf.float32, [None, 4, 5, 6, 3])), [None, 3, 4, 5, 24]),
            (_patches(tf.placeholder(tf.float32, [2, 4, 5, 6, None])), [2, 3, 4, 5, None]),
            (_patches(tf.placeholder(tf.float32, [2, None, 5, 6, 3])), [2, None, None, None, 24]),
            (_patches(tf.placeholder(tf.float32)), [None] * 5),
        ]
        for tensor, shape in made:
            assert tensor.op.type == "ExtractVolumePatches"
            assert tensor.shape.as_list() == shape
        assert made[0][0].op.name == "ExtractVolumePatches"
        assert made[0][0].op.get_attr("strides") == [1, 2, 1, 3, 1]
        assert _patches(tf.zeros([1, 3, 3, 3, 1]), name="vp").op.name == "vp"


def test_gradient_matches_tensorflow():
    """TF 2.21's gradient, for a weighting of the patches: each voxel's gradient sums the
    weights of the entries that copied it (here: how many windows hold the voxel)."""
    with tf.Graph().as_default():
        x = tf.constant(np.zeros((1, 3, 4, 4, 2), np.float32))
        grad = tf.gradients(_patches(x, strides=(1, 1, 2, 1, 1), padding="SAME"), x)[0]
        types = {op.type for op in tf.get_default_graph().get_operations()}
        assert {"UnsortedSegmentSum", "ExtractVolumePatches", "Range"} <= types
        with tf.Session() as sess:
            got = sess.run(grad)
    # Per axis, how many windows cover each index: planes (k2, s1, SAME pad after 1),
    # rows (k2, s2: windows at 0 and 2), cols (k2, s1, pad after 1).
    planes, rows, cols = np.array([1, 2, 2]), np.array([1, 1, 1, 1]), np.array([1, 2, 2, 2])
    expected = planes[:, None, None] * rows[None, :, None] * cols[None, None, :]
    np.testing.assert_array_equal(got[0, ..., 0], expected)
    np.testing.assert_array_equal(got[0, ..., 1], expected)


def test_gradient_of_an_empty_batch_fails_as_in_tensorflow():
    """TF reshapes the gradient to [-1, batch * channels] = [-1, 0] and fails (its message is
    SparseTensorDenseMatMul's; here the same mismatch is UnsortedSegmentSum's)."""
    with tf.Graph().as_default():
        x = tf.constant(np.ones((0, 3, 3, 3, 2), np.float32))
        grad = tf.gradients(_patches(x), x)[0]
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"does not start with segment_ids.shape = \[64\]"):
                sess.run(grad)


@pytest.mark.parametrize("build,exc,match", [
    (lambda x: _patches(x, ksizes=(1, 2, 3, 2)), ValueError,
     "Attr 'ksizes' of 'ExtractVolumePatches' Op passed list of length 4 less than minimum 5."),
    (lambda x: _patches(x, strides=(1, 2, 1, 3)), ValueError,
     "Attr 'strides' of 'ExtractVolumePatches' Op passed list of length 4 less than minimum 5."),
    (lambda x: _patches(x, ksizes=(1, 2, 3, 2, 1, 1)), ValueError,
     "ExtractVolumePatches requires the ksizes attribute to contain 5 values, but got: 6"),
    (lambda x: _patches(x, strides=(1, 2, 1, 3, 1, 1)), ValueError,
     "ExtractVolumePatches requires the stride attribute to contain 5 values, but got: 6"),
    (lambda x: _patches(x, strides=(1, 0, 1, 3, 1)), ValueError,
     "Stride must be > 0, but got 0"),
    (lambda x: _patches(x, ksizes=(1, 9, 3, 2, 1), strides=(1, 2, 1, 3, 1)), ValueError,
     r"Computed output size would be negative: -1 \[input_size: 5, effective_filter_size: 9, "
     r"stride: 2\]"),
    (lambda x: _patches(x, ksizes=(1, -1, 3, 2, 1)), ValueError,
     "Negative dimension size caused by overflow when multiplying 3 and -6"),
    (lambda x: _patches(x, padding="FULL"), ValueError,
     "Attr 'padding' of 'ExtractVolumePatches' Op passed string 'FULL' not in: \"SAME\", "
     "\"VALID\"."),
    (lambda x: _patches(x[0]), ValueError,
     r"Shape must be rank 5 but is rank 4 for '{{node ExtractVolumePatches}} = "
     r"ExtractVolumePatches\[T=DT_FLOAT"),
    (lambda x: tf.extract_volume_patches(x, tf.constant([1, 2, 2, 2, 1]), [1] * 5, "VALID"),
     TypeError, "Expected list for 'ksizes' argument to 'extract_volume_patches' Op"),
    (lambda x: _patches(x, ksizes=(1, tf.constant(2), 2, 2, 1)), TypeError,
     "Expected int for argument 'ksizes' not <tf.Tensor"),
    (lambda x: _patches(tf.cast(x, tf.complex64)), TypeError,
     "Value passed to parameter 'input' has DataType complex64 not in list of allowed values"),
    (lambda x: _patches(tf.cast(x, tf.bool)), TypeError, "DataType bool not in list"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build(tf.constant(np.zeros((2, 5, 6, 7, 3), np.float32)))


@pytest.mark.parametrize("ksizes,strides,feed,exc,match", [
    ((2, 2, 3, 2, 1), (1, 2, 1, 3, 1), (2, 5, 6, 7, 3), tf.errors.UnimplementedError,
     "Only support ksizes across space."),
    ((1, 2, 3, 2, 2), (1, 2, 1, 3, 1), (2, 5, 6, 7, 3), tf.errors.UnimplementedError,
     "Only support ksizes across space."),
    ((1, 2, 3, 2, 1), (2, 2, 1, 3, 1), (2, 5, 6, 7, 3), tf.errors.UnimplementedError,
     "Only support strides across space."),
    ((1, 0, 3, 2, 1), (1, 2, 1, 3, 1), (2, 5, 6, 7, 3), tf.errors.OutOfRangeError,
     "ksizes is out of range."),
    ((1, 2, 3, 2, 1), (1, 2, 1, 3, 1), (2, 5, 6, 7), tf.errors.InvalidArgumentError,
     r"input must be 5-dimensional\[2,5,6,7\]"),
    ((1, 9, 3, 2, 1), (1, 2, 1, 3, 1), (2, 5, 6, 7, 3), tf.errors.InvalidArgumentError,
     r"Computed output size would be negative: -1 \[input_size: 5, effective_filter_size: 9"),
])
def test_runtime_errors(ksizes, strides, feed, exc, match):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        y = _patches(x, ksizes, strides)
        with tf.Session() as sess:
            with pytest.raises(exc, match=match):
                sess.run(y, {x: np.zeros(feed, np.float32)})
