"""Ops the runtime inserts itself: call-frame arguments and return values."""
from __future__ import annotations

from tensorweave.framework import shape_fns
from tensorweave.framework.op_def import Attr, define_op

# _Arg produces the i-th fed value of a step; _Retval consumes the i-th fetched value. The
# executor handles both directly (they are the call frame), so they have no kernels.
_Arg = define_op("_Arg", outputs=["output: T"], attrs=[Attr("index", "int")],
                 shape_fn=shape_fns.unknown, is_stateful=True, not_differentiable=True,
                 doc="The step's feed number `index`.")
_Retval = define_op("_Retval", inputs=["input: T"], attrs=[Attr("index", "int")],
                    is_stateful=True, not_differentiable=True,
                    doc="The step's fetch number `index`.")

# Partitioning (runtime/partition.py) puts a _Send on the producer's device and a _Recv on the
# consumer's for every tensor crossing devices; the pair meets in the step's rendezvous under a
# key built from these attrs (runtime/rendezvous.py). TensorFlow's attrs, so partition graphs
# read like TensorFlow's.
_SEND_RECV_ATTRS = [Attr("tensor_name", "string"), Attr("send_device", "string"),
                    Attr("send_device_incarnation", "int"), Attr("recv_device", "string"),
                    Attr("client_terminated", "bool", False)]
_Send = define_op("_Send", inputs=["tensor: T"], attrs=_SEND_RECV_ATTRS, is_stateful=True,
                  not_differentiable=True,
                  doc="Sends `tensor` to `recv_device` under `tensor_name`.")
_Recv = define_op("_Recv", outputs=["tensor: tensor_type"], attrs=_SEND_RECV_ATTRS,
                  shape_fn=shape_fns.unknown, is_stateful=True, not_differentiable=True,
                  doc="Receives the tensor that `send_device` sends under `tensor_name`.")
