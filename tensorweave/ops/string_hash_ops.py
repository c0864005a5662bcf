"""Hashing strings into buckets: StringToHashBucketFast, StringToHashBucket and
StringToHashBucketStrong.

`tf.string_to_hash_bucket_fast` (`tf.strings.to_hash_bucket_fast`) maps each string to
Fingerprint64(string) mod num_buckets, the FarmHash fingerprint TensorFlow uses, so the bucket
ids are TensorFlow's; `tf.string_to_hash_bucket` (`tf.strings.to_hash_bucket` in TF1) is the
older op with TensorFlow's legacy Hash64; `tf.string_to_hash_bucket_strong`
(`tf.strings.to_hash_bucket_strong`) uses SipHash-2-4 keyed by a secret 128-bit `key`, for inputs
an adversary may choose. Kernels are in kernels/string_hash.py; no op here is differentiable
(string input, integer output).
"""
from __future__ import annotations

from tensorweave.framework import shape_fns
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, define_op

__all__ = ["string_to_hash_bucket", "string_to_hash_bucket_fast",
           "string_to_hash_bucket_strong"]

StringToHashBucketFast = define_op(
    "StringToHashBucketFast", inputs=["input: string"], outputs=["output: int64"],
    attrs=[Attr("num_buckets", "int", minimum=1)], shape_fn=shape_fns.unchanged,
    not_differentiable=True, doc="Fingerprint64 of each string mod num_buckets.")

StringToHashBucket = define_op(
    "StringToHashBucket", inputs=["string_tensor: string"], outputs=["output: int64"],
    attrs=[Attr("num_buckets", "int", minimum=1)], shape_fn=shape_fns.unchanged,
    not_differentiable=True, doc="TensorFlow's legacy Hash64 of each string mod num_buckets.")

# `key` is not checked here: TensorFlow accepts any list and its kernel rejects a length other
# than 2 when the graph runs.
StringToHashBucketStrong = define_op(
    "StringToHashBucketStrong", inputs=["input: string"], outputs=["output: int64"],
    attrs=[Attr("num_buckets", "int", minimum=1), Attr("key", "list(int)")],
    shape_fn=shape_fns.unchanged, not_differentiable=True,
    doc="SipHash-2-4 of each string, keyed by `key`, mod num_buckets.")


def _hash_bucket(op_def, strings, num_buckets, name, **attrs):
    """Adds `op_def` after checking the attr's minimum, as TensorFlow's op builder does."""
    if num_buckets is None:
        raise TypeError(f"{op_def.name} missing required attr 'num_buckets'")
    if num_buckets < 1:
        raise ValueError(f"Attr 'num_buckets' of '{op_def.name}' Op passed {num_buckets} less "
                         "than minimum 1.")
    return apply_op(op_def, [strings], {"num_buckets": num_buckets, **attrs},
                    name=name or op_def.name)


def string_to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002 - TF's name
    """Hashes each string into one of `num_buckets` buckets (tf.strings.to_hash_bucket_fast).

    The hash is FarmHash's Fingerprint64 of the string's bytes, as in TensorFlow: the same
    string gets the same bucket in every process and on every machine.

    Args:
      input: a string Tensor.
      num_buckets: an int >= 1, the number of buckets.
      name: a name for the operation.

    Returns:
      An int64 Tensor shaped like `input`, each value in [0, num_buckets).

    Raises:
      ValueError: if `num_buckets` is less than 1.
      TypeError: if `input` is not a string tensor.
    """
    return _hash_bucket(StringToHashBucketFast, input, num_buckets, name)


def string_to_hash_bucket(string_tensor=None, num_buckets=None, name=None, input=None):  # noqa: A002
    """Hashes each string into one of `num_buckets` buckets with TensorFlow's legacy Hash64
    (TF1's tf.string_to_hash_bucket / tf.strings.to_hash_bucket).

    Prefer `string_to_hash_bucket_fast`; this op is kept for models whose buckets were made
    with it.

    Args:
      string_tensor: a string Tensor.
      num_buckets: an int >= 1, the number of buckets.
      name: a name for the operation.
      input: alias of `string_tensor`.

    Returns:
      An int64 Tensor shaped like the input, each value in [0, num_buckets).

    Raises:
      ValueError: if `num_buckets` is less than 1, or both `string_tensor` and `input` are
        given.
      TypeError: if the input is not a string tensor.
    """
    if input is not None:
        if string_tensor is not None:
            raise ValueError("Cannot specify both 'string_tensor' and 'input'.")
        string_tensor = input
    return _hash_bucket(StringToHashBucket, string_tensor, num_buckets, name)


def string_to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002 - TF's name
    """Hashes each string into one of `num_buckets` buckets with a keyed hash
    (tf.strings.to_hash_bucket_strong).

    The hash is SipHash-2-4 keyed by the two 64-bit words of `key`, as in TensorFlow: slower
    than `string_to_hash_bucket_fast`, but without the key an adversary cannot choose inputs
    that all land in one bucket.

    Args:
      input: a string Tensor.
      num_buckets: an int >= 1, the number of buckets.
      key: a list of two ints, the hash key (each taken as an unsigned 64-bit word).
      name: a name for the operation.

    Returns:
      An int64 Tensor shaped like `input`, each value in [0, num_buckets).

    Raises:
      ValueError: if `num_buckets` is less than 1.
      TypeError: if `input` is not a string tensor or `key` is not a list.
      InvalidArgumentError: when the op runs, if `key` does not have exactly 2 elements.
    """
    if not isinstance(key, (list, tuple)):
        raise TypeError("Expected list for 'key' argument to 'string_to_hash_bucket_strong' "
                        f"Op, not {key!r}.")
    return _hash_bucket(StringToHashBucketStrong, input, num_buckets, name,
                        key=[int(k) for k in key])
