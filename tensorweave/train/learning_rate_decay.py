"""Learning-rate schedules of TF1's tf.train: functions of the global step built as graph ops.

Each returns a scalar Tensor of the initial learning rate's dtype, computed from `global_step`
(cast to that dtype) every time it is evaluated, under a name scope named after the schedule.
"""
from __future__ import annotations

import math

from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor

__all__ = ["exponential_decay", "natural_exp_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "piecewise_constant_decay", "cosine_decay",
           "cosine_decay_restarts", "linear_cosine_decay", "noisy_linear_cosine_decay"]


def _cast(x, dtype):
    from tensorweave.ops.math_unary_ops import cast
    return cast(x, dtype)


def _check_step(global_step) -> None:
    if global_step is None:
        raise ValueError("global_step is required for a decay schedule.")


def _start(learning_rate):
    lr = convert_to_tensor(learning_rate, name="initial_learning_rate")
    return lr, lr.dtype.base_dtype


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * decay_rate ^ (global_step / decay_steps) (floored if `staircase`).

    Args:
      learning_rate: the initial learning rate (float or scalar Tensor).
      global_step: the step (int scalar Tensor or Variable) the rate decays with.
      decay_steps: the step interval of one decay by `decay_rate`.
      decay_rate: the decay factor.
      staircase: decay in discrete intervals (integer division of the step).
      name: the name scope (default "ExponentialDecay").

    Returns:
      The decayed learning rate, a scalar Tensor.

    Raises:
      ValueError: if `global_step` is None.
    """
    from tensorweave.ops.math_ops import multiply
    from tensorweave.ops.math_ops import pow as pow_
    from tensorweave.ops.math_unary_ops import floor
    _check_step(global_step)
    with name_scope(name, "ExponentialDecay") as scope:
        lr, dtype = _start(learning_rate)
        p = _cast(global_step, dtype) / _cast(decay_steps, dtype)
        if staircase:
            p = floor(p)
        return multiply(lr, pow_(_cast(decay_rate, dtype), p), name=scope)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * exp(-decay_rate * global_step / decay_steps) (see exponential_decay)."""
    from tensorweave.ops.math_unary_ops import exp, negative
    _check_step(global_step)
    natural_rate = exp(negative(decay_rate))
    return exponential_decay(learning_rate, global_step, decay_steps, natural_rate,
                             staircase=staircase, name=name or "ExponentialDecay")


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    """learning_rate / (1 + decay_rate * global_step / decay_steps) (floored if `staircase`)."""
    from tensorweave.ops.math_ops import add, divide, multiply
    from tensorweave.ops.math_unary_ops import floor
    _check_step(global_step)
    with name_scope(name, "InverseTimeDecay") as scope:
        lr, dtype = _start(learning_rate)
        p = _cast(global_step, dtype) / _cast(decay_steps, dtype)
        if staircase:
            p = floor(p)
        denom = add(_cast(1, dtype), multiply(_cast(decay_rate, dtype), p))
        return divide(lr, denom, name=scope)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    """(learning_rate - end) * (1 - step / decay_steps) ^ power + end.

    The step is capped at `decay_steps`; with `cycle`, decay_steps instead grows to the next
    multiple of itself above the step, restarting the decay.
    """
    from tensorweave.ops.array_index_ops import where_v2
    from tensorweave.ops.math_ops import add, divide, equal, minimum, multiply
    from tensorweave.ops.math_ops import pow as pow_
    from tensorweave.ops.math_unary_ops import ceil
    _check_step(global_step)
    with name_scope(name, "PolynomialDecay") as scope:
        lr, dtype = _start(learning_rate)
        end = _cast(end_learning_rate, dtype)
        power = _cast(power, dtype)
        step = _cast(global_step, dtype)
        steps = _cast(decay_steps, dtype)
        if cycle:
            multiplier = where_v2(equal(step, 0), _cast(1.0, dtype), ceil(step / decay_steps))
            steps = multiply(steps, multiplier)
        else:
            step = minimum(step, steps)
        p = divide(step, steps)
        return add(multiply(lr - end, pow_(1 - p, power)), end, name=scope)


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] for x <= boundaries[0], values[i] for boundaries[i-1] < x <= boundaries[i],
    values[-1] for x > boundaries[-1].

    Args:
      x: a scalar Tensor (usually the global step).
      boundaries: increasing values of x's dtype (int32 boundaries are cast for int64 x).
      values: one more value than boundaries, all of one dtype.
      name: the name scope (default "PiecewiseConstant").

    Returns:
      A scalar Tensor of the values' dtype.

    Raises:
      ValueError: for mismatched lengths or dtypes.
    """
    from tensorweave.ops.array_index_ops import where_v2
    from tensorweave.ops.math_ops import greater, less_equal, logical_and
    boundaries = [convert_to_tensor(b) for b in _flatten(boundaries)]
    values = [convert_to_tensor(v) for v in _flatten(values)]
    x = convert_to_tensor(x)
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    for i, b in enumerate(boundaries):
        if b.dtype.base_dtype != x.dtype.base_dtype:
            if b.dtype.base_dtype.name == "int32" and x.dtype.base_dtype.name == "int64":
                boundaries[i] = _cast(b, x.dtype.base_dtype)
            else:
                raise ValueError(f"Boundaries ({b.dtype.base_dtype.name}) must have the same "
                                 f"dtype as x ({x.dtype.base_dtype.name}).")
    for v in values[1:]:
        if v.dtype.base_dtype != values[0].dtype.base_dtype:
            raise ValueError("Values must have elements all with the same dtype "
                             f"({values[0].dtype.base_dtype.name} vs "
                             f"{v.dtype.base_dtype.name}).")
    with name_scope(name, "PiecewiseConstant"):
        result = where_v2(greater(x, boundaries[-1]), values[-1], values[0])
        for low, high, v in zip(boundaries[:-1], boundaries[1:], values[1:-1]):
            inside = logical_and(greater(x, low), less_equal(x, high))
            result = where_v2(inside, v, result)
        return result


piecewise_constant_decay = piecewise_constant


def _flatten(values) -> list:
    if isinstance(values, (list, tuple)):
        return [x for v in values for x in _flatten(v)]
    return [values]


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
    decay_steps)) + alpha) (Loshchilov & Hutter, SGDR)."""
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.math_ops import minimum, multiply
    from tensorweave.ops.math_unary_ops import cos
    _check_step(global_step)
    with name_scope(name, "CosineDecay"):
        lr, dtype = _start(learning_rate)
        steps = _cast(decay_steps, dtype)
        step = minimum(_cast(global_step, dtype), steps)
        fraction = step / steps
        cosine = 0.5 * (1.0 + cos(constant(math.pi, dtype=dtype) * fraction))
        decayed = (1 - alpha) * cosine + alpha
        return multiply(lr, decayed)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0,
                          alpha=0.0, name=None):
    """Cosine decay with warm restarts: period i lasts first_decay_steps * t_mul^i steps and
    starts at m_mul^i times the initial rate."""
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.math_ops import multiply
    from tensorweave.ops.math_ops import pow as pow_
    from tensorweave.ops.math_unary_ops import cos, floor, log
    _check_step(global_step)
    with name_scope(name, "SGDRDecay") as scope:
        lr, dtype = _start(learning_rate)
        first = _cast(first_decay_steps, dtype)
        fraction = _cast(global_step, dtype) / first
        if float(t_mul) == 1.0:
            restart = floor(fraction)
            fraction = fraction - restart
        else:
            t = _cast(t_mul, dtype)
            restart = floor(log(1.0 - fraction * (1.0 - t)) / log(t))
            done = (1.0 - pow_(t, restart)) / (1.0 - t)
            fraction = (fraction - done) / pow_(t, restart)
        m_fac = pow_(_cast(m_mul, dtype), restart)
        cosine = 0.5 * m_fac * (1.0 + cos(constant(math.pi, dtype=dtype) * fraction))
        decayed = (1 - _cast(alpha, dtype)) * cosine + _cast(alpha, dtype)
        return multiply(lr, decayed, name=scope)


def _linear_cosine(default_name, learning_rate, global_step, decay_steps, num_periods, alpha,
                   beta, name, noise=None):
    """learning_rate * ((alpha + linear [+ noise]) * cosine + beta); `noise(step, dtype)` adds
    a random term to the linear part."""
    from tensorweave.ops.constant_op import constant
    from tensorweave.ops.math_ops import minimum, multiply
    from tensorweave.ops.math_unary_ops import cos
    _check_step(global_step)
    with name_scope(name, default_name) as scope:
        lr, dtype = _start(learning_rate)
        steps = _cast(decay_steps, dtype)
        step = minimum(_cast(global_step, dtype), steps)
        linear = (steps - step) / steps
        if noise is not None:
            linear = linear + noise(step, dtype)
        fraction = 2.0 * _cast(num_periods, dtype) * (step / steps)
        cosine = 0.5 * (1.0 + cos(constant(math.pi, dtype=dtype) * fraction))
        decayed = (_cast(alpha, dtype) + linear) * cosine + _cast(beta, dtype)
        return multiply(lr, decayed, name=scope)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0,
                        beta=0.001, name=None):
    """learning_rate * ((alpha + linear) * cosine + beta), linear = (decay_steps - step) /
    decay_steps, cosine = 0.5 * (1 + cos(pi * 2 * num_periods * step / decay_steps))."""
    return _linear_cosine("LinearCosineDecay", learning_rate, global_step, decay_steps,
                          num_periods, alpha, beta, name)


def noisy_linear_cosine_decay(learning_rate, global_step, decay_steps, initial_variance=1.0,
                              variance_decay=0.55, num_periods=0.5, alpha=0.0, beta=0.001,
                              name=None):
    """Linear cosine decay with Gaussian noise added to its linear part (Bello et al., 2017).

    learning_rate * ((alpha + linear + eps) * cosine + beta), with `linear` and `cosine` as in
    `linear_cosine_decay` and eps ~ N(0, initial_variance / (1 + step) ^ variance_decay) drawn
    anew at every evaluation.

    Args:
      learning_rate: the initial learning rate (float or scalar Tensor).
      global_step: the step (int scalar Tensor or Variable) the rate decays with.
      decay_steps: the number of steps to decay over.
      initial_variance: the initial variance of the noise.
      variance_decay: the decay exponent of the noise variance.
      num_periods: the number of cosine periods over decay_steps.
      alpha: see linear_cosine_decay.
      beta: see linear_cosine_decay.
      name: the name scope (default "NoisyLinearCosineDecay").

    Returns:
      A scalar Tensor of learning_rate's dtype.

    Raises:
      ValueError: global_step is None.
    """
    from tensorweave.ops.math_ops import pow as pow_
    from tensorweave.ops.math_unary_ops import sqrt
    from tensorweave.ops.random_ops import random_normal

    def noise(step, dtype):
        variance = _cast(initial_variance, dtype) / pow_(1.0 + step,
                                                         _cast(variance_decay, dtype))
        return random_normal(step.shape, stddev=sqrt(variance))
    return _linear_cosine("NoisyLinearCosineDecay", learning_rate, global_step, decay_steps,
                          num_periods, alpha, beta, name, noise)
