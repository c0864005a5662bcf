"""The order AddN adds its inputs in: TensorFlow's, which starts with the input it reuses.

TensorFlow's AddN kernel writes the sum into the buffer of the first input it may take over
(a tensor nobody else holds any more) and, when that is input r > 0, swaps inputs 0 and r
before adding left to right: add_n([x, x, x, x * 0.3]) with x fed is ((h + x) + x) + x for
h = x * 0.3. The float result depends on that order, so the executor gives each AddN (and each
fused AddN-update, which sums the same gradients) the same order, decided once per partition
from who holds each input:

* nobody else holds it when this node is its only reader in the partition (so a tensor also
  fetched, sent to another device or read twice is held), and
* its producer owns it: not a Const (the kernel keeps its tensor), a fed `_Arg` (the call frame
  keeps it), a received value, a variable's storage or a read of a variable; a view (Identity,
  Reshape, ...) owns its input's buffer when that input was owned and read only by the view.

TensorFlow decides this from reference counts at run time, so where a tensor with several
readers has seen the others finish first, TF may take it over when this rule does not.
"""
from __future__ import annotations

_NOT_OWNED = frozenset({"Const", "HostConst", "_Arg", "_Recv", "_HostRecv", "ReadVariableOp",
                        "VariableV2", "Variable", "VarHandleOp", "TemporaryVariable"})
# The summed inputs of each node: where they start (after var, alpha and the factors).
_SUMS = {"AddN": lambda node: 0,
         "_FusedAddNApplyGradientDescent": lambda node: 2 + int(node.attrs.get("num_factors", 0)),
         "_FusedAddNResourceApplyGradientDescent":
             lambda node: 2 + int(node.attrs.get("num_factors", 0))}


def order_sums(items) -> None:
    """Swaps the first summed input of every AddN with the one TensorFlow's kernel reuses."""
    sums = [it for it in items if it.node.op in _SUMS]
    if not sums:
        return
    producer, readers = {}, {}
    for it in items:
        for k in range(it.num_outputs):
            producer[it.out_start + k] = it
        for s in it.in_slots:
            readers[s] = readers.get(s, 0) + 1
    for it in sums:
        start = _SUMS[it.node.op](it.node)
        for j in range(start, len(it.in_slots)):
            if _owned_alone(it.in_slots[j], it.deref[j], producer, readers):
                if j > start:
                    it.in_slots = _swapped(it.in_slots, start, j)
                    it.deref = _swapped(it.deref, start, j)
                break


def _owned_alone(slot: int, deref: bool, producer: dict, readers: dict) -> bool:
    for _ in range(64):
        source = producer.get(slot)
        if deref or readers.get(slot, 0) != 1 or source is None or \
                source.node.op in _NOT_OWNED:
            return False
        if not source.returns_view:
            return True
        slot, deref = source.in_slots[0], source.deref[0]   # a view: its input's buffer
    return False


def _swapped(values: tuple, a: int, b: int) -> tuple:
    out = list(values)
    out[a], out[b] = out[b], out[a]
    return tuple(out)
