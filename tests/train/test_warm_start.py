"""tf.train.warm_start and tf.train.VocabInfo: warm-starting by regex, variable list and
renaming; row and column vocabulary remapping with OOV buckets and backup initializers, also
for partitioned variables; and TF's errors (results checked against TF 2.21)."""
import numpy as np
import pytest

import tensorweave as tf

EMB = np.arange(12, dtype=np.float32).reshape(4, 3)
OUT = np.arange(8, dtype=np.float32).reshape(2, 4)


@pytest.fixture
def ckpt(tmp_path):
    (tmp_path / "old.txt").write_text("apple\nbanana\ncherry\ndate\n")
    (tmp_path / "new.txt").write_text("cherry\nfig\napple\nbanana\n")
    with tf.Graph().as_default():
        tf.get_variable("emb", initializer=EMB)
        tf.get_variable("out", initializer=OUT)
        tf.get_variable("sc/b", initializer=np.array([1.0, 2.0], np.float32))
        tf.get_variable("c", initializer=np.array([5.0, 6.0], np.float32))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return tf.train.Saver().save(sess, str(tmp_path / "model")), tmp_path


def _warm(path, emb_partitions=None, use_resource=False, **kwargs):
    """New graph: emb [5, 3], out [2, 5], bias, sc/b, c (not trainable), all zeros."""
    with tf.Graph().as_default(), tf.variable_scope("", use_resource=use_resource):
        zeros = tf.zeros_initializer()
        emb = tf.get_variable("emb", [5, 3], initializer=zeros, partitioner=emb_partitions)
        out = tf.get_variable("out", [2, 5], initializer=zeros)
        bias = tf.get_variable("bias", [2], initializer=zeros)
        b = tf.get_variable("sc/b", [2], initializer=zeros)
        c = tf.get_variable("c", [2], initializer=zeros, trainable=False)
        if kwargs.get("vars_to_warm_start") == "c and b":
            kwargs["vars_to_warm_start"] = [c, b]
        tf.train.warm_start(path, **kwargs)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return sess.run([tf.convert_to_tensor(emb), out, bias, b, c])


def test_by_regex_and_by_variables(ckpt):
    path, _ = ckpt
    emb, out, bias, b, c = _warm(path, vars_to_warm_start="sc/")
    assert b.tolist() == [1.0, 2.0] and not emb.any() and not c.any() and not bias.any()
    emb, out, bias, b, c = _warm(path, vars_to_warm_start="c and b")
    assert b.tolist() == [1.0, 2.0] and c.tolist() == [5.0, 6.0] and not out.any()
    _, _, bias, b, c = _warm(path, vars_to_warm_start=["sc/", "c"],
                             var_name_to_prev_var_name={"sc/b": "c"})
    assert b.tolist() == [5.0, 6.0] and c.tolist() == [5.0, 6.0]


@pytest.mark.parametrize("use_resource", [False, True], ids=["ref", "resource"])
def test_rows_remapped_with_oov_bucket(ckpt, use_resource):
    path, d = ckpt
    info = tf.train.VocabInfo(str(d / "new.txt"), 4, 1, str(d / "old.txt"), old_vocab_size=3)
    emb, out, *_ = _warm(path, vars_to_warm_start=None, var_name_to_vocab_info={"emb": info},
                         use_resource=use_resource)
    # cherry, fig (new), apple, banana, OOV
    np.testing.assert_array_equal(emb, [EMB[2], [0, 0, 0], EMB[0], EMB[1], [0, 0, 0]])
    assert not out.any()


def test_backup_initializer_and_partitions(ckpt):
    path, d = ckpt
    info = tf.train.VocabInfo(str(d / "new.txt"), 4, 1, str(d / "old.txt"),
                              backup_initializer=tf.constant_initializer(-1.0))
    emb, *_ = _warm(path, emb_partitions=tf.fixed_size_partitioner(2), vars_to_warm_start=None,
                    var_name_to_vocab_info={"emb": info})
    np.testing.assert_array_equal(emb, [EMB[2], [-1, -1, -1], EMB[0], EMB[1], [-1, -1, -1]])


def test_resource_variables_by_regex(ckpt):
    path, _ = ckpt
    emb, out, bias, b, c = _warm(path, vars_to_warm_start="sc/", use_resource=True)
    assert b.tolist() == [1.0, 2.0] and not emb.any() and not c.any() and not bias.any()


def test_columns_remapped(ckpt):
    path, d = ckpt
    info = tf.train.VocabInfo(str(d / "new.txt"), 3, 2, str(d / "old.txt"), axis=1)
    _, out, *_ = _warm(path, vars_to_warm_start=["out"], var_name_to_vocab_info={"out": info})
    np.testing.assert_array_equal(out, [[2, 0, 0, 0, 0], [6, 0, 4, 0, 0]])


def test_errors(ckpt):
    path, d = ckpt
    info = tf.train.VocabInfo(str(d / "new.txt"), 3, 2, str(d / "old.txt"))
    cases = [
        (dict(vars_to_warm_start=3), "must be a `list` or `str`"),
        (dict(vars_to_warm_start=["x", 3]), "must be all `Variable` or all `str`"),
        (dict(vars_to_warm_start="sc/", var_name_to_prev_var_name={"nope": "sc/b"}),
         "var_name_to_prev_var_name that were not used"),
        (dict(vars_to_warm_start="sc/", var_name_to_vocab_info={"nope": info}),
         "var_name_to_vocab_info that were not used"),
        (dict(), "Tensor bias is not found in"),
        (dict(var_name_to_prev_var_name={"bias": "sc/b"}), "Shape of variable emb:0"),
        (dict(vars_to_warm_start=None, var_name_to_vocab_info={"emb": info._replace(
            new_vocab_size=0)}), "Invalid args: Must provide all of"),
        (dict(vars_to_warm_start=None, var_name_to_vocab_info={"emb": info._replace(
            num_oov_buckets=1)}), "would exceed expected total row count"),
        (dict(vars_to_warm_start=["c"], var_name_to_vocab_info={"c": info}),
         "Expected 2-dim shape"),
    ]
    for kwargs, match in cases:
        with pytest.raises(ValueError, match=match):
            _warm(path, **kwargs)
    with pytest.raises(ValueError, match="supported values for the axis argument are 0 and 1"):
        tf.train.VocabInfo("a", 1, 0, "b", axis=2)
    assert tf.train.VocabInfo("a", 1, 0, "b") == ("a", 1, 0, "b", -1, None, 0)
