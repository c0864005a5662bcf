"""The tf.data pipeline at run time: one Python iterator node per transformation.

A `DatasetValue` (the variant a DatasetPipeline kernel outputs) holds the pipeline description,
the evaluated input tensors and the compiled functions; `DatasetValue.make_node()` builds fresh
nodes for one iterator initialization, so per-iterator state (shuffle generators, caches) starts
over. An element is a flat tuple of NumPy values. Every node iterates its elements with
`__iter__` (called once per epoch) and may produce whole batches with `batches(n, drop)`:
sources slice their arrays, and a map whose function is elementwise runs it once per batch
(map-and-batch fusion); other nodes fall back to grouping elements and stacking them.

Row positions: the sources whose elements are rows of arrays (from_tensor_slices, range) are a
node's `source` with `gather(rows)`; shuffle, repeat, take, skip and prefetch only select and
order elements (`Reorder`, kernels/dataset_reorder.py), so over such a source they run the
same algorithm on row positions (`positions()`, int64 blocks) instead of element tuples, and
a batch is one `gather` of the positions per component: the same elements in the same order
as iterating and stacking.

Errors: TensorFlow's iterator goes on after an element whose computation failed (get_next
raises, the next call continues after it), but a Python generator that raised is finished. So
a failed element travels as an `ElementError` in its place, and the iterator raises it. Only
nodes the iterator allowed (`allow_errors`, which passes down through the nodes that handle
such items: `passes_errors`) produce them; under any other node, and for the other consumers of
a pipeline (Dataset.reduce, tables), an error is raised where it happens and ends the input.

Seeds the pipeline did not give come from `random_seeds()` (kernels/dataset_seeds.py), so that
a restored iterator's nodes draw the same ones.
"""
from __future__ import annotations

import collections
import itertools

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels import dataset_files

_END = object()
_GENERATORS: dict[int, object] = {}
_next_token = itertools.count(1)


def register_generator(make_flat_iterator) -> int:
    """Registers `make_flat_iterator(*args)` for from_generator; returns its token."""
    token = next(_next_token)
    _GENERATORS[token] = make_flat_iterator
    return token


class ElementError:
    """An element whose computation failed, in its place: the iterator raises `error` and the
    next get_next continues after it."""

    __slots__ = ("error",)

    def __init__(self, error):
        self.error = error


class DatasetValue:
    """A dataset as a runtime value: description, argument values and compiled functions
    (with the records they were traced as, whose ops an iterator checkpoint checks)."""

    __slots__ = ("spec", "args", "functions", "records")

    def __init__(self, spec, args, functions, records=()):
        self.spec, self.args, self.functions, self.records = spec, args, functions, records

    def make_node(self):
        return build(self.spec, self.args, self.functions)


def register_nodes(nodes: dict) -> None:
    """Adds node classes by spec kind: transformations whose runtime lives in other modules
    (kernels/dataset_reorder.py, dataset_experimental.py, dataset_readers.py) register
    themselves on import."""
    _NODES.update(nodes)


def build(spec, args, functions):
    """The runtime node of `spec` reading the argument values `args`."""
    return _NODES[spec["kind"]](spec, args, functions)


def stack(elements):
    """One batch from a list of elements; InvalidArgumentError for mismatched shapes."""
    return tuple(_stack_column([e[k] for e in elements], k) for k in range(len(elements[0])))


def _stack_column(column, k: int):
    try:
        return np.stack(column)
    except ValueError:
        first = np.shape(column[0])
        i = next(i for i, c in enumerate(column) if np.shape(c) != first)
        raise errors.InvalidArgumentError(
            None, None, f"Cannot batch tensors with different shapes in component {k}. "
            f"First element had shape {list(first)} and element {i} had shape "
            f"{list(np.shape(column[i]))}.") from None


def stack_with_sparse(elements, starts, row_shapes: bool = False):
    """One batch of elements with SparseTensor components (indices, values, dense_shape at
    each position of `starts`): as TensorFlow batches them, one SparseTensor whose indices
    are each element's with its batch position in front, whose values follow in order, and
    whose dense shape is the batch size and then each dimension's largest (with `row_shapes`,
    as a window travels: the elements' dense shapes stacked instead)."""
    out, k, width = [], 0, len(elements[0])
    starts = set(starts)
    while k < width:
        if k not in starts:
            out.append(_stack_column([e[k] for e in elements], k))
            k += 1
            continue
        shapes = [np.asarray(e[k + 2], np.int64) for e in elements]
        if any(s.shape != shapes[0].shape for s in shapes):
            raise errors.InvalidArgumentError(
                None, None, f"Cannot batch sparse tensors of different ranks in component "
                f"{k}: {[len(s) for s in shapes]}.")
        indices = [np.asarray(e[k], np.int64).reshape(-1, len(shapes[0])) for e in elements]
        rows = np.concatenate([np.full((len(ix), 1), i, np.int64)
                               for i, ix in enumerate(indices)])
        out.append(np.concatenate([rows, np.concatenate(indices)], axis=1))
        out.append(np.concatenate([np.asarray(e[k + 1]) for e in elements]))
        out.append(np.stack(shapes) if row_shapes else
                   np.concatenate([[len(elements)], np.max(shapes, axis=0)]).astype(np.int64))
        k += 3
    return tuple(out)


class Node:
    """A dataset node; subclasses define `__iter__` and may define a faster `batches`."""

    source = None   # the indexable source node whose rows this node's elements are, if any
    passes_errors = False   # takes ElementErrors from its inputs (and handles them)
    resumable = False       # may yield ElementErrors: its consumer takes them

    def inputs(self) -> list:
        return []

    def allow_errors(self) -> None:
        """Lets this node yield an ElementError for a failed element instead of raising, and
        its inputs too if it takes such items from them."""
        self.resumable = True
        if self.passes_errors:
            for child in self.inputs():
                child.allow_errors()

    def failure(self, error: errors.OpError):
        """What a failed element becomes: an ElementError where the consumer takes one, else
        the error is raised. OutOfRangeError from a function always ends the input, as in
        TensorFlow 1.x."""
        if self.resumable and not isinstance(error, errors.OutOfRangeError):
            return ElementError(error)
        raise error

    def batches(self, n, drop):
        source = self.source
        if source is None:
            return stacked(chunks(self, n, drop), stack, self.failure)
        gather = source.gather
        return (gather(rows) for rows in rebatched(self.positions(), n, drop))

    def positions(self):
        """One epoch of the rows of `self.source` that are this node's elements, in order, as
        non-empty int64 arrays (blocks of any length)."""
        raise NotImplementedError(type(self).__name__)


# The longest block of row positions a source yields (bounds the memory of a huge range).
POSITION_BLOCK = 1 << 16


def rebatched(blocks, n, drop):
    """int64 arrays of `n` consecutive positions from `blocks` (the last one shorter unless
    `drop`): slices of one block where they fit, else one concatenation."""
    pending, have = [], 0
    for block in blocks:
        while block.size:
            take = min(n - have, block.size)
            pending.append(block[:take])
            have += take
            block = block[take:]
            if have == n:
                yield pending[0] if len(pending) == 1 else np.concatenate(pending)
                pending, have = [], 0
    if have and not drop:
        yield np.concatenate(pending)


def one_by_one(blocks):
    """The positions of `blocks` as Python ints, for the algorithms that take one at a time."""
    for block in blocks:
        yield from block.tolist()


def in_blocks(positions):
    """Python int positions as int64 blocks of at most POSITION_BLOCK."""
    while True:
        block = np.fromiter(itertools.islice(positions, POSITION_BLOCK), np.int64)
        if not block.size:
            return
        yield block


def chunks(elements, n, drop):
    """Lists of `n` consecutive elements (the last one shorter unless `drop`). An ElementError
    is passed on in place of its list, the elements gathered before it dropped, as TensorFlow's
    batch returns its input's error and discards the partial batch."""
    chunk = []
    for e in elements:
        if type(e) is ElementError:
            chunk = []
            yield e
            continue
        chunk.append(e)
        if len(chunk) == n:
            yield chunk
            chunk = []
    if chunk and not drop:
        yield chunk


def stacked(groups, make, failure):
    """make(group) for each list of `groups`; ElementErrors passed on, and a group `make`
    fails on (elements of different shapes, say) becomes `failure(error)`: TensorFlow's
    batch returns that error and goes on with the next batch."""
    for group in groups:
        if type(group) is ElementError:
            yield group
            continue
        try:
            yield make(group)
        except errors.OpError as error:
            yield failure(error)


class _Tensors(Node):
    def __init__(self, spec, args, functions):
        self.values = tuple(args[i] for i in spec["args"])

    def __iter__(self):
        yield self.values


class _Rows(Node):
    """A source whose elements are its rows 0..size-1: the `source` of reordering nodes above."""

    @property
    def source(self):
        return self

    def positions(self):
        return (np.arange(i, min(i + POSITION_BLOCK, self.size), dtype=np.int64)
                for i in range(0, self.size, POSITION_BLOCK))


class _RowsOf:
    """An object array whose row i is `array[i, ...]`, an array even when 0-d."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, i):
        return self.array[i, ...]


class _Slices(_Rows):
    def __init__(self, spec, args, functions):
        self.arrays = [np.asarray(args[i]) for i in spec["args"]]
        sizes = {a.shape[0] if a.ndim else None for a in self.arrays}
        if len(sizes) != 1 or None in sizes:
            raise errors.InvalidArgumentError(
                None, None, "Dimension 0 in both shapes must be equal: the components of "
                "from_tensor_slices have sizes " + str([np.shape(a)[:1] for a in self.arrays]))
        self.size = sizes.pop()

    def __iter__(self):
        # A string row stays an array (a[i, ...]): a[i] of a 1-D object array is a bare
        # `bytes`, which kernels (parse_single_example in a map) cannot take.
        arrays = [a if a.dtype != object else _RowsOf(a) for a in self.arrays]
        if len(arrays) == 1:
            (a,) = arrays
            for i in range(self.size):
                yield (a[i],)
            return
        for i in range(self.size):
            yield tuple(a[i] for a in arrays)

    def batches(self, n, drop):
        end = self.size - self.size % n if drop else self.size
        for i in range(0, end, n):
            yield tuple(a[i:i + n] for a in self.arrays)

    def gather(self, rows):
        # np.take of whole rows: 53 us against 62 us for fancy indexing, 128 random rows of a
        # [60000, 784] float32 array (the bench pipeline's batch), same values.
        return tuple(np.take(a, rows, axis=0) for a in self.arrays)


class _Range(_Rows):
    def __init__(self, spec, args, functions):
        start, stop, step = (int(args[i]) for i in spec["args"])
        if step == 0:
            raise errors.InvalidArgumentError(None, None, "step must be a non-zero integer.")
        self.start, self.step, self.size = start, step, len(range(start, stop, step))
        self.dtype = np.dtype(spec.get("dtype", "int64"))

    def __iter__(self):
        scalar = self.dtype.type
        for v in range(self.start, self.start + self.size * self.step, self.step):
            yield (scalar(v),)

    def batches(self, n, drop):
        end = self.size - self.size % n if drop else self.size
        for i in range(0, end, n):
            yield self.gather(np.arange(i, min(i + n, self.size), dtype=np.int64))

    def gather(self, rows):
        return ((self.start + self.step * rows).astype(self.dtype, copy=False),)


class _Generator(Node):
    def __init__(self, spec, args, functions):
        self.make = _GENERATORS[spec["token"]]
        self.values = [args[i] for i in spec["args"]]

    def __iter__(self):
        return self.make(*self.values)


class _Zip(Node):
    """Elements of every input side by side; a failed one fails the element after every input
    has advanced (as TensorFlow's zip does)."""

    passes_errors = True

    def __init__(self, spec, args, functions):
        self.children = [build(s, args, functions) for s in spec["inputs"]]

    def inputs(self) -> list:
        return self.children

    def __iter__(self):
        chain = itertools.chain.from_iterable
        for parts in zip(*self.children):
            failed = [p for p in parts if type(p) is ElementError]
            yield failed[0] if failed else tuple(chain(parts))


class _Concatenate(Node):
    passes_errors = True

    def __init__(self, spec, args, functions):
        self.children = [build(s, args, functions) for s in spec["inputs"]]

    def inputs(self) -> list:
        return self.children

    def __iter__(self):
        for child in self.children:
            yield from child


class UnaryNode(Node):
    """A transformation of one input dataset, optionally with a function bound to captures."""

    def __init__(self, spec, args, functions):
        self.child = build(spec["input"], args, functions)
        self.spec, self.functions = spec, functions
        self.params = [args[i] for i in spec.get("args", ())]
        if "parallel_calls" in spec:
            _check_parallel_calls(args[spec["parallel_calls"]])
        if "fn" in spec:
            self.runner = functions[spec["fn"]]
            self.captured = [args[i] for i in spec["captures"]]

    def inputs(self) -> list:
        return [self.child]

    def outputs(self):
        """(element, the function's outputs on it) for each input element; an ElementError,
        passed on or made of the function's failure, comes as (it, None)."""
        run, captured = self.runner, self.captured
        for e in self.child:
            if type(e) is ElementError:
                yield e, None
                continue
            try:
                out = run([*e, *captured])
            except errors.OpError as error:
                yield self.failure(error), None
                continue
            yield e, out


def _check_parallel_calls(value) -> None:
    """num_parallel_calls is a hint here (one thread runs the pipeline), but TensorFlow
    refuses values that are neither positive nor AUTOTUNE (-1), so this does too."""
    calls = int(value)
    if calls < 1 and calls != -1:
        raise errors.InvalidArgumentError(None, None,
                                          "num_parallel_calls must be greater than zero.")


class MapNode(UnaryNode):
    """Dataset.map: the function applied to each element, or to whole batches if vectorizable.

    A batch of a map is TensorFlow's fused map-and-batch: an element that fails fails its
    whole batch, and a last partial batch is still computed under drop_remainder, so that its
    error is reported before the end (as TensorFlow 2.21 does)."""

    passes_errors = True

    def __iter__(self):
        for e, out in self.outputs():
            yield e if out is None else tuple(out)

    def batches(self, n, drop):
        if not self.runner.vectorizable:
            return self._mapped_batches(n, drop)
        return self._vectorized_batches(n, drop)

    def _input_batches(self, n):
        """The input stacked n items at a time (the last batch shorter), an ElementError in
        place of a batch with a failed item: map-and-batch takes n inputs per batch whatever
        fails. A source's or a map's own batches are grouped so already; other inputs'
        batches drop what preceded a failure, so those are grouped here, item by item."""
        child = self.child
        if not self.resumable or child.source is not None or isinstance(child, MapNode):
            return child.batches(n, False)
        return stacked(_groups(child, n),
                       lambda group: next((e for e in group if type(e) is ElementError), None)
                       or stack(group), self.failure)

    def _vectorized_batches(self, n, drop):
        run, captured = self.runner, self.captured
        for b in self._input_batches(n):
            if type(b) is ElementError:
                yield b
                continue
            size = len(b[0])
            try:
                out = run.run_batched([*b, *captured], size)
            except errors.OpError as error:
                yield self.failure(error)
                continue
            if size == n or not drop:
                yield out

    def _mapped_batches(self, n, drop):
        run, captured = self.runner, self.captured
        for chunk in _groups(self.child, n):
            results, error = [], None
            for e in chunk:
                if type(e) is ElementError:
                    error = error or e.error
                    continue
                try:
                    results.append(tuple(run([*e, *captured])))
                except errors.OutOfRangeError:
                    raise   # the function ended the input (TensorFlow 1.x's map)
                except errors.OpError as failed:
                    error = error or failed
            if error is not None:
                yield self.failure(error)
            elif len(chunk) == n or not drop:
                yield from stacked([results], stack, self.failure)


def _groups(elements, n):
    """Lists of `n` consecutive items, ElementErrors included (the last list shorter)."""
    it = iter(elements)
    while True:
        group = list(itertools.islice(it, n))
        if not group:
            return
        yield group


class FilterNode(UnaryNode):
    """Dataset.filter: the elements for which the predicate is true."""

    passes_errors = True

    def __iter__(self):
        for e, out in self.outputs():
            if out is None or out[0]:
                yield e


class _Interleave(UnaryNode):
    """TensorFlow's interleave order: a cycle of open inner iterators, blocks taken in turn.

    Errors as TensorFlow's InterleaveDatasetOp returns them: a failed input element or inner
    dataset (its function failed) is reported and the slot stays empty for the next input; a
    failed element of an inner dataset is reported and its iterator goes on, the block count
    unchanged."""

    passes_errors = True

    def _inner(self, element):
        values = self.runner([*element, *self.captured])
        node = build(self.spec["inner"], values, self.functions)
        if self.resumable:
            node.allow_errors()
        return iter(node)

    def __iter__(self):
        cycle, block_length = self.spec["cycle_length"], self.spec["block_length"]
        inputs = iter(self.child)
        slots = [None] * cycle
        n_open, end, i, block = 0, False, 0, 0
        while not end or n_open:
            current = slots[i]
            if current is not None:
                e = next(current, _END)
                if type(e) is ElementError:
                    yield e
                    continue
                if e is not _END:
                    yield e
                    block += 1
                    if block < block_length:
                        continue
                else:
                    slots[i] = None
                    n_open -= 1
            elif not end:
                x = next(inputs, _END)
                if x is _END:
                    end = True
                elif type(x) is ElementError:
                    yield x
                else:
                    try:
                        slots[i] = self._inner(x)
                    except errors.OpError as error:
                        yield self.failure(error)
                        continue
                    n_open += 1
                continue
            block, i = 0, (i + 1) % cycle


def checked_batch_size(value) -> int:
    """A batch size, checked when the iterator starts (as TensorFlow builds its dataset)."""
    size = int(value)
    if size <= 0:
        raise errors.InvalidArgumentError(None, None, "Batch size must be greater than zero.")
    return size


class _Batch(UnaryNode):
    passes_errors = True

    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        self.size = checked_batch_size(self.params[0])

    def __iter__(self):
        drop, starts = self.spec["drop_remainder"], self.spec.get("sparse")
        if starts:   # elements with SparseTensors: no fast path stacks those
            return stacked(chunks(self.child, self.size, drop),
                           lambda chunk: stack_with_sparse(chunk, starts), self.failure)
        return self.child.batches(self.size, drop)


class _PaddedBatch(UnaryNode):
    """Its params: the batch size, one padded shape (int64 vector, -1: the batch's largest)
    per component, then one padding value per component."""

    passes_errors = True

    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        self.size = checked_batch_size(self.params[0])
        k = (len(self.params) - 1) // 2
        self.shapes = [[int(d) for d in np.ravel(s)] for s in self.params[1:1 + k]]
        self.pads = self.params[1 + k:]

    def __iter__(self):
        shapes, pads = self.shapes, self.pads
        return stacked(chunks(self.child, self.size, self.spec["drop_remainder"]),
                       lambda chunk: tuple(_pad_column([e[k] for e in chunk], shape, pads[k], k)
                                           for k, shape in enumerate(shapes)), self.failure)


def _pad_column(column, padded_shape, pad_value, k):
    shapes = [np.shape(c) for c in column]
    rank = len(padded_shape)
    if any(len(s) != rank for s in shapes):
        raise errors.InvalidArgumentError(None, None, f"All elements in a batch must have the "
                                          f"same rank as the padded shape for component{k}")
    target = [max(s[d] for s in shapes) if want < 0 else want
              for d, want in enumerate(padded_shape)]
    for s in shapes:
        if any(have > want for have, want in zip(s, target)):
            raise errors.DataLossError(
                None, None, "Attempted to pad to a smaller size than the input element. "
                f"(Component {k} has shape {list(s)}, padded shape {target}.)")
    pad = np.asarray(pad_value)
    out = np.full([len(column)] + target, pad, dtype=pad.dtype if pad.dtype != object
                  else object)
    for i, c in enumerate(column):
        # A 0-d string element is an object array: store its bytes, not the array.
        out[(i,) + tuple(slice(0, d) for d in np.shape(c))] = np.asarray(c)[()]
    return out


class _Unbatch(UnaryNode):
    """The rows of each element (`rows_of`)."""

    passes_errors = True

    def __iter__(self):
        starts = self.spec.get("sparse") or ()
        for e in self.child:
            if type(e) is ElementError:
                yield e
                continue
            try:
                rows = rows_of(e, starts, "Input element must have the same batch size in "
                                          "each component.")
            except errors.OpError as error:   # that element fails alone, as in TF
                yield self.failure(error)
                continue
            yield from rows


class _SparseSlices(Node):
    """from_tensor_slices of components some of which are SparseTensors: the rows of the one
    element they make (`rows_of`)."""

    def __init__(self, spec, args, functions):
        self.values = [args[i] for i in spec["args"]]
        self.starts = spec["sparse"]
        self.row_shapes = spec.get("row_shapes", False)

    def __iter__(self):
        if self.row_shapes:   # one window's SparseTensors (data/dataset_ops.py DatasetSpec)
            indices, values, shapes = (np.asarray(v) for v in self.values)
            return ((indices[indices[:, 0] == i, 1:], values[indices[:, 0] == i], shape)
                    for i, shape in enumerate(shapes))
        return rows_of(self.values, self.starts, "Dimension 0 in both shapes must be equal: "
                                                  "the components of from_tensor_slices have "
                                                  "different sizes")


def rows_of(element, starts, mismatch: str):
    """An iterator over the rows of `element`'s components along their first dimension. A
    SparseTensor (three components from each position of `starts`) gives row i the entries
    whose first index is i, with the dense shape after the first dimension, as TensorFlow
    does; InvalidArgumentError (`mismatch`), raised here, when the components' first
    dimensions differ."""
    parts = grouped_parts(element, starts)
    sizes = {len(p) if not isinstance(p, tuple) else int(p[2][0]) for p in parts}
    if len(sizes) > 1:
        raise errors.InvalidArgumentError(None, None, mismatch)
    return (tuple(c for p in parts for c in (_sparse_row(p, i) if isinstance(p, tuple)
                                             else (p[i, ...] if p.dtype == object else p[i],)))
            for i in range(sizes.pop() if sizes else 0))


def grouped_parts(element, starts) -> list:
    """The components of `element` as arrays, each SparseTensor's three (from each position
    of `starts`) as one (indices, values, dense_shape) tuple."""
    parts, k = [], 0
    while k < len(element):
        if k in starts:
            parts.append(tuple(np.asarray(c) for c in element[k:k + 3]))
            k += 3
        else:
            parts.append(np.asarray(element[k]))
            k += 1
    return parts


def _sparse_row(sparse, i: int) -> tuple:
    indices, values, dense_shape = sparse
    mine = indices[:, 0] == i
    return indices[mine, 1:], values[mine], np.asarray(dense_shape[1:], np.int64)


class _Window(UnaryNode):
    """Windows of `size` elements starting every `shift`, taking every `stride`-th, each
    passed on stacked (one array per component); the last ones are shorter unless dropped.
    A window holding a failed element is that failure, as in TensorFlow; failures the window
    skips (between its strided elements, or discarded by a shift past it) are dropped."""

    passes_errors = True

    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        self.size, self.shift, self.stride = (int(p) for p in self.params)
        for what, value in (("size", self.size), ("shift", self.shift),
                            ("stride", self.stride)):
            if value <= 0:
                raise errors.InvalidArgumentError(
                    None, None, f"Window {what} must be greater than zero.")

    def __iter__(self):
        size, shift, stride = self.size, self.shift, self.stride
        span = (size - 1) * stride + 1   # input elements one full window covers
        inputs = iter(self.child)
        ahead = collections.deque()      # the input from the current window's first element
        exhausted = False
        while True:
            while not exhausted and len(ahead) < span:
                e = next(inputs, _END)
                if e is _END:
                    exhausted = True
                else:
                    ahead.append(e)
            if not ahead:
                return
            window = list(itertools.islice(ahead, 0, span, stride))
            if len(window) < size and self.spec["drop_remainder"]:
                return
            starts = self.spec.get("sparse")
            yield next((e for e in window if type(e) is ElementError), None) or (
                stack_with_sparse(window, starts, row_shapes=True) if starts else stack(window))
            skip = shift
            while skip and ahead:
                ahead.popleft()
                skip -= 1
            if skip and not exhausted and next(itertools.islice(inputs, skip - 1, None),
                                               _END) is _END:
                exhausted = True


class _Cache(UnaryNode):
    """Elements recorded on the first complete pass (in memory or in a file) and replayed;
    failed elements are passed on but not recorded, as TensorFlow's cache leaves them out."""

    passes_errors = True

    def __init__(self, spec, args, functions):
        super().__init__(spec, args, functions)
        self.elements = None
        self.filename = str(self.params[0].item().decode())

    def __iter__(self):
        if self.elements is None and self.filename:
            self.elements = dataset_files.read_cache(self.filename)
        if self.elements is not None:
            yield from self.elements
            return
        recorded = []
        for e in self.child:
            if type(e) is not ElementError:
                recorded.append(e)
            yield e
        self.elements = recorded
        if self.filename:
            dataset_files.write_cache(self.filename, recorded)


_NODES = {
    "tensors": _Tensors, "slices": _Slices, "sparse_slices": _SparseSlices, "range": _Range,
    "generator": _Generator,
    "zip": _Zip, "concatenate": _Concatenate, "map": MapNode, "filter": FilterNode,
    "interleave": _Interleave, "batch": _Batch, "padded_batch": _PaddedBatch,
    "unbatch": _Unbatch, "window": _Window, "cache": _Cache,
}
