"""tf.nn: neural-network ops (one star-import line per nn op module)."""
from tensorweave.ops.array_space_ops import depth_to_space, space_to_batch, space_to_depth
from tensorweave.ops.ctc_ops import *
from tensorweave.ops.embedding_ops import *
from tensorweave.ops.embedding_sparse_ops import *
from tensorweave.ops.nn_conv_ops import *
from tensorweave.ops.nn_conv3d_ops import *
from tensorweave.ops.nn_dropout_ops import *
from tensorweave.ops.nn_extra_ops import *
from tensorweave.ops.nn_fractional_pool_ops import *
from tensorweave.ops.nn_loss_ops import *
from tensorweave.ops.nn_morphology_ops import *
from tensorweave.ops.nn_norm_ops import *
from tensorweave.ops.nn_normalize_ops import *
from tensorweave.ops.nn_ops import *
from tensorweave.ops.nn_pool_argmax_ops import *
from tensorweave.ops.nn_pool_nd_ops import *
from tensorweave.ops.nn_pool_ops import *
from tensorweave.ops.nn_sampled_ops import *
from tensorweave.ops.nn_softmax_ops import *
from tensorweave.ops.nn_top_k_ops import *
from tensorweave.ops.rnn_static import *
from tensorweave.ops.rnn_dynamic import *
from tensorweave.ops.rnn_raw import *
from tensorweave.nn import experimental, rnn_cell
