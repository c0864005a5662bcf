"""tf.Module in graph mode: names, scopes and the variables and submodules it finds, as
TensorFlow 2.21 gives them for the same program (run under both)."""
import pytest

import tensorweave as tf


class Dense(tf.Module):
    def __init__(self, n_in, n_out, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = tf.Variable(tf.ones([n_in, n_out]), name="w")
            self.b = tf.Variable(tf.zeros([n_out]), name="b", trainable=False)

    @tf.Module.with_name_scope
    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


class MLP(tf.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Dense(3, 4), Dense(4, 2, name="out")]
        self.extra = {"k": tf.Variable(1.0, name="scale")}
        self.again = self.layers[0]   # met twice, found once

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.extra["k"]


def test_names_scopes_and_what_a_module_holds():
    with tf.Graph().as_default():
        model = MLP()
        assert (model.name, model.name_scope.name) == ("mlp", "mlp/")
        assert model(tf.ones([1, 3])).name == "mul:0"
        assert model.layers[0](tf.ones([1, 3])).name == "dense/add_1:0"   # its scope again
        assert [v.name for v in model.variables] == [
            "scale:0", "dense/b:0", "dense/w:0", "out/b:0", "out/w:0"]
        assert [v.name for v in model.trainable_variables] == ["scale:0", "dense/w:0",
                                                                "out/w:0"]
        assert [v.name for v in model.non_trainable_variables] == ["dense/b:0", "out/b:0"]
        assert [m.name for m in model.submodules] == ["dense", "out"]
        second = MLP()
        assert second.name_scope.name == "mlp_1/"
        assert [v.name for v in second.variables][:2] == ["scale_1:0", "dense_1/b:0"]
        with tf.Session() as sess:
            sess.run(tf.variables_initializer(model.variables))
            assert sess.run(model(tf.ones([1, 3]))).tolist() == [[12.0, 12.0]]


def test_names_must_be_identifiers():
    with pytest.raises(ValueError, match="'bad name' is not a valid module name"):
        tf.Module(name="bad name")
    assert tf.Module(name="ok_name").name == "ok_name"
