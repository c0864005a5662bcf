"""Calling a GEMM library from compiled code: about 1 us a call, where ctypes takes ~10.

A ctypes call with fourteen declared arguments, plus `.ctypes.data` for three arrays, costs
8-13 us of Python before BLAS starts; for the single-threaded products of towers and of
convolution blocks (20-800 us each) that is up to a few percent of a step. Here a numba
intrinsic calls the BLAS function through its address, passed as an integer, so the compiled
wrapper holds no process-specific constant and is cached on disk like the other loops
(kernels/jit.py); numba's dispatch of the arguments is the whole Python cost, and the call
runs without the GIL. Two calling conventions: an ILP64 CBLAS `?gemm` (NumPy's bundled
OpenBLAS: 64-bit integers, three C-int enumerations, alpha and beta of the arrays' precision,
float32 or float64, taken from `c` when compiling) and oneDNN's `dnnl_sgemm` (float32,
row-major, 64-bit dimensions, transposes as characters; kernels/onednn_gemm.py).
"""
from __future__ import annotations

import functools

from tensorweave.kernels.jit import compiled

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112


def _arguments(context, builder, types, ir, c_dtype, arrays, values):
    """The C values of (m, n, k, alpha, a, lda, b, ldb, beta, c, ldc): integers as they are,
    alpha and beta in the arrays' precision, the arrays by data pointer."""
    real_t = ir.DoubleType() if c_dtype == types.float64 else ir.FloatType()
    ptr_t = ir.IntType(8).as_pointer()
    m, n, k, alpha, a, lda, b, ldb, beta, c, ldc = values
    a_type, b_type, c_type = arrays

    def real(value):
        return value if c_dtype == types.float64 else builder.fptrunc(value, real_t)

    def data(array_type, value):
        array = context.make_array(array_type)(context, builder, value=value)
        return builder.bitcast(array.data, ptr_t)

    return real_t, [m, n, k, real(alpha), data(a_type, a), lda, data(b_type, b), ldb,
                    real(beta), data(c_type, c), ldc]


def _suits(types, a, b, c, dtypes) -> bool:
    return all(isinstance(x, types.Array) and x.dtype == c.dtype for x in (a, b, c)) and \
        c.dtype in dtypes


@functools.cache
def _call_gemm():
    """The intrinsic `call_gemm(fn, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
    ldc)`: calls the CBLAS gemm at integer address `fn` with C types."""
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    enum_t, int_t, ptr_t = ir.IntType(32), ir.IntType(64), ir.IntType(8).as_pointer()

    @intrinsic
    def call_gemm(typingctx, fn, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        if not _suits(types, a, b, c, (types.float32, types.float64)):
            return None
        integer = types.int64
        sig = types.void(integer, integer, integer, integer, integer, integer, integer,
                         types.float64, a, integer, b, integer, types.float64, c, integer)

        def codegen(context, builder, signature, args):
            address, order_v, ta_v, tb_v = args[:4]
            real_t, rest = _arguments(context, builder, types, ir, c.dtype, (a, b, c),
                                      args[4:])
            fn_type = ir.FunctionType(ir.VoidType(), [
                enum_t, enum_t, enum_t, int_t, int_t, int_t, real_t, ptr_t, int_t, ptr_t,
                int_t, real_t, ptr_t, int_t])
            target = builder.inttoptr(address, fn_type.as_pointer())
            builder.call(target, [builder.trunc(v, enum_t) for v in (order_v, ta_v, tb_v)] +
                         rest)
            return context.get_dummy_value()
        return sig, codegen

    return call_gemm


@functools.cache
def _call_dnnl_sgemm():
    """The intrinsic `call(fn, get_threads, set_threads, ta, tb, m, n, k, alpha, a, lda, b,
    ldb, beta, c, ldc) -> status`: oneDNN's row-major `dnnl_sgemm` at address `fn` (its
    transposes are the characters 'N' and 'T'), run with the calling thread's OpenMP thread
    count (`omp_get_max_threads` / `omp_set_num_threads` at the other two addresses) at 1,
    and that count put back after, so the call never starts an OpenMP team."""
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    char_t, i32_t, int_t = ir.IntType(8), ir.IntType(32), ir.IntType(64)
    ptr_t = ir.IntType(8).as_pointer()

    @intrinsic
    def call_dnnl(typingctx, fn, get_threads, set_threads, ta, tb, m, n, k, alpha, a, lda, b,
                  ldb, beta, c, ldc):
        if not _suits(types, a, b, c, (types.float32,)):
            return None
        integer = types.int64
        sig = types.int32(integer, integer, integer, integer, integer, integer, integer,
                          integer, types.float64, a, integer, b, integer, types.float64, c,
                          integer)

        def codegen(context, builder, signature, args):
            address, get_v, set_v, ta_v, tb_v = args[:5]
            real_t, rest = _arguments(context, builder, types, ir, c.dtype, (a, b, c),
                                      args[5:])
            gemm_type = ir.FunctionType(i32_t, [
                char_t, char_t, int_t, int_t, int_t, real_t, ptr_t, int_t, ptr_t, int_t,
                real_t, ptr_t, int_t])
            get_type = ir.FunctionType(i32_t, [])
            set_type = ir.FunctionType(ir.VoidType(), [i32_t])

            def transpose_char(flag):
                is_trans = builder.icmp_signed("==", flag, ir.Constant(int_t, TRANS))
                return builder.select(is_trans, ir.Constant(char_t, ord("T")),
                                      ir.Constant(char_t, ord("N")))

            get_fn = builder.inttoptr(get_v, get_type.as_pointer())
            set_fn = builder.inttoptr(set_v, set_type.as_pointer())
            before = builder.call(get_fn, [])
            builder.call(set_fn, [ir.Constant(i32_t, 1)])
            status = builder.call(builder.inttoptr(address, gemm_type.as_pointer()),
                                  [transpose_char(ta_v), transpose_char(tb_v)] + rest)
            builder.call(set_fn, [before])
            return status
        return sig, codegen

    return call_dnnl


_call = None   # the intrinsic, bound by `caller` (numba is imported only then)


def _gemm(fn, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    _call(fn, 101, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)


def _signature(dtype, integers: int, returns=None):
    """The one signature a caller is compiled for: `integers` int64s, then (alpha, a, lda,
    b, ldb, beta, c, ldc) with a, b and c any 2-D arrays of `dtype`, C, Fortran or strided,
    writable or not, aligned or not. numba converts each call's arrays to that type, so one
    compiled signature serves every layout (each costs ~2 ms to load in a new process; a
    cnn_train step used to load eight)."""
    from numba import types
    matrix = types.Array(dtype, 2, "A", readonly=True, aligned=False)
    i = types.int64
    args = (i,) * integers + (types.float64, matrix, i, matrix, i, types.float64, matrix, i)
    return (returns or types.void)(*args)


@functools.cache
def caller():
    """The compiled `call(fn_address, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta,
    c, ldc)`, row-major; a, b and c are the arrays whose first elements the matrices start at
    (strided views are fine: the leading dimensions say how rows are laid out)."""
    from numba import types
    _gemm.__globals__["_call"] = _call_gemm()
    return compiled(_gemm, (_signature(types.float32, 6), _signature(types.float64, 6)))


_call_dnnl = None   # the oneDNN intrinsic, bound by `dnnl_caller`


def _dnnl_gemm(fn, get_threads, set_threads, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
               ldc):
    return _call_dnnl(fn, get_threads, set_threads, ta, tb, m, n, k, alpha, a, lda, b, ldb,
                      beta, c, ldc)


@functools.cache
def dnnl_caller():
    """The compiled `call(fn_address, get_threads_address, set_threads_address, trans_a,
    trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) -> dnnl status` for float32
    arrays, row-major, the transposes given as NO_TRANS / TRANS like `caller`'s."""
    from numba import types
    _dnnl_gemm.__globals__["_call_dnnl"] = _call_dnnl_sgemm()
    return compiled(_dnnl_gemm, (_signature(types.float32, 8, types.int32),))
