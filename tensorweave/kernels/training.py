"""Kernels of the fused optimizer updates: each updates its variable's storage in place.

One update function per algorithm, `_<algo>(attrs, new, var, slots..., scalars..., grad)`,
writes into the arrays it is given with `out=` arithmetic and a few temporaries from `new`
(scalar factors are combined first, in the variable's dtype). The dense kernel hands it the
variables' storage, for large variables block by block (so each block's passes stay in the L2
cache) with reused scratch buffers; the sparse kernel gathers the rows named by `indices`,
updates those copies and scatters them back (rows one at a time, in order, when indices
repeat, as TensorFlow's loop does). The order of operations follows TensorFlow's kernels, so
results agree with TensorFlow to rounding (dense GradientDescent, Momentum, Adam, RMSProp and
FTRL with lr_power -0.5 bit for bit). Dense Adam and GradientDescent on contiguous float32 /
float64 storage run instead as one compiled loop (kernels/jit.py) doing the same operations per
element: one pass over memory instead of a dozen, same bits (variables of PARALLEL_SIZE
elements or more in one chunk per intra-op thread). Refs arrive as VariableRefs, and so do a
resource twin's handles (ResourceApplyAdam runs ApplyAdam's kernel, its output unused);
`use_locking` holds every ref's lock while updating.
"""
from __future__ import annotations

import contextlib
import math
import threading

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.errors import invalid_argument
from tensorweave.framework.op_def import OP_REGISTRY
from tensorweave.framework.shape_text import dims_text
from tensorweave.kernels import intra_op
from tensorweave.kernels.jit import LOOP_DTYPES, compiled, loop_input
from tensorweave.kernels.registry import kernel
from tensorweave.runtime.executor.values import deref

# Dense updates of large variables run over blocks of this many elements: each formula makes
# up to a dozen NumPy passes, and a block's arrays and temporaries stay in the L2 cache between
# passes (measured: Adam on the 784x512 and 512x512 float32 variables of mlp_train 3.0 ms in
# whole-array passes, 2.2 ms in blocks of 32768; SGD 0.53 -> 0.44 ms).
BLOCK = 32768
# Compiled updates of variables this large run as one contiguous chunk per intra-op thread:
# a memory-bound pass of several ms, which one core does not saturate (measured: Adam on
# cnn_train's 3136x1024 weights 7.5 -> 4.4 ms per step, per-node trace medians). Smaller
# updates stay whole: the executor already runs different variables' updates in parallel.
PARALLEL_SIZE = 1 << 20


def over_update_chunks(size: int, run) -> None:
    """run(slice) over a flat variable of `size` elements: whole, or one chunk per intra-op
    thread from PARALLEL_SIZE elements (the compiled update loops are memory-bound)."""
    chunks = intra_op.threads() if size >= PARALLEL_SIZE else 1
    if chunks <= 1:
        run(slice(0, size))
        return
    step = -(-size // chunks)
    intra_op.parallel_for(chunks, lambda k: run(slice(k * step, (k + 1) * step)))


def update_splits(node) -> bool:
    """Whether a compiled update of `node`'s variable (input 0, by its static shape and attr T)
    runs in chunks over the intra-op threads: read by the cost model, which then keeps the
    node inline as it does BLAS kernels."""
    return loop_input(node, PARALLEL_SIZE)


# --- the update formulas (in place on the arrays passed) ---------------------------------------
# `new(x)` gives a scratch array shaped like x (fresh, or a reused buffer of the blocked path);
# every operation writes with `out=` into the variables or into scratch.
def _gradient_descent(attrs, new, var, alpha, delta):
    step = np.multiply(delta, alpha, out=new(var))
    var -= step


def _proximal_gradient_descent(attrs, new, var, alpha, l1, l2, delta):
    prox = np.multiply(delta, alpha, out=new(var))   # prox = var - alpha * delta
    np.subtract(var, prox, out=prox)
    scale = 1 + alpha * l2
    if l1 > 0:                                        # sign(prox) * max(|prox| - a*l1, 0) / scale
        shrunk = np.abs(prox, out=new(var))
        shrunk -= alpha * l1
        np.maximum(shrunk, 0, out=shrunk)
        np.sign(prox, out=var)
        var *= shrunk
        var /= scale
    else:
        np.divide(prox, scale, out=var)


def _momentum(attrs, new, var, accum, lr, grad, momentum):
    accum *= momentum
    accum += grad
    step = new(var)
    if attrs["use_nesterov"]:            # var -= grad * lr + accum * momentum * lr
        np.multiply(grad, lr, out=step)
        tmp = np.multiply(accum, momentum, out=new(var))
        tmp *= lr
        step += tmp
    else:
        np.multiply(accum, lr, out=step)
    var -= step


def _adam(attrs, new, var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad):
    one = var.dtype.type(1)
    alpha = lr * np.sqrt(one - beta2_power) / (one - beta1_power)
    tmp = np.subtract(grad, m, out=new(var))  # m += (g - m) * (1 - beta1)
    tmp *= one - beta1
    m += tmp
    np.square(grad, out=tmp)                  # v += (g^2 - v) * (1 - beta2)
    tmp -= v
    tmp *= one - beta2
    v += tmp
    np.sqrt(v, out=tmp)                       # denominator sqrt(v) + epsilon
    tmp += epsilon
    step = new(var)
    if attrs["use_nesterov"]:                 # (g * (1 - beta1) + beta1 * m) * alpha
        np.multiply(grad, one - beta1, out=step)
        step += np.multiply(beta1, m, out=new(var))
        step *= alpha
    else:                                     # m * alpha
        np.multiply(m, alpha, out=step)
    step /= tmp
    var -= step


# --- compiled loops (kernels/jit.py) for the hottest updates: one pass over the arrays instead
# of a dozen, the same operations in the same order and dtype as the formulas above ----------
def _gradient_descent_loop(var, delta, alpha):
    for i in range(var.size):
        var[i] -= delta[i] * alpha


def adam_loop(var, m, v, grad, alpha, beta1, one_minus_beta1, one_minus_beta2, epsilon,
               nesterov):
    if nesterov:   # one loop per variant: a branch inside would keep LLVM from vectorizing
        for i in range(var.size):
            g = grad[i]
            m_i = m[i] + (g - m[i]) * one_minus_beta1
            v_i = v[i] + (g * g - v[i]) * one_minus_beta2
            m[i], v[i] = m_i, v_i
            var[i] -= (g * one_minus_beta1 + beta1 * m_i) * alpha / (np.sqrt(v_i) + epsilon)
    else:
        for i in range(var.size):
            g = grad[i]
            m_i = m[i] + (g - m[i]) * one_minus_beta1
            v_i = v[i] + (g * g - v[i]) * one_minus_beta2
            m[i], v[i] = m_i, v_i
            var[i] -= m_i * alpha / (np.sqrt(v_i) + epsilon)


def _gradient_descent_args(attrs, var, alpha, delta):
    return var, delta, var.dtype.type(alpha)


def adam_args(attrs, var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad):
    t = var.dtype.type
    one = t(1)
    # math.sqrt of a float32 rounded back to float32 is the correctly rounded float32 root
    # (double has more than twice float's precision), what np.sqrt gives at a tenth the cost.
    root = one - t(beta2_power)
    alpha = t(lr) * t(math.sqrt(root) if root >= 0 else math.nan) / (one - t(beta1_power))
    beta1 = t(beta1)
    return (var, m, v, grad, alpha, beta1, one - beta1, one - t(beta2), t(epsilon),
            bool(attrs["use_nesterov"]))


def _adagrad(attrs, new, var, accum, lr, grad):
    step = new(var)
    if attrs["update_slots"]:
        accum += np.square(grad, out=step)
    np.multiply(grad, lr, out=step)           # var -= grad * lr / sqrt(accum)
    step /= np.sqrt(accum, out=new(var))
    var -= step


def _adadelta(attrs, new, var, accum, accum_update, lr, rho, epsilon, grad):
    one = var.dtype.type(1)
    accum *= rho                               # accum = accum * rho + g^2 * (1 - rho)
    tmp = np.square(grad, out=new(var))
    tmp *= one - rho
    accum += tmp
    update = np.add(accum_update, epsilon, out=new(var))  # sqrt(au + eps) / sqrt(accum + eps) * g
    np.sqrt(update, out=update)
    np.add(accum, epsilon, out=tmp)
    np.sqrt(tmp, out=tmp)
    update /= tmp
    update *= grad
    np.multiply(update, lr, out=tmp)
    var -= tmp
    accum_update *= rho                        # accum_update = au * rho + update^2 * (1 - rho)
    np.square(update, out=update)
    update *= one - rho
    accum_update += update


def _rms_prop(attrs, new, var, ms, mom, lr, rho, momentum, epsilon, grad):
    one = var.dtype.type(1)
    tmp = np.square(grad, out=new(var))        # ms += (g^2 - ms) * (1 - rho)
    tmp -= ms
    tmp *= one - rho
    ms += tmp
    np.add(ms, epsilon, out=tmp)               # mom = mom * momentum + g * lr / sqrt(ms + eps)
    np.sqrt(tmp, out=tmp)
    _momentum_step(new, var, mom, lr, momentum, grad, tmp)


def _centered_rms_prop(attrs, new, var, mg, ms, mom, lr, rho, momentum, epsilon, grad):
    one = var.dtype.type(1)
    tmp = np.square(grad, out=new(var))        # ms += (g^2 - ms) * (1 - rho)
    tmp -= ms
    tmp *= one - rho
    ms += tmp
    np.subtract(grad, mg, out=tmp)             # mg += (g - mg) * (1 - rho)
    tmp *= one - rho
    mg += tmp
    np.square(mg, out=tmp)                     # denominator sqrt(ms - mg^2 + eps)
    np.subtract(ms, tmp, out=tmp)
    tmp += epsilon
    np.sqrt(tmp, out=tmp)
    _momentum_step(new, var, mom, lr, momentum, grad, tmp)


def _momentum_step(new, var, mom, lr, momentum, grad, denom):
    """mom = mom * momentum + grad * lr / denom; var -= mom."""
    step = np.multiply(grad, lr, out=new(var))
    step /= denom
    mom *= momentum
    mom += step
    var -= mom


def _ftrl(attrs, new, var, accum, linear, grad, lr, l1, l2, lr_power, l2_shrinkage=None):
    by_lr = attrs["multiply_linear_by_lr"]
    new_accum = np.square(grad, out=new(var))
    new_accum += accum
    root_new, root_old = new(var), new(var)
    if lr_power == -0.5:
        np.sqrt(new_accum, out=root_new)
        np.sqrt(accum, out=root_old)
    else:
        np.power(new_accum, -lr_power, out=root_new)
        np.power(accum, -lr_power, out=root_old)
    sigma = np.subtract(root_new, root_old, out=root_old)  # (new^-p - old^-p) / lr * var
    if not by_lr:
        sigma /= lr
    sigma *= var
    step = new(var)
    if l2_shrinkage is None:
        if by_lr:
            np.multiply(grad, lr, out=step)
        else:
            np.copyto(step, grad)
    else:                                      # grad + 2 * l2_shrinkage * var
        np.multiply(var, 2 * l2_shrinkage, out=step)
        step += grad
        if by_lr:
            step *= lr
    step -= sigma
    linear += step
    l1_eff = l1 * lr if by_lr else l1
    np.sign(linear, out=step)                  # x = l1 * sign(linear) - linear
    step *= l1_eff
    step -= linear
    if not by_lr:
        root_new /= lr                         # y = new^-p / lr + 2 * l2
    root_new += 2 * l2 * lr if by_lr else 2 * l2
    step /= root_new
    np.abs(linear, out=sigma)
    var[...] = 0
    np.copyto(var, step, where=sigma > l1_eff)
    np.copyto(accum, new_accum)


def _ftrl_v2(attrs, new, var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power):
    _ftrl(attrs, new, var, accum, linear, grad, lr, l1, l2, lr_power, l2_shrinkage)


class _Scratch:
    """Reusable block-sized temporaries for the blocked path (one set per thread)."""

    def __init__(self, dtype, size: int):
        self.dtype, self.size = dtype, size
        self.buffers: list = []
        self.used = 0

    def reset(self) -> None:
        self.used = 0

    def __call__(self, like):
        if self.used == len(self.buffers):
            self.buffers.append(np.empty(self.size, self.dtype))
        buf = self.buffers[self.used]
        self.used += 1
        return buf[:like.size].reshape(like.shape)


# --- kernels ----------------------------------------------------------------------------------
class _Roles:
    """Positions of the refs (or a resource twin's handles), scalars, grad and indices among
    an op's inputs."""

    def __init__(self, op_type: str):
        args = OP_REGISTRY[op_type].inputs
        self.names = [a.name for a in args]
        self.refs = tuple(i for i, a in enumerate(args)
                          if a.is_ref or a.dtype == _dtypes.resource)
        self.grad = next(i for i, a in enumerate(args) if a.name in ("grad", "delta"))
        self.indices = next((i for i, a in enumerate(args) if a.name == "indices"), None)
        self.scalars = tuple(i for i in range(len(args))
                             if i not in self.refs and i not in (self.grad, self.indices))


def _ndim(value) -> int:
    """np.ndim without its dispatch (half a microsecond, six times per Adam update): arrays and
    NumPy scalars carry `ndim`; anything else asks NumPy."""
    ndim = getattr(value, "ndim", None)
    return np.ndim(value) if ndim is None else ndim


@contextlib.contextmanager
def locked(refs):
    """Holds the locks of `refs` (in a fixed order, so two updates cannot deadlock)."""
    locks = sorted({id(r.lock): r.lock for r in refs}.items())
    with contextlib.ExitStack() as stack:
        for _, lock in locks:
            stack.enter_context(lock)
        yield


class ApplyKernel:
    """Dense update: checks shapes like TensorFlow, then runs the formula on the storage."""

    formula = None
    loop = None   # (compiled loop, its arguments from the formula's) for Adam and SGD

    def __init__(self, ctx):
        self.attrs = ctx.attrs
        self.locking = ctx.attrs["use_locking"]
        self.roles = _Roles(ctx.op_type)
        self.local = threading.local()
        self.compiled = None
        if type(self).loop is not None:
            loop, self.loop_args = type(self).loop
            self.compiled = compiled(loop)

    @classmethod
    def splits_work(cls, node) -> bool:
        """Read by the cost model (see `update_splits`); only Adam and SGD have loops."""
        return cls.loop is not None and update_splits(node)

    def _values(self, inputs) -> list:
        roles = self.roles
        values = list(inputs)
        for i in roles.refs:
            values[i] = deref(inputs[i])
        var = values[0]
        for i in roles.refs[1:]:
            if values[i].shape != var.shape:
                raise invalid_argument(f"var and {roles.names[i]} do not have the same shape"
                                       f"{dims_text(var.shape)} {dims_text(values[i].shape)}")
        for i in roles.scalars:
            if _ndim(values[i]) != 0:
                raise invalid_argument(f"{roles.names[i]} is not a scalar: "
                                       f"{dims_text(np.shape(values[i]))}")
        return values

    def compute(self, ctx, *inputs):
        values = self._values(inputs)
        g = self.roles.grad
        grad_shape = getattr(values[g], "shape", None)
        if grad_shape is None:
            grad_shape = np.shape(values[g])
        if grad_shape != values[0].shape:
            raise invalid_argument(f"var and {self.roles.names[g]} do not have the same shape"
                                   f"{dims_text(values[0].shape)} {dims_text(grad_shape)}")
        if self.locking:
            with locked([inputs[i] for i in self.roles.refs]):
                self._run(values)
        else:
            self._run(values)
        return inputs[0]

    def _run(self, values) -> None:
        """The formula on the whole arrays, or block by block on flat views of them with
        reused scratch buffers."""
        formula = type(self).formula
        var = values[0]
        refs = self.roles.refs
        contiguous = True
        for i in refs:
            contiguous = contiguous and values[i].flags.c_contiguous
        if not contiguous or (var.size < 2 * BLOCK and self.compiled is None):
            formula(self.attrs, np.empty_like, *values)
            return
        g = self.roles.grad
        flat = list(values)
        for i in refs:
            flat[i] = values[i].reshape(-1)
        grad = values[g]
        flat[g] = grad.reshape(-1) if isinstance(grad, np.ndarray) else np.reshape(grad, -1)
        if self.compiled is not None and var.dtype in LOOP_DTYPES:
            if flat[g].dtype != var.dtype:
                flat[g] = flat[g].astype(var.dtype)
            if var.size < PARALLEL_SIZE:   # one chunk: no slicing, no closure
                self.compiled(*self.loop_args(self.attrs, *flat))
                return
            arrays = (*refs, g)

            def run(part):
                args = list(flat)
                for i in arrays:
                    args[i] = flat[i][part]
                self.compiled(*self.loop_args(self.attrs, *args))

            over_update_chunks(var.size, run)
            return
        if var.size < 2 * BLOCK:
            formula(self.attrs, np.empty_like, *values)
            return
        scratch = self._scratch(var.dtype)
        block = list(flat)
        for start in range(0, var.size, BLOCK):
            stop = start + BLOCK
            for i in refs:
                block[i] = flat[i][start:stop]
            block[g] = flat[g][start:stop]
            scratch.reset()
            formula(self.attrs, scratch, *block)

    def _scratch(self, dtype) -> _Scratch:
        """This thread's scratch buffers (concurrent steps may run the same kernel)."""
        scratch = getattr(self.local, "scratch", None)
        if scratch is None or scratch.dtype != dtype or scratch.size != BLOCK:
            scratch = self.local.scratch = _Scratch(dtype, BLOCK)
        return scratch


class SparseApplyKernel(ApplyKernel):
    """Row update: gathers the indexed rows of var and slots, updates them, scatters back."""

    def compute(self, ctx, *inputs):
        roles = self.roles
        values = self._values(inputs)
        var, grad, indices = values[0], values[roles.grad], values[roles.indices]
        self._check(var, np.shape(grad), np.shape(indices))
        indices = np.asarray(indices)
        if indices.size == 0:
            return inputs[0]
        bad = (indices < 0) | (indices >= var.shape[0])
        if bad.any():
            i = int(np.argmax(bad))
            raise invalid_argument(f"Index {indices[i]} at offset {i} in indices is out of range")
        with locked([inputs[i] for i in roles.refs]) if self.locking else \
                contextlib.nullcontext():
            if np.unique(indices).size == indices.size:
                self._update_rows(values, indices, grad)
            else:  # repeated rows: one at a time, in order, like TensorFlow's loop
                for i in range(indices.size):
                    self._update_rows(values, indices[i:i + 1], grad[i:i + 1])
        return inputs[0]

    def _check(self, var, grad_shape, indices_shape) -> None:
        if var.ndim < 1:
            raise invalid_argument("var must be at least 1 dimensional")
        if len(indices_shape) != 1:
            raise invalid_argument("indices must be one-dimensional")
        for d in range(1, var.ndim):
            if len(grad_shape) != var.ndim or grad_shape[d] != var.shape[d]:
                raise invalid_argument(f"var and grad must match in dimension {d}")
        if len(grad_shape) < 1 or grad_shape[0] != indices_shape[0]:
            raise invalid_argument("grad must be the same size as indices in the first dimension.")

    def _update_rows(self, values, rows, grad) -> None:
        roles = self.roles
        args = list(values)
        gathered = [(i, values[i][rows]) for i in roles.refs]
        for i, part in gathered:
            args[i] = part
        args[roles.grad] = grad
        del args[roles.indices]
        type(self).formula(self.attrs, np.empty_like, *args)
        for i, part in gathered:
            values[i][rows] = part


_FORMULAS = {
    "GradientDescent": _gradient_descent, "ProximalGradientDescent": _proximal_gradient_descent,
    "Momentum": _momentum, "Adam": _adam, "Adagrad": _adagrad, "Adadelta": _adadelta,
    "RMSProp": _rms_prop, "CenteredRMSProp": _centered_rms_prop, "Ftrl": _ftrl,
    "FtrlV2": _ftrl_v2,
}
_LOOPS = {"GradientDescent": (_gradient_descent_loop, _gradient_descent_args),
          "Adam": (adam_loop, adam_args)}
_SPARSE = {"ProximalGradientDescent", "Momentum", "Adagrad", "Adadelta", "RMSProp",
           "CenteredRMSProp", "Ftrl", "FtrlV2"}

for _algo, _formula in _FORMULAS.items():
    _dense_cls = type(f"Apply{_algo}Kernel", (ApplyKernel,),
                      {"formula": _formula, "loop": _LOOPS.get(_algo)})
    kernel((f"Apply{_algo}", f"ResourceApply{_algo}"), dtypes=_dtypes.FLOATING)(_dense_cls)
    if _algo in _SPARSE:
        _sparse_cls = type(f"SparseApply{_algo}Kernel", (SparseApplyKernel,),
                           {"formula": _formula})
        kernel((f"SparseApply{_algo}", f"ResourceSparseApply{_algo}"),
               dtypes=_dtypes.FLOATING)(_sparse_cls)
