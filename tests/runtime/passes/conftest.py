"""Shared harness for the graph-pass tests: build runtime graphs, run passes alone, compare runs.

`pt.rgraph(fetches, feeds)` is the pruned and placed runtime graph the session would optimize;
`pt.apply(fn, ...)` runs one pass on it alone; `pt.compare(fetches, feed)` runs the same fetches
with every optimization off (L0, Grappler disabled) and on, and checks the results agree
(exactly by default).
"""
import collections

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.protos import config_pb2, rewriter_config_pb2
from tensorweave.runtime import placement, prune
from tensorweave.runtime.devices import DeviceMgr
from tensorweave.runtime.passes.options import PassOptions

RewriterConfig = rewriter_config_pb2.RewriterConfig


def config(level_off=False, **rewrite):
    """A ConfigProto: every rewrite off when `level_off` (L0 and Grappler disabled), else
    these RewriterConfig fields (ON/OFF toggles...)."""
    opt = config_pb2.OptimizerOptions(opt_level=config_pb2.OptimizerOptions.L0 if level_off
                                      else config_pb2.OptimizerOptions.L1)
    if level_off:
        rewrite["disable_meta_optimizer"] = True
    return config_pb2.ConfigProto(graph_options=config_pb2.GraphOptions(
        optimizer_options=opt, rewrite_options=RewriterConfig(**rewrite)))


OFF = config(level_off=True)
ON = None


class PassHarness:
    OFF = OFF
    config = staticmethod(config)
    RewriterConfig = RewriterConfig

    def rgraph(self, fetches, feeds=(), targets=()):
        fetches = fetches if isinstance(fetches, (list, tuple)) else [fetches]
        graph = prune.prune(tuple(feeds), tuple(fetches), tuple(targets))
        placement.place(graph, DeviceMgr.local().devices, False)
        return graph

    def apply(self, fn, fetches, feeds=(), targets=(), **options):
        """(graph after `fn` alone, its PassOptions)."""
        graph = self.rgraph(fetches, feeds, targets)
        opts = PassOptions.defaults(graph, **options)
        return fn(graph, opts), opts

    @staticmethod
    def ops(graph) -> collections.Counter:
        return collections.Counter(n.op for n in graph)

    @staticmethod
    def run(fetches, feed=None, cfg=None, graph=None, init=None):
        graph = graph if graph is not None else tf.get_default_graph()
        with tf.Session(graph=graph, config=cfg) as sess:
            if init is not None:
                sess.run(init)
            return sess.run(fetches, feed)

    def compare(self, fetches, feed=None, rtol=0.0, atol=0.0, init=None):
        """Results with every pass off and on; they must agree (exactly unless told)."""
        plain = self.run(fetches, feed, OFF, init=init)
        optimized = self.run(fetches, feed, ON, init=init)
        for a, b in zip(_flat(plain), _flat(optimized)):
            a, b = np.asarray(a), np.asarray(b)
            assert a.shape == b.shape and a.dtype == b.dtype
            if rtol == 0 and atol == 0:
                np.testing.assert_array_equal(b, a)
            else:
                np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, equal_nan=True)
        return plain, optimized

    @staticmethod
    def partition_graphs(sess, fetches, feed=None):
        """(results, [GraphDef]) of one run with output_partition_graphs."""
        md = config_pb2.RunMetadata()
        out = sess.run(fetches, feed, options=config_pb2.RunOptions(
            output_partition_graphs=True), run_metadata=md)
        return out, list(md.partition_graphs)


def _flat(x):
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _flat(item)]
    return [x]


@pytest.fixture
def pt():
    with tf.Graph().as_default():
        yield PassHarness()
