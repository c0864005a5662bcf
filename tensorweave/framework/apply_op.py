"""apply_op: the single entry point of every op wrapper.

In a graph it converts the inputs, infers type attrs, checks dtypes, runs the shape function,
applies the name/device/control/colocation scopes, records the user's creation site and adds an
Operation. Wrappers never branch on the execution mode; eager mode (a later issue) plugs in here.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import op_callbacks
from tensorweave.framework import scopes as _scopes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.attr_text import attrs_text, summarize_value
from tensorweave.framework.graph import get_default_graph, graph_from_inputs
from tensorweave.framework.op_def import Arg, OpDef
from tensorweave.framework.operation import Operation, Tensor, user_creation_site
from tensorweave.framework.shape_fns import ShapeContext, ShapeTensorError
from tensorweave.framework.shape_text import shape_text
from tensorweave.framework.static_value import (
    invalid_shape_entry,
    static_shape_value,
    static_value,
)
from tensorweave.framework.tensor_conversion import convert_to_tensor


def apply_op(op_def: OpDef, inputs=(), attrs: dict | None = None, name: str | None = None):
    """Adds an op of type `op_def` to the default graph.

    Returns the output Tensor for a single-output op, the Operation for an op without outputs,
    and the list of output Tensors otherwise.
    """
    op = create_op(op_def, inputs, attrs, name)
    outputs = op._outputs
    if outputs and op_callbacks.active():
        outputs = op_callbacks.invoke(op, list(outputs))
    if op_def.single_output:
        return outputs[0]
    if not outputs:
        return op
    return list(outputs)


def create_op(op_def: OpDef, inputs=(), attrs: dict | None = None, name: str | None = None,
              graph=None) -> Operation:
    """Builds and adds the Operation; see `apply_op`."""
    if graph is None:
        graph = get_default_graph()
        if not _all_of(graph, inputs):
            inputs_graph = graph_from_inputs(_flatten(inputs), graph)
            if inputs_graph is not graph:
                # Like TF, the op goes into its inputs' graph, made the default while it is
                # built (values convert there) and whose scopes apply.
                with inputs_graph.as_default():
                    return create_op(op_def, inputs, attrs, name, inputs_graph)
    if graph._finalized:
        raise RuntimeError("Graph is finalized and cannot be modified.")
    if len(inputs) != len(op_def.inputs):
        raise TypeError(f"{op_def.name} takes {len(op_def.inputs)} inputs "
                        f"({', '.join(a.name for a in op_def.inputs)}), got {len(inputs)}")
    attrs = _normalize_attrs(op_def, attrs) if attrs else {}
    state = graph._scopes
    flow_context = state.control_flow_context
    if any(_needs_conversion(v) for v in inputs) or flow_context is not None:
        # Like TF, values become constants named after their argument inside the op's own
        # scope ('Less/y'), and a cond or loop brings outside tensors in there too
        # ('cond/AssignAdd/Switch'), so the op's name is taken first.
        name = _op_name(graph, name, op_def) + "/"
        with _scopes.graph_name_scope(graph, name):
            flat_inputs = _convert_inputs(op_def, inputs, attrs)
            flat_inputs = _captured(graph, flow_context, flat_inputs, op_def)
    else:
        flat_inputs = _captured(graph, flow_context, _convert_inputs(op_def, inputs, attrs),
                                op_def)
    _fill_defaults(op_def, attrs)
    if graph._container and op_def.is_stateful and attrs.get("container") == "":
        attrs["container"] = graph._container   # tf.container: as TF's Graph.create_op
    out_dtypes = _output_dtypes(op_def, attrs)
    name = _op_name(graph, name, op_def)
    out_shapes = _infer_shapes(op_def, flat_inputs, attrs, name, len(out_dtypes))
    if state.gradient_override and op_def.name in state.gradient_override:
        attrs["_gradient_op_type"] = state.gradient_override[op_def.name]
    input_ops = [t._op for t in flat_inputs]
    control = _scopes.control_inputs_for(state, input_ops) if state.control_stack else ()
    # Like TF's op_def_library, an op taking a reference argument (a variable's ref) is made
    # colocated with it: its `_class` joins the ref's group and device scopes do not apply.
    refs = _ref_inputs(op_def, inputs, flat_inputs)
    colocation = state.colocation_stack + [t._op for t in refs] if refs else \
        state.colocation_stack
    colocated_device = ""
    if colocation:
        attrs["_class"], colocated_device = _scopes.colocation_for(colocation)
    op = Operation(graph, name, op_def, flat_inputs, attrs, out_dtypes, out_shapes, control,
                   "", user_creation_site())
    if state.device_stack and not refs:
        op._device = _scopes.device_for_op(state, op)
    if colocated_device:
        op._device = colocated_device   # TF: a colocation op's device beats device scopes
    graph._add_op(op)
    if state.control_stack:
        _scopes.record_op_in_blocks(state, op)
    if flow_context is not None:
        op._control_flow_context = flow_context
        flow_context.add_op(op)
    return op


def _ref_inputs(op_def: OpDef, inputs, flat_inputs) -> list[Tensor]:
    """The flat inputs that feed reference arguments of `op_def`."""
    refs, k = [], 0
    for arg_def, value in zip(op_def.inputs, inputs):
        n = len(value) if arg_def.number_attr or arg_def.type_list_attr else 1
        if arg_def.is_ref:
            refs.extend(flat_inputs[k:k + n])
        k += n
    return refs


def _captured(graph, flow_context, flat_inputs: list, op_def: OpDef) -> list[Tensor]:
    """The inputs as the new op sees them: a graph tracing a function (data/function.py)
    captures outer tensors, and inside cond/while values from outside come in through a
    Switch or an Enter."""
    for i, t in enumerate(flat_inputs):
        if t.graph is not graph:
            capture = getattr(graph, "capture", None)
            if capture is None:
                raise ValueError(f"Tensor {t.name} must be from the same graph as the other "
                                 f"inputs of the new op ({op_def.name}).")
            flat_inputs[i] = capture(t)
    if flow_context is not None:
        flat_inputs = [flow_context.capture(t) for t in flat_inputs]
    return flat_inputs


def _all_of(graph, inputs) -> bool:
    """True if every input is a Tensor of `graph` or a plain value: the common case, decided
    without `graph_from_inputs`."""
    for value in inputs:
        if isinstance(value, Tensor):
            if value._op._graph is not graph:
                return False
        elif isinstance(value, (list, tuple)) or hasattr(value, "_as_graph_element"):
            return False
    return True


def _flatten(inputs) -> list:
    """The inputs with list arguments spliced in, as TF's op_def_library._Flatten."""
    flat = []
    for value in inputs:
        if isinstance(value, (list, tuple)):
            flat.extend(value)
        else:
            flat.append(value)
    return flat


def _op_name(graph, name, op_def) -> str:
    if name and name[-1] == "/":
        return name[:-1]  # a scope name ('w/') names its op exactly; the scope reserved it
    return graph.unique_name(name or op_def.name)


def _needs_conversion(value) -> bool:
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return False
    if isinstance(value, (list, tuple)):   # [] is a value too: tf.reshape(x, [])
        return not value or any(_needs_conversion(v) for v in value)
    return True


def _normalize_attrs(op_def: OpDef, attrs: dict) -> dict:
    out = {}
    for key, value in attrs.items():
        spec = op_def.attrs.get(key)
        if spec is None:
            if key.startswith("_"):
                out[key] = value
                continue
            raise TypeError(f"{op_def.name} has no attr named {key!r}")
        out[key] = _coerce_attr(spec.kind, value)
    return out


def _coerce_attr(kind: str, value):
    if value is None:
        return None
    if kind == "type":
        return _dtypes.as_dtype(value)
    if kind == "shape":
        return _ts.as_shape(value)
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    if kind == "bool":
        return bool(value)
    if kind == "list(type)":
        return [_dtypes.as_dtype(v) for v in value]
    if kind == "list(int)":
        return [int(v) for v in value]
    if kind == "list(shape)":
        return [_ts.as_shape(v) for v in value]
    if kind == "list(float)":
        return [float(v) for v in value]
    return value


def _convert_inputs(op_def: OpDef, inputs, attrs: dict) -> list[Tensor]:
    """Converts every input, inferring type attrs from Tensors first, then from values."""
    known = {n: attrs[n] for n in op_def.type_attrs if n in attrs}
    source = {}
    for arg_def, value in zip(op_def.inputs, inputs):
        attr = arg_def.type_attr
        if attr is None or attr in known:
            continue
        items = value if arg_def.number_attr else (value,)
        for item in items:
            if isinstance(item, Tensor) or hasattr(item, "_as_graph_element"):
                tensor = convert_to_tensor(item, as_ref=arg_def.is_ref)
                known[attr] = tensor.dtype.base_dtype
                source[attr] = arg_def.name
                break
    flat: list[Tensor] = []
    for arg_def, value in zip(op_def.inputs, inputs):
        if arg_def.number_attr:
            if not isinstance(value, (list, tuple)):
                raise TypeError(f"Expected list for '{arg_def.name}' argument to "
                                f"'{op_def.name}' Op, not {value!r}.")
            attrs.setdefault(arg_def.number_attr, len(value))
            # As TF's convert_n_to_tensor, a list's values are named 'values_0', 'values_1'.
            for i, item in enumerate(value):
                flat.append(_convert_one(op_def, arg_def, item, known, source,
                                         f"{arg_def.name}_{i}"))
        elif arg_def.type_list_attr:
            tensors = [convert_to_tensor(v, name=f"{arg_def.name}_{i}")
                       for i, v in enumerate(value)]
            attrs.setdefault(arg_def.type_list_attr, [t.dtype.base_dtype for t in tensors])
            flat.extend(tensors)
        else:
            flat.append(_convert_one(op_def, arg_def, value, known, source))
    for attr_name, dtype in known.items():
        spec = op_def.attrs[attr_name]
        if spec.allowed is not None and dtype not in spec.allowed:
            allowed = ", ".join(sorted(d.name for d in spec.allowed))
            raise TypeError(f"Value passed to parameter '{source.get(attr_name, attr_name)}' "
                            f"has DataType {dtype.name} not in list of allowed values: "
                            f"{allowed}")
        attrs[attr_name] = dtype
    return flat


def _convert_one(op_def: OpDef, arg_def: Arg, value, known: dict, source: dict,
                 name: str | None = None) -> Tensor:
    want = arg_def.dtype if arg_def.dtype is not None else known.get(arg_def.type_attr)
    # Tensors keep their dtype, so a mismatch is the TypeError below, not a conversion error.
    is_graph_value = isinstance(value, Tensor) or hasattr(value, "_as_graph_element")
    # Like TF, a Python value (not a NumPy array, which keeps its dtype) of a type attr with a
    # default prefers that dtype: tf.reshape(x, []) gets an int32 shape.
    spec = op_def.attrs[arg_def.type_attr] if arg_def.type_attr else None
    default = spec.default if want is None and spec is not None and spec.has_default \
        and not hasattr(value, "dtype") else None
    name = None if is_graph_value else name or arg_def.name
    tensor = None
    if default is not None and spec.allowed is not None:
        # TF first converts without the preference and keeps the result if its dtype is
        # allowed (tf.one_hot([1, 2], 3) gets TI=int32 though TI defaults to int64); else it
        # converts again, preferring the default, and the first constant stays unused.
        try:
            tensor = convert_to_tensor(value, as_ref=arg_def.is_ref, name=name)
        except TypeError:
            pass
        if tensor is not None and tensor.dtype.base_dtype not in spec.allowed:
            tensor = None
    if tensor is None:
        tensor = convert_to_tensor(value, dtype=None if is_graph_value else want,
                                   preferred_dtype=default, as_ref=arg_def.is_ref, name=name)
    dtype = tensor.dtype
    if arg_def.is_ref and not dtype._is_ref_dtype:
        raise TypeError(f"'{op_def.name}' Op requires that input '{arg_def.name}' be a mutable "
                        "tensor (e.g.: a tf.Variable)")
    base = dtype.base_dtype
    if want is not None and base != want:
        if arg_def.dtype is not None:
            expected = f"expected type of {want.name}"
        else:
            expected = f"type {want.name} of argument '{source.get(arg_def.type_attr, '')}'"
        raise TypeError(f"Input '{arg_def.name}' of '{op_def.name}' Op has type {base.name} "
                        f"that does not match {expected}.")
    if arg_def.type_attr is not None and arg_def.type_attr not in known:
        known[arg_def.type_attr] = base
        source[arg_def.type_attr] = arg_def.name
    return tensor


def _fill_defaults(op_def: OpDef, attrs: dict) -> None:
    """Fills in default attrs, and checks the attrs' minimums as TF's op registry does (an
    int's value, a list's length)."""
    for attr_name, spec in op_def.attrs.items():
        if attr_name not in attrs:
            if not spec.has_default:
                raise TypeError(f"{op_def.name} missing required attr {attr_name!r}")
            attrs[attr_name] = spec.default
        if spec.minimum is not None:
            _check_minimum(op_def, spec, attrs[attr_name])


def _check_minimum(op_def: OpDef, spec, value) -> None:
    if spec.kind.startswith("list("):
        if len(value) < spec.minimum:
            raise ValueError(f"Attr '{spec.name}' of '{op_def.name}' Op passed list of length "
                             f"{len(value)} less than minimum {spec.minimum}.")
    elif spec.kind == "int" and value < spec.minimum:
        raise ValueError(f"Attr '{spec.name}' of '{op_def.name}' Op passed {value} less than "
                         f"minimum {spec.minimum}.")


def _output_dtypes(op_def: OpDef, attrs: dict) -> list:
    out = []
    for a in op_def.outputs:
        if a.type_list_attr:
            out.extend(attrs[a.type_list_attr])
            continue
        dtype = a.dtype if a.dtype is not None else attrs[a.type_attr]
        if a.is_ref:
            dtype = dtype._as_ref
        out.extend([dtype] * (attrs[a.number_attr] if a.number_attr else 1))
    return out


def _infer_shapes(op_def: OpDef, inputs, attrs, name: str, n_out: int) -> list:
    # As in TF, an op without outputs still runs its shape function: it validates the inputs.
    if op_def.shape_fn is None:
        return [_ts.unknown_shape()] * n_out
    ctx = ShapeContext(inputs, attrs, op_def.name)
    try:
        shapes = op_def.shape_fn(ctx)
    except ValueError as e:
        blind, blind_error = _run_blind(op_def, ctx)
        if blind is not None:
            # TF materializes the shape tensors its first (blind) run asked for before the
            # second run; an entry below -1 fails there, outside the shape function.
            for i in sorted(blind.read_shapes):
                bad = invalid_shape_entry(inputs[i])
                if bad is not None:
                    raise ValueError(f"Invalid value in tensor used for shape: {bad}") from None
        elif isinstance(e, ShapeTensorError) and isinstance(blind_error, ValueError):
            e = blind_error   # TF's first run failed, so its error is the one reported
        in_shapes = ", ".join(shape_text(t._shape) for t in inputs)
        in_names = ", ".join(t._as_node_def_input() for t in inputs)
        node_attrs = attrs_text(attrs, op_def.attrs)
        raise ValueError(f"{e} for '{{{{node {name}}}}} = {op_def.name}[{node_attrs}]({in_names})'"
                         f" with input shapes: {in_shapes}{_read_inputs_text(ctx, blind)}."
                         ) from None
    if isinstance(shapes, _ts.TensorShape):
        shapes = [shapes] * n_out if n_out != 1 else [shapes]
    if len(shapes) != n_out:
        raise AssertionError(f"shape function of {op_def.name} returned {len(shapes)} shapes "
                             f"for {n_out} outputs")
    return shapes



def _run_blind(op_def: OpDef, ctx: ShapeContext):
    """Reruns the shape function with every input value hidden, as TF's first run sees them.

    Returns (the blind context, None), or (None, the error) if that run fails. Runs only if
    the failed run read some input value: otherwise both runs are the same.
    """
    if not (ctx.read_values or ctx.read_shapes):
        return None, None
    blind = ShapeContext(ctx.inputs, ctx.attrs, ctx.op_type, blind=True)
    try:
        op_def.shape_fn(blind)
    except Exception as e:   # noqa: BLE001 - failing blind means TF's first run failed
        return None, e
    return blind, None


def _read_inputs_text(ctx: ShapeContext, blind: ShapeContext | None) -> str:
    """TF's ` and with computed input tensors: input[i] = <v>` and ` and with input tensors
    computed as partial shapes: input[i] = [4,?]` clauses, or "".

    TF's shape refiner first runs the shape function without input values, then materializes
    the values it asked for and runs it again; only an error of that second run lists them.
    So the clauses appear only if the function succeeds when every value is hidden (`blind`
    is that run's context, None if it failed); the inputs listed are those either run read
    (TF's request flags outlive a run), an input read as a partial shape shown as one.
    """
    if blind is None:
        return ""
    read_values = ctx.read_values | blind.read_values
    read_shapes = ctx.read_shapes | blind.read_shapes
    values, shapes = [], []
    for i, t in enumerate(ctx.inputs):
        partial = static_shape_value(t) if i in read_shapes else None
        if partial is not None and partial.ndims is not None:
            shapes.append(f"input[{i}] = {shape_text(partial)}")
            continue
        value = static_value(t) if i in read_values else None
        if value is not None:
            values.append(f"input[{i}] = <{summarize_value(value, 256)}>")
    text = " and with computed input tensors: " + ", ".join(values) if values else ""
    if shapes:   # TF joins these with "," but the computed tensors with ", "
        text += " and with input tensors computed as partial shapes: " + ",".join(shapes)
    return text
