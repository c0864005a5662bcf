"""Rank-generic pooling wrappers: max_pool_v2 / avg_pool_v2 (1-, 2- or 3-D by the input's rank),
tf.nn.pool (with dilation_rate) and the with_space_to_batch helper it runs on.

These are composites of existing ops, as in TensorFlow: a dilated VALID window over an input is
the undilated window over SpaceToBatchND(input, rate) (each of the rate**N sub-grids becomes a
batch entry), BatchToSpaceND'd back. `with_space_to_batch` computes the paddings that make the
spatial sizes multiples of the rate (and, for SAME, the filter's base padding) as constants
when the input's spatial sizes are known statically, else with shape arithmetic in the graph.
"""
from __future__ import annotations

import numpy as np

from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.static_value import static_value
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array_join_ops import stack
from tensorweave.ops.array_ops import expand_dims, shape, squeeze
from tensorweave.ops.array_space_ops import batch_to_space_nd, space_to_batch_nd
from tensorweave.ops.nn_conv_ops import get_sequence
from tensorweave.ops.nn_pool_ops import (
    avg_pool,
    avg_pool1d,
    avg_pool3d,
    max_pool,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)

__all__ = ["avg_pool_v2", "max_pool_v2", "pool", "with_space_to_batch"]


def _pool_v2(ops: dict, input, ksize, strides, padding, data_format, name):  # noqa: A002
    """TF's max_pool_v2 / avg_pool_v2: the 1-, 2- or 3-D pool the input's rank asks for."""
    input = convert_to_tensor(input, name="input")  # noqa: A001 - TF1's argument name
    if input.shape.ndims is None:
        raise ValueError("Cannot take the length of shape with unknown rank.")
    n = input.shape.ndims - 2
    if not 1 <= n <= 3:
        raise ValueError(f"`input.shape.rank` must be 3, 4 or 5. Received: "
                         f"input.shape={input.shape} of rank {n + 2}.")
    ci = 1 if data_format is not None and data_format.startswith("NC") else n + 1
    if isinstance(padding, (list, tuple)) and n == 3:
        raise ValueError("Explicit padding is not supported with an input tensor of rank 5. "
                         f"Received: padding={padding}")
    return ops[n](input, get_sequence(ksize, n, ci, "ksize"),
                  get_sequence(strides, n, ci, "strides"), padding, data_format=data_format,
                  name=name)


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """Performs max pooling on a 3-, 4- or 5-D input (max_pool1d, max_pool2d or MaxPool3D).

    Args:
      input: A Tensor of rank N + 2 (N = 1, 2 or 3) laid out as `data_format` says.
      ksize: An int or a list of 1, N or N + 2 ints: the window size per dimension.
      strides: An int or a list of 1, N or N + 2 ints: the window stride per dimension.
      padding: "SAME", "VALID", or (N = 1 or 2) a list of [before, after] pairs.
      data_format: None (channels last) or a layout string such as "NHWC" or "NCDHW".
      name: A name for the operation (the chosen pool's default otherwise).

    Returns:
      The pooled Tensor.

    Raises:
      ValueError: for an input of unknown rank or of rank other than 3, 4 or 5, or explicit
        padding with a rank-5 input.
    """
    return _pool_v2({1: max_pool1d, 2: max_pool2d, 3: max_pool3d}, input, ksize, strides,
                    padding, data_format, name)


def avg_pool_v2(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """Performs average pooling on a 3-, 4- or 5-D input (avg_pool1d, AvgPool or AvgPool3D).

    Args:
      input: A Tensor of rank N + 2 (N = 1, 2 or 3) laid out as `data_format` says.
      ksize: An int or a list of 1, N or N + 2 ints: the window size per dimension.
      strides: An int or a list of 1, N or N + 2 ints: the window stride per dimension.
      padding: "SAME" or "VALID".
      data_format: None (channels last) or a layout string such as "NHWC" or "NCDHW".
      name: A name for the operation (the chosen pool's default otherwise).

    Returns:
      The pooled Tensor.

    Raises:
      ValueError: for an input of unknown rank or of rank other than 3, 4 or 5.
    """
    return _pool_v2({1: avg_pool1d, 2: _avg_pool_2d, 3: avg_pool3d}, input, ksize, strides,
                    padding, data_format, name)


def _avg_pool_2d(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """avg_pool_v2's 2-D case: the raw AvgPool op (default name "AvgPool", not avg_pool2d's)."""
    return avg_pool(input, ksize, strides, padding, data_format=data_format or "NHWC",
                    name=name)


# --- with_space_to_batch ---------------------------------------------------------------------
def _adjust(values: np.ndarray, fill, spatial_dims: list) -> np.ndarray:
    """Per-dimension `values` spread over dimensions 1..spatial_dims[-1], `fill` between."""
    rows = {d: values[i] for i, d in enumerate(spatial_dims)}
    return np.array([rows.get(d, fill) for d in range(1, spatial_dims[-1] + 1)], values.dtype)


def _space_to_batch_amounts(sizes, rate: np.ndarray, base: np.ndarray, dims: list):
    """(paddings, crops) for SpaceToBatchND / BatchToSpaceND over dimensions 1..dims[-1]
    (zero rows between spatial dimensions): pad by `base` plus what makes each padded size a
    multiple of `rate`, then crop that extra off (TF's required_space_to_batch_paddings).
    `sizes` is a NumPy vector (constant results) or an int32 Tensor (results computed in the
    graph)."""
    full = sizes + (base[:, 0] + base[:, 1])
    if isinstance(full, np.ndarray):
        extra = (rate - full % rate) % rate
    else:
        block = convert_to_tensor(rate)
        extra = (block - full % block) % block
    index = {d: i for i, d in enumerate(dims)}
    paddings, crops = [], []
    for d in range(1, dims[-1] + 1):
        i = index.get(d)
        paddings.append([0, 0] if i is None else [int(base[i, 0]), extra[i] + int(base[i, 1])])
        crops.append([0, 0] if i is None else [0, extra[i]])
    if isinstance(extra, np.ndarray):
        return np.array(paddings, np.int32), np.array(crops, np.int32)
    return stack([stack(row) for row in paddings]), stack([stack(row) for row in crops])


def with_space_to_batch(input, dilation_rate, padding, op, filter_shape=None,  # noqa: A002
                        spatial_dims=None, data_format=None):
    """Runs `op(input, num_spatial_dims, padding)` as if its windows were dilated by
    `dilation_rate`: space-to-batch, op with VALID padding, batch-to-space.

    Args:
      input: A Tensor of rank at least max(spatial_dims) + 1.
      dilation_rate: A list (or constant) of N positive ints.
      padding: "SAME" or "VALID".
      op: A function (input, num_spatial_dims, padding) -> Tensor.
      filter_shape: The filter's spatial shape (required for "SAME").
      spatial_dims: N increasing positive dimension indices (default 1..N, or 2..N+1 for
        channels-first `data_format`).
      data_format: None or a layout string; "NC..." makes the spatial dimensions start at 2.

    Returns:
      The result of `op` on the space-to-batch'd input, batch-to-space'd back.

    Raises:
      ValueError: for a non-constant or non-positive `dilation_rate`, bad `spatial_dims`, a
        too-small input rank, a missing `filter_shape` with "SAME", or another padding.
    """
    input = convert_to_tensor(input, name="input")  # noqa: A001 - TF1's argument name
    rate = static_value(convert_to_tensor(dilation_rate, name="dilation_rate"))
    if rate is None or np.ndim(rate) != 1:
        raise ValueError("`dilation_rate` must be a constant vector here. Received: "
                         f"dilation_rate={dilation_rate}")
    rate = np.asarray(rate, np.int32)
    n = len(rate)
    first = 2 if data_format is not None and data_format.startswith("NC") else 1
    dims = list(range(first, n + first)) if spatial_dims is None else list(spatial_dims)
    if sorted({int(d) for d in dims}) != dims or any(d < 1 for d in dims):
        raise ValueError("`spatial_dims` must be a monotonically increasing sequence of "
                         f"positive integers. Received: spatial_dims={dims}")
    rank_needed = dims[-1] if first == 2 else dims[-1] + 1
    if input.shape.ndims is not None and input.shape.ndims < rank_needed:
        raise ValueError(f"`input.shape.rank` must be at least {rank_needed}. Received: "
                         f"input.shape={input.shape} with rank {input.shape.ndims}")
    if np.any(rate < 1):
        raise ValueError(f"`dilation_rate` must be positive. Received: dilation_rate={rate}")
    if np.all(rate == 1):
        return op(input, n, padding)
    if padding == "SAME":
        if filter_shape is None:
            raise ValueError("`filter_shape` must be specified for `padding='SAME'`. "
                             f"Received: filter_shape={filter_shape} and padding={padding}")
        extra = (np.asarray(filter_shape, np.int32)[:n] - 1) * rate
        base = np.stack([extra // 2, extra - extra // 2], 1)
    elif padding == "VALID":
        base = np.zeros((n, 2), np.int32)
    else:
        raise ValueError(f"`padding` must be either 'VALID' or 'SAME'. Received: "
                         f"padding={padding}")
    known = [_ts.dimension_value(input.shape[d]) if input.shape.ndims is not None else None
             for d in dims]
    sizes = np.asarray(known, np.int32) if None not in known else \
        stack([shape(input)[d] for d in dims])
    paddings, crops = _space_to_batch_amounts(sizes, rate, base, dims)
    result = op(space_to_batch_nd(input, _adjust(rate, 1, dims), paddings), n, "VALID")
    return batch_to_space_nd(result, _adjust(rate, 1, dims), crops)


# --- tf.nn.pool ------------------------------------------------------------------------------
def _positive_vector(values, n: int, name: str) -> np.ndarray:
    """`values` (default all ones) as an int32 vector of n positive entries (TF's checks)."""
    vector = np.ones(n, np.int32) if values is None else np.array(values, np.int32)
    if vector.shape != (n,):
        raise ValueError(f"`len({name})` should be {n}. Received: {name}={values} of length "
                         f"{vector.size}")
    if np.any(vector < 1):
        raise ValueError(f"all values of `{name}` must be positive. Received: {name}={vector}")
    return vector


def _strides_and_rates(n: int, strides, dilation_rate):
    """TF's _get_strides_and_dilation_rate: int32 vectors of length n, checked."""
    rate = _positive_vector(dilation_rate, n, "dilation_rate")
    stride = _positive_vector(strides, n, "strides")
    if np.any(stride > 1) and np.any(rate > 1):
        raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                         f"Received: strides={stride} and dilation_rate={rate}")
    return stride, rate


_POOL_OPS = {("MAX", 1): max_pool, ("MAX", 2): max_pool, ("MAX", 3): max_pool3d,
             ("AVG", 1): avg_pool, ("AVG", 2): avg_pool, ("AVG", 3): avg_pool3d}


def pool(input, window_shape, pooling_type, padding, dilation_rate=None,  # noqa: A002
         strides=None, name=None, data_format=None, dilations=None):
    """Performs an N-D max or average pooling (N = 1, 2 or 3), optionally dilated.

    output[b, x, c] = reduce_{w in window} input[b, x * strides + w * dilation_rate, c]
    (dilated windows run through `with_space_to_batch`).

    Args:
      input: A Tensor of rank N + 2.
      window_shape: A sequence of N ints >= 1.
      pooling_type: "MAX" or "AVG".
      padding: "SAME" or "VALID" ("SAME" only without dilation).
      dilation_rate: A sequence of N ints >= 1 (default 1); not with strides > 1.
      strides: A sequence of N ints >= 1 (default 1), each at most its window size.
      name: A name for the operation (default "max_pool" / "avg_pool").
      data_format: None or "NWC"/"NCW" (N = 1), a 4-D or 5-D layout string otherwise.
      dilations: Alias for `dilation_rate`.

    Returns:
      The pooled Tensor.

    Raises:
      ValueError: for inconsistent window, stride, dilation, padding, pooling type, input
        rank or data_format arguments (TF's messages).
    """
    if dilations is not None and dilation_rate is not None:
        raise ValueError("Cannot specify both 'dilations' and 'dilation_rate'")
    dilation_rate = dilations if dilations is not None else dilation_rate
    with name_scope(name, f"{pooling_type.lower()}_pool") as scope:
        input = convert_to_tensor(input, name="input")  # noqa: A001 - TF1's argument name
        n = len(window_shape)
        if not 1 <= n <= 3:
            raise ValueError(f"`len(window_shape)` must be 1, 2, or 3. Received: "
                             f"window_shape={window_shape} of length {n}")
        input.shape.with_rank(n + 2)
        stride, rate = _strides_and_rates(n, strides, dilation_rate)
        if padding == "SAME" and np.any(rate > 1):
            raise ValueError("pooling with 'SAME' padding is not implemented for "
                             f"`dilation_rate` > 1. Received: padding={padding} and "
                             f"dilation_rate={rate}")
        if np.any(stride > window_shape):
            raise ValueError("`strides` > `window_shape` not supported due to inconsistency "
                             f"between CPU and GPU implementations. Received: "
                             f"strides={stride} and window_shape={window_shape}")
        if (pooling_type, n) not in _POOL_OPS:
            raise ValueError(f"{n}-D {pooling_type} pooling is not supported.")
        channels_first = data_format is not None and data_format.startswith("NC")
        window = [1, 1, *window_shape] if channels_first else [1, *window_shape, 1]
        steps = [1, 1, *stride] if channels_first else [1, *stride, 1]
        dims = list(range(2 if channels_first else 1, n + (2 if channels_first else 1)))
        fmt = data_format
        if n == 1:
            if data_format not in (None, "NWC", "NCW"):
                raise ValueError("data_format must be either 'NWC' or 'NCW'. Received: "
                                 f"data_format={data_format}")
            fmt = "NCHW" if channels_first else "NHWC"
            window, steps = [1, *window], [1, *steps]

        def run(value, _, pad):
            if n == 1:
                value = expand_dims(value, dims[0])
            result = _POOL_OPS[(pooling_type, n)](value, window, [int(s) for s in steps], pad,
                                                 data_format=fmt, name=scope)
            return squeeze(result, [dims[0]]) if n == 1 else result

        return with_space_to_batch(input, rate, padding, run, filter_shape=window_shape,
                                   spatial_dims=dims)
