"""ExtractImagePatches (tf.extract_image_patches): forward against a tap-by-tap slicing
reference, the shape function against the kernel, the gradient (TensorFlow's construction)
against central differences, TensorFlow 2.21's errors and error types (checked with
run_with_tf)."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import image_patches_ops
from tensorweave.testing.op_case import OpCase, case_tests

REAL = (tf.float32, tf.float64, tf.int32, tf.int64, tf.uint8, tf.float16)


def _pixels(*shape):
    return lambda rng, dt: (np.arange(np.prod(shape)).reshape(shape) % 100).astype(dt)


def _patches_ref(ksize, stride, rate, padding):
    """Tap (i, j) of every window, read with one strided slice of the padded image."""
    def ref(x):
        n, h, w, c = x.shape
        spans = [(k - 1) * r + 1 for k, r in zip(ksize, rate)]
        if padding == "VALID":
            out = [max(0, (size - span) // s + 1) for size, span, s in zip((h, w), spans, stride)]
            pads = [(0, 0), (0, 0)]
        else:
            out = [-(-size // s) for size, s in zip((h, w), stride)]
            total = [max(0, (o - 1) * s + span - size) for o, s, span, size in
                     zip(out, stride, spans, (h, w))]
            pads = [(t // 2, t - t // 2) for t in total]
        padded = np.pad(x, [(0, 0), *pads, (0, 0)])
        result = np.zeros((n, *out, ksize[0] * ksize[1] * c), x.dtype)
        for i, j in itertools.product(range(ksize[0]), range(ksize[1])):
            tap = padded[:, i * rate[0]::stride[0], j * rate[1]::stride[1]][:, :out[0], :out[1]]
            result[..., (i * ksize[1] + j) * c:(i * ksize[1] + j + 1) * c] = tap
        return result
    return ref


def _case(name, shape, ksize, stride, rate, padding, **kwargs):
    def build(x):
        return tf.extract_image_patches(x, [1, *ksize, 1], [1, *stride, 1], [1, *rate, 1],
                                        padding)
    return OpCase(name, build, _patches_ref(ksize, stride, rate, padding), [_pixels(*shape)],
                  **kwargs)


CASES = [
    _case("patches_valid", (2, 5, 6, 2), (2, 3), (2, 1), (1, 1), "VALID", dtypes=REAL),
    _case("patches_same_strided_dilated", (1, 5, 6, 2), (2, 3), (2, 2), (2, 1), "SAME"),
    _case("patches_same_wide_rate", (1, 2, 2, 1), (3, 3), (1, 1), (2, 2), "SAME"),
    _case("patches_1x1", (2, 4, 4, 3), (1, 1), (3, 3), (1, 1), "SAME", dtypes=REAL),
    _case("patches_larger_than_image", (1, 5, 6, 2), (6, 3), (2, 1), (1, 1), "VALID"),
    # TensorFlow's gradient construction fails for an empty batch: see the test below.
    _case("patches_empty_batch", (0, 3, 3, 2), (2, 2), (1, 1), (1, 1), "VALID", grad=False),
    _case("patches_no_channels", (1, 3, 3, 0), (2, 2), (1, 1), (1, 1), "SAME"),
    OpCase("patches_complex", lambda x: tf.extract_image_patches(
        x, [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"),
        _patches_ref((2, 2), (1, 1), (1, 1), "VALID"),
        [lambda rng, dt: (np.arange(12) * (1 + 2j)).reshape(1, 3, 2, 2)],
        dtypes=(tf.complex64, tf.complex128), grad=False),
    OpCase("extract_patches", lambda x: image_patches_ops.extract_patches(
        x, [1, 3, 1, 1], [1, 2, 1, 1], [1, 1, 1, 1], "VALID"),
        _patches_ref((3, 1), (2, 1), (1, 1), "VALID"), [_pixels(2, 5, 2, 3)]),
    OpCase("image_extract_patches_sizes", lambda x: tf.extract_image_patches(
        x, sizes=[1, 2, 2, 1], strides=[1, 1, 2, 1], rates=[1, 1, 1, 1], padding="SAME"),
        _patches_ref((2, 2), (1, 2), (1, 1), "SAME"), [_pixels(1, 3, 4, 1)]),
]

test_forward, test_shapes, test_gradient = case_tests(CASES, gradients=True)


def _patches(x, ksizes=(1, 2, 2, 1), strides=(1, 1, 1, 1), rates=(1, 1, 1, 1), padding="VALID"):
    return tf.extract_image_patches(x, list(ksizes), list(strides), list(rates), padding)


def test_op_type_name_and_static_shapes():
    with tf.Graph().as_default():
        made = [
            (_patches(tf.placeholder(tf.float32, [None, 5, None, 2]), (1, 2, 3, 1),
                      (1, 2, 1, 1)), [None, None, None, 12]),
            (_patches(tf.placeholder(tf.float32, [3, 5, 6, None]), (1, 2, 3, 1),
                      (1, 2, 2, 1), (1, 2, 1, 1), "SAME"), [3, 3, 3, None]),
            (_patches(tf.placeholder(tf.float32, [1, 5, 6, 2]), (1, 2, 3, 1)), [1, 4, 4, 12]),
            (_patches(tf.placeholder(tf.float32)), [None] * 4),
        ]
        for tensor, shape in made:
            assert tensor.op.type == "ExtractImagePatches"
            assert tensor.shape.as_list() == shape
        assert made[0][0].op.name == "ExtractImagePatches"
        assert made[1][0].op.get_attr("rates") == [1, 2, 1, 1]
        # Constant tensors inside the lists are read, as TF's _get_int_list_attr does.
        k = tf.constant(2)
        assert _patches(tf.zeros([1, 4, 4, 1]), (1, k, k, 1)).shape.as_list() == [1, 3, 3, 4]


def test_gradient_sums_the_copies_of_each_pixel():
    """Each input pixel's gradient counts the windows that copied it (TF's numbers)."""
    with tf.Graph().as_default():
        x = tf.constant(np.zeros((1, 5, 6, 2), np.float32))
        grad = tf.gradients(_patches(x, padding="SAME"), x)[0]
        types = {op.type for op in tf.get_default_graph().get_operations()}
        assert {"UnsortedSegmentSum", "ExtractImagePatches", "Range"} <= types
        with tf.Session() as sess:
            got = sess.run(grad)
    expected = np.full((5, 6), 4.0, np.float32)
    expected[0, :], expected[:, 0] = 2.0, 2.0
    expected[0, 0] = 1.0
    np.testing.assert_array_equal(got[0, :, :, 0], expected)
    np.testing.assert_array_equal(got[0, :, :, 1], expected)


def test_gradient_of_an_empty_batch_fails_as_in_tensorflow():
    """TF's construction reshapes the gradient to [-1, batch * channels] = [-1, 0], whose
    rows no longer match the pixel ids: the same UnsortedSegmentSum error as TensorFlow's."""
    with tf.Graph().as_default():
        x = tf.constant(np.ones((0, 3, 3, 2), np.float32))
        grad = tf.gradients(_patches(x), x)[0]
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"data.shape = \[32,0\] does not start with "
                                     r"segment_ids.shape = \[16\]"):
                sess.run(grad)


@pytest.mark.parametrize("build,exc,match", [
    (lambda x: _patches(x, ksizes=(1, 2, 3)), ValueError,
     "Attr 'ksizes' of 'ExtractImagePatches' Op passed list of length 3 less than minimum 4."),
    (lambda x: _patches(x, strides=(1, 2, 1)), ValueError,
     "Attr 'strides' of 'ExtractImagePatches' Op passed list of length 3 less than minimum 4."),
    (lambda x: _patches(x, ksizes=(1, 2, 3, 1, 1)), ValueError,
     "ExtractImagePatches requires the ksizes attribute to contain 4 values, but got: 5"),
    (lambda x: _patches(x, rates=(1, 1, 1, 1, 1)), ValueError,
     "ExtractImagePatches requires the rates attribute to contain 4 values, but got: 5"),
    (lambda x: _patches(x, strides=(1, 0, 1, 1)), ValueError, "Stride must be > 0, but got 0"),
    (lambda x: _patches(x, ksizes=(1, 10, 3, 1), strides=(1, 2, 1, 1)), ValueError,
     r"Computed output size would be negative: -1 \[input_size: 5, effective_filter_size: 10, "
     r"stride: 2\]"),
    (lambda x: _patches(x, ksizes=(1, -1, 3, 1)), ValueError,
     "Negative dimension size caused by overflow when multiplying 2 and -3"),
    (lambda x: _patches(x, padding="FULL"), ValueError,
     "Attr 'padding' of 'ExtractImagePatches' Op passed string 'FULL' not in: \"SAME\", "
     "\"VALID\"."),
    (lambda x: _patches(x[0]), ValueError, "Shape must be rank 4 but is rank 3"),
    (lambda x: tf.extract_image_patches(x, tf.constant([1, 2, 2, 1]), [1] * 4, [1] * 4,
                                        "VALID"), TypeError,
     "Expected list for 'ksizes' argument to 'extract_image_patches' Op"),
    (lambda x: _patches(x, ksizes=(1, tf.placeholder(tf.int32), 2, 1)), TypeError,
     "'sizes' must contain compile-time constant values"),
    (lambda x: tf.extract_image_patches(x, [1] * 4, [1] * 4, [1] * 4, "VALID",
                                        sizes=[1] * 4), ValueError, "Cannot specify both"),
])
def test_construction_errors(build, exc, match):
    with tf.Graph().as_default():
        with pytest.raises(exc, match=match):
            build(tf.constant(np.zeros((1, 5, 6, 2), np.float32)))


@pytest.mark.parametrize("ksizes,strides,rates,feed,exc,match", [
    ((2, 2, 3, 1), (1, 2, 1, 1), (1, 1, 1, 1), (1, 5, 6, 2), tf.errors.UnimplementedError,
     "Only support ksizes across space."),
    ((1, 2, 3, 1), (1, 2, 1, 2), (1, 1, 1, 1), (1, 5, 6, 2), tf.errors.UnimplementedError,
     "Only support strides across space."),
    ((1, 2, 3, 1), (1, 1, 1, 1), (2, 1, 1, 1), (1, 5, 6, 2), tf.errors.UnimplementedError,
     "Only support rates across space."),
    ((1, 0, 3, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 5, 6, 2), tf.errors.OutOfRangeError,
     "ksizes is out of range."),
    ((1, 1, 3, 1), (1, 1, 1, 1), (1, 0, 1, 1), (1, 5, 6, 2), tf.errors.OutOfRangeError,
     "rates is out of range."),
    ((1, 10, 3, 1), (1, 2, 1, 1), (1, 1, 1, 1), (1, 5, 6, 2), tf.errors.InvalidArgumentError,
     r"Computed output size would be negative: -1 \[input_size: 5"),
    ((1, 2, 2, 1), (1, 1, 1, 1), (1, 1, 1, 1), (5, 6, 2), tf.errors.InvalidArgumentError,
     r"input must be 4-dimensional\[5,6,2\]"),
])
def test_runtime_errors(ksizes, strides, rates, feed, exc, match):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        y = _patches(x, ksizes, strides, rates)
        with tf.Session() as sess:
            with pytest.raises(exc, match=match):
                sess.run(y, {x: np.zeros(feed, np.float32)})
