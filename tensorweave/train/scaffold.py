"""tf.train.Scaffold: the ops a managed session needs to initialize, check, save and summarize.

`finalize()` fills what the user left out the way TF does — from the graph collection of the
same name (exactly one item) or else a default it builds and adds there — builds the saver and
finalizes the graph.
"""
from __future__ import annotations

from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.platform import tf_logging as logging

__all__ = ["Scaffold"]

_FIELDS = ("init_op", "init_feed_dict", "ready_op", "ready_for_local_init_op", "local_init_op",
           "local_init_feed_dict", "summary_op", "saver")


def _default_init_op():
    from tensorweave.ops.control_flow_ops import group
    from tensorweave.ops.variables import global_variables_initializer
    return group(global_variables_initializer())


def _default_ready_op():
    from tensorweave.ops.variables import report_uninitialized_variables
    return report_uninitialized_variables()


def _default_ready_for_local_init_op():
    from tensorweave.ops.variables import global_variables, report_uninitialized_variables
    return report_uninitialized_variables(global_variables())


def _default_summary_op():
    from tensorweave.ops.summary_ops import merge_all
    return merge_all()


def _default_saver():
    """The one Saver of the SAVERS collection, else a new sharded one added there."""
    from tensorweave.train.saver import Saver
    graph = get_default_graph()
    savers = graph.get_collection(GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please "
                               "indicate which one to use by passing it to the constructor.")
        return savers[0]
    saver = Saver(sharded=True, allow_empty=True)
    graph.add_to_collection(GraphKeys.SAVERS, saver)
    return saver


class Scaffold:
    """Structure to create or gather the pieces commonly needed to train a model.

    Args:
      init_op: op initializing the model when it is not restored (default: global variables
        initializer).
      init_feed_dict: feeds for `init_op`.
      init_fn: `init_fn(scaffold, session)` called after `init_op`.
      ready_op: 1-D string tensor, empty when the model is ready (default: the names of the
        uninitialized variables).
      ready_for_local_init_op: like `ready_op`, for `local_init_op` (default: uninitialized
        global variables).
      local_init_op: op run in every new session (default: local variables and tables
        initializers).
      summary_op: the merged summary tensor (default: `tf.summary.merge_all()`).
      saver: the Saver (default: the SAVERS collection's, else a new one).
      copy_from_scaffold: a Scaffold whose fields fill those not given here.
      local_init_feed_dict: feeds for `local_init_op`.
    """

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None, local_init_feed_dict=None):
        given = dict(init_op=init_op, init_feed_dict=init_feed_dict, ready_op=ready_op,
                     ready_for_local_init_op=ready_for_local_init_op,
                     local_init_op=local_init_op, local_init_feed_dict=local_init_feed_dict,
                     summary_op=summary_op, saver=saver)
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            for field in _FIELDS:
                if given[field] is None:
                    given[field] = getattr(copy_from_scaffold, "_" + field)
            init_fn = init_fn or copy_from_scaffold._user_init_fn
        for field in _FIELDS:
            setattr(self, "_" + field, given[field])
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None

    def finalize(self):
        """Creates the missing ops, builds the saver and finalizes the default graph."""
        defaults = (("init_op", GraphKeys.INIT_OP, _default_init_op),
                    ("ready_op", GraphKeys.READY_OP, _default_ready_op),
                    ("ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                     _default_ready_for_local_init_op),
                    ("local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op),
                    ("summary_op", GraphKeys.SUMMARY_OP, _default_summary_op))
        for field, key, build in defaults:
            if getattr(self, "_" + field) is None:
                setattr(self, "_" + field, Scaffold.get_or_default(field, key, build))
        if self._saver is None:
            self._saver = _default_saver()
        self._saver.build()
        get_default_graph().finalize()
        logging.info("Graph was finalized.")
        return self

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The single item of `collection_key`, else `default_constructor()` (added there).

        Raises:
          RuntimeError: if the collection holds more than one item.
        """
        graph = get_default_graph()
        elements = graph.get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(f'More than one item in the collection "{collection_key}". '
                                   f"Please indicate which one to use by passing it to the "
                                   f"tf.Scaffold constructor as:  "
                                   f"tf.Scaffold({arg_name}=item to use)")
            return elements[0]
        op = default_constructor()
        if op is not None:
            graph.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """group(local variables initializer, table initializers): run in every session."""
        from tensorweave.ops.control_flow_ops import group
        from tensorweave.ops.variables import local_variables_initializer
        tables = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
        return group(local_variables_initializer(), *tables)

    init_fn = property(lambda self: self._init_fn)
    init_op = property(lambda self: self._init_op)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    local_init_op = property(lambda self: self._local_init_op)
    local_init_feed_dict = property(lambda self: self._local_init_feed_dict)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)
    init_feed_dict = property(lambda self: self._init_feed_dict)
