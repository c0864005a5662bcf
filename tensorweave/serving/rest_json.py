"""TensorFlow Serving's REST JSON: request bodies to input arrays, output arrays to responses.

Predict takes `instances` (row format: one entry per example, an object of named inputs when
there are several) or `inputs` (columnar: the batched tensor, or an object of them) and
answers `{"predictions": ...}` or `{"outputs": ...}` in the same format. Strings travel as
JSON strings, binary ones as `{"b64": "..."}` (outputs whose name ends in `_bytes` always
are); floats may be the tokens NaN, Infinity and -Infinity. Classify and regress take
`examples` (and an optional shared `context`) of feature values, made into serialized
tf.Example protos.
"""
from __future__ import annotations

import base64

import numpy as np

from tensorweave.framework import errors
from tensorweave.protos import example_pb2

__all__ = ["classify_result", "examples_input", "predict_inputs", "predict_response",
           "regress_result"]


def predict_inputs(body: dict, dtypes: dict) -> tuple:
    """({input name: array}, row format?) of a predict request for inputs of `dtypes`.

    Raises:
      InvalidArgumentError: neither or both of instances and inputs, or values that do not
        make tensors of the inputs' dtypes.
    """
    if ("instances" in body) == ("inputs" in body):
        raise _bad("JSON Value: missing or both of 'instances' and 'inputs' in the request; "
                   "exactly one is required")
    names = sorted(dtypes)
    if "instances" in body:
        instances = body["instances"]
        if not isinstance(instances, list) or not instances:
            raise _bad("'instances' must be a non-empty JSON list")
        if len(names) == 1 and not (isinstance(instances[0], dict) and
                                    set(instances[0]) == set(names)):
            columns = {names[0]: instances}
        else:
            if not all(isinstance(i, dict) for i in instances):
                raise _bad("With several inputs, each instance must be a JSON object of named "
                           "inputs")
            columns = {name: [i.get(name) for i in instances] for name in
                       set().union(*instances)}
        return {name: _array(value, dtypes.get(name), name) for name, value in
                columns.items()}, True
    inputs = body["inputs"]
    if len(names) == 1 and not (isinstance(inputs, dict) and set(inputs) == set(names)):
        inputs = {names[0]: inputs}
    if not isinstance(inputs, dict):
        raise _bad("With several inputs, 'inputs' must be a JSON object of named inputs")
    return {name: _array(value, dtypes.get(name), name) for name, value in inputs.items()}, \
        False


def predict_response(outputs: dict, row_format: bool) -> dict:
    """The JSON body answering a predict request in `row_format` or columnar format."""
    names = sorted(outputs)
    values = {name: _json(outputs[name], name.endswith("_bytes")) for name in names}
    if not row_format:
        return {"outputs": values[names[0]] if len(names) == 1 else values}
    if len(names) == 1:
        return {"predictions": values[names[0]]}
    batch = {np.shape(outputs[name])[:1] for name in names}
    if len(batch) != 1 or batch == {()}:
        raise _bad("The outputs of a row-format request must share their batch size; ask "
                   "with 'inputs' (columnar format) instead")
    return {"predictions": [{name: values[name][i] for name in names}
                            for i in range(batch.pop()[0])]}


def examples_input(body: dict) -> np.ndarray:
    """The serialized tf.Examples of a classify or regress request's `examples`, each with
    the shared `context` features added.

    Raises:
      InvalidArgumentError: no examples, a feature in both context and an example, or a
        value that is not a number, string or list of one kind.
    """
    examples, context = body.get("examples"), body.get("context", {})
    if not isinstance(examples, list) or not examples:
        raise _bad("'examples' must be a non-empty JSON list")
    out = []
    for example in examples:
        if not isinstance(example, dict):
            raise _bad("Each example must be a JSON object of features")
        clash = sorted(set(example) & set(context))
        if clash:
            raise _bad(f"Feature {clash[0]!r} is in both the context and an example")
        proto = example_pb2.Example()
        for name, value in {**context, **example}.items():
            _set_feature(proto.features.feature[name], value, name)
        out.append(proto.SerializeToString())
    return np.array(out, dtype=object)


def classify_result(outputs: dict) -> dict:
    """{"result": per example [[label, score], ...]} from the `classes` and `scores` outputs:
    without classes the labels are "", without scores the pairs are [label]."""
    classes, scores = outputs.get("classes"), outputs.get("scores")
    rows = np.shape(scores if scores is not None else classes)
    if len(rows) == 1:
        rows = (rows[0], 1)
    result = []
    for i in range(rows[0]):
        pairs = []
        for j in range(rows[1]):
            label = "" if classes is None else _text(np.reshape(classes, rows)[i, j])
            pairs.append([label] if scores is None else
                         [label, float(np.reshape(scores, rows)[i, j])])
        result.append(pairs)
    return {"result": result}


def regress_result(outputs: dict) -> dict:
    """{"result": one float per example} from the `outputs` output."""
    return {"result": [float(v) for v in np.reshape(outputs["outputs"], (-1,))]}


def _set_feature(feature, value, name: str) -> None:
    values = value if isinstance(value, list) else [value]
    if all(isinstance(v, bool) or isinstance(v, int) for v in values):
        feature.int64_list.value.extend(int(v) for v in values)
    elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        feature.float_list.value.extend(float(v) for v in values)
    elif all(isinstance(v, (str, dict)) for v in values):
        feature.bytes_list.value.extend(_bytes(v, name) for v in values)
    else:
        raise _bad(f"Feature {name!r}: values must all be numbers or all strings")


def _array(value, dtype, name: str) -> np.ndarray:
    """`value` (nested lists, strings, {"b64": ...}) as an array of `dtype`."""
    if dtype is None:
        raise _bad(f"Unknown input: {name}")
    if dtype.kind == "O":
        return np.array(_map_strings(value, name), dtype=object)
    try:
        return np.array(value, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise _bad(f"Input {name!r} is not a tensor of {dtype.name}: {e}") from None


def _map_strings(value, name: str):
    if isinstance(value, list):
        return [_map_strings(v, name) for v in value]
    return _bytes(value, name)


def _bytes(value, name: str) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, dict) and set(value) == {"b64"}:
        try:
            return base64.b64decode(value["b64"], validate=True)
        except ValueError:
            raise _bad(f"Input {name!r}: 'b64' holds invalid base64") from None
    raise _bad(f"Input {name!r}: expected a string or {{\"b64\": ...}}, got {value!r}")


def _json(value, binary: bool):
    """An output array as JSON values: numbers, booleans, strings (base64 objects if
    `binary` or not UTF-8)."""
    array = np.asarray(value)
    if array.dtype == object or array.dtype.kind in "SU":
        flat = [_string_json(v, binary) for v in array.reshape(-1)]
        return np.array(flat, dtype=object).reshape(array.shape).tolist() if array.ndim else \
            flat[0]
    return array.tolist()


def _string_json(value, binary: bool):
    raw = value if isinstance(value, bytes) else str(value).encode()
    if not binary:
        try:
            return raw.decode()
        except UnicodeDecodeError:
            pass
    return {"b64": base64.b64encode(raw).decode()}


def _text(value) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _bad(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)
