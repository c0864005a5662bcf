"""tf.variable_creator_scope: functions that take over the creation of variables.

Inside `variable_creator_scope(creator)`, making a Variable (tf.Variable, tf.get_variable, a
layer's or an optimizer's variables) calls `creator(next_creator, **kwargs)` instead, which
may change the arguments, make something else, or call `next_creator(**kwargs)`. Nested
scopes chain from the innermost out, the last `next_creator` making the variable as usual.
The keyword arguments are TensorFlow 2.21's: the Variable constructor's, plus
`experimental_enable_variable_lifting` (None: there is no tf.function to lift out of). As in
TensorFlow, the creators are those of the default graph, per thread.
"""
from __future__ import annotations

import contextlib
import threading
import weakref

from tensorweave.framework.graph import get_default_graph

__all__ = ["variable_creator_scope"]

_local = threading.local()   # .stacks: graph -> the creators entered on this thread


def _stack(graph) -> list:
    stacks = getattr(_local, "stacks", None)
    if stacks is None:
        stacks = _local.stacks = weakref.WeakKeyDictionary()
    return stacks.setdefault(graph, [])


@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """Makes `variable_creator(next_creator, **kwargs)` create the variables made inside.

    Args:
      variable_creator: the function called with the next creator and the variable's
        keyword arguments; it returns the variable (or whatever should stand for it).

    Yields:
      Nothing; the scope lasts for the `with` block.
    """
    stack = _stack(get_default_graph())
    stack.append(variable_creator)
    try:
        yield
    finally:
        stack.pop()


def active_creators() -> list:
    """The creators in effect for the default graph on this thread, outermost first."""
    stacks = getattr(_local, "stacks", None)
    return stacks.get(get_default_graph(), []) if stacks is not None else []


def create_through(creators, make, arguments: dict):
    """What the chain of `creators` returns for the constructor `arguments`; the last link
    calls `make(**arguments)` without TensorFlow's extra keyword."""
    def default(**kwargs):
        kwargs.pop("experimental_enable_variable_lifting", None)
        return make(**kwargs)

    creator = default
    for outer in creators:
        creator = _link(outer, creator)
    return creator(**arguments, experimental_enable_variable_lifting=None)


def _link(variable_creator, next_creator):
    return lambda **kwargs: variable_creator(next_creator, **kwargs)
