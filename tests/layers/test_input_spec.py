"""tf.layers.InputSpec: layers check their inputs when called, with TensorFlow 2.21's messages;
user layer classes are named after themselves as TensorFlow names them (variable scopes)."""
import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


@pytest.mark.parametrize("call, message", [
    (lambda: tf.layers.dense(tf.zeros([3]), 4),
     'Input 0 of layer "dense" is incompatible with the layer: expected min_ndim=2, found '
     "ndim=1. Full shape received: (Dimension(3),)"),
    (lambda: tf.layers.conv2d(tf.zeros([2, 5, 5]), 3, 3),
     'Input 0 of layer "conv2d" is incompatible with the layer: expected min_ndim=4, found '
     "ndim=3. Full shape received: (Dimension(2), Dimension(5), Dimension(5))"),
    (lambda: tf.layers.max_pooling2d(tf.zeros([2, 5, 5]), 2, 2),
     'Input 0 of layer "max_pooling2d" is incompatible with the layer: expected ndim=4, found '
     "ndim=3. Full shape received: (Dimension(2), Dimension(5), Dimension(5))"),
])
def test_built_in_layers_check_the_rank(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value) == message


def test_a_built_layer_checks_its_input_size():
    layer = tf.layers.Dense(4)
    layer(tf.zeros([2, 3]))
    with pytest.raises(ValueError) as info:
        layer(tf.zeros([2, 5]))
    assert str(info.value) == ('Input 0 of layer "dense" is incompatible with the layer: '
                               "expected axis -1 of input shape to have value 3, but received "
                               "input with shape (2, 5)")
    assert layer(tf.zeros([7, 3])).shape.as_list() == [7, 4]


def test_custom_layer_with_an_input_spec():
    class Doubler(tf.layers.Layer):
        def __init__(self):
            super().__init__()
            self.input_spec = tf.layers.InputSpec(min_ndim=2, axes={-1: 3}, dtype=tf.float32)

        def call(self, x):
            return x * 2.0

    layer = Doubler()
    assert layer(tf.zeros([4, 3])).shape.as_list() == [4, 3]
    for bad, expected in ((tf.zeros([3]), "expected min_ndim=2, found ndim=1"),
                          (tf.zeros([4, 5]), "expected axis -1 of input shape to have value 3"),
                          (tf.zeros([4, 3], tf.int32), "expected dtype=float32, found "
                                                       "dtype=int32")):
        with pytest.raises(ValueError, match=expected):
            layer(bad)
    spec = tf.layers.InputSpec(ndim=2, axes={-1: 3})
    assert (spec.ndim, spec.axes) == (2, {-1: 3})
    with pytest.raises(ValueError, match="Axis 4 is greater than the maximum allowed value: 1"):
        tf.layers.InputSpec(ndim=2, axes={4: 3})


def test_user_layer_classes_are_named_in_snake_case():
    class MyDense(tf.layers.Layer):
        def build(self, input_shape):
            self.kernel = self.add_weight("kernel", [int(input_shape[-1]), 2])

        def call(self, x):
            return tf.matmul(x, self.kernel)

    class HTTPLayer2D(tf.layers.Dense):
        pass

    class _Hidden(tf.layers.Layer):
        def call(self, x):
            return x

    mine, http, hidden = MyDense(), HTTPLayer2D(4), _Hidden()
    mine(tf.zeros([1, 3]))
    http(tf.zeros([1, 3]))
    hidden(tf.zeros([1]))
    # TensorFlow 2.21's variable names.
    assert (mine.kernel.name, http.kernel.name) == ("my_dense/kernel:0",
                                                    "http_layer2d/kernel:0")
    assert hidden.name == "private__hidden"
