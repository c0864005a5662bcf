"""Kernels of tf.math.special's functions (ops/special_functions_ops.py): SciPy's Cephes ports,
in the input's dtype."""
from __future__ import annotations

import scipy  # scipy.special loads on first use

from tensorweave.framework import dtypes as _dtypes
from tensorweave.kernels.math_special import in_input_dtype
from tensorweave.kernels.registry import register_pure

for _op_type, _name in (("Dawsn", "dawsn"), ("Expint", "expi"), ("Spence", "spence"),
                        ("BesselJ0", "j0"), ("BesselJ1", "j1"), ("BesselY0", "y0"),
                        ("BesselY1", "y1"), ("BesselK0", "k0"), ("BesselK0e", "k0e"),
                        ("BesselK1", "k1"), ("BesselK1e", "k1e")):
    register_pure(_op_type, in_input_dtype(lambda x, _name=_name: getattr(scipy.special,
                                                                            _name)(x)),
                  dtypes=_dtypes.FLOATING)
register_pure("FresnelSin", in_input_dtype(lambda x: scipy.special.fresnel(x)[0]),
              dtypes=_dtypes.FLOATING)
register_pure("FresnelCos", in_input_dtype(lambda x: scipy.special.fresnel(x)[1]),
              dtypes=_dtypes.FLOATING)
