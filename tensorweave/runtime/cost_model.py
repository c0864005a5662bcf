"""Cost model: static estimates of a node's compute and of the bytes on its edges.

The executor runs cheap kernels inline and sends expensive ones to the inter-op pool; a kernel
is expensive when its estimated work (from static output shapes, and matmul/conv dimensions)
passes a threshold, or when its shapes are unknown and its kernel declares itself expensive.
Placement weighs the static byte sizes of edges to keep tensors where they are produced; the
parallel lines schedule a step's nodes over threads by their estimated time.
"""
from __future__ import annotations

from tensorweave.runtime import machine_rates

# About 50 µs of NumPy work: below this a thread hand-off costs more than it can save.
EXPENSIVE_FLOPS = 2e5


def _elements(shape) -> int | None:
    if shape is None or shape.ndims is None:
        return None
    return shape.num_elements()


def estimate_flops(node) -> float | None:
    """Rough floating-point work of one run of `node`, or None when shapes are unknown."""
    if node.op in _MATRICES_AT:   # a fused update: its product has the variable's shape
        outputs = [_product_elements(node)]
    else:
        outputs = [_elements(s) for s in node.output_shapes]
    if any(n is None for n in outputs):
        return None
    total = float(sum(outputs))
    if node.op in _CONTRACTIONS:
        inner = _contracted_size(node)
        if inner is None:
            return None
        total *= inner
    return total


# Fused updates whose delta is a product: op -> index of its first matrix among the inputs.
_MATRICES_AT = {"_FusedMatMulApplyGradientDescent": 2,
                "_FusedMatMulResourceApplyGradientDescent": 2,
                "_FusedMatMulApplyAdam": 9, "_FusedMatMulResourceApplyAdam": 9}
# Ops whose work is output size × the size of the contracted input dimensions.
_CONTRACTIONS = frozenset({"MatMul", "BatchMatMul", "BatchMatMulV2", "Conv2D", "_FusedMatMul",
                           "_FusedConv2D", "Conv2DBackpropInput", "DepthwiseConv2dNative",
                           *_MATRICES_AT})


def _product_elements(node) -> int | None:
    """The number of elements of a fused update's product op(a) @ op(b), or None."""
    a, b = node.input_shapes[_MATRICES_AT[node.op]:][:2]
    if a.ndims != 2 or b.ndims != 2:
        return None
    rows = a.as_list()[1 if node.attrs.get("transpose_a") else 0]
    cols = b.as_list()[0 if node.attrs.get("transpose_b") else 1]
    return None if rows is None or cols is None else rows * cols


def _contracted_size(node) -> int | None:
    """The length of the dot product behind each output element, from input shapes."""
    shapes = node.input_shapes[_MATRICES_AT.get(node.op, 0):]
    if len(shapes) < 2 or any(s.ndims is None for s in shapes[:2]):
        return None
    a, b = shapes[0].as_list(), shapes[1].as_list()
    if node.op in ("MatMul", "_FusedMatMul", "BatchMatMul", "BatchMatMulV2", *_MATRICES_AT):
        transpose = node.attrs.get("transpose_a") or node.attrs.get("adj_x")
        inner = a[-2] if transpose else a[-1]
        return inner
    if len(b) == 4 and all(d is not None for d in b[:3]):
        return b[0] * b[1] * (b[2] if node.op != "DepthwiseConv2dNative" else 1)
    return None


# Kernels that call multithreaded BLAS already use every core; running two of them at once
# only adds thread hand-offs (tens of µs each on a busy 2-core machine), so they stay inline.
_MULTITHREADED = _CONTRACTIONS | {"Einsum", "_FusedMatMul", "_FusedConv2D",
                                  "Conv2DBackpropFilter", "DepthwiseConv2dNativeBackpropInput",
                                  "DepthwiseConv2dNativeBackpropFilter"}


def splits_work(node, kernel_def) -> bool:
    """Whether the kernel spreads this node's work over the intra-op threads itself (its class
    says so through `splits_work(node)`: pooling's batch chunks, a large compiled optimizer
    update). Such a kernel uses every core already, like the BLAS ones, so it runs inline:
    handed to the inter-op pool, the step's thread sat idle while it ran and the step paid the
    hand-offs (cnn_train, whose pooling layers and 3136x1024 Adam update split: 0.89-0.91x
    the step time inline, in-process alternating runs)."""
    splits = getattr(kernel_def.impl, "splits_work", None)
    return splits is not None and bool(splits(node))


def blas_flops(node) -> float:
    """Estimated work of `node` in BLAS calls: 0 for other kernels, inf when shapes are unknown."""
    if node.op not in _MULTITHREADED:
        return 0.0
    flops = estimate_flops(node)
    return float("inf") if flops is None else flops


# A contraction of this many multiply-adds runs on every core: BLAS-threaded or split over the
# intra-op threads (kernels/linalg.PARALLEL_MACS; a convolution's row blocks split sooner).
EVERY_CORE_FLOPS = 1 << 22


def uses_every_core(node) -> bool:
    """Whether `node` is a contraction large enough to keep every core busy. A partition with
    one runs all its synchronous kernels inline (executor/node_item.py): on the inter-op pool,
    a kernel only took cores from the contractions (a descheduled BLAS thread stalls its
    partner) and its hand-off cost a wake-up, so the overlap lost. mlp_train's Adam step, whose
    updates went to the pool, took 0.90x the time with everything inline (4.35 -> 3.95 ms,
    in-process alternating runs); SGD, already inline, 1.00x."""
    return blas_flops(node) >= EVERY_CORE_FLOPS


# What calling any kernel costs, in µs, on top of its work.
KERNEL_US = 3.0


def estimate_us(node) -> float:
    """Rough single-thread time of one run of `node` in µs, for scheduling: a contraction's
    multiply-adds, else the bytes it reads and writes, at this machine's rates
    (runtime/machine_rates.py)."""
    macs_per_us, bytes_per_us = machine_rates.rates()
    if node.op in _CONTRACTIONS:
        macs = estimate_flops(node)
        if macs is not None:
            return KERNEL_US + macs / macs_per_us
    moved = sum(tensor_bytes(d, s) for d, s in zip(node.output_dtypes, node.output_shapes)) + \
        sum(tensor_bytes(d, s) for d, s in zip(node.input_dtypes, node.input_shapes))
    return KERNEL_US + moved / bytes_per_us


# Ops that hand out existing storage rather than compute.
_FREE = frozenset({"VariableV2", "Identity", "IdentityN", "StopGradient", "Snapshot",
                   "PlaceholderWithDefault"})


def is_expensive(node, kernel_def) -> bool:
    """Whether `node` should run on the inter-op pool rather than inline."""
    if node.op in _MULTITHREADED or node.op in _FREE or kernel_def.returns_view:
        return False
    if splits_work(node, kernel_def):
        return False
    flops = estimate_flops(node)
    if flops is None:
        return kernel_def.expensive
    return flops >= EXPENSIVE_FLOPS


# What an edge of unknown static size is assumed to carry when placement weighs edges.
UNKNOWN_TENSOR_BYTES = 4096


def tensor_bytes(dtype, shape) -> int:
    """Static size in bytes of a tensor (refs count as their value), or a guess if unknown."""
    n = _elements(shape)
    size = dtype.base_dtype.size   # 0 for strings and other variable-size types
    if n is None or size == 0:
        return UNKNOWN_TENSOR_BYTES
    return n * size
