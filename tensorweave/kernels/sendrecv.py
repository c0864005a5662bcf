"""_Send and _Recv: hand a tensor from one partition to another through the step's rendezvous.

Both build their rendezvous key once from their attrs; a pair inside a while loop's frame
(a loop spanning devices) is keyed per frame instance and iteration instead, by the frames
executor (`key_in`). _Send is synchronous (it never waits); _Recv is asynchronous, so a
partition waiting for a tensor holds no kernel thread, and an aborted step fails the receive
with the step's error.
"""
from __future__ import annotations

from tensorweave.framework import errors
from tensorweave.kernels.registry import ANY_DEVICE, kernel
from tensorweave.runtime.executor.frames import DEAD
from tensorweave.runtime.rendezvous import create_key


def _key(attrs, frame_id: int = 0, iter_id: int = 0) -> str:
    return create_key(attrs["send_device"], attrs["send_device_incarnation"],
                      attrs["recv_device"], attrs["tensor_name"], frame_id, iter_id)


class _Keyed:
    """A transfer kernel's key: the step's, or one per frame instance and iteration."""

    def __init__(self, ctx):
        self.attrs = ctx.attrs
        self.key = _key(ctx.attrs)

    def key_in(self, frame_id: int, iter_id: int) -> str:
        return _key(self.attrs, frame_id, iter_id)


def _no_rendezvous(ctx) -> errors.InternalError:
    return errors.InternalError(None, None, f"{ctx.op_type} {ctx.node_name} ran in a step "
                                "without a rendezvous")


@kernel("_Send", device=ANY_DEVICE, needs_step=True)
class SendKernel(_Keyed):
    """Puts its input into the rendezvous under its key."""

    def compute(self, ctx, step, value):
        self.send(ctx, step, self.key, value, False)

    @staticmethod
    def send(ctx, step, key: str, value, is_dead: bool) -> None:
        rendezvous = step.rendezvous
        if rendezvous is None:
            raise _no_rendezvous(ctx)
        rendezvous.send(key, value, is_dead)


@kernel("_Recv", device=ANY_DEVICE)
class RecvKernel(_Keyed):
    """Completes with the tensor sent under its key (inline when it is already there)."""

    def compute_async(self, ctx, step, inputs, done):
        self.receive(ctx, step, self.key, done)

    @staticmethod
    def receive(ctx, step, key: str, done) -> None:
        """Calls done(value), done(DEAD) for a dead token, or done(error=...)."""
        rendezvous = step.rendezvous
        if rendezvous is None:
            done(error=_no_rendezvous(ctx))
            return

        def arrived(value, is_dead):
            if is_dead is None:
                done(error=value)
            elif is_dead:
                done(DEAD)   # the untaken side of a cond, or a loop's last iteration
            else:
                done(value)
        rendezvous.recv_async(key, arrived)
