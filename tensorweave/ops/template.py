"""Variable sharing by construction: tf.make_template (TF1's Template) and tf.init_scope.

A Template wraps a function that creates variables with tf.get_variable: the first call opens
a fresh, uniquely named variable scope and creates them; every later call re-enters that scope
with reuse=True, so the same variables are shared. A later call that creates a new trainable
variable is a ValueError (usually tf.Variable used where tf.get_variable was meant). Errors
raised inside the function get the template's creation stack appended, as in TensorFlow.

`init_scope` lifts the ops built in its block out of control-flow contexts and control
dependencies (and out of function graphs into the outermost graph), keeping the name scope:
the place to create variables and other state from inside a cond or a loop body.
"""
from __future__ import annotations

import contextlib
import functools
import traceback

from tensorweave.framework.graph import GraphKeys, get_collection, get_default_graph
from tensorweave.framework.scopes import name_scope
from tensorweave.ops.variable_scope import variable_scope
from tensorweave.platform import tf_logging

__all__ = ["Template", "init_scope", "make_template"]


class Template:
    """Wraps `func` so that every call shares the variables of the first (TF1's Template)."""

    def __init__(self, name, func, create_scope_now=False, unique_name=None,
                 custom_getter=None):
        if name is None:
            raise ValueError("name cannot be None.")
        self._func = func
        self._stacktrace = traceback.format_stack()[:-2]
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope = None
        if create_scope_now:
            # The scope is named (and made unique) now, but no name scope is opened.
            with variable_scope(unique_name, default_name=None if unique_name else name,
                                custom_getter=custom_getter,
                                auxiliary_name_scope=False) as vs:
                # TF opens this scope bare, so its original name scope is the bare name.
                vs._name_scope = vs.name.rsplit("/", 1)[-1]
                self._variable_scope = vs
        self._variables_created = False
        self._first_call = True

    def __call__(self, *args, **kwargs):
        if self._variable_scope is not None:
            # reuse=False inherits the enclosing reuse, as variable_scope does in TF1.
            with variable_scope(self._variable_scope, reuse=not self._first_call):
                return self._call_func(args, kwargs)
        with variable_scope(self._unique_name, self._name,
                            custom_getter=self._custom_getter) as vs:
            self._variable_scope = vs
            return self._call_func(args, kwargs)

    def _call_func(self, args, kwargs):
        try:
            if not self._variables_created:
                self._first_call = False
                try:
                    result = self._func(*args, **kwargs)
                except BaseException:
                    self._first_call = True
                    raise
                self._variables_created = True
                return result
            global_before = len(get_collection(GraphKeys.GLOBAL_VARIABLES))
            trainable_before = len(get_collection(GraphKeys.TRAINABLE_VARIABLES))
            result = self._func(*args, **kwargs)
            trainable = get_collection(GraphKeys.TRAINABLE_VARIABLES)
            if len(trainable) != trainable_before:
                raise ValueError("Trainable variable created when calling a template after the "
                                 "first time, perhaps you used tf.Variable when you meant "
                                 f"tf.get_variable: {trainable[trainable_before:]}")
            variables = get_collection(GraphKeys.GLOBAL_VARIABLES)
            if len(variables) != global_before:
                tf_logging.info("New variables created when calling a template after the first "
                                "time, perhaps you used tf.Variable when you meant "
                                "tf.get_variable: %s", variables[global_before:])
            return result
        except Exception as exc:
            # The error's first argument gets the stack where the template was made.
            trace = "".join(_skip_common_stack_elements(self._stacktrace,
                                                        traceback.format_stack()))
            first = exc.args[0] if exc.args else ""
            exc.args = (f"{first}\n\noriginally defined at:\n{trace}", *exc.args[1:])
            raise

    name = property(lambda self: self._name)
    func = property(lambda self: self._func)
    variable_scope = property(lambda self: self._variable_scope)
    var_scope = variable_scope

    @property
    def variable_scope_name(self):
        """The scope's name with a trailing "/" (None before the scope exists)."""
        if self._variable_scope is None:
            return None
        name = self._variable_scope.name
        return name if not name or name.endswith("/") else name + "/"

    def _scoped(self, key):
        if self._variable_scope is None:  # never called: nothing can be in the scope yet
            return []
        return get_collection(key, self.variable_scope_name)

    @property
    def trainable_variables(self):
        return self._scoped(GraphKeys.TRAINABLE_VARIABLES)

    @property
    def global_variables(self):
        return self._scoped(GraphKeys.GLOBAL_VARIABLES)

    @property
    def local_variables(self):
        return self._scoped(GraphKeys.LOCAL_VARIABLES)

    @property
    def non_trainable_variables(self):
        trainable = set(self.trainable_variables)
        return [v for v in self.global_variables if v not in trainable]

    variables = global_variables
    weights = trainable_variables
    trainable_weights = trainable_variables
    non_trainable_weights = non_trainable_variables


def _skip_common_stack_elements(stacktrace, base_case):
    """The frames of `stacktrace` after the prefix it shares with `base_case`."""
    for i, (trace, base) in enumerate(zip(stacktrace, base_case)):
        if trace != base:
            return stacktrace[i:]
    return stacktrace[-1:]


def make_template(name_, func_, create_scope_now_=False, unique_name_=None,
                  custom_getter_=None, **kwargs):
    """Wraps `func_` so that all its calls share variables (tf.make_template).

    `func_` must create its variables with tf.get_variable. The first call creates them in a
    variable scope named after `name_` (made unique: "name_", "name__1", ...); later calls
    reuse them.

    Args:
      name_: the name of the variable scope (and of the name scopes of the calls).
      func_: the function to wrap.
      create_scope_now_: if True, the variable scope is named now instead of at the first
        call (the name scopes of the calls are still opened per call).
      unique_name_: if given, the exact variable scope name (not made unique), so templates
        can share variables by name.
      custom_getter_: a custom getter for the template's variable scope.
      **kwargs: keyword arguments bound to every call of `func_`.

    Returns:
      A Template: call it like `func_`.

    Raises:
      ValueError: if `name_` is None. Calling the template raises ValueError when a call after
        the first creates a trainable variable.
    """
    if kwargs:
        func_ = functools.update_wrapper(functools.partial(func_, **kwargs), func_)
    return Template(name_, func_, create_scope_now=create_scope_now_, unique_name=unique_name_,
                    custom_getter=custom_getter_)


@contextlib.contextmanager
def init_scope():
    """A block whose ops are built outside any control-flow context and control dependencies,
    in the outermost graph, under the current name scope (tf.init_scope).

    Yields:
      None.
    """
    from tensorweave.ops.control_flow_context import building_in
    graph = get_default_graph()
    scope = graph.get_name_scope()
    outer = graph
    while getattr(outer, "outer", None) is not None:  # function graphs (tf.data) nest
        outer = outer.outer
    with outer.as_default(), name_scope(f"{scope}/" if scope else ""), \
            building_in(None, clear_control_dependencies=True):
        yield
