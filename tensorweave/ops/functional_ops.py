"""Higher-order functions over the first dimension: tf.map_fn, tf.scan, tf.foldl, tf.foldr.

Each is a tf.while_loop over the elements: the inputs are unstacked into TensorArrays, the
function runs once per iteration on the read elements, and (for map_fn and scan) its results
are written to TensorArrays that are stacked at the end. Gradients come from the loop's.
"""
from __future__ import annotations

from tensorweave.framework import nest
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.tensor_array import TensorArray
from tensorweave.ops.while_loop import while_loop

__all__ = ["map_fn", "scan", "foldl", "foldr", "vectorized_map"]


def _leading_size(flat):
    """The number of elements: the static first dimension if known, else a tensor."""
    from tensorweave.ops.array_ops import shape
    first = flat[0]
    n = first.shape[0] if first.shape.ndims else None
    n = getattr(n, "value", n)
    for t in flat:
        if t.shape.ndims == 0:
            raise ValueError(f"Elements in elems must be 1+ dimensional Tensors, not scalars: "
                             f"{t.name}")
    return n if n is not None else shape(first)[0], n


def _unstacked(flat, n):
    return [TensorArray(t.dtype, size=n, dynamic_size=False, infer_shape=True,
                        element_shape=t.shape[1:] if t.shape.ndims else None).unstack(t)
            for t in flat]


def _check_fn(fn):
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {fn!r}")


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None):
    """Applies `fn` to each element of `elems` unpacked along dimension 0 (TF1's tf.map_fn).

    Args:
      fn: callable taking one element (in `elems`' structure) and returning a structure of
        tensors matching `dtype`.
      elems: a tensor or a nested structure of tensors sharing their first dimension.
      dtype: the output dtype structure when it differs from `elems`'.
      parallel_iterations: iterations that may run at once (default 10).
      back_prop, swap_memory: as for while_loop.
      infer_shape: require every result of `fn` to have the same shape.
      name: name scope (default "map").

    Returns:
      The stacked results, in `dtype`'s (or `elems`') structure.
    """
    _check_fn(fn)
    with name_scope(name, "map", nest.flatten(elems)):
        flat = [convert_to_tensor(t, name="elem") for t in nest.flatten(elems)]
        n, n_static = _leading_size(flat)
        out_dtypes = dtype if dtype is not None else nest.map_structure(lambda t: t.dtype,
                                                                        _packed(elems, flat))
        inputs = _unstacked(flat, n)
        outputs = [TensorArray(dt, size=n, dynamic_size=False, infer_shape=infer_shape)
                   for dt in nest.flatten(out_dtypes)]

        def body(i, tas):
            value = fn(_packed(elems, [ta.read(i) for ta in inputs]))
            flat_out = nest.flatten(value)
            if len(flat_out) != len(tas):
                raise ValueError(f"The structure of fn's result {value} does not match "
                                 f"dtype {out_dtypes}")
            return i + 1, [ta.write(i, v) for ta, v in zip(tas, flat_out)]
        _, outputs = while_loop(lambda i, _: i < n, body, (0, outputs),
                                parallel_iterations=parallel_iterations or 10,
                                back_prop=back_prop, swap_memory=swap_memory)
        results = [_stacked(ta, n_static) for ta in outputs]
        return nest.pack_sequence_as(out_dtypes, results)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """`fn` over each element of `elems` along dimension 0, results stacked (TF's
    tf.vectorized_map), for any output structure of `fn`.

    TensorFlow rewrites `fn` into batched ops (pfor) and falls back to a while loop for what
    it cannot; here it always runs as map_fn's loop, which gives the same values. `fn` is
    traced once on element 0 first to learn its output structure, as TensorFlow traces it;
    those ops stay in the graph unused. `fallback_to_while_loop` and `warn` are accepted for
    compatibility.
    """
    del fallback_to_while_loop, warn
    _check_fn(fn)
    flat = [convert_to_tensor(t, name="elem") for t in nest.flatten(elems)]
    with name_scope(None, "loop_body"):
        first = fn(_packed(elems, [t[0] for t in flat]))
    dtypes = nest.map_structure(lambda t: convert_to_tensor(t).dtype, first)
    return map_fn(fn, _packed(elems, flat), dtype=dtypes)


def _packed(structure, flat):
    return nest.pack_sequence_as(structure, flat) if nest.is_nested(structure) else flat[0]


def _stacked(ta, n_static):
    result = ta.stack()
    if n_static is not None and result.shape.ndims is not None:
        result.set_shape(_ts.TensorShape([n_static]).concatenate(result.shape[1:]))
    return result


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """Repeatedly applies `fn(accumulator, element)`, keeping every accumulator (TF1's tf.scan).

    With no initializer the first element (the last with `reverse`) starts the accumulator and
    is the first output. Returns the stacked accumulators in `initializer`'s structure (or
    `elems`').
    """
    _check_fn(fn)
    with name_scope(name, "scan", nest.flatten(elems)):
        flat = [convert_to_tensor(t, name="elem") for t in nest.flatten(elems)]
        n, n_static = _leading_size(flat)
        inputs = _unstacked(flat, n)
        if initializer is None:
            first = n - 1 if reverse else 0
            a0 = _packed(elems, [ta.read(first) for ta in inputs])
            start = 1
        else:
            a0 = nest.map_structure(convert_to_tensor, initializer)
            start = 0
        flat_a0 = nest.flatten(a0)
        outputs = [TensorArray(t.dtype, size=n, dynamic_size=False, infer_shape=infer_shape,
                               element_shape=t.shape) for t in flat_a0]
        if initializer is None:
            outputs = [ta.write(n - 1 if reverse else 0, t) for ta, t in zip(outputs, flat_a0)]

        def body(i, a, tas):
            index = n - 1 - i if reverse else i
            packed_a = nest.pack_sequence_as(a0, a) if nest.is_nested(a0) else a[0]
            new_a = fn(packed_a, _packed(elems, [ta.read(index) for ta in inputs]))
            nest.assert_same_structure(a0, new_a, check_types=False)
            flat_new = [convert_to_tensor(v) for v in nest.flatten(new_a)]
            return i + 1, flat_new, [ta.write(index, v) for ta, v in zip(tas, flat_new)]
        _, _, outputs = while_loop(lambda i, a, tas: i < n, body, (start, flat_a0, outputs),
                                   parallel_iterations=parallel_iterations,
                                   back_prop=back_prop, swap_memory=swap_memory)
        results = [_stacked(ta, n_static) for ta in outputs]
        return nest.pack_sequence_as(a0, results) if nest.is_nested(a0) else results[0]


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, reverse,
          default_name):
    _check_fn(fn)
    with name_scope(name, default_name, nest.flatten(elems)):
        flat = [convert_to_tensor(t, name="elem") for t in nest.flatten(elems)]
        n, _ = _leading_size(flat)
        inputs = _unstacked(flat, n)
        if initializer is None:
            a0 = _packed(elems, [ta.read(n - 1 if reverse else 0) for ta in inputs])
            start = 1
        else:
            a0 = nest.map_structure(convert_to_tensor, initializer)
            start = 0
        flat_a0 = nest.flatten(a0)

        def body(i, a):
            index = n - 1 - i if reverse else i
            packed_a = nest.pack_sequence_as(a0, a) if nest.is_nested(a0) else a[0]
            new_a = fn(packed_a, _packed(elems, [ta.read(index) for ta in inputs]))
            return i + 1, [convert_to_tensor(v) for v in nest.flatten(new_a)]
        _, result = while_loop(lambda i, a: i < n, body, (start, flat_a0),
                               parallel_iterations=parallel_iterations, back_prop=back_prop,
                               swap_memory=swap_memory)
        return nest.pack_sequence_as(a0, result) if nest.is_nested(a0) else result[0]


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """fn(...fn(fn(initializer, elems[0]), elems[1])...) (TF1's tf.foldl)."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 False, "foldl")


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """fn(...fn(fn(initializer, elems[-1]), elems[-2])...) (TF1's tf.foldr)."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 True, "foldr")
