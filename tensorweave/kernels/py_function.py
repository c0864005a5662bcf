"""Kernel of EagerPyFunc (ops/py_function_ops.py): tf.py_func's kernel, since the callback
registered for tf.py_function already converts its arguments and results."""
from tensorweave.kernels.registry import kernel
from tensorweave.kernels.script import PyFuncKernel

kernel("EagerPyFunc")(PyFuncKernel)
