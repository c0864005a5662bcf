"""Layer: the TF1 `tf.layers` base — variables made once under a variable scope, reused after.

A layer named explicitly opens `variable_scope(name)`; an unnamed one gets the next unique
default in the enclosing scope entry (`dense`, `dense_1`, ...; re-entering the scope starts
again at `dense`, so `reuse=True` finds the same variables). The scope is captured on the first
call; every call re-enters it and its first name scope. The first call builds the variables
(`kernel`, `bias`, ...) with `get_variable`; later calls of the same object reuse them.
Regularizer results go to REGULARIZATION_LOSSES, update ops (batch norm) to UPDATE_OPS when the
layer says so.
"""
from __future__ import annotations

import re

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.layers.input_spec import assert_input_compatibility
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.sliced_variables import PartitionedVariable


def snake_case(name: str) -> str:
    """`MyDenseLayer` -> `my_dense_layer`; a leading underscore becomes `private_`."""
    words = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    snake = re.sub(r"([a-z])([A-Z])", r"\1_\2", words).lower()
    return "private" + snake if snake.startswith("_") else snake


class Layer:
    """Base class of tf.layers layers."""

    _base_name = "layer"

    def __init_subclass__(cls, **kwargs):
        """A subclass that names no `_base_name` is named after itself in snake case, as
        TensorFlow names layers (class MyDense: scope `my_dense`, variables `my_dense/...`)."""
        super().__init_subclass__(**kwargs)
        if "_base_name" not in cls.__dict__:
            cls._base_name = snake_case(cls.__name__)

    def __init__(self, trainable=True, name=None, dtype=None, _reuse=None, **kwargs):
        self.trainable = trainable
        self._given_name = name
        self._reuse = _reuse
        self.dtype = _dtypes.as_dtype(dtype) if dtype is not None else None
        self.built = False
        self._scope = None
        self._variables: list = []
        self._trainable_variables: list = []
        self._updates: list = []
        self._losses: list = []
        self.activity_regularizer = kwargs.pop("activity_regularizer", None)
        self.input_spec = None

    # --- properties TF users read ---------------------------------------------------------
    @property
    def name(self) -> str:
        return self._scope.name.rsplit("/", 1)[-1] if self._scope else (self._given_name or "")

    @property
    def scope_name(self) -> str:
        return self._scope.name if self._scope else ""

    @property
    def variables(self) -> list:
        return list(self._variables)

    weights = variables

    @property
    def trainable_variables(self) -> list:
        return list(self._trainable_variables) if self.trainable else []

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        return [v for v in self._variables if v not in self.trainable_variables]

    non_trainable_weights = non_trainable_variables

    @property
    def updates(self) -> list:
        """The update ops added so far; none while the layer is not trainable (TF's
        `Layer.updates` skips frozen layers, so `trainable=False` freezes moving statistics)."""
        return list(self._updates) if self.trainable else []

    @property
    def losses(self) -> list:
        return list(self._losses)

    # --- building -------------------------------------------------------------------------
    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None,
                   trainable=True, constraint=None, **_):
        """Creates (or, when reusing, fetches) a variable under the layer's scope."""
        dtype = dtype or self.dtype or _dtypes.float32
        trainable = trainable and self.trainable
        collections = None
        if not trainable:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        scope = vs.get_variable_scope()
        full = f"{scope.name}/{name}" if scope.name else name
        store = vs.variable_store(get_default_graph())
        existed = full in store.vars or full in store.partitioned_vars
        variable = vs.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                                   regularizer=None, trainable=trainable,
                                   collections=collections, constraint=constraint)
        partitioned = isinstance(variable, PartitionedVariable)
        for part in (list(variable) if partitioned else [variable]):
            if part in self._variables:
                continue
            self._variables.append(part)
            if trainable:
                self._trainable_variables.append(part)
            if regularizer is not None and not existed:
                self._add_weight_loss(regularizer, part, f"{full}/Regularizer" if partitioned
                                      else f"{part.op.name}/Regularizer/")
        return variable

    def _add_weight_loss(self, regularizer, variable, scope: str) -> None:
        """`regularizer(variable)` under `scope` (a relative scope, uniquified per part of a
        partitioned weight: `kernel/Regularizer`, `kernel/Regularizer_1`, as in TF)."""
        with name_scope(None), name_scope(scope):
            loss = regularizer(variable)
        if loss is not None:
            self._losses.append(loss)
            get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def add_update(self, update, inputs=None) -> None:
        """Records an update op; `__call__` publishes `updates` to UPDATE_OPS."""
        self._updates.append(update)

    def build(self, input_shape) -> None:
        self.built = True

    def call(self, inputs, **kwargs):
        raise NotImplementedError

    def compute_output_shape(self, input_shape):
        raise NotImplementedError

    # --- calling --------------------------------------------------------------------------
    def __call__(self, inputs, *args, **kwargs):
        inputs = convert_to_tensor(inputs) if not isinstance(inputs, (list, tuple)) else inputs
        if self._scope is None:
            self._scope = self._capture_scope()
        reuse = True if self.built else self._reuse
        assert_input_compatibility(self.input_spec, inputs, self.name)
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False), \
                name_scope(self._scope.original_name_scope):
            if not self.built:
                if self.dtype is None and hasattr(inputs, "dtype"):
                    self.dtype = inputs.dtype.base_dtype
                self.build(inputs.shape if hasattr(inputs, "shape") else None)
                self.built = True
            outputs = self.call(inputs, *args, **kwargs)
            if self.activity_regularizer is not None:
                self._add_activity_loss(outputs)
        # As TF's legacy layers: after each call, the layer's `updates` not yet in UPDATE_OPS.
        collection = get_default_graph().get_collection_ref(GraphKeys.UPDATE_OPS)
        present = {id(u) for u in collection}
        collection.extend(u for u in self.updates if id(u) not in present)
        return outputs

    def _add_activity_loss(self, outputs) -> None:
        """The activity regularizer's loss of `outputs`, divided by the batch size as in
        TF (`<layer>/ActivityRegularizer/truediv`), into REGULARIZATION_LOSSES."""
        from tensorweave.ops.array_ops import shape
        from tensorweave.ops.math_unary_ops import cast
        with name_scope("ActivityRegularizer"):
            loss = self.activity_regularizer(outputs)
            if loss is None:
                return
            loss = loss / cast(shape(outputs)[0], loss.dtype.base_dtype)
        self._losses.append(loss)
        get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    apply = __call__

    def _capture_scope(self) -> vs.VariableScope:
        """The layer's variable scope, opened once in the caller's scope as TF's `_set_scope`:
        the given name, or the next unique `dense`, `dense_1`, ... (just `dense` when
        reusing)."""
        if self._reuse and self._given_name is None:
            scope_ctx = vs.variable_scope(self._base_name)
        else:
            scope_ctx = vs.variable_scope(self._given_name, default_name=self._base_name)
        with scope_ctx as scope:
            return scope


def smart_cond(training, true_fn, false_fn):
    """`true_fn()` if `training` else `false_fn()`: a Python bool or a constant-foldable
    tensor picks one side while building; any other scalar bool tensor builds a tf.cond, so
    only the chosen side runs."""
    if isinstance(training, bool):
        return true_fn() if training else false_fn()
    from tensorweave.framework.static_value import static_value
    training = convert_to_tensor(training)
    known = static_value(training)
    if known is not None:
        return true_fn() if bool(known) else false_fn()
    from tensorweave.ops.cond import cond
    return cond(training, true_fn, false_fn)
