"""_Send and _Recv: hand a tensor from one partition to another through the step's rendezvous.

Both build their rendezvous key once from their attrs. _Send is synchronous (it never waits);
_Recv is asynchronous, so a partition waiting for a tensor holds no kernel thread, and an
aborted step fails the receive with the step's error.
"""
from __future__ import annotations

from tensorweave.framework import errors
from tensorweave.kernels.registry import ANY_DEVICE, kernel
from tensorweave.runtime.executor.frames import DEAD
from tensorweave.runtime.rendezvous import create_key


def _key(attrs) -> str:
    return create_key(attrs["send_device"], attrs["send_device_incarnation"],
                      attrs["recv_device"], attrs["tensor_name"])


def _no_rendezvous(ctx) -> errors.InternalError:
    return errors.InternalError(None, None, f"{ctx.op_type} {ctx.node_name} ran in a step "
                                "without a rendezvous")


@kernel("_Send", device=ANY_DEVICE, needs_step=True)
class SendKernel:
    """Puts its input into the rendezvous under its key."""

    def __init__(self, ctx):
        self.key = _key(ctx.attrs)

    def compute(self, ctx, step, value):
        rendezvous = step.rendezvous
        if rendezvous is None:
            raise _no_rendezvous(ctx)
        rendezvous.send(self.key, value, False)


@kernel("_Recv", device=ANY_DEVICE)
class RecvKernel:
    """Completes with the tensor sent under its key (inline when it is already there)."""

    def __init__(self, ctx):
        self.key = _key(ctx.attrs)

    def compute_async(self, ctx, step, inputs, done):
        rendezvous = step.rendezvous
        if rendezvous is None:
            done(error=_no_rendezvous(ctx))
            return

        def arrived(value, is_dead):
            if is_dead is None:
                done(error=value)
            elif is_dead:
                done(DEAD)   # the untaken side of a cond on another device
            else:
                done(value)
        rendezvous.recv_async(self.key, arrived)
