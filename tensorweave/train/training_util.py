"""The global step: the int64 scalar variable `global_step` counting training steps.

It lives in the GLOBAL_STEP collection (or, failing that, is the graph's tensor named
`global_step:0`), is not trainable, and optimizers increment it after their updates.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import graph_name_scope
from tensorweave.platform import tf_logging as logging

__all__ = ["global_step", "get_global_step", "create_global_step", "get_or_create_global_step",
           "assert_global_step"]


def global_step(sess, global_step_tensor) -> int:
    """The global step's value in `sess` as a Python int.

    Args:
      sess: the Session to evaluate in.
      global_step_tensor: the global step Variable or Tensor (or its name).
    """
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor) -> None:
    """Checks that `global_step_tensor` is an integer scalar Variable or Tensor.

    Raises:
      TypeError: otherwise.
    """
    from tensorweave.ops.variables import Variable
    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError(f'Existing "global_step" must be a Variable or Tensor: '
                        f"{global_step_tensor}.")
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError(f'Existing "global_step" does not have integer type: '
                        f"{global_step_tensor.dtype}")
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def get_global_step(graph=None):
    """The global step of `graph` (default graph), or None if there is none.

    Looks in the GLOBAL_STEP collection, then for a tensor named `global_step:0`.

    Raises:
      TypeError: if the global step found is not an integer scalar.
    """
    graph = graph or get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) == 1:
        step = found[0]
    elif not found:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except KeyError:
            return None
    else:
        logging.error("Multiple tensors in global_step collection.")
        return None
    assert_global_step(step)
    return step


def create_global_step(graph=None):
    """Creates `global_step` (int64 scalar, zeros initializer, not trainable, aggregated
    ONLY_FIRST_REPLICA as in TF) in `graph`.

    Raises:
      ValueError: if the graph already has a global step.
    """
    from tensorweave.ops import init_ops
    from tensorweave.ops.variable_scope import get_variable
    from tensorweave.ops.variables import VariableAggregation
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph_name_scope(graph, None):
        return get_variable(GraphKeys.GLOBAL_STEP, shape=[], dtype=_dtypes.int64,
                            initializer=init_ops.zeros_initializer(), trainable=False,
                            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP],
                            aggregation=VariableAggregation.ONLY_FIRST_REPLICA)


def get_or_create_global_step(graph=None):
    """The global step of `graph`, created first if needed."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step


GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


def _get_global_step_read(graph=None):
    """The graph's cached global-step read (see `get_or_create_global_step_read`), or None."""
    graph = graph or get_default_graph()
    reads = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if len(reads) > 1:
        raise RuntimeError(f"There are multiple items in collection {GLOBAL_STEP_READ_KEY}. "
                           "There should be only one.")
    return reads[0] if reads else None


def get_or_create_global_step_read(graph=None):
    """`global_step + 0`: a copy of the step's value taken when the read runs, which the
    session hooks fetch (as TensorFlow's do). Run with the train op, it gives the step the
    run started from, where a fetch of the variable itself gives the updated step. None if
    the graph has no global step."""
    graph = graph or get_default_graph()
    read = _get_global_step_read(graph)
    if read is not None:
        return read
    step = get_global_step(graph)
    if step is None:
        return None
    with graph.as_default(), graph_name_scope(graph, None), \
            graph_name_scope(graph, step.op.name + "/"):
        value = step.read_value() if hasattr(step, "read_value") else step
        read = value + 0
    graph.add_to_collection(GLOBAL_STEP_READ_KEY, read)
    return read
