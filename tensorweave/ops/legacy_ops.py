"""Ops TensorFlow 1.x graphs still carry, registered so their GraphDefs and SavedModels import.

TF 1.15's `tf.parse_example` and `tf.parse_single_example` built ParseExample and
ParseSingleExample (an Estimator's serving graph parses tf.Examples with them),
`tf.io.parse_single_sequence_example` built ParseSingleSequenceExample, its
`tf.matrix_diag` / `matrix_diag_part` / `matrix_set_diag` built MatrixDiag, MatrixDiagPart and
MatrixSetDiag, `tf.accumulate_n` built AccumulateNV2, and the gradient of
sparse_softmax_cross_entropy_with_logits a PreventGradient (so its training graphs hold one).
The wrappers build the newer ops (ParseExampleV2, ParseSequenceExampleV2, MatrixDiagV3, ...); these
definitions, with TensorFlow's signatures, shape functions and gradients, exist for graphs
made elsewhere. Kernels: kernels/legacy.py.
"""
from __future__ import annotations

from tensorweave.framework import shape_fns
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.dtypes import NUMERIC
from tensorweave.framework.op_def import Arg, Attr, TypeAttr, define_op
from tensorweave.ops.array_matrix_ops import matrix_diag_part, matrix_set_diag
from tensorweave.ops.parsing_ops import PARSE_TYPES, example_output_shapes
from tensorweave.ops.sequence_parsing_ops import parse_types_attr, sparse_shapes

__all__: list[str] = []


_PARSE_OUTPUTS = ["sparse_indices: Nsparse * int64",
                  Arg("sparse_values", type_list_attr="sparse_types"),
                  "sparse_shapes: Nsparse * int64",
                  Arg("dense_values", type_list_attr="Tdense")]
_PARSE_ATTRS = [Attr("sparse_types", "list(type)", allowed=PARSE_TYPES, minimum=0),
                Attr("Tdense", "list(type)", allowed=PARSE_TYPES, minimum=0),
                Attr("dense_shapes", "list(shape)", minimum=0)]

ParseExample = define_op(
    "ParseExample",
    inputs=["serialized: string", "names: string", "sparse_keys: Nsparse * string",
            "dense_keys: Ndense * string", Arg("dense_defaults", type_list_attr="Tdense")],
    outputs=_PARSE_OUTPUTS,
    attrs=[Attr("Nsparse", "int", minimum=0), Attr("Ndense", "int", minimum=0),
           *_PARSE_ATTRS],
    shape_fn=lambda ctx: example_output_shapes(ctx.attrs["Nsparse"],
                                       ctx.input_shape(0).with_rank_at_most(1),
                                       ctx.attrs["dense_shapes"]),
    not_differentiable=True, doc="TF 1.x's tf.parse_example op (keys as inputs).")

ParseSingleExample = define_op(
    "ParseSingleExample",
    inputs=["serialized: string", Arg("dense_defaults", type_list_attr="Tdense")],
    outputs=[o if isinstance(o, Arg) else o.replace("Nsparse", "num_sparse")
             for o in _PARSE_OUTPUTS],
    attrs=[Attr("num_sparse", "int", minimum=0), Attr("sparse_keys", "list(string)", minimum=0),
           Attr("dense_keys", "list(string)", minimum=0), *_PARSE_ATTRS],
    shape_fn=lambda ctx: example_output_shapes(ctx.attrs["num_sparse"],
                                       ctx.input_shape(0).with_rank(0),
                                       ctx.attrs["dense_shapes"]),
    not_differentiable=True, doc="TF 1.x's tf.parse_single_example op (keys as attrs).")


def _single_sequence_shapes(ctx):
    """ParseSequenceExampleV2's outputs for one record (no batch dimension), without lengths:
    context sparse [n, 1], dense their shapes; feature-list sparse [n, 2], dense [steps] +
    shape."""
    ctx.input_shape(0).with_rank(0)
    ctx.input_shape(1).with_rank(1)
    attrs, scalar = ctx.attrs, _ts.TensorShape([])
    return (sparse_shapes(scalar, attrs["Ncontext_sparse"], 1) +
            list(attrs["context_dense_shapes"]) +
            sparse_shapes(scalar, attrs["Nfeature_list_sparse"], 2) +
            [_ts.TensorShape([None]).concatenate(s) for s in attrs["feature_list_dense_shapes"]])


ParseSingleSequenceExample = define_op(
    "ParseSingleSequenceExample",
    inputs=["serialized: string", "feature_list_dense_missing_assumed_empty: string",
            "context_sparse_keys: Ncontext_sparse * string",
            "context_dense_keys: Ncontext_dense * string",
            "feature_list_sparse_keys: Nfeature_list_sparse * string",
            "feature_list_dense_keys: Nfeature_list_dense * string",
            Arg("context_dense_defaults", type_list_attr="Tcontext_dense"), "debug_name: string"],
    outputs=["context_sparse_indices: Ncontext_sparse * int64",
             Arg("context_sparse_values", type_list_attr="context_sparse_types"),
             "context_sparse_shapes: Ncontext_sparse * int64",
             Arg("context_dense_values", type_list_attr="Tcontext_dense"),
             "feature_list_sparse_indices: Nfeature_list_sparse * int64",
             Arg("feature_list_sparse_values", type_list_attr="feature_list_sparse_types"),
             "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
             Arg("feature_list_dense_values", type_list_attr="feature_list_dense_types")],
    attrs=[*(Attr(n, "int", 0, minimum=0) for n in ("Ncontext_sparse", "Ncontext_dense",
                                                     "Nfeature_list_sparse",
                                                     "Nfeature_list_dense")),
           parse_types_attr("context_sparse_types"),
           parse_types_attr("Tcontext_dense"), parse_types_attr("feature_list_dense_types"),
           Attr("context_dense_shapes", "list(shape)", [], minimum=0),
           parse_types_attr("feature_list_sparse_types"),
           Attr("feature_list_dense_shapes", "list(shape)", [], minimum=0)],
    shape_fn=_single_sequence_shapes, not_differentiable=True,
    doc="TF 1.x's tf.io.parse_single_sequence_example op (keys as inputs, missing-allowed "
        "dense feature lists named by key, no lengths).")


def _diag_shape(ctx):
    diagonal = ctx.input_shape(0).with_rank_at_least(1)
    if diagonal.ndims is None:
        return _ts.unknown_shape()
    return diagonal.concatenate(diagonal[-1:])


def _diag_part_shape(ctx):
    matrix = ctx.input_shape(0).with_rank_at_least(2)
    if matrix.ndims is None:
        return _ts.unknown_shape()
    rows, cols = matrix.as_list()[-2:]
    size = None if rows is None or cols is None else min(rows, cols)
    return _ts.TensorShape(matrix.as_list()[:-2] + [size])


def _set_diag_shape(ctx):
    return ctx.input_shape(0).with_rank_at_least(2)


MatrixDiag = define_op("MatrixDiag", inputs=["diagonal: T"], outputs=["output: T"],
                       attrs=[TypeAttr("T")], shape_fn=_diag_shape,
                       doc="TF 1.x's batched diagonal matrix ([..., N] -> [..., N, N]).")
MatrixDiagPart = define_op("MatrixDiagPart", inputs=["input: T"], outputs=["diagonal: T"],
                           attrs=[TypeAttr("T")], shape_fn=_diag_part_shape,
                           doc="TF 1.x's batched main diagonal ([..., M, N] -> "
                               "[..., min(M, N)]).")
MatrixSetDiag = define_op("MatrixSetDiag", inputs=["input: T", "diagonal: T"],
                          outputs=["output: T"], attrs=[TypeAttr("T")],
                          shape_fn=_set_diag_shape,
                          doc="TF 1.x's batched matrices with their main diagonal replaced.")


@MatrixDiag.gradient
def _matrix_diag_grad(op, grad):
    return [matrix_diag_part(grad)]


@MatrixDiagPart.gradient
def _matrix_diag_part_grad(op, grad):
    from tensorweave.ops.array_creation_ops import zeros_like
    return [matrix_set_diag(zeros_like(op.inputs[0]), grad)]


@MatrixSetDiag.gradient
def _matrix_set_diag_grad(op, grad):
    from tensorweave.ops.array_creation_ops import zeros_like
    return [matrix_set_diag(grad, zeros_like(op.inputs[1])), matrix_diag_part(grad)]


AccumulateNV2 = define_op(
    "AccumulateNV2", inputs=["inputs: N * T"], outputs=["sum: T"],
    attrs=[TypeAttr("T", NUMERIC), Attr("shape", "shape")], shape_fn=shape_fns.merged,
    is_commutative=True, doc="TF 1.x's tf.accumulate_n: AddN of its inputs.")
PreventGradient = define_op(
    "PreventGradient", inputs=["input: T"], outputs=["output: T"],
    attrs=[TypeAttr("T"), Attr("message", "string", "")], shape_fn=shape_fns.unchanged,
    doc="Identity whose gradient is an error (TF's array_ops.prevent_gradient).")


@AccumulateNV2.gradient
def _accumulate_n_grad(op, grad):
    return [grad] * len(op.inputs)


@PreventGradient.gradient
def _prevent_gradient_grad(op, grad):
    message = op.get_attr("message")
    message = message.decode() if isinstance(message, bytes) else message
    raise LookupError(f"Gradient explicitly disabled. Reason: {message}")
