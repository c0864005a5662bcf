"""tf.train.init_from_checkpoint: every assignment-map form loads the checkpoint's values when
the initializers run (not before), with TensorFlow 2.21's graph structure and names, and its
errors for missing tensors, shape mismatches and malformed maps (messages compared with
TensorFlow's on the same programs)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors

A = np.arange(6, dtype=np.float32).reshape(2, 3)
C = np.array([1, 2], np.int32)
ROOT = np.array([7.0, 8.0], np.float32)


def _save(directory, a=A, b=3.5):
    """Writes old/a [2,3] float32, old/b float64, old/inner/c int32 and root_v; the prefix."""
    with tf.Graph().as_default():
        with tf.variable_scope("old"):
            tf.get_variable("a", initializer=a)
            tf.get_variable("b", initializer=np.float64(b), dtype=tf.float64)
            with tf.variable_scope("inner"):
                tf.get_variable("c", initializer=C, dtype=tf.int32)
        tf.get_variable("root_v", initializer=ROOT)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return saver.save(sess, str(directory / "model"))


@pytest.fixture
def ckpt(tmp_path):
    return _save(tmp_path)


def _zeros(name, shape, dtype=tf.float32):
    return tf.get_variable(name, shape=shape, dtype=dtype, initializer=tf.zeros_initializer())


def _initialized(variables):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(variables)


def test_scope_to_scope_loads_every_variable_of_the_scope(ckpt, tmp_path):
    with tf.Graph().as_default() as graph:
        with tf.variable_scope("new"):
            a, b = _zeros("a", [2, 3]), _zeros("b", [], tf.float64)
            with tf.variable_scope("inner"):
                c = _zeros("c", [2], tf.int32)
        other = _zeros("other", [2])
        tf.train.init_from_checkpoint(str(tmp_path), {"old/": "new/"})   # a directory
        restore = graph.get_operation_by_name("checkpoint_initializer")
        assert restore.type == "RestoreV2" and restore.device == "/device:CPU:0"
        assert [t.op.name for t in restore.inputs] == [
            "checkpoint_initializer/prefix", "checkpoint_initializer/tensor_names",
            "checkpoint_initializer/shape_and_slices"]
        assert a.initializer.name == "Assign" and a.initializer.type == "Assign"
        assert [t.name for t in a.initializer.inputs] == ["new/a:0", "checkpoint_initializer:0"]
        assert a.initial_value is restore.outputs[0]
        assert a.initial_value.shape.as_list() == [2, 3]
        assert c.initializer.inputs[1].op.name == "checkpoint_initializer_2"
        with tf.Session() as sess:
            assert sess.run(restore.inputs[0]) == ckpt.encode()  # the directory's newest
        got = _initialized([a, b, c, other])
    np.testing.assert_array_equal(got[0], A)
    assert got[1] == 3.5 and got[2].tolist() == [1, 2] and got[3].tolist() == [0, 0]


@pytest.mark.parametrize("mapping,scope,name,expected", [
    ({"/": "x/"}, "x", "root_v", ROOT),          # checkpoint root into a scope
    ({"/": "/"}, None, "root_v", ROOT),           # root to root
    ({"old/inner/": "y/a/"}, "y/a", "c", C),      # nested scopes
    ({"old/": "x/"}, "x", "a", A),
])
def test_scope_forms(ckpt, mapping, scope, name, expected):
    with tf.Graph().as_default():
        with tf.variable_scope(scope or ""):
            var = _zeros(name, expected.shape, tf.as_dtype(expected.dtype))
        tf.train.init_from_checkpoint(ckpt, mapping)
        np.testing.assert_array_equal(_initialized(var), expected)


def test_names_and_variables_including_one_tensor_into_several(ckpt):
    with tf.Graph().as_default():
        by_name = _zeros("v1", [2, 3])
        plain = tf.Variable(tf.zeros([2, 3]), name="plain")   # not in the variable store
        other = _zeros("v3", [2, 3])
        tf.train.init_from_checkpoint(ckpt, [("old/a", "v1"), ("old/a", plain), ("old/a", other)])
        for value in _initialized([by_name, plain, other]):
            np.testing.assert_array_equal(value, A)


def test_values_are_read_when_the_initializer_runs(ckpt, tmp_path):
    with tf.Graph().as_default():
        a = _zeros("a", [2, 3])
        tf.train.init_from_checkpoint(ckpt, {"old/a": a})
        _save(tmp_path, a=A * 10)        # rewritten after the call, before the initializer
        np.testing.assert_array_equal(_initialized(a), A * 10)


def test_unknown_shape_variable_keeps_its_shape_and_loads(ckpt):
    with tf.Graph().as_default():
        var = tf.Variable(tf.placeholder_with_default(np.zeros((1, 3), np.float32), [None, 3]),
                          validate_shape=False)
        tf.train.init_from_checkpoint(ckpt, {"old/a": var})
        assert var.initializer.get_attr("validate_shape") is False
        with tf.Session() as sess:
            sess.run(var.initializer)
            np.testing.assert_array_equal(sess.run(var), A)


def _error(ckpt, build_and_map):
    with tf.Graph().as_default():
        mapping = build_and_map()
        with pytest.raises(Exception) as info:
            tf.train.init_from_checkpoint(ckpt, mapping)
    return info


@pytest.mark.parametrize("build_and_map,error,message", [
    (lambda: {"nope": _zeros("v", [3])}, ValueError,
     "Tensor nope is not found in {ckpt} checkpoint {{'old/a': [2, 3], 'old/b': [], "
     "'old/inner/c': [2], 'root_v': [2]}}"),
    (lambda: {"old/a": _zeros("v", [3])}, ValueError,
     "Shape of variable v:0 ((3,)) doesn't match with shape of tensor old/a ([2, 3]) from "
     "checkpoint reader."),
    (lambda: (_zeros("v", [3]), {"old/a": "v"})[1], ValueError,
     "Shape of variable v:0 ((3,)) doesn't match with shape of tensor old/a ([2, 3])"),
    (lambda: {"old/a": "missing_var"}, ValueError,
     "Assignment map with scope only name  should map to scope only old/a. Should be "
     "'scope/': 'other_scope/'."),
    (lambda: (_zeros("new/zz", [3]), {"old/": "new/"})[1], ValueError,
     "Tensor old/zz (zz in old/) is not found in {ckpt} checkpoint"),
    (lambda: (_zeros("new/zz", [3]), {"old": "new/"})[1], ValueError,
     "Assignment map with scope only name new should map to scope only old."),
    (lambda: {"old/a": [_zeros("v", [2, 3])]}, ValueError,
     "Slices must all be from the same tensor"),
])
def test_map_errors(ckpt, build_and_map, error, message):
    info = _error(ckpt, build_and_map)
    assert info.type is error
    assert message.format(ckpt=ckpt) in str(info.value)


def _partitioned(name, axis):
    return tf.get_variable(name, [2, 3], initializer=tf.zeros_initializer(),
                           partitioner=tf.fixed_size_partitioner(2, axis=axis))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("form", ["name", "object", "parts", "scope"])
def test_partitioned_variables_load_their_slices(ckpt, form, axis):
    with tf.Graph().as_default():
        with tf.variable_scope("new"):
            var = _partitioned("a", axis)
        target = {"name": "new/a", "object": var, "parts": list(var), "scope": "new/"}[form]
        tf.train.init_from_checkpoint(ckpt, {"old/" if form == "scope" else "old/a": target})
        specs = [part.initializer.inputs[1].op.inputs[2] for part in var]
        parts = _initialized(list(var))
        with tf.Session() as sess:
            assert [sess.run(s)[0] for s in specs] == [p._save_slice_info.spec.encode()
                                                        for p in var]
    np.testing.assert_array_equal(np.concatenate(parts, axis=axis), A)


def test_a_partitioned_checkpoint_loads_into_a_whole_variable(tmp_path):
    with tf.Graph().as_default():
        with tf.variable_scope("old"):
            saved = _partitioned("a", 1)
        with tf.Session() as sess:
            sess.run([p.assign(np.full(p.shape.as_list(), i, np.float32))
                      for i, p in enumerate(saved)])
            prefix = tf.train.Saver().save(sess, str(tmp_path / "parts"))
    with tf.Graph().as_default():
        whole = _zeros("whole", [2, 3])
        tf.train.init_from_checkpoint(prefix, {"old/a": whole})
        np.testing.assert_array_equal(_initialized(whole), [[0, 0, 1], [0, 0, 1]])


def test_a_resource_variable_loads_through_assign_variable_op(ckpt):
    """As in TF: the initializer is an AssignVariableOp of the restored tensor."""
    with tf.Graph().as_default():
        v = tf.get_variable("root_v", [2], use_resource=True)
        tf.train.init_from_checkpoint(ckpt, {"root_v": "root_v"})
        assert v.initializer.type == "AssignVariableOp" and v.initial_value.shape == [2]
        assert _initialized(v).tolist() == ROOT.tolist()


def test_a_scope_without_variables_is_no_error(ckpt):
    with tf.Graph().as_default() as graph:
        tf.train.init_from_checkpoint(ckpt, {"old/": "nothing/"})
        assert graph.get_operations() == []


def test_missing_checkpoints(tmp_path):
    with tf.Graph().as_default():
        with pytest.raises(errors.NotFoundError, match="Failed to find any matching files for"):
            tf.train.init_from_checkpoint(str(tmp_path / "none"), {"old/a": "v"})
        with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file or checkpoints"):
            tf.train.init_from_checkpoint(str(tmp_path), {"old/a": "v"})


def test_dtype_mismatch_fails_when_the_initializer_runs(ckpt):
    with tf.Graph().as_default():
        var = _zeros("v", [2, 3], tf.float64)
        tf.train.init_from_checkpoint(ckpt, {"old/a": var})
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="old/a"):
                sess.run(var.initializer)
