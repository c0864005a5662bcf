"""tf.data.Options: the options of an input pipeline, accepted and recorded, changing nothing.

TensorFlow's options tune its runtime: thread pools, autotuning, graph rewrites of the pipeline
(map/batch fusion...), determinism of parallel transformations. None of them changes what a
pipeline yields here, because this runtime is already what they ask for or make no difference
to: transformations run inline in the calling thread, in their deterministic order
(`deterministic`, `threading`, `autotune`, `experimental_slack` and `experimental_warm_start`
have nothing to tune), map-and-batch fusion is applied when it is exact
(`experimental_optimization`), and there is no distribution or tf.data service to shard for
(`experimental_distribute`, `experimental_service`). `Dataset.with_options` records them so
`Dataset.options()` returns them merged, as in TensorFlow.
"""
from __future__ import annotations

import enum

__all__ = ["AUTOTUNE", "Options", "ThreadingOptions", "AutotuneOptions", "DistributeOptions",
           "OptimizationOptions", "AutoShardPolicy", "AutotuneAlgorithm",
           "ExternalStatePolicy"]


# tf.data.experimental.AUTOTUNE: a parallelism or buffer size left to the runtime.
AUTOTUNE = -1

class AutoShardPolicy(enum.IntEnum):
    """How a distributed input pipeline is split between workers (TensorFlow's values)."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class AutotuneAlgorithm(enum.Enum):
    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class ExternalStatePolicy(enum.Enum):
    """What saving an iterator does about state it cannot save (TensorFlow's values)."""

    WARN = 0
    IGNORE = 1
    FAIL = 2


class _OptionsBase:
    """Options with a fixed set of typed fields, all None (TensorFlow's default) until set."""

    _FIELDS: dict = {}      # name -> the type a set value must have
    _ALIASES: dict = {}     # deprecated name -> field

    def __init__(self):
        for name, kind in self._FIELDS.items():
            default = kind() if issubclass(kind, _OptionsBase) else None
            object.__setattr__(self, name, default)

    def __getattr__(self, name):
        if name in self._ALIASES:
            return getattr(self, self._ALIASES[name])
        raise AttributeError(f"{type(self).__name__} has no option {name}.")

    def __setattr__(self, name, value):
        name = self._ALIASES.get(name, name)
        kind = self._FIELDS.get(name)
        if kind is None:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        if value is not None and not isinstance(value, kind):
            raise TypeError(f'Property "{name}" must be of type {kind}, got: {value!r} (type: '
                            f"{type(value)})")
        object.__setattr__(self, name, value)

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    __hash__ = None

    def _merged(self, other):
        """A copy of self with every option `other` sets (not None) taken from `other`."""
        result = type(self)()
        for name, kind in self._FIELDS.items():
            mine, theirs = getattr(self, name), getattr(other, name)
            if issubclass(kind, _OptionsBase):
                value = mine._merged(theirs)
            else:
                value = theirs if theirs is not None else mine
            object.__setattr__(result, name, value)
        return result


class AutotuneOptions(_OptionsBase):
    _FIELDS = {"enabled": bool, "cpu_budget": int, "ram_budget": int,
               "autotune_algorithm": AutotuneAlgorithm, "initial_parallelism": bool,
               "min_parallelism": int}


class DistributeOptions(_OptionsBase):
    _FIELDS = {"auto_shard_policy": AutoShardPolicy, "num_devices": int}


class OptimizationOptions(_OptionsBase):
    _FIELDS = dict.fromkeys(
        ["apply_default_optimizations", "filter_fusion", "filter_parallelization",
         "inject_prefetch", "map_and_batch_fusion", "map_and_filter_fusion", "map_fusion",
         "map_parallelization", "noop_elimination", "parallel_batch",
         "seq_interleave_prefetch", "shuffle_and_repeat_fusion"], bool)


class ThreadingOptions(_OptionsBase):
    _FIELDS = {"max_intra_op_parallelism": int, "private_threadpool_size": int}


class ServiceOptions(_OptionsBase):
    _FIELDS = {"pinned": bool}


class Options(_OptionsBase):
    """The options of a dataset (TF's tf.data.Options); see the module docstring for why
    none of them changes the elements or their order here."""

    _FIELDS = {"autotune": AutotuneOptions, "dataset_name": str, "deterministic": bool,
               "experimental_distribute": DistributeOptions,
               "experimental_external_state_policy": ExternalStatePolicy,
               "experimental_optimization": OptimizationOptions, "experimental_service":
               ServiceOptions, "experimental_slack": bool,
               "experimental_symbolic_checkpoint": bool, "experimental_warm_start": bool,
               "framework_type": list, "threading": ThreadingOptions}
    _ALIASES = {"experimental_deterministic": "deterministic",
                "experimental_threading": "threading"}

    def merge(self, options):
        """These options with those `options` sets taken over them."""
        return self._merged(options)
