"""`tensorweave saved-model show|run`: TensorFlow's saved_model_cli for SavedModel directories.

show lists a SavedModel's tag-sets, a tag-set's signatures, or a signature's inputs and
outputs (all of it with `--all`), in saved_model_cli's words; run loads a tag-set and runs a
signature on inputs given as Python literals (`--input_exprs 'x=[[1, 2, 3]]'`), printing each
output as saved_model_cli does.
"""
from __future__ import annotations

import ast

import numpy as np

from tensorweave.protos import types_pb2
from tensorweave.saved_model import loader

__all__ = ["run", "show"]


def show(export_dir: str, tag_set: str | None = None, signature_def: str | None = None,
         show_all: bool = False) -> str:
    """What `saved_model_cli show` prints for these arguments.

    Raises:
      RuntimeError: no MetaGraphDef has the tag-set.
      ValueError: the MetaGraphDef has no such signature.
    """
    saved_model = loader.parse_saved_model(export_dir)
    if show_all:
        return _show_all(saved_model)
    if tag_set is None:
        return "The given SavedModel contains the following tag-sets:\n" + "".join(
            f"'{', '.join(sorted(m.meta_info_def.tags))}'\n" for m in saved_model.meta_graphs)
    meta = _meta_graph(saved_model, tag_set)
    if signature_def is None:
        return "The given SavedModel MetaGraphDef contains SignatureDefs with the following " \
            "keys:\n" + "".join(f'SignatureDef key: "{key}"\n'
                                for key in sorted(meta.signature_def))
    return _signature_text(_signature(meta, signature_def), "")


def run(export_dir: str, tag_set: str, signature_def: str, input_exprs: str) -> str:
    """What `saved_model_cli run` prints: each output of the signature run on the inputs
    `name=<Python literal>` separated by ';'.

    Raises:
      ValueError: an input expression is malformed, unknown or missing.
    """
    import tensorweave as tf
    meta = _meta_graph(loader.parse_saved_model(export_dir), tag_set)
    signature = _signature(meta, signature_def)
    inputs = _parse_inputs(input_exprs)
    unknown = sorted(set(inputs) - set(signature.inputs))
    missing = sorted(set(signature.inputs) - set(inputs))
    if unknown or missing:
        raise ValueError(f"Inputs {unknown} are not in signature {signature_def!r}" if unknown
                         else f"Signature {signature_def!r} needs inputs {missing}")
    with tf.Graph().as_default() as graph, tf.Session(graph=graph) as sess:
        loader.load(sess, tag_set.split(","), export_dir)
        keys = sorted(signature.outputs)
        values = sess.run([signature.outputs[k].name for k in keys],
                          {signature.inputs[k].name: v for k, v in inputs.items()})
    return "".join(f"Result for output key {k}:\n{np.asarray(v)}\n" for k, v in zip(keys, values))


def _parse_inputs(input_exprs: str) -> dict:
    inputs = {}
    for part in filter(None, (p.strip() for p in input_exprs.split(";"))):
        name, sep, expr = part.partition("=")
        if not sep:
            raise ValueError(f'--input_exprs "{part}" format is incorrect. Please follow '
                             '"<input_key>=<python expression>"')
        try:
            inputs[name.strip()] = np.asarray(ast.literal_eval(expr.strip()))
        except (ValueError, SyntaxError) as e:
            raise ValueError(f"Cannot evaluate --input_exprs {part!r}: {e}") from None
    return inputs


def _meta_graph(saved_model, tag_set: str):
    wanted = set(tag_set.split(","))
    for meta in saved_model.meta_graphs:
        if set(meta.meta_info_def.tags) == wanted:
            return meta
    available = [",".join(m.meta_info_def.tags) for m in saved_model.meta_graphs]
    raise RuntimeError(f"MetaGraphDef associated with tag-set {tag_set} could not be found in "
                       f"the SavedModel. Please use one of the following tag-sets: {available}")


def _signature(meta, key: str):
    if key not in meta.signature_def:
        raise ValueError(f'Could not find signature "{key}". Please choose from: '
                         f"{', '.join(sorted(meta.signature_def))}")
    return meta.signature_def[key]


def _signature_text(signature, indent: str) -> str:
    lines = [f"{indent}The given SavedModel SignatureDef contains the following input(s):"]
    lines += _tensor_lines(signature.inputs, "inputs", indent)
    lines.append(f"{indent}The given SavedModel SignatureDef contains the following output(s):")
    lines += _tensor_lines(signature.outputs, "outputs", indent)
    lines.append(f"{indent}Method name is: {signature.method_name}")
    return "\n".join(lines) + "\n"


def _tensor_lines(infos, kind: str, indent: str) -> list:
    lines = []
    for key in sorted(infos):
        info = infos[key]
        shape = "unknown_rank" if info.tensor_shape.unknown_rank else \
            "(" + ", ".join(str(d.size) for d in info.tensor_shape.dim) + ")"
        lines += [f"{indent}  {kind}['{key}'] tensor_info:",
                  f"{indent}      dtype: {_dtype_name(info.dtype)}",
                  f"{indent}      shape: {shape}"]
        if info.WhichOneof("encoding") == "coo_sparse":
            sparse = info.coo_sparse
            lines.append(f"{indent}      name: ({sparse.indices_tensor_name}, "
                         f"{sparse.values_tensor_name}, {sparse.dense_shape_tensor_name})")
        else:
            lines.append(f"{indent}      name: {info.name}")
    return lines


def _dtype_name(enum: int) -> str:
    return types_pb2.DataType.Name(enum)


def _show_all(saved_model) -> str:
    out = []
    for meta in saved_model.meta_graphs:
        tags = ", ".join(meta.meta_info_def.tags)
        out.append(f"\nMetaGraphDef with tag-set: '{tags}' contains the following "
                   "SignatureDefs:\n")
        for key in sorted(meta.signature_def):
            out.append(f"\nsignature_def['{key}']:\n")
            out.append(_signature_text(meta.signature_def[key], "  "))
        ops = sorted({node.op for node in meta.graph_def.node})
        out.append(f"The MetaGraph with tag set {list(meta.meta_info_def.tags)} contains the "
                   f"following ops: {{{', '.join(repr(o) for o in ops)}}}\n")
    return "".join(out)
