"""tensorweave's version (tf.VERSION, tf.__version__): the installed package's own version."""
from importlib import metadata as _metadata

try:
    VERSION = _metadata.version("tensorweave")
except _metadata.PackageNotFoundError:  # running from a source tree that is not installed
    VERSION = "0.1.0"
__version__ = VERSION
GIT_VERSION = "unknown"
