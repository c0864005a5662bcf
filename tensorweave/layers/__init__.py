"""tf.layers: the TF1 layers API (classes and functional forms)."""
from tensorweave.layers.base import Layer
from tensorweave.layers.input_spec import InputSpec
from tensorweave.layers.convolutional import *
from tensorweave.layers.convolutional3d import *
from tensorweave.layers.core import *
from tensorweave.layers.normalization import *
