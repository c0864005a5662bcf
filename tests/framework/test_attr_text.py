"""How a shape function's error quotes the node's attrs (framework/attr_text.py), its inputs
and the input values the shape function read (framework/apply_op.py).

Every expected text was recorded from TensorFlow 2.21 (tf.compat.v1 graph mode) running the same
program: `'{{node n}} = Op[<attrs>](<inputs>)'`, the attrs sorted by name and written as
TensorFlow's SummarizeAttrValue writes them.
"""
import re

import numpy as np
import pytest
from google.protobuf import text_format

import tensorweave as tf
from tensorweave.framework.attr_text import attr_text
from tensorweave.protos import graph_pb2


def _node_text(build) -> str:
    """The quoted node of the ValueError `build` raises while building its op."""
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            build()
    found = re.search(r" for '(\{\{node .*)' with input shapes: ", str(info.value))
    assert found, str(info.value)
    return found.group(1)


def _op_and_attrs(node_text: str) -> str:
    """`Op[attrs]` out of `{{node n}} = Op[attrs](inputs)`."""
    return node_text[node_text.index(" = ") + 3:node_text.rindex("](") + 1]


# The examples of the issue, whole: node name, op, attrs and inputs.
@pytest.mark.parametrize("build,expected", [
    (lambda: tf.matmul(tf.zeros([2, 3]), tf.zeros([4, 5])),
     "{{node MatMul}} = MatMul[T=DT_FLOAT, grad_a=false, grad_b=false, transpose_a=false, "
     "transpose_b=false](zeros, zeros_1)"),
    (lambda: tf.add(tf.zeros([2]), tf.zeros([3])),
     "{{node Add}} = AddV2[T=DT_FLOAT](zeros, zeros_1)"),
    (lambda: tf.reshape(tf.zeros([6]), [4]),
     "{{node Reshape}} = Reshape[T=DT_FLOAT, Tshape=DT_INT32](zeros, Reshape/shape)"),
    (lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([2, 4, 1])], 0),
     "{{node concat}} = ConcatV2[N=2, T=DT_FLOAT, Tidx=DT_INT32](zeros, zeros_1, concat/axis)"),
    (lambda: tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
        tf.constant(1), tf.constant([1])), -1),
     "{{node key_value_init/LookupTableImportV2}} = LookupTableImportV2[Tin=DT_INT32, "
     "Tout=DT_INT32](hash_table, Const, Const_1)"),
], ids=["matmul", "add", "reshape", "concat", "lookup_import"])
def test_node_text_of_a_failed_shape_function(build, expected):
    assert _node_text(build) == expected


def test_whole_message_of_a_failed_shape_function():
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            tf.matmul(tf.zeros([2, 3]), tf.zeros([4, 5]), transpose_a=True)
    assert str(info.value) == (
        "Dimensions must be equal, but are 2 and 4 for '{{node MatMul}} = MatMul[T=DT_FLOAT, "
        "grad_a=false, grad_b=false, transpose_a=true, transpose_b=false](zeros, zeros_1)' "
        "with input shapes: [2,3], [4,5].")


# Each kind of attr value, as ops of the library hold them.
@pytest.mark.parametrize("build,expected", [
    (lambda: tf.matmul(tf.zeros([2, 3], tf.int64), tf.zeros([4, 5], tf.int64),
                       transpose_a=True, transpose_b=True),
     "MatMul[T=DT_INT64, grad_a=false, grad_b=false, transpose_a=true, transpose_b=true]"),
    (lambda: tf.add(tf.zeros([2], tf.float16), tf.zeros([3], tf.float16)), "AddV2[T=DT_HALF]"),
    (lambda: tf.add(tf.zeros([2], tf.float64), tf.zeros([3], tf.float64)),
     "AddV2[T=DT_DOUBLE]"),
    (lambda: tf.add(tf.zeros([2], tf.uint8), tf.zeros([3], tf.uint8)), "AddV2[T=DT_UINT8]"),
    (lambda: tf.add(tf.zeros([2], tf.bfloat16), tf.zeros([3], tf.bfloat16)),
     "AddV2[T=DT_BFLOAT16]"),
    (lambda: tf.add(tf.zeros([2], tf.complex128), tf.zeros([3], tf.complex128)),
     "AddV2[T=DT_COMPLEX128]"),
    (lambda: tf.add(tf.zeros([2], tf.string), tf.zeros([3], tf.string)), "Add[T=DT_STRING]"),
    (lambda: tf.assign(tf.Variable(tf.zeros([2])), tf.zeros([3])),
     "Assign[T=DT_FLOAT, use_locking=true, validate_shape=true]"),
    (lambda: tf.nn.conv2d(tf.zeros([1, 4, 4, 3]), tf.zeros([2, 2, 5, 1]), [1, 1, 1, 1], "SAME"),
     'Conv2D[T=DT_FLOAT, data_format="NHWC", dilations=[1, 1, 1, 1], explicit_paddings=[], '
     'padding="SAME", strides=[1, 1, 1, 1], use_cudnn_on_gpu=true]'),
    (lambda: tf.nn.max_pool(tf.zeros([2, 3]), [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
     'MaxPool[T=DT_FLOAT, data_format="NHWC", explicit_paddings=[], ksize=[1, 2, 2, 1], '
     'padding="VALID", strides=[1, 1, 1, 1]]'),
    (lambda: tf.nn.local_response_normalization(tf.zeros([2, 3])),
     "LRN[T=DT_FLOAT, alpha=1, beta=0.5, bias=1, depth_radius=5]"),
    (lambda: tf.nn.local_response_normalization(tf.zeros([2, 3]), alpha=1e-4, beta=0.75,
                                                bias=2.0),
     "LRN[T=DT_FLOAT, alpha=0.0001, beta=0.75, bias=2, depth_radius=5]"),
    (lambda: tf.nn.fused_batch_norm(tf.zeros([2, 3]), tf.zeros([3]), tf.zeros([3])),
     'FusedBatchNormV3[T=DT_FLOAT, U=DT_FLOAT, data_format="NHWC", epsilon=0.001, '
     'exponential_avg_factor=1, is_training=true]'),
    (lambda: tf.nn.fractional_max_pool(tf.zeros([2, 3]), [1.0, 1.44, 1.73, 1e-7]),
     "FractionalMaxPool[T=DT_FLOAT, deterministic=false, overlapping=false, "
     "pooling_ratio=[1, 1.44, 1.73, 1e-07], pseudo_random=false, seed=0, seed2=0]"),
    (lambda: tf.einsum("ij,jk->ik", tf.zeros([2, 3]), tf.zeros([4, 5])),
     'Einsum[N=2, T=DT_FLOAT, equation="ij,jk->ik"]'),
    (lambda: tf.strided_slice(tf.zeros([2, 3]), [0, 0, 0], [1, 1]),
     "StridedSlice[Index=DT_INT32, T=DT_FLOAT, begin_mask=0, ellipsis_mask=0, end_mask=0, "
     "new_axis_mask=0, shrink_axis_mask=0]"),
    (lambda: tf.strings.join([tf.constant(["a", "b"]), tf.constant(["a", "b", "c"])],
                             separator='a"b\n'),
     'StringJoin[N=2, separator="a\\"b\\n"]'),
    (lambda: tf.io.decode_csv(["a"], [[[1]]]),
     'DecodeCSV[OUT_TYPE=[DT_INT32], field_delim=",", na_value="", select_cols=[], '
     'use_quote_delim=true]'),
    (lambda: tf.io.decode_csv(["a"], [[1.5], [[1]]], field_delim="\t", na_value="x" * 85),
     'DecodeCSV[OUT_TYPE=[DT_FLOAT, DT_INT32], field_delim="\\t", '
     'na_value="xxxxxxxxxx...xxxxxxxxxx", select_cols=[], use_quote_delim=true]'),
    (lambda: tf.io.decode_csv(["a"], [[[1]]], na_value="y" * 79),
     f'DecodeCSV[OUT_TYPE=[DT_INT32], field_delim=",", na_value="{"y" * 79}", '
     'select_cols=[], use_quote_delim=true]'),
    (lambda: tf.io.decode_csv(["a"], [[[1]]], na_value="é" * 10 + "\x01"),
     'DecodeCSV[OUT_TYPE=[DT_INT32], field_delim=",", na_value="\\303\\251\\3...03\\251\\001", '
     'select_cols=[], use_quote_delim=true]'),
    (lambda: tf.io.decode_csv(["a"], [[1]] * 28 + [[[1]]]),
     "DecodeCSV[OUT_TYPE=[" + ", ".join(["DT_INT32"] * 29) + '], field_delim=",", '
     'na_value="", select_cols=[], use_quote_delim=true]'),
    (lambda: tf.io.decode_csv(["a"], [[1]] * 29 + [[[1]]]),
     "DecodeCSV[OUT_TYPE=[DT_INT32, DT_INT32, DT_INT32, DT_INT32, DT_INT32, ..., DT_INT32, "
     "DT_INT32, DT_INT32, DT_INT32, DT_INT32]{attr_hash=5279824052840218095}, "
     'field_delim=",", na_value="", select_cols=[], use_quote_delim=true]'),
    (lambda: tf.io.parse_example(tf.zeros([2, 2], tf.string), {
        "a": tf.io.FixedLenFeature([2, 3], tf.float32),
        "b": tf.io.FixedLenFeature([], tf.int64)}),
     "ParseExampleV2[Tdense=[DT_FLOAT, DT_INT64], dense_shapes=[[2,3], []], num_sparse=0, "
     "ragged_split_types=[], ragged_value_types=[], sparse_types=[]]"),
], ids=["int64_bools", "half", "double", "uint8", "bfloat16", "complex128", "string_type",
        "ref_op_defaults", "conv2d", "max_pool", "floats", "small_floats", "fused_batch_norm",
        "float_list", "equation", "ints", "escaped_string", "type_list", "long_string",
        "79_characters", "octal_escapes", "29_items", "30_items_hashed", "shape_list"])
def test_attrs_of_each_kind(build, expected):
    assert _op_and_attrs(_node_text(build)) == expected


def test_device_and_colocation_are_not_listed():
    """TensorFlow places and colocates an op after its shape function ran."""
    def build():
        with tf.device("/cpu:0"):
            a = tf.zeros([2])
            with tf.colocate_with(a):
                tf.add(a, tf.zeros([3]))
    assert _node_text(build) == "{{node Add}} = AddV2[T=DT_FLOAT](zeros, zeros_1)"


_CONST = """node {{ name: "{name}" op: "Const"
  attr {{ key: "dtype" value {{ type: DT_FLOAT }} }}
  attr {{ key: "value" value {{ tensor {{ dtype: DT_FLOAT tensor_shape {{ dim {{ size: {n} }} }}
    float_val: 0 }} }} }} }}
"""


# An imported node keeps its private attrs, of any kind, and TensorFlow lists them too.
@pytest.mark.parametrize("value,expected", [
    ('tensor { dtype: DT_FLOAT tensor_shape { dim { size: 4 } } '
     'float_val: [1.5, 2, 3, 123456789] }',
     "Tensor<type: float shape: [4] values: 1.5 2 3...>"),
    ('tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: [1.5, 2.25, 0.1] }',
     "Tensor<type: float shape: [3] values: 1.5 2.25 0.1>"),
    ('tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 3 } } '
     'int_val: [1, 2, 3, 4, 5, 6] }',
     "Tensor<type: int32 shape: [2,3] values: [1 2 3]...>"),
    ('tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } dim { size: 2 } } '
     'int_val: [1, 2] }',
     "Tensor<type: int32 shape: [1,2] values: [1 2]>"),
    ('tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 1 } dim { size: 2 } }'
     ' int_val: [1, 2, 3, 4] }',
     "Tensor<type: int32 shape: [2,1,2] values: [[1 2]][[3...]]...>"),
    ('tensor { dtype: DT_DOUBLE tensor_shape { } double_val: 0.1 }',
     "Tensor<type: double shape: [] values: 0.1>"),
    ('tensor { dtype: DT_INT64 tensor_shape { dim { size: 0 } } }',
     "Tensor<type: int64 shape: [0] values: >"),
    ('tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 0 } } }',
     "Tensor<type: float shape: [2,0] values: >"),
    ('tensor { dtype: DT_BOOL tensor_shape { dim { size: 4 } } '
     'bool_val: [true, false, true, true] }',
     "Tensor<type: bool shape: [4] values: 1 0 1...>"),
    ('tensor { dtype: DT_STRING tensor_shape { dim { size: 2 } } '
     'string_val: ["a\\"b", "\\303\\251\\n"] }',
     'Tensor<type: string shape: [2] values: a\\"b é\\n>'),
    ('tensor { dtype: DT_UINT8 tensor_shape { dim { size: 2 } } int_val: [255, 7] }',
     "Tensor<type: uint8 shape: [2] values: 255 7>"),
    ('tensor { dtype: DT_INT8 tensor_shape { dim { size: 2 } } int_val: [-3, 7] }',
     "Tensor<type: int8 shape: [2] values: -3 7>"),
    ('tensor { dtype: DT_HALF tensor_shape { dim { size: 2 } } half_val: [15360, 13312] }',
     "Tensor<type: half shape: [2] values: 1 0.25>"),
    ('tensor { dtype: DT_COMPLEX64 tensor_shape { dim { size: 1 } } scomplex_val: [1, 2] }',
     "Tensor<type: complex64 shape: [1] values: ?>"),
    ('tensor { dtype: DT_DOUBLE tensor_shape { dim { size: 2 } } '
     'double_val: [0.1, 123456789.123] }',
     "Tensor<type: double shape: [2] values: 0.1 123456789.123>"),
    ("shape { unknown_rank: true }", "<unknown>"),
    ("shape { }", "[]"),
    ("list { }", "[]"),
    ("list { b: [true, false] }", "[true, false]"),
    ("list { f: [0.5, 1e-10, 123456789] }", "[0.5, 1e-10, 123456792]"),
    ('list { s: ["a", "b\\001"] }', '["a", "b\\001"]'),
    ("list { shape { unknown_rank: true } shape { dim { size: -1 } } }", "[<unknown>, [?]]"),
    ("list { i: [" + ", ".join(map(str, range(30))) + "] }",
     "[0, 1, 2, 3, 4, ..., 25, 26, 27, 28, 29]{attr_hash=6212846312491382606}"),
    ("list { s: [" + ", ".join(f'"s{i}"' for i in range(30)) + "] }",
     '["s0", "s1", "s2", "s3", "s4", ..., "s25", "s26", "s27", "s28", "s29"]'
     "{attr_hash=3510295243543267013}"),
    ("f: nan", "nan"),
    ("f: -0.0", "-0"),
    ("f: -inf", "-inf"),
    ("f: 1e-40", "9.99995e-41"),
    ("f: 3.4e38", "3.4e+38"),
    ("f: 0.333333333", "0.333333343"),
    ("f: 100000", "100000"),
    ("f: 1000000", "1e+06"),
    ("f: 12345678", "12345678"),
    ("i: -9223372036854775808", "-9223372036854775808"),
    ('s: ""', '""'),
    ("s: \"it's \\\\ \\r \\x7f \\x1f\"", "\"it\\'s \\\\ \\r \\177 \\037\""),
    ("type: DT_FLOAT_REF", "DT_FLOAT_REF"),
    ('tensor { dtype: DT_INT16 tensor_shape { dim { size: 2 } dim { size: 2 } } '
     'int_val: [1, 2, 3, 4] }',
     "Tensor<type: int16 shape: [2,2] values: [1 2][3...]...>"),
    ('tensor { dtype: DT_COMPLEX128 tensor_shape { dim { size: 2 } dim { size: 2 } } '
     'dcomplex_val: [1, 2, 0, 3, 1, 0, 2, 0] }',
     "Tensor<type: complex128 shape: [2,2] values: ? ? ?...>"),
    ('tensor { dtype: DT_FLOAT tensor_shape { } tensor_content: "\\000\\000\\300\\377" }',
     "Tensor<type: float shape: [] values: -nan>"),
    ('tensor { dtype: DT_UINT64 tensor_shape { dim { size: 1 } } '
     'uint64_val: [18446744073709551615] }',
     "Tensor<type: uint64 shape: [1] values: 18446744073709551615>"),
    ('tensor { dtype: DT_STRING tensor_shape { } string_val: ["\\001\\177 x"] }',
     "Tensor<type: string shape: [] values: \\001\\177 x>"),
    ("f: -nan", "-nan"),
    ('s: "\\377"', '"\\377"'),
    ("shape { dim { size: -1 } dim { size: 3 } }", "[?,3]"),
    ("list { type: [DT_FLOAT, DT_INT32_REF] }", "[DT_FLOAT, DT_INT32_REF]"),
])
def test_private_attrs_of_an_imported_node(value, expected):
    graph_def = text_format.Parse(
        _CONST.format(name="a", n=2) + _CONST.format(name="b", n=3)
        + 'node { name: "add" op: "AddV2" input: "a" input: "b" '
        'attr { key: "T" value { type: DT_FLOAT } } '
        f'attr {{ key: "_x" value {{ {value} }} }} }}', graph_pb2.GraphDef())
    node_text = _node_text(lambda: tf.import_graph_def(graph_def, name=""))
    assert node_text == f"{{{{node add}}}} = AddV2[T=DT_FLOAT, _x={expected}](a, b)"


# Values as the library holds them; TensorFlow prints a function attr `f` as "f[]".
@pytest.mark.parametrize("value,kind,expected", [
    (np.float32(0.1), "float", "0.1"),
    (0.1, None, "0.1"),
    (True, None, "true"),
    (3, "int", "3"),
    ([], "list(int)", "[]"),
    ((tf.float32, tf.int32_ref), None, "[DT_FLOAT, DT_INT32_REF]"),
    (None, "shape", "<unknown>"),
    ([None, 3], "shape", "[?,3]"),
    ("a\udcff", "string", '"a\\377"'),
    ("myfn", "func", "myfn[]"),
])
def test_attr_text_of_typed_values(value, kind, expected):
    assert attr_text(value, kind) == expected


def test_inputs_are_quoted_as_node_def_inputs():
    # TF 2.21 names output 0 by its op and output k > 0 as 'op:k'; control inputs are not quoted.
    def build():
        a, b = tf.unstack(tf.zeros([2, 3]))
        with tf.control_dependencies([a.op]):
            tf.matmul(b, a)
    assert _node_text(build) == (
        "{{node MatMul}} = MatMul[T=DT_FLOAT, grad_a=false, grad_b=false, transpose_a=false, "
        "transpose_b=false](unstack:1, unstack)")


def _message(build) -> str:
    with tf.Graph().as_default():
        with pytest.raises(ValueError) as info:
            build()
    return str(info.value)


# TF lists the inputs whose values the shape function read, if the function passed without them.
@pytest.mark.parametrize("build,expected", [
    (lambda: tf.reshape(tf.zeros([6]), [4]),
     "Cannot reshape a tensor with 6 elements to shape [4] (4 elements) for '{{node Reshape}} = "
     "Reshape[T=DT_FLOAT, Tshape=DT_INT32](zeros, Reshape/shape)' with input shapes: [6], [1] "
     "and with input tensors computed as partial shapes: input[1] = [4]."),
    (lambda: tf.reshape(tf.zeros([6]), [-1, 4]),
     "Dimension size must be evenly divisible by 4 but is 6 for '{{node Reshape}} = "
     "Reshape[T=DT_FLOAT, Tshape=DT_INT32](zeros, Reshape/shape)' with input shapes: [6], [2] "
     "and with input tensors computed as partial shapes: input[1] = [?,4]."),
    (lambda: tf.reshape(tf.zeros([6]),
                        tf.stack([4, tf.shape(tf.placeholder(tf.int32, [None]))[0]])),
     "Dimension size must be evenly divisible by 4 but is 6 for '{{node Reshape}} = "
     "Reshape[T=DT_FLOAT, Tshape=DT_INT32](zeros, stack)' with input shapes: [6], [2] "
     "and with input tensors computed as partial shapes: input[1] = [4,?]."),
    (lambda: tf.fill([2, -1], 1.0),
     "Fill dimensions must be >= 0 for '{{node Fill}} = Fill[T=DT_FLOAT, index_type=DT_INT32]"
     "(Fill/dims, Fill/value)' with input shapes: [2], [] and with input tensors computed as "
     "partial shapes: input[0] = [2,?]."),
    (lambda: tf.zeros([2, 3])[5],
     "slice index 5 of dimension 0 out of bounds. for '{{node strided_slice}} = StridedSlice["
     "Index=DT_INT32, T=DT_FLOAT, begin_mask=0, ellipsis_mask=0, end_mask=0, new_axis_mask=0, "
     "shrink_axis_mask=1](zeros, strided_slice/stack, strided_slice/stack_1, "
     "strided_slice/stack_2)' with input shapes: [2,3], [1], [1], [1] and with computed input "
     "tensors: input[1] = <5>, input[2] = <6>, input[3] = <1>."),
    (lambda: tf.range(0, 5, 0),
     None),
    # The function fails without the values too (TF's first run): no clause.
    (lambda: tf.transpose(tf.zeros([2, 3]), [0, 1, 2]),
     "Dimension must be 2 but is 3 for '{{node transpose}} = Transpose[T=DT_FLOAT, "
     "Tperm=DT_INT32](zeros, transpose/perm)' with input shapes: [2,3], [3]."),
    (lambda: tf.tile(tf.zeros([2, 3]), [1, 2, 3]),
     "Shape must be rank 2 but is rank 3 for '{{node Tile}} = Tile[T=DT_FLOAT, "
     "Tmultiples=DT_INT32](zeros, Tile/multiples)' with input shapes: [2,3], [3]."),
], ids=["reshape", "reshape_minus_one", "reshape_partial", "fill", "strided_slice", "range",
        "transpose", "tile"])
def test_message_lists_the_input_values_the_shape_function_read(build, expected):
    text = _message(build)
    if expected is None:   # only the clause: the reason's wording is the op's own
        assert text.endswith(" with input shapes: [], [], [] and with computed input tensors: "
                             "input[0] = <0>, input[1] = <5>, input[2] = <0>."), text
    else:
        assert text == expected
