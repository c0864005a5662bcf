"""SignatureDefs: the named inputs and outputs a server calls a graph with.

tf.saved_model.signature_def_utils: TensorFlow's checks and messages."""
from __future__ import annotations

from tensorweave.framework.operation import Tensor
from tensorweave.protos import meta_graph_pb2, types_pb2
from tensorweave.saved_model import signature_constants as sc
from tensorweave.saved_model.utils import build_tensor_info

__all__ = ["build_signature_def", "classification_signature_def", "is_valid_signature",
           "predict_signature_def", "regression_signature_def"]


def build_signature_def(inputs=None, outputs=None, method_name=None, defaults=None):
    """A SignatureDef of `inputs` and `outputs` (dicts of TensorInfo protos), `method_name`
    and `defaults` (dict of name to a constant Tensor whose value the input defaults to).

    Raises:
      ValueError: a default is not the output of a Const op.
    """
    signature = meta_graph_pb2.SignatureDef()
    for key, info in (inputs or {}).items():
        signature.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        signature.outputs[key].CopyFrom(info)
    if method_name is not None:
        signature.method_name = method_name
    for key, default in (defaults or {}).items():
        if default.op.type != "Const":
            raise ValueError(f"Unable to convert object {default} of type {type(default)} "
                             "to TensorProto.")
        signature.defaults[key].CopyFrom(default.op.get_attr("value"))
    return signature


def predict_signature_def(inputs, outputs):
    """The Predict API's SignatureDef: any named input and output tensors.

    Raises:
      ValueError: `inputs` or `outputs` is None or empty.
    """
    if not inputs:
        raise ValueError("Prediction `inputs` cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction `outputs` cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(t) for k, t in inputs.items()},
                               {k: build_tensor_info(t) for k, t in outputs.items()},
                               sc.PREDICT_METHOD_NAME)


def regression_signature_def(examples, predictions):
    """The Regress API's SignatureDef: serialized tf.Examples in, float predictions out.

    Raises:
      ValueError: a tensor is missing or of the wrong dtype.
    """
    _require_tensor(examples, "Regression `examples` cannot be None.",
                    "Expected regression `examples` to be of type Tensor. Found `examples` of "
                    "type {}.")
    if predictions is None:
        raise ValueError("Regression `predictions` cannot be None.")
    inputs = _typed_info(examples, types_pb2.DT_STRING, "Regression input tensors must be of "
                         "type string. Found tensors with type {}.")
    outputs = _typed_info(predictions, types_pb2.DT_FLOAT, "Regression output tensors must be "
                          "of type float. Found tensors with type {}.")
    return build_signature_def({sc.REGRESS_INPUTS: inputs}, {sc.REGRESS_OUTPUTS: outputs},
                               sc.REGRESS_METHOD_NAME)


def classification_signature_def(examples, classes, scores):
    """The Classify API's SignatureDef: serialized tf.Examples in, string `classes` and/or
    float `scores` out.

    Raises:
      ValueError: a tensor is missing or of the wrong dtype.
    """
    _require_tensor(examples, "Classification `examples` cannot be None.",
                    "Classification `examples` must be a string Tensor. Found `examples` of "
                    "type {}.")
    if classes is None and scores is None:
        raise ValueError("Classification `classes` and `scores` cannot both be None.")
    inputs = _typed_info(examples, types_pb2.DT_STRING, "Classification input tensors must be "
                         "of type string. Found tensors of type {}")
    outputs = {}
    if classes is not None:
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = _typed_info(
            classes, types_pb2.DT_STRING, "Classification classes must be of type string "
            "Tensor. Found tensors of type {}.`")
    if scores is not None:
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = _typed_info(
            scores, types_pb2.DT_FLOAT, "Classification scores must be a float Tensor.")
    return build_signature_def({sc.CLASSIFY_INPUTS: inputs}, outputs, sc.CLASSIFY_METHOD_NAME)


def _require_tensor(value, none_message: str, type_message: str) -> None:
    """ValueError(none_message) for None, ValueError(type_message with its type) for a value
    that is not a Tensor."""
    if value is None:
        raise ValueError(none_message)
    if not isinstance(value, Tensor):
        raise ValueError(type_message.format(type(value)))


def _typed_info(tensor, dtype_enum: int, message: str):
    """build_tensor_info(tensor), or ValueError(message with its DataType number) unless
    the tensor is of `dtype_enum`."""
    info = build_tensor_info(tensor)
    if info.dtype != dtype_enum:
        raise ValueError(message.format(info.dtype))
    return info


def is_valid_signature(signature_def) -> bool:
    """Whether `signature_def` is a well-formed Predict, Regress or Classify signature."""
    if signature_def is None:
        return False
    method = signature_def.method_name
    inputs, outputs = set(signature_def.inputs), set(signature_def.outputs)
    if method == sc.PREDICT_METHOD_NAME:
        return bool(inputs) and bool(outputs)
    if method == sc.REGRESS_METHOD_NAME:
        return inputs == {sc.REGRESS_INPUTS} and outputs == {sc.REGRESS_OUTPUTS} and \
            signature_def.inputs[sc.REGRESS_INPUTS].dtype == types_pb2.DT_STRING and \
            signature_def.outputs[sc.REGRESS_OUTPUTS].dtype == types_pb2.DT_FLOAT
    if method == sc.CLASSIFY_METHOD_NAME:
        allowed = {sc.CLASSIFY_OUTPUT_CLASSES, sc.CLASSIFY_OUTPUT_SCORES}
        if inputs != {sc.CLASSIFY_INPUTS} or not outputs or outputs - allowed or \
                signature_def.inputs[sc.CLASSIFY_INPUTS].dtype != types_pb2.DT_STRING:
            return False
        classes = signature_def.outputs.get(sc.CLASSIFY_OUTPUT_CLASSES)
        scores = signature_def.outputs.get(sc.CLASSIFY_OUTPUT_SCORES)
        return (classes is None or classes.dtype == types_pb2.DT_STRING) and \
            (scores is None or scores.dtype == types_pb2.DT_FLOAT)
    return False
