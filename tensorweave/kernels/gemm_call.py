"""Calling an ILP64 CBLAS `?gemm` from compiled code: about 1 us a call, where ctypes takes ~10.

A ctypes call with fourteen declared arguments, plus `.ctypes.data` for three arrays, costs
8-13 us of Python before BLAS starts; for the single-threaded products of towers and of
convolution blocks (20-800 us each) that is up to a few percent of a step. Here a numba
intrinsic calls the BLAS function through its address, passed as an integer, so the compiled
wrapper holds no process-specific constant and is cached on disk like the other loops
(kernels/jit.py); numba's dispatch of the arguments is the whole Python cost, and the call
runs without the GIL. The function must take 64-bit integers (ILP64: NumPy's bundled
OpenBLAS, MKL in its ILP64 interface); its three enumeration arguments are C ints, alpha and
beta are of the arrays' precision (float32 or float64, taken from `c` when compiling).
"""
from __future__ import annotations

import functools

from tensorweave.kernels.jit import compiled

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112


@functools.cache
def _call_gemm():
    """The intrinsic `call_gemm(fn, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
    ldc)`: calls the gemm at integer address `fn` with C types, the arrays by data pointer."""
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    enum_t, int_t, ptr_t = ir.IntType(32), ir.IntType(64), ir.IntType(8).as_pointer()

    @intrinsic
    def call_gemm(typingctx, fn, order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        if not all(isinstance(x, types.Array) and x.dtype == c.dtype for x in (a, b, c)) or \
                c.dtype not in (types.float32, types.float64):
            return None
        integer = types.int64
        sig = types.void(integer, integer, integer, integer, integer, integer, integer,
                         types.float64, a, integer, b, integer, types.float64, c, integer)

        def codegen(context, builder, signature, args):
            real_t = ir.DoubleType() if c.dtype == types.float64 else ir.FloatType()
            fn_type = ir.FunctionType(ir.VoidType(), [
                enum_t, enum_t, enum_t, int_t, int_t, int_t, real_t, ptr_t, int_t, ptr_t,
                int_t, real_t, ptr_t, int_t])

            def enum(value):
                return builder.trunc(value, enum_t)

            def real(value):
                return value if c.dtype == types.float64 else builder.fptrunc(value, real_t)

            def data(array_type, value):
                array = context.make_array(array_type)(context, builder, value=value)
                return builder.bitcast(array.data, ptr_t)

            (address, order_v, ta_v, tb_v, m_v, n_v, k_v, alpha_v, a_v, lda_v, b_v, ldb_v,
             beta_v, c_v, ldc_v) = args
            target = builder.inttoptr(address, fn_type.as_pointer())
            builder.call(target, [enum(order_v), enum(ta_v), enum(tb_v), m_v, n_v, k_v,
                                  real(alpha_v), data(a, a_v), lda_v, data(b, b_v), ldb_v,
                                  real(beta_v), data(c, c_v), ldc_v])
            return context.get_dummy_value()
        return sig, codegen

    return call_gemm


_call = None   # the intrinsic, bound by `caller` (numba is imported only then)


def _gemm(fn, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    _call(fn, 101, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)


@functools.cache
def caller():
    """The compiled `call(fn_address, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta,
    c, ldc)`, row-major; a, b and c are the arrays whose first elements the matrices start at
    (strided views are fine: the leading dimensions say how rows are laid out)."""
    _gemm.__globals__["_call"] = _call_gemm()
    return compiled(_gemm)
