"""tf.losses: loss functions with weights and reductions, and the LOSSES collection."""
from tensorweave.losses.losses_impl import *
from tensorweave.losses.pairwise import *
from tensorweave.losses.util import *
