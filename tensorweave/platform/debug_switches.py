"""tf.debugging's process-wide switch for device-placement logging.

`set_log_device_placement(True)` acts, as in TensorFlow 2.21's graph mode, on sessions created
while it is on: each logs every node's device when it places a graph, as if its ConfigProto had
`log_device_placement=True`. Sessions created earlier are unaffected.

TensorFlow's traceback-filtering switches (`enable_traceback_filtering` and the like) are left
out: tensorweave does not filter its own frames from tracebacks (its runtime errors name the
user's line that created the failing op instead), so a switch here would change nothing.
"""
from __future__ import annotations

__all__ = ["get_log_device_placement", "set_log_device_placement"]

_state = {"log_device_placement": False}


def set_log_device_placement(enabled) -> None:
    """Turns device-placement logging on or off for sessions created from now on.

    Args:
      enabled: whether new sessions print (and log) the device of every node they place.
    """
    _state["log_device_placement"] = bool(enabled)


def get_log_device_placement() -> bool:
    """Whether new sessions log device placement (what `set_log_device_placement` last set)."""
    return _state["log_device_placement"]


def logs_device_placement(config) -> bool:
    """Whether a session created now with `config` (a ConfigProto or None) logs placement."""
    return bool(config is not None and config.log_device_placement) or \
        _state["log_device_placement"]

