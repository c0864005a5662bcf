"""Summary ops and tf.summary wrappers: Summary protos, names and tags, errors.

Expected pixels, samples, histograms, names and messages were recorded from TensorFlow 2.21
(compat.v1 graph mode).
"""
import bisect
import io
import logging
import struct
import sys
import zlib

import numpy as np
import pytest
from PIL import Image

import tensorweave as tf
from tensorweave.framework.apply_op import apply_op
from tensorweave.kernels.png_writer import encode as encode_png
from tensorweave.ops import summary_ops as S
from tensorweave.testing.op_case import OpCase, case_tests

STR = tf.string


def _s(*values):
    """A string array (the value of a string tensor)."""
    arr = np.empty(len(values), dtype=object)
    arr[:] = [v.encode() if isinstance(v, str) else v for v in values]
    return arr


def _tag(tag):
    return np.array(tag.encode(), dtype=object)


def _out(summary):
    return np.array(summary.SerializeToString(), dtype=object)


def _fixed(value):
    return lambda rng, dt: np.asarray(value).astype(dt)


# --- references ---------------------------------------------------------------------------
def _scalar_ref(tags, values):
    summary = tf.Summary()
    for tag, value in zip(np.ravel(tags), np.ravel(values)):
        summary.value.add(tag=tag.decode(), simple_value=float(value))
    return _out(summary)


def _histogram_ref(tag, values):
    """TF's histogram, written out as a plain loop over TF's bucket limits."""
    limits, v = [], 1e-12
    while v < 1e20:
        limits.append(v)
        v *= 1.1
    limits = [-x for x in reversed(limits + [sys.float_info.max])] + [0.0] + \
        limits + [sys.float_info.max]
    counts = [0.0] * len(limits)
    flat = [float(x) for x in np.ravel(values)]
    for x in flat:
        counts[min(bisect.bisect_right(limits, x), len(limits) - 1)] += 1
    histo = tf.HistogramProto(min=min(flat), max=max(flat), num=len(flat), sum=0.0,
                              sum_squares=0.0)
    for x in flat:
        histo.sum += x
        histo.sum_squares += x * x
    i = 0
    while i < len(counts):
        end, count = limits[i], counts[i]
        i += 1
        if count == 0:
            while i < len(counts) and counts[i] == 0:
                end = limits[i]
                i += 1
        histo.bucket_limit.append(end)
        histo.bucket.append(count)
    summary = tf.Summary()
    summary.value.add(tag=tag[()].decode()).histo.CopyFrom(histo)
    return _out(summary)


def _image_ref(expected_pixels, max_images=3):
    def ref(tag, images):
        summary = tf.Summary()
        for i, pixels in enumerate(expected_pixels):
            name = f"{tag[()].decode()}/image/{i}" if max_images > 1 else \
                f"{tag[()].decode()}/image"
            value = summary.value.add(tag=name)
            value.image.height, value.image.width = images.shape[1:3]
            value.image.colorspace = images.shape[3]
            value.image.encoded_image_string = encode_png(np.asarray(pixels, np.uint8))
        return _out(summary)
    return ref


def _wav(samples, rate, channels):
    """A 16-bit PCM WAV file, header written out field by field."""
    data = np.asarray(samples, "<i2").tobytes()
    header = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack(
        "<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, channels * 2, 16)
    return header + b"data" + struct.pack("<I", len(data)) + data


def _audio_ref(expected, rate, max_outputs):
    def ref(tag, clips, sample_rate):
        summary = tf.Summary()
        for i, samples in enumerate(expected):
            name = f"{tag[()].decode()}/audio" + (f"/{i}" if max_outputs > 1 else "")
            value = summary.value.add(tag=name)
            value.audio.sample_rate = rate
            value.audio.num_channels = 1 if clips.ndim == 2 else clips.shape[2]
            value.audio.length_frames = clips.shape[1]
            value.audio.content_type = "audio/wav"
            value.audio.encoded_audio_string = _wav(samples, int(rate),
                                                    value.audio.num_channels)
        return _out(summary)
    return ref


def _tensor_ref(tag, tensor, metadata):
    summary = tf.Summary()
    value = summary.value.add(tag=tag[()].decode())
    value.metadata.ParseFromString(bytes(metadata[()]))
    value.metadata.SetInParent()
    proto = value.tensor
    proto.dtype = tf.as_dtype(tensor.dtype if tensor.dtype != object else tf.string)\
        .as_datatype_enum
    for d in tensor.shape:
        proto.tensor_shape.dim.add(size=d)
    if tensor.dtype == object:
        proto.string_val.extend(tensor.ravel().tolist())
    else:
        proto.tensor_content = tensor.astype(tensor.dtype.newbyteorder("<")).tobytes()
    return _out(summary)


def _merge_ref(*inputs):
    merged = tf.Summary()
    for item in inputs:
        for serialized in np.ravel(item):
            merged.MergeFromString(serialized)
    return _out(merged)


def _summary_bytes(**tag_values):
    return tf.Summary(value=[tf.Summary.Value(tag=t, simple_value=v)
                             for t, v in tag_values.items()]).SerializeToString()


_METADATA = np.array(S.summary_pb2.SummaryMetadata(summary_description="d").SerializeToString(),
                     dtype=object)
_PLUGIN = S.summary_pb2.SummaryMetadata(
    plugin_data=S.summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))

# --- images recorded from TF ----------------------------------------------------------------
_GRAY = [[[[0.1], [0.5]], [[0.2], [0.3]]]]
_SIGNED = [[[[-0.1], [0.5]], [[0.2], [-0.3]]], [[[-1.0], [-0.5]], [[-0.2], [0.0]]]]
_BAD = [[[[np.nan], [0.5]], [[np.inf], [0.25]]], [[[0.0], [0.0]], [[0.0], [0.0]]]]
_RGB = [[[[0.1, 0.2, 0.3], [0.5, 0.6, 0.7]]]]
_RGBA = [[[[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]]]
_AUDIO = [[0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 0.25, 1e-5, -0.00002]]
_AUDIO_PCM = [[0, 16384, -16384, 32767, -32768, 32767, -32768, 8192, 0, -1]]

CASES = [
    OpCase("scalar_summary", lambda t, v: apply_op(S.ScalarSummary, [t, v]), _scalar_ref,
           [_s("a", "b/c"), lambda rng, dt: (rng.randn(2) * 10).astype(dt)],
           fixed_dtypes=(STR,), grad=False,
           dtypes=(tf.float32, tf.float64, tf.float16, tf.int32, tf.int64, tf.uint8)),
    OpCase("scalar_summary_scalar", lambda t, v: apply_op(S.ScalarSummary, [t, v]),
           _scalar_ref, [_tag("loss"), _fixed(2.5)], fixed_dtypes=(STR,), grad=False,
           dtypes=(tf.float32, tf.int64)),
    OpCase("histogram_summary", lambda t, v: apply_op(S.HistogramSummary, [t, v]),
           _histogram_ref, [_tag("w"), lambda rng, dt: (rng.randn(40, 3) * 4).astype(dt)],
           fixed_dtypes=(STR,), grad=False,
           dtypes=(tf.float32, tf.float64, tf.float16, tf.int32, tf.int64)),
    OpCase("histogram_summary_edges", lambda t, v: apply_op(S.HistogramSummary, [t, v]),
           _histogram_ref, [_tag("e"), _fixed([0.0, -0.0, 1e-13, -1e-13, 1e25, -1e30, 1.1])],
           fixed_dtypes=(STR,), grad=False, dtypes=(tf.float64,)),
    OpCase("image_summary_uint8", lambda t, x: apply_op(S.ImageSummary, [t, x]),
           lambda t, x: _image_ref(x[:3])(t, x),
           [_tag("im"), lambda rng, dt: rng.randint(0, 256, (4, 3, 5, 3)).astype(dt)],
           fixed_dtypes=(STR,), grad=False, dtypes=(tf.uint8,)),
    OpCase("image_summary_gray", lambda t, x: apply_op(S.ImageSummary, [t, x]),
           _image_ref([[[[51], [255]], [[102], [153]]]]), [_tag("g"), _fixed(_GRAY)],
           fixed_dtypes=(STR,), grad=False, dtypes=(tf.float32, tf.float64)),
    OpCase("image_summary_signed",
           lambda t, x: apply_op(S.ImageSummary, [t, x], {"max_images": 1}),
           _image_ref([[[[102], [255]], [[178], [51]]]], max_images=1),
           [_tag("s"), _fixed(_SIGNED)], fixed_dtypes=(STR,), grad=False),
    OpCase("image_summary_nonfinite", lambda t, x: apply_op(S.ImageSummary, [t, x]),
           _image_ref([[[[255], [255]], [[255], [127]]], np.zeros((2, 2, 1))]),
           [_tag("n"), _fixed(_BAD)], fixed_dtypes=(STR,), grad=False,
           dtypes=(tf.float32, tf.float16)),
    OpCase("image_summary_rgb", lambda t, x: apply_op(S.ImageSummary, [t, x]),
           _image_ref([[[[36, 72, 109], [182, 218, 254]]]]), [_tag("c"), _fixed(_RGB)],
           fixed_dtypes=(STR,), grad=False),
    OpCase("image_summary_rgba", lambda t, x: apply_op(S.ImageSummary, [t, x]),
           _image_ref([[[[31, 63, 95, 127], [159, 191, 223, 255]]]]), [_tag("c"), _fixed(_RGBA)],
           fixed_dtypes=(STR,), grad=False, dtypes=(tf.float64,)),
    OpCase("audio_summary",
           lambda t, x, r: apply_op(S.AudioSummaryV2, [t, x, r], {"max_outputs": 1}),
           _audio_ref(_AUDIO_PCM, 100.0, 1), [_tag("a"), _fixed(_AUDIO), _fixed(100.0)],
           fixed_dtypes=(STR,), grad=False),
    OpCase("audio_summary_stereo", lambda t, x, r: apply_op(S.AudioSummaryV2, [t, x, r]),
           _audio_ref([[0, 0, 16384, -16384]] * 2, 8000.0, 3),
           [_tag("st"), _fixed([[[0.0, 0.0], [0.5, -0.5]]] * 2), _fixed(8000.0)],
           fixed_dtypes=(STR,), grad=False),
    OpCase("tensor_summary_v2", lambda t, x, m: apply_op(S.TensorSummaryV2, [t, x, m]),
           _tensor_ref, [_tag("t"), lambda rng, dt: (rng.randn(2, 3) * 5).astype(dt),
                         _METADATA], fixed_dtypes=(STR, None, STR), grad=False,
           dtypes=(tf.float32, tf.float64, tf.int32, tf.int64, tf.bool)),
    OpCase("tensor_summary_v2_text", lambda t, x, m: apply_op(S.TensorSummaryV2, [t, x, m]),
           _tensor_ref, [_tag("note"), _s("hello *world*", "é"),
                         np.array(_PLUGIN.SerializeToString(), dtype=object)],
           fixed_dtypes=(STR, STR, STR), grad=False, dtypes=(tf.string,)),
    OpCase("merge_summary", lambda a, b: apply_op(S.MergeSummary, [[a, b]]), _merge_ref,
           [np.array(_summary_bytes(x=1.0, y=2.0), dtype=object),
            _s(_summary_bytes(z=3.0), b"", _summary_bytes(w=4.0))],
           fixed_dtypes=(STR, STR), grad=False, dtypes=(tf.string,)),
]


test_forward, test_shapes = case_tests(CASES)


def _run(summary_tensor, feed=None):
    with tf.Session() as sess:
        return tf.Summary.FromString(sess.run(summary_tensor, feed))


# --- PNG and histograms ---------------------------------------------------------------------
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_png_encoder_decodes_with_pillow(channels):
    pixels = np.random.RandomState(channels).randint(0, 256, (7, 9, channels)).astype(np.uint8)
    png = encode_png(pixels)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    decoded = np.asarray(Image.open(io.BytesIO(png)))
    np.testing.assert_array_equal(decoded.reshape(pixels.shape), pixels)
    # Every chunk's CRC covers its type and body.
    pos = 8
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos:pos + 4])
        body = png[pos + 4:pos + 8 + length]
        assert struct.unpack(">I", png[pos + 8 + length:pos + 12 + length])[0] == \
            zlib.crc32(body)
        pos += 12 + length


def test_histogram_matches_tensorflow():
    with tf.Graph().as_default():
        summary = _run(tf.summary.histogram("w", tf.constant([1.0, -2.0, 0.0, 3.5e-13])))
    histo = summary.value[0].histo
    assert (histo.min, histo.max, histo.num, histo.sum_squares) == (-2.0, 1.0, 4.0, 5.0)
    assert histo.sum == pytest.approx(-0.99999999999965, rel=1e-15)
    assert list(histo.bucket) == [0, 1, 0, 2, 0, 1, 0]
    assert list(histo.bucket_limit) == [-2.1628190051144287, -1.9661990955585713, 0.0, 1e-12,
                                        0.917246389039776, 1.0089710279437536,
                                        sys.float_info.max]


def test_empty_histogram_like_tensorflow():
    with tf.Graph().as_default():
        histo = _run(tf.summary.histogram("e", tf.zeros([0]))).value[0].histo
    assert (histo.min, histo.max, histo.num) == (sys.float_info.max, -sys.float_info.max, 0)
    assert list(histo.bucket_limit) == [sys.float_info.max] and list(histo.bucket) == [0.0]


# --- runtime errors ---------------------------------------------------------------------------
@pytest.mark.parametrize("build,feed,message", [
    (lambda p: tf.summary.scalar("v", p), np.zeros(2, np.float32),
     r"^tags and values are not the same shape: \[\] != \[2\] \(tag 'v'\)"),
    (lambda p: tf.summary.histogram("h", p), np.array([1.0, np.nan, np.inf], np.float32),
     "^Nan in summary histogram for: h"),
    (lambda p: tf.summary.histogram("h", p), np.array([np.inf, np.nan], np.float32),
     "^Infinity in Histogram for: h"),
    (lambda p: tf.summary.image("i", p), np.zeros((2, 2, 2), np.float32),
     r"^Tensor must be 4-D with last dim 1, 3, or 4, not \[2,2,2\]"),
    (lambda p: tf.summary.image("i", p), np.zeros((1, 2, 2, 2), np.float32),
     r"not \[1,2,2,2\]"),
    (lambda p: tf.summary.audio("a", p, 10.0), np.zeros(2, np.float32),
     r"^Tensor must be 3-D or 2-D, got: \[2\]"),
    (lambda p: tf.summary.audio("a", tf.zeros([1, 3]), p[0]), np.zeros(1, np.float32),
     "^sample_rate must be > 0"),
    (lambda p: tf.summary.audio("a", tf.zeros([1, 3]), p), np.ones(2, np.float32),
     "^sample_rate must be rank-0 or contain a single value"),
    (lambda p: apply_op(S.HistogramSummary, [["a", "b"], p]), np.ones(2, np.float32),
     "^tags must be scalar"),
    (lambda p: apply_op(S.ImageSummary, [["a", "b"], p]), np.ones((1, 1, 1, 1), np.float32),
     "^Tags must be a scalar"),
    (lambda p: apply_op(S.AudioSummaryV2, [["a"], p, 1.0]), np.ones((1, 1), np.float32),
     "^Tag must be a scalar"),
    (lambda p: apply_op(S.TensorSummaryV2, [["a"], p, ""]), np.ones(1, np.float32),
     "^tag must be scalar"),
    (lambda p: tf.summary.merge([apply_op(S.ScalarSummary, ["m", p])] * 2),
     np.float32(1), "^Duplicate tag m found in summary inputs"),
    (lambda p: tf.summary.merge([tf.constant(b"\xff\xff")]), np.float32(1),
     "^Could not parse one of the summary inputs"),
])
def test_runtime_errors(build, feed, message):
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32)
        op = build(p)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match=message):
            sess.run(op, {p: feed})


def test_untagged_values_may_repeat_in_merge():
    untagged = tf.Summary(value=[tf.Summary.Value(simple_value=1.0)]).SerializeToString()
    with tf.Graph().as_default():
        merged = _run(tf.summary.merge([tf.constant(untagged), tf.constant(untagged)]))
    assert [v.simple_value for v in merged.value] == [1.0, 1.0]


def test_unparsable_metadata_is_ignored_like_tf():
    with tf.Graph().as_default():
        value = _run(apply_op(S.TensorSummaryV2, ["t", [1.0], b"\xff\xff"])).value[0]
    assert value.HasField("metadata") and value.metadata.ByteSize() == 0


# --- wrappers: names, tags, collections -----------------------------------------------------
def test_names_tags_and_collections_match_tf():
    with tf.Graph().as_default() as g:
        a = tf.constant(1.0, name="loss")
        made = [tf.summary.scalar("mse", a), tf.summary.scalar("loss", a),
                tf.summary.scalar("bad name!", a)]
        with tf.name_scope("metrics"):
            made += [tf.summary.scalar("abs", a), tf.summary.scalar("abs", a, family="fam")]
        made += [tf.summary.histogram("w", tf.constant([1.0])),
                 tf.summary.image("img", tf.zeros([2, 3, 4, 1]), max_outputs=2),
                 tf.summary.audio("snd", tf.zeros([2, 10]), 8000, max_outputs=1),
                 tf.summary.text("note", tf.constant("hi")),
                 tf.summary.tensor_summary("tsum", tf.constant([1, 2]))]
        side = tf.summary.scalar("side", a, collections=["side"])
        merged = tf.summary.merge(made[:2])
        named = tf.summary.merge(made[:2], name="mm")
        everything = tf.summary.merge_all()
        assert [t.op.name for t in made] == [
            "mse", "loss_1", "bad_name_", "metrics/abs", "metrics/fam/abs", "w", "img", "snd",
            "note", "tsum"]
        assert [t.op.type for t in made[5:]] == ["HistogramSummary", "ImageSummary",
                                                 "AudioSummaryV2", "TensorSummaryV2",
                                                 "TensorSummaryV2"]
        assert [i.name for i in g.get_operation_by_name("snd").inputs] == [
            "snd/tag:0", "zeros_1:0", "snd/sample_rate:0"]
        assert [i.op.name for i in made[8].op.inputs] == [
            "note/tag", "Const_1", "note/serialized_summary_metadata"]
        assert all(t.dtype == tf.string and t.shape.ndims == 0 for t in made)
        assert tf.get_collection(tf.GraphKeys.SUMMARIES) == made
        assert tf.get_collection("side") == [side]
        assert merged.op.name == "Merge/MergeSummary" and named.op.name == "mm/mm"
        assert everything.op.name == "Merge_1/MergeSummary"
        assert len(everything.op.inputs) == len(made)
        with tf.Session() as sess:
            tags = [v.tag for v in tf.Summary.FromString(sess.run(everything)).value]
            assert tags == ["mse", "loss_1", "bad_name_", "metrics/abs", "fam/metrics/fam/abs",
                            "w", "img/image/0", "img/image/1", "snd/audio", "note", "tsum"]
            assert [v.tag for v in tf.Summary.FromString(sess.run(side)).value] == ["side"]


def test_merge_all_of_an_empty_collection_is_none_and_scope_filters():
    with tf.Graph().as_default():
        assert tf.summary.merge_all() is None
        with tf.name_scope("a"):
            tf.summary.scalar("x", 1.0)
        tf.summary.scalar("y", 2.0)
        assert tf.summary.merge_all(scope="zzz") is None
        merged = tf.summary.merge_all(scope="a/")
        assert [v.tag for v in _run(merged).value] == ["a/x"]


def test_text_and_tensor_summary_metadata():
    with tf.Graph().as_default():
        text = _run(tf.summary.text("note", tf.constant([["a", "b"]]))).value[0]
        described = _run(tf.summary.tensor_summary(
            "t", tf.constant(3), summary_description="about", display_name="shown")).value[0]
        with pytest.raises(ValueError, match=r"Expected tensor zeros:0 to have dtype string, "
                                             r"got <dtype: 'float32'>"):
            tf.summary.text("bad", tf.zeros([2]))
    assert text.metadata.plugin_data.plugin_name == "text"
    assert list(text.tensor.string_val) == [b"a", b"b"]
    assert [d.size for d in text.tensor.tensor_shape.dim] == [1, 2]
    assert described.metadata.summary_description == "about"
    assert described.metadata.display_name == "shown"
    assert tf.make_ndarray(described.tensor) == 3


def test_dtype_errors_at_construction():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="parameter 'tensor' has DataType int32"):
            tf.summary.image("i", tf.zeros([1, 2, 2, 1], tf.int32))
        with pytest.raises(TypeError, match="parameter 'values' has DataType string"):
            tf.summary.histogram("h", tf.constant(["a"]))
        with pytest.raises(TypeError):
            tf.summary.scalar("s", tf.constant(True))


def test_illegal_tag_characters_are_replaced_and_logged(caplog):
    caplog.set_level(logging.INFO, logger="tensorweave")
    with tf.Graph().as_default():
        s = tf.summary.scalar("/a b:c", 1.0)
    assert s.op.name == "a_b_c"
    assert "Summary name /a b:c is illegal; using a_b_c instead." in caplog.text


def test_get_summary_description():
    node = tf.NodeDef(name="t", op="TensorSummary")
    node.attr["description"].s = b'{"type_hint": "scalar"}'
    assert tf.summary.get_summary_description(node).type_hint == "scalar"
    with pytest.raises(ValueError, match="Can't get_summary_description on ScalarSummary"):
        tf.summary.get_summary_description(tf.NodeDef(name="s", op="ScalarSummary"))
