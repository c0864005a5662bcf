"""tf.train: optimizers, checkpoints, the global step and the managed training loop."""
from tensorweave.framework.graph_io import write_graph
from tensorweave.framework.meta_graph import export_meta_graph
from tensorweave.framework.meta_graph import import_meta_graph
from tensorweave.train.adadelta import AdadeltaOptimizer
from tensorweave.train.adagrad import AdagradOptimizer
from tensorweave.train.adagrad_da import AdagradDAOptimizer
from tensorweave.train.adam import AdamOptimizer
from tensorweave.train.ftrl import FtrlOptimizer
from tensorweave.train.gradient_descent import GradientDescentOptimizer
from tensorweave.train.learning_rate_decay import *
from tensorweave.train.momentum import MomentumOptimizer
from tensorweave.train.moving_averages import ExponentialMovingAverage
from tensorweave.train.optimizer import Optimizer
from tensorweave.train.proximal_adagrad import ProximalAdagradOptimizer
from tensorweave.train.proximal_gradient_descent import ProximalGradientDescentOptimizer
from tensorweave.train.rmsprop import RMSPropOptimizer
from tensorweave.train.saver import Saver
from tensorweave.train.sync_replicas_optimizer import SyncReplicasOptimizer
from tensorweave.train.checkpoint_iteration import *
from tensorweave.train.checkpoint_management import *
from tensorweave.train.checkpoint_reader import *
from tensorweave.train.init_from_checkpoint import init_from_checkpoint
from tensorweave.train.warm_start import VocabInfo, warm_start
from tensorweave.protos.saver_pb2 import SaverDef
from tensorweave.protos.example_pb2 import Example, SequenceExample
from tensorweave.protos.feature_pb2 import (
    BytesList,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
)
from tensorweave.train.training_util import *
from tensorweave.train.coordinator import Coordinator, LooperThread
from tensorweave.train.session_run_hook import *
from tensorweave.train.basic_session_run_hooks import *
from tensorweave.train.saving_hooks import *
from tensorweave.train.scaffold import Scaffold
from tensorweave.train.session_manager import SessionManager
from tensorweave.train.monitored_session import *
from tensorweave.train.supervisor import Supervisor, basic_train_loop
from tensorweave.train.input import *
from tensorweave.train.queue_runner import *
from tensorweave.protos.tensorflow_server_pb2 import ServerDef
from tensorweave.train.cluster_spec import ClusterSpec
from tensorweave.distributed.server import Server
from tensorweave.protos.cluster_pb2 import ClusterDef, JobDef
from tensorweave.train.device_setter import replica_device_setter
from tensorweave.train import queue_runner
from tensorweave.summary.summary_iterator import summary_iterator
