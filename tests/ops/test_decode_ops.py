"""DecodeRaw, DecodeCSV, StringToNumber, SerializeTensor and ParseTensor: forward against NumPy
and Python's csv module, static shapes, and TensorFlow's error messages."""
import csv

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_case import OpCase, check_forward, check_shapes, parametrize


def _strings(*values):
    return np.array([v.encode() if isinstance(v, str) else v for v in values], dtype=object)


def _raw(dtype, order):
    """Reference: each string through np.frombuffer with the byte order."""
    def ref(data):
        rows = [np.frombuffer(s, dtype=np.dtype(dtype).newbyteorder(order)) for s in data.ravel()]
        return np.array(rows, dtype=dtype).reshape(data.shape + (-1,))
    return ref


RAW = _strings(bytes(range(8)), bytes(range(8, 16)), b"\xff" * 8)
CSV_LINES = _strings('1,2.5,"a,b",7', ',,plain,9', 'NA,NA,"say ""hi""",3', '-4,1e3,,0')
CSV_DEFAULTS = [[1], [2.0], ["dflt"], np.zeros([0], np.int64)]   # the last column is required


def _csv_reference(records):
    """Python's csv module splits the lines; empty and NA fields take the defaults."""
    rows = list(csv.reader(r.decode() for r in records))
    defaults = [1, 2.0, "dflt", None]
    columns = [[d if f in ("", "NA") else f for f in col] for col, d in zip(zip(*rows), defaults)]
    return [np.array(columns[0], np.int32), np.array(columns[1], np.float32),
            _strings(*columns[2]), np.array(columns[3], np.int64)]


def _example(**floats) -> bytes:
    """An Example of float features, built through the proto API (the JSON rows' reference)."""
    return tf.train.Example(features=tf.train.Features(feature={
        k: tf.train.Feature(float_list=tf.train.FloatList(value=v))
        for k, v in floats.items()})).SerializeToString()


JSON_EXAMPLES = np.array([['{"features": {"feature": {"x": {"floatList": {"value": [1, 2.5]}}}}}',
                           '{}'],
                          ['{"features": {"feature": {"y": {"floatList": {"value": [-3]}}}}}',
                           '{"features": {}}']], dtype=object)
JSON_BINARY = np.array([[_example(x=[1.0, 2.5]), b""], [_example(y=[-3.0]), _example()]],
                       dtype=object)

CASES = [
    OpCase("decode_json_example", tf.io.decode_json_example, lambda j: JSON_BINARY,
           [JSON_EXAMPLES], dtypes=(tf.string,), grad=False),
    OpCase("decode_raw_int16_little", lambda s: tf.decode_raw(s, tf.int16), _raw(np.int16, "<"),
           [RAW], dtypes=(tf.string,), grad=False),
    OpCase("decode_raw_float32_big", lambda s: tf.io.decode_raw(s, tf.float32, False),
           _raw(np.float32, ">"), [RAW[:2]], dtypes=(tf.string,), grad=False),
    OpCase("decode_raw_uint8_scalar", lambda s: tf.decode_raw(s, tf.uint8),
           lambda s: np.frombuffer(s.item(), np.uint8), [np.array(b"\x00\x01\xfe", dtype=object)],
           dtypes=(tf.string,), grad=False),
    OpCase("decode_csv", lambda r: tf.decode_csv(r, CSV_DEFAULTS, na_value="NA"),
           _csv_reference, [CSV_LINES], dtypes=(tf.string,), grad=False),
    OpCase("decode_csv_select_cols",
           lambda r: tf.io.decode_csv(r, [[0.0], [""]], field_delim="|", use_quote_delim=False,
                                      select_cols=[1, 3]),
           lambda r: [np.array([[float(x.split(b"|")[1]) for x in row] for row in r],
                               np.float32),
                      np.array([[x.split(b"|")[3] for x in row] for row in r], dtype=object)],
           [np.array([[b'a|1.5|b|"q"|c'], [b'x|-2|y|z|w']], dtype=object)],
           dtypes=(tf.string,), grad=False),
    OpCase("string_to_number", lambda s: tf.string_to_number(s),
           lambda s: np.array([float(v) for v in s], np.float32),
           [_strings("12", " 3.5", "-4e2", "inf")], dtypes=(tf.string,), grad=False),
    OpCase("string_to_number_int64", lambda s: tf.string_to_number(s, out_type=tf.int64),
           lambda s: np.array([int(v) for v in s.ravel()], np.int64).reshape(s.shape),
           [np.array([[b"9007199254740993", b"-1"]], dtype=object)], dtypes=(tf.string,),
           grad=False),
    OpCase("serialize_parse_tensor",
           lambda x: tf.io.parse_tensor(tf.io.serialize_tensor(x), tf.float64), lambda x: x,
           [lambda rng, dt: rng.randn(2, 3).astype(dt)], dtypes=(tf.float64,), grad=False,
           unknown_shapes=False),
]


@parametrize(CASES)
def test_forward(case, dtype):
    check_forward(case, dtype)


@parametrize([c for c in CASES if c.unknown_shapes])
def test_shapes(case, dtype):
    check_shapes(case, dtype)


def test_static_shapes_and_names():
    with tf.Graph().as_default():
        raw = tf.decode_raw(tf.placeholder(tf.string, [None]), tf.int16)
        assert raw.op.type == "DecodeRaw" and raw.shape.as_list() == [None, None]
        assert raw.op.get_attr("little_endian") is True
        assert tf.decode_raw(tf.placeholder(tf.string, []), tf.uint8).shape.as_list() == [None]
        cols = tf.decode_csv(tf.placeholder(tf.string, [2, 3]), [[1], ["s"]])
        assert [c.name for c in cols] == ["DecodeCSV:0", "DecodeCSV:1"]
        assert cols[0].shape.as_list() == [2, 3] and cols[1].dtype == tf.string
        assert cols[0].op.get_attr("field_delim") == b"," and \
            cols[0].op.get_attr("OUT_TYPE") == [tf.int32, tf.string]
        number = tf.string_to_number(tf.placeholder(tf.string, [4]), tf.int32)
        assert number.name == "StringToNumber:0" and number.dtype == tf.int32
        serialized = tf.io.serialize_tensor(tf.constant([[1, 2], [3, 4]]))
        assert serialized.op.type == "SerializeTensor" and serialized.shape.as_list() == []
        parsed = tf.io.parse_tensor(serialized, tf.int32)
        assert parsed.op.type == "ParseTensor" and parsed.shape.ndims is None


def test_serialize_tensor_bytes_match_tensorflow():
    """TF 2.21's tf.io.serialize_tensor(tf.constant([[1, 2], [3, 4]])), byte for byte."""
    expected = (b'\x08\x03\x12\x08\x12\x02\x08\x02\x12\x02\x08\x02"\x10\x01\x00\x00\x00\x02\x00'
                b'\x00\x00\x03\x00\x00\x00\x04\x00\x00\x00')
    with tf.Graph().as_default():
        serialized = tf.serialize_tensor(tf.constant([[1, 2], [3, 4]], tf.int32))
        with tf.Session() as sess:
            assert sess.run(serialized) == expected
            np.testing.assert_array_equal(sess.run(tf.parse_tensor(expected, tf.int32)),
                                          [[1, 2], [3, 4]])


def _run_error(build, feed):
    with tf.Graph().as_default():
        holder = tf.placeholder(tf.string, [None])
        out = build(holder)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run(out, {holder: feed})
    return info.value.message


@pytest.mark.parametrize("build,feed,message", [
    (lambda s: tf.decode_raw(s, tf.int16), [b"\x01\x02\x03\x04", b"\x05\x06"],
     "DecodeRaw requires input strings to all be the same size, but element 1 has size 4 != 2"),
    (lambda s: tf.decode_raw(s, tf.int16), [b"\x01\x02\x03"],
     "Input to DecodeRaw has length 3 that is not a multiple of 2, the size of int16"),
    (lambda s: tf.decode_csv(s, CSV_DEFAULTS), ["1,2.5,a,"],
     "Field 3 is required but missing in record 0!"),
    (lambda s: tf.decode_csv(s, CSV_DEFAULTS), ["1,2,a,1", "1,2.5,a"],
     "Expect 4 fields but have 3 in record 1"),
    (lambda s: tf.decode_csv(s, CSV_DEFAULTS), [""], "Expect 4 fields but have 0 in record 0"),
    (lambda s: tf.decode_csv(s, CSV_DEFAULTS), ["x,2.5,a,1"],
     "Field 0 in record 0 is not a valid int32: x"),
    (lambda s: tf.decode_csv(s, CSV_DEFAULTS), ["99999999999,2.5,a,1"],
     "Field 0 in record 0 is not a valid int32: 99999999999"),
    (lambda s: tf.decode_csv(s, CSV_DEFAULTS), ["1,1_0,a,1"],
     "Field 1 in record 0 is not a valid float: 1_0"),
    (lambda s: tf.decode_csv(s, CSV_DEFAULTS), ['1,2,"a"b,1'],
     "Quote inside a string has to be escaped by another quote"),
    (lambda s: tf.decode_csv(s, CSV_DEFAULTS), ['1,2,a"b,1'],
     "Unquoted fields cannot have quotes/CRLFs inside"),
    (lambda s: tf.decode_csv(s, [[1], [2.0]], field_delim="ab"), ["1,2"],
     "field_delim should be only 1 char"),
    (lambda s: tf.string_to_number(s), ["abc"],
     "StringToNumberOp could not correctly convert string: abc"),
    (lambda s: tf.string_to_number(s, tf.int32), ["1.5"],
     "StringToNumberOp could not correctly convert string: 1.5"),
    (lambda s: tf.string_to_number(s, tf.uint32), ["-1"],
     "StringToNumberOp could not correctly convert string: -1"),
])
def test_runtime_errors(build, feed, message):
    assert message in _run_error(build, feed)


def test_parse_tensor_errors():
    with tf.Graph().as_default():
        serialized = tf.io.serialize_tensor(tf.constant([1, 2], tf.int32))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"Type mismatch between parsed tensor \(int32\) and dtype "
                                     r"\(float\)"):
                sess.run(tf.io.parse_tensor(serialized, tf.float32))
            with pytest.raises(tf.errors.InvalidArgumentError, match="TensorProto"):
                sess.run(tf.io.parse_tensor(b"\xff\xff", tf.float32))


def test_number_parsing_like_strtod():
    with tf.Graph().as_default():
        out = tf.string_to_number(["0x10", "1e40", "-Inf", "1e400"])
        doubles = tf.string_to_number(["1e400", " +7 "], tf.float64)
        with tf.Session() as sess:
            got, got64 = sess.run([out, doubles])
    np.testing.assert_array_equal(got, np.array([16, np.inf, -np.inf, np.inf], np.float32))
    np.testing.assert_array_equal(got64, [np.inf, 7.0])


@pytest.mark.parametrize("kwargs,message", [
    ({"select_cols": [2, 0]}, "select_cols is not strictly increasing."),
    ({"select_cols": [-1, 2]}, "select_cols contains negative values."),
    ({"select_cols": [1]}, "Length of select_cols and record_defaults do not match."),
])
def test_decode_csv_select_cols_checks(kwargs, message):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=message):
            tf.decode_csv(tf.placeholder(tf.string, [None]), [[1], [2.0]], **kwargs)


def test_decode_csv_default_checks():
    with tf.Graph().as_default():
        records = tf.placeholder(tf.string, [None])
        with pytest.raises(ValueError, match="length-0 or length-1 vector"):
            tf.decode_csv(records, [[1], [1, 2]])
        with pytest.raises(TypeError, match="DataType bool not in list of allowed values"):
            tf.decode_csv(records, [[1], [True]])


def test_decode_raw_bfloat16_and_bytes_alias():
    bits = np.array([1.5, -2.0], np.float32).view(np.uint32) >> 16
    data = bits.astype("<u2").tobytes()
    with tf.Graph().as_default():
        out = tf.decode_raw(bytes=[data], out_type=tf.bfloat16)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(out), [[1.5, -2.0]])


def test_decode_json_example_errors_and_alias():
    assert tf.decode_json_example is tf.io.decode_json_example
    with tf.Graph().as_default(), tf.Session() as sess:
        for text, detail in (("{bad", "Failed to load JSON"),
                             ('{"nope": 1}', 'has no field named "nope"')):
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=f"Error while parsing JSON: .*{detail}"):
                sess.run(tf.io.decode_json_example([text]))
