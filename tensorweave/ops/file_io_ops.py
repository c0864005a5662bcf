"""Files and byte encodings: tf.io.matching_files, write_file, encode_base64 / decode_base64
and decode_compressed.

Op types, attrs and static shapes are TensorFlow's (MatchingFiles, WriteFile, EncodeBase64,
DecodeBase64, DecodeCompressed); the kernels are in kernels/file_io.py. None of these ops is
differentiable; MatchingFiles and WriteFile touch the file system, so they are stateful.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, define_op
from tensorweave.framework.operation import Tensor
from tensorweave.framework.shape_fns import unchanged

__all__ = ["matching_files", "write_file", "encode_base64", "decode_base64",
           "decode_compressed"]


def _rank_error(shape: _ts.TensorShape, rank: int, at_most: bool = False) -> ValueError:
    bound = "at most rank" if at_most else "rank"
    return ValueError(f"Shape must be {bound} {rank} but is rank {shape.ndims}")


def _matching_files_shape(ctx):
    pattern = ctx.input_shape(0)
    if pattern.ndims is not None and pattern.ndims > 1:
        raise _rank_error(pattern, 1, at_most=True)
    return _ts.TensorShape([None])


MatchingFiles = define_op("MatchingFiles", inputs=["pattern: string"],
                          outputs=["filenames: string"], shape_fn=_matching_files_shape,
                          is_stateful=True, not_differentiable=True)
WriteFile = define_op("WriteFile", inputs=["filename: string", "contents: string"],
                      is_stateful=True, not_differentiable=True)
EncodeBase64 = define_op("EncodeBase64", inputs=["input: string"], outputs=["output: string"],
                         attrs=[Attr("pad", "bool", False)], shape_fn=unchanged,
                         not_differentiable=True)
DecodeBase64 = define_op("DecodeBase64", inputs=["input: string"], outputs=["output: string"],
                         shape_fn=unchanged, not_differentiable=True)
DecodeCompressed = define_op("DecodeCompressed", inputs=["bytes: string"],
                             outputs=["output: string"],
                             attrs=[Attr("compression_type", "string", "")],
                             shape_fn=unchanged, not_differentiable=True)


def matching_files(pattern, name=None):
    """Returns the files matching one or more glob patterns.

    Args:
      pattern: a scalar or 1-D string tensor of shell wildcard patterns.
      name: a name for the operation (optional).

    Returns:
      A 1-D string tensor: the matches of all the patterns, sorted together (a file that
      several patterns match appears once per pattern; empty when nothing matches).

    Raises:
      ValueError: if `pattern` has rank greater than 1.
    """
    return apply_op(MatchingFiles, [pattern], name=name)


def write_file(filename, contents, name=None):
    """Writes `contents` to the file `filename`, creating missing directories.

    Args:
      filename: a scalar string, the path to write.
      contents: a scalar string, the bytes to write.
      name: a name for the operation (optional).

    Returns:
      The WriteFile operation.

    Raises:
      ValueError: if either argument is not a scalar.
      NotFoundError, PermissionDeniedError: at run time if the file cannot be written.
    """
    # An op without outputs gets no shape function call: its scalar checks are made here.
    for x in (filename, contents):
        shape = x.shape if isinstance(x, Tensor) else _ts.TensorShape(np.shape(x))
        if shape.ndims not in (None, 0):
            raise _rank_error(shape, 0)
    return apply_op(WriteFile, [filename, contents], name=name)


def encode_base64(input, pad=False, name=None):   # noqa: A002 - TensorFlow's argument name
    """Encodes strings with web-safe base64 ('-' and '_' instead of '+' and '/').

    Args:
      input: a string tensor.
      pad: whether to pad the encodings with '=' to a multiple of 4 characters.
      name: a name for the operation (optional).

    Returns:
      A string tensor of the same shape.
    """
    return apply_op(EncodeBase64, [input], {"pad": pad}, name=name)


def decode_base64(input, name=None):   # noqa: A002 - TensorFlow's argument name
    """Decodes web-safe base64 strings (padding optional).

    Args:
      input: a string tensor of web-safe base64 encodings.
      name: a name for the operation (optional).

    Returns:
      A string tensor of the same shape with the decoded bytes.

    Raises:
      InvalidArgumentError: at run time for a character outside the web-safe alphabet or a
        length of 1 modulo 4.
    """
    return apply_op(DecodeBase64, [input], name=name)


def decode_compressed(bytes, compression_type="", name=None):   # noqa: A002 - TF's name
    """Decompresses each string of `bytes`.

    Args:
      bytes: a string tensor of compressed data.
      compression_type: "ZLIB", "GZIP", or "" (no compression: the input is returned).
      name: a name for the operation (optional).

    Returns:
      A string tensor of the same shape with the decompressed data.

    Raises:
      InvalidArgumentError: at run time for an unknown `compression_type`.
      DataLossError: at run time for data that does not inflate.
    """
    return apply_op(DecodeCompressed, [bytes], {"compression_type": compression_type},
                    name=name)
