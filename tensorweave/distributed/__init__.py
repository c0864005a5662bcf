"""The distributed runtime: tf.train.Server and sessions on its master over gRPC.

A `Server` serves TensorFlow's MasterService and WorkerService wire names for one task of a
cluster; `Session("grpc://host:port")` sends its graph to that master and runs steps there.
"""
from tensorweave.distributed.server import Server

__all__ = ["Server"]
