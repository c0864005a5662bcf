"""GuaranteeConst's kernel: the input forwarded, like Identity (the promise needs no work)."""
from tensorweave.kernels.registry import register_pure

register_pure("GuaranteeConst", lambda x: x, returns_view=True)
