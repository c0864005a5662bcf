"""tf.initializers: the initializer classes and functions under their TF1 names."""
from tensorweave.ops.init_ops import (
    Constant as constant,
    GlorotNormal as glorot_normal,
    GlorotUniform as glorot_uniform,
    Identity as identity,
    Ones as ones,
    Orthogonal as orthogonal,
    RandomNormal as random_normal,
    RandomUniform as random_uniform,
    TruncatedNormal as truncated_normal,
    UniformUnitScaling as uniform_unit_scaling,
    VarianceScaling as variance_scaling,
    Zeros as zeros,
    he_normal,
    he_uniform,
    lecun_normal,
    lecun_uniform,
)
from tensorweave.ops.lookup_ops import tables_initializer
from tensorweave.ops.variables import (
    global_variables_initializer as global_variables,
    local_variables_initializer as local_variables,
    variables_initializer as variables,
)
