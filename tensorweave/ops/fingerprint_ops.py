"""Fingerprint (tf.fingerprint): a 64-bit FarmHash fingerprint of each row of a tensor.

Row i of the [batch, 8] uint8 output holds the little-endian bytes of Fingerprint64 of
`data[i]`: of its raw bytes for a numeric tensor; of its string for a string vector; of the
concatenated fingerprints of its strings when a row holds several. These are TensorFlow's
values, byte for byte (the hash is shared with tf.strings.to_hash_bucket_fast,
kernels/string_hash.py). Not differentiable, as in TensorFlow.
"""
from __future__ import annotations

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import TypeAttr, define_op
from tensorweave.framework.shape_checks import dims_with_rank

__all__ = ["fingerprint"]

FINGERPRINT_SIZE = 8
METHOD = b"farmhash64"


def _fingerprint_shape(ctx):
    """[batch, 8]; the 8 is unknown until the method is (and only farmhash64 is known)."""
    data = ctx.input_shape(0)._dims
    if data is not None and not data:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    dims_with_rank(ctx.input_shape(1)._dims, 0)
    method = ctx.static_value(1)
    size = None
    if method is not None:
        if method[()] != METHOD:
            raise ValueError(f"Unsupported method: {method[()].decode(errors='replace')}")
        size = FINGERPRINT_SIZE
    return _ts.TensorShape([data[0] if data else None, size])


Fingerprint = define_op(
    "Fingerprint", inputs=["data: T", "method: string"], outputs=["fingerprint: uint8"],
    attrs=[TypeAttr("T")], shape_fn=_fingerprint_shape, not_differentiable=True,
    doc="The FarmHash Fingerprint64 of each row of `data`, as 8 little-endian bytes.")


def fingerprint(data, method="farmhash64", name=None):
    """Generates fingerprint values: one 8-byte fingerprint per row (tf.fingerprint).

    The fingerprint of row `data[i]` depends only on its content (its bytes, or its strings),
    and is the same in every process and on every machine: TensorFlow's own values. Rows of a
    numeric tensor are hashed as raw little-endian bytes, so the dtype matters:
    `tf.fingerprint(tf.constant([[1]], tf.int32))` differs from the int64 version.

    For example, `tf.fingerprint(["a", "b"])` gives two different rows of 8 bytes, and
    `tf.fingerprint([["a", "b"]])` one row, fingerprinting both strings together.

    A string tensor of shape [n, 0] (rows without strings) gets the fingerprint of empty
    bytes in every row, as a numeric one does; TensorFlow's kernel reads past its input there
    and returns arbitrary bytes.

    Args:
      data: A Tensor of any dtype and rank >= 1.
      method: A scalar string: the fingerprint method; only "farmhash64" is supported.
      name: A name for the operation (default "Fingerprint").

    Returns:
      A uint8 Tensor of shape [data.shape[0], 8].

    Raises:
      ValueError: if `data` is a scalar, `method` is not a scalar, or `method` is a known
        value other than "farmhash64".
      InvalidArgumentError: at run time, for those same problems when only the values fed
        show them.
    """
    return apply_op(Fingerprint, [data, method], name=name)
