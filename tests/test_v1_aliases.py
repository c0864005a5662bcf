"""Names TensorFlow 2.21's tf.compat.v1 has as aliases or small helpers: tf.io.read_file,
tf.io.write_graph, tf.io.match_filenames_once, tf.dimension_at_index, tf.get_logger,
tf.OpError and tf.NoGradient. Each is the very object TF aliases, and works."""
import logging
import os

import pytest

import tensorweave as tf
from tensorweave.autodiff import registry
from tensorweave.framework.op_def import define_op


def test_aliases_are_the_same_objects_as_in_tensorflow():
    assert tf.io.read_file is tf.read_file
    assert tf.io.write_graph is tf.train.write_graph
    assert tf.io.match_filenames_once is tf.train.match_filenames_once
    assert tf.OpError is tf.errors.OpError
    assert tf.NoGradient is tf.no_gradient is tf.NotDifferentiable
    assert tf.get_logger is tf.logging.get_logger


def test_tf_io_reads_writes_and_matches_files(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"hello\x00world")
    (tmp_path / "b.txt").write_bytes(b"")
    with tf.Graph().as_default() as graph:
        contents = tf.io.read_file(str(tmp_path / "a.txt"))
        assert (contents.op.type, contents.dtype, contents.shape.as_list()) == (
            "ReadFile", tf.string, [])
        matched = tf.io.match_filenames_once(str(tmp_path / "*.txt"))
        missing = tf.io.read_file(str(tmp_path / "missing.txt"))
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(contents) == b"hello\x00world"
            assert sorted(os.path.basename(f) for f in sess.run(matched)) == [b"a.txt", b"b.txt"]
            with pytest.raises(tf.OpError) as info:
                sess.run(missing)
            assert isinstance(info.value, tf.errors.NotFoundError)
        path = tf.io.write_graph(graph, str(tmp_path), "graph.pbtxt")
    assert path == str(tmp_path / "graph.pbtxt")
    assert 'op: "ReadFile"' in (tmp_path / "graph.pbtxt").read_text()


def test_dimension_at_index():
    shape = tf.TensorShape([3, None])
    first = tf.dimension_at_index(shape, 0)
    assert isinstance(first, tf.Dimension) and first.value == 3
    assert tf.dimension_at_index(shape, -1).value is None
    assert tf.dimension_at_index(tf.TensorShape(None), 5).value is None
    with pytest.raises(IndexError):
        tf.dimension_at_index(shape, 2)


def test_get_logger_is_tf_logging_logger():
    logger = tf.get_logger()
    assert isinstance(logger, logging.Logger) and logger is tf.get_logger()
    previous = tf.logging.get_verbosity()
    try:
        tf.logging.set_verbosity(tf.logging.ERROR)
        assert logger.getEffectiveLevel() == logging.ERROR
    finally:
        tf.logging.set_verbosity(previous)


def test_no_gradient_registers_an_op_as_not_differentiable():
    op_def = define_op("_TestNoGradientAlias", inputs=["x: T"], outputs=["y: T"],
                       shape_fn=lambda ctx: ctx.input_shape(0))
    with pytest.raises(TypeError, match="op_type must be a string"):
        tf.NoGradient(op_def)
    tf.NoGradient("_TestNoGradientAlias")
    assert "_TestNoGradientAlias" in registry._NOT_DIFFERENTIABLE
