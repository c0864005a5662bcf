"""tf.test.TestCase: unittest's TestCase with TF1's graph-mode sessions and array assertions.

TF1 projects test their ops and models with it: each test starts in a fresh default graph
with TensorFlow's default graph seed (87654321, Python's and NumPy's too), `self.session()`
opens a session on it (as the default session), `self.cached_session()` keeps one session for
the whole test, `self.evaluate(...)` runs tensors in the default session (or a cached one), and
the assertions take arrays, tensors (evaluated first) or nested structures of them. Failures
say where and by how much, as TensorFlow's do.
"""
from __future__ import annotations

import contextlib
import math
import os
import random
import re
import tempfile
import threading
import unittest

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework import random_seed as _random_seed
from tensorweave.framework.graph import get_default_graph, reset_default_graph
from tensorweave.framework.operation import Tensor

DEFAULT_GRAPH_SEED = 87654321


class TestCase(unittest.TestCase):
    """Base class of TF1 tests (see the module docstring)."""

    def setUp(self):
        super().setUp()
        self._cached = None
        self._threads = []
        random.seed(DEFAULT_GRAPH_SEED)
        np.random.seed(DEFAULT_GRAPH_SEED)
        reset_default_graph()
        _random_seed.set_random_seed(DEFAULT_GRAPH_SEED)

    def tearDown(self):
        self._close_cached()
        for thread in getattr(self, "_threads", ()):
            self.assertTrue(thread.is_joined(), f"A checked thread was not joined: {thread}")
        super().tearDown()

    def _close_cached(self) -> None:
        cached = getattr(self, "_cached", None)
        if cached is not None:
            cached[0].close()
        self._cached = None

    # --- sessions -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """A new Session on `graph` (default: the default graph), which is the default graph
        and the session the default session inside the block; closed after it."""
        from tensorweave.runtime.session import Session
        graph = graph if graph is not None else get_default_graph()
        with Session(graph=graph, config=config) as sess, graph.as_default(), \
                sess.as_default():
            yield sess

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """One Session for the whole test: made on first use, closed by tearDown. Asking
        for it with another graph or config than the first time is an error, as in TF."""
        from tensorweave.runtime.session import Session
        graph = graph if graph is not None else get_default_graph()
        if getattr(self, "_cached", None) is None:   # (a setUp may not call TestCase's)
            self._cached = (Session(graph=graph, config=config), graph, config)
        sess, cached_graph, cached_config = self._cached
        if graph is not cached_graph or config is not cached_config:
            raise ValueError("The cached session was made for another graph or config; use "
                             "self.session() for a new one")
        with graph.as_default(), sess.as_default():
            yield sess

    def test_session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        """TF1's older name: the cached session, or a new one for another graph. unittest
        takes it for a test; run as one, it skips itself, as TensorFlow's does."""
        if self.id().endswith(".test_session"):
            self.skipTest("test_session is TestCase's session helper, not a test")
        cached = getattr(self, "_cached", None)
        if graph is None or (cached is not None and cached[1] is graph):
            return self.cached_session(graph, config, use_gpu, force_gpu)
        return self.session(graph, config, use_gpu, force_gpu)

    test_session.__test__ = False   # not collected by pytest

    def evaluate(self, tensors):
        """The values of `tensors` (any nested structure of tensors and ops) in the default
        session, or in the cached session when there is none."""
        from tensorweave.runtime.session import get_default_session
        sess = get_default_session()
        if sess is not None:
            return sess.run(tensors)
        with self.cached_session() as sess:
            return sess.run(tensors)

    def get_temp_dir(self) -> str:
        """A directory of this test method's own, made on first use."""
        path = os.path.join(get_temp_dir(), self.id().replace("/", "_"))
        os.makedirs(path, exist_ok=True)
        return path

    # --- values -------------------------------------------------------------------------------
    def _value(self, x):
        if isinstance(x, Tensor) or hasattr(x, "op") and hasattr(x, "graph"):
            return self.evaluate(x)
        return x

    def _array(self, x) -> np.ndarray:
        x = self._value(x)
        return x if isinstance(x, np.ndarray) else np.array(x)

    # --- assertions ---------------------------------------------------------------------------
    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802 - TF's name
        """Elementwise |a - b| <= atol + rtol * |b|, through nested structures (dicts by key,
        lists and tuples by position, NaN equal to NaN)."""
        self._close_nested(self._value(a), self._value(b), rtol, atol, msg, "")

    def _close_nested(self, a, b, rtol, atol, msg, path) -> None:
        if isinstance(a, dict) or isinstance(b, dict):
            if not (isinstance(a, dict) and isinstance(b, dict)) or set(a) != set(b):
                self.fail(f"Mismatched structures at {path or 'the top'}: {a!r} vs {b!r}. "
                          f"{msg or ''}")
            for key in a:
                self._close_nested(self._value(a[key]), self._value(b[key]), rtol, atol, msg,
                                   f"{path}[{key!r}]")
            return
        if _is_sequence(a) or _is_sequence(b):
            arrays = _as_arrays(a, b)   # array-like lists compare as arrays, as in TF
            if arrays is not None:
                return self._close_arrays(*arrays, rtol, atol, msg, path)
            if not (_is_sequence(a) and _is_sequence(b)) or len(a) != len(b):
                self.fail(f"Mismatched lengths at {path or 'the top'}: {a!r} vs {b!r}. "
                          f"{msg or ''}")
            for i, (x, y) in enumerate(zip(a, b)):
                self._close_nested(self._value(x), self._value(y), rtol, atol, msg,
                                   f"{path}[{i}]")
            return
        self._close_arrays(self._array(a), self._array(b), rtol, atol, msg, path)

    def _close_arrays(self, a, b, rtol, atol, msg, path) -> None:
        where = f" at {path}" if path else ""
        if a.shape != b.shape:
            self.fail(f"Shape mismatch{where}: expected {a.shape}, got {b.shape} with "
                      f"contents {b!r}. {msg or ''}")
        if a.dtype.kind not in "fcbiu" or b.dtype.kind not in "fcbiu":
            return self.assertAllEqual(a, b, msg)
        x = a.astype(np.complex128 if a.dtype.kind == "c" or b.dtype.kind == "c"
                     else np.float64)
        y = b.astype(x.dtype)
        close = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
        if close.all():
            return None
        x, y, close = np.atleast_1d(x), np.atleast_1d(y), np.atleast_1d(close)
        bad = np.where(~close)
        self.fail("\n".join([
            f"Not close{where} (rtol={rtol}, atol={atol}). {msg or ''}",
            f"not close where = {bad}", f"not close lhs = {x[bad]}", f"not close rhs = {y[bad]}",
            f"not close dif = {np.abs(x - y)[bad]}",
            f"not close tol = {(atol + rtol * np.abs(y))[bad]}",
            f"dtype = {a.dtype}, shape = {a.shape}"]))

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6,  # noqa: N802
                                      float_atol=1e-6, half_rtol=1e-3, half_atol=1e-3,
                                      bfloat16_rtol=1e-2, bfloat16_atol=1e-2, msg=None):
        """assertAllClose with the tolerance widened for float32/complex64 and float16
        operands (bfloat16 is stored as float32 here, so its tolerance never applies)."""
        a, b = self._array(a), self._array(b)
        dtypes = {a.dtype, b.dtype}
        if dtypes & {np.dtype(np.float32), np.dtype(np.complex64)}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.dtype(np.float16) in dtypes:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        raise AssertionError(f"The two values are close at all elements. {msg or ''}")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802 - TF's name
        """Equal shapes and equal elements (NaN equal to NaN for floats)."""
        a, b = self._array(a), self._array(b)
        if a.shape != b.shape:
            shown = f" Contents: {b!r}." if b.ndim <= 3 or b.size < 500 else ""
            self.fail(f"Shape mismatch: expected {a.shape}, got {b.shape}.{shown} {msg or ''}")
        same = np.asarray(a == b)
        if a.dtype.kind == "f" and b.dtype.kind == "f":
            same = same | (np.isnan(a) & np.isnan(b))
        if same.all():
            return
        if a.ndim:
            bad = np.where(~same)
            details = [f"not equal where = {bad}", f"not equal lhs = {a[bad]!r}",
                       f"not equal rhs = {b[bad]!r}"]
        else:
            details = [f"not equal lhs = {a!r}", f"not equal rhs = {b!r}"]
        self.fail("\n".join([f"Arrays are not equal. {msg or ''}", *details]))

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        try:
            self.assertAllEqual(a, b, msg)
        except AssertionError:
            return
        raise AssertionError(f"The two values are equal at all elements. {msg or ''}")

    def _compare_all(self, a, target, op, word: str) -> None:
        a = self._array(a)
        held = op(a, target)
        if not np.all(held):
            self.fail(f"Expected all elements of {a!r} to be {word} {target}; not at "
                      f"{np.where(~np.asarray(held))}")

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, comparison_target, np.greater, "greater than")

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, comparison_target, np.greater_equal, "at least")

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, comparison_target, np.less, "less than")

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self._compare_all(a, comparison_target, np.less_equal, "at most")

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        """Every element within [lower, upper] (or open at either end)."""
        target = self._array(target)
        if target.dtype.kind not in "fiu":
            self.fail(f"The dtype of the target, {target.dtype}, is not a real number type")
        low = target > lower_bound if open_lower_bound else target >= lower_bound
        high = target < upper_bound if open_upper_bound else target <= upper_bound
        outside = np.where(~(low & high))
        if outside[0].size:
            interval = ("(" if open_lower_bound else "[") + f"{lower_bound}, {upper_bound}" + \
                (")" if open_upper_bound else "]")
            self.fail(f"{target.size - (low & high).sum()} of the {target.size} element(s) "
                      f"are outside {interval}: {target[outside]} at {outside}")

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        values = set(np.unique(self._array(target)).tolist())
        missing = values - set(np.asarray(list(expected_set)).tolist())
        if missing:
            self.fail(f"{sorted(missing)} are not in {expected_set}")

    def assertAllTrue(self, a):  # noqa: N802
        self.assertAllEqual(np.ones_like(self._array(a), bool), self._array(a).astype(bool))

    def assertAllFalse(self, a):  # noqa: N802
        self.assertAllEqual(np.zeros_like(self._array(a), bool), self._array(a).astype(bool))

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        self.assertEqual(self._array(target).dtype, np.dtype(_numpy_dtype(expected_dtype)))

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        """|f1 - f2| <= err (equal infinities pass)."""
        self.assertTrue(f1 == f2 or math.fabs(f1 - f2) <= err,
                        f"{f1} != {f2} +/- {err}" + (f" ({msg})" if msg else ""))

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        """A NumPy array's shape against a tensor's static shape."""
        if not isinstance(np_array, np.ndarray) or not isinstance(tf_tensor, Tensor):
            raise TypeError("assertShapeEqual takes a NumPy array and a Tensor")
        self.assertEqual(list(np_array.shape), tf_tensor.get_shape().as_list(), msg)

    def assertDeviceEqual(self, device1, device2, msg=None):  # noqa: N802
        """Two device specs naming the same device."""
        from tensorweave.framework.device_spec import DeviceSpec
        canonical = [DeviceSpec.from_string(d or "").to_string() for d in (device1, device2)]
        self.assertEqual(canonical[0], canonical[1],
                         f"Devices {device1} and {device2} are not equal. {msg or ''}")

    def assertStartsWith(self, actual, expected_start, msg=None):  # noqa: N802
        if not actual.startswith(expected_start):
            self.fail(f"{actual!r} does not start with {expected_start!r} {msg or ''}")

    def assertProtoEquals(self, expected_message_maybe_ascii, message, msg=None):  # noqa: N802
        """A protobuf against another or against its text format."""
        from google.protobuf import text_format
        expected = expected_message_maybe_ascii
        if isinstance(expected, str):
            expected = text_format.Parse(expected, type(message)())
        if expected != message:
            self.fail(f"Protos differ. {msg or ''}\nexpected:\n{expected}\ngot:\n{message}")

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):  # noqa: N802
        """A block that must raise `exception_type` whose message matches the regex (or for
        which the predicate holds); an OpError's op names count as part of its message."""
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:
            def predicate(e):
                text = e.message if isinstance(e, errors.OpError) else str(e)
                if isinstance(e, errors.OpError) and e.op is not None:
                    text += f"\nCaused by: {e.op.name}"
                return re.search(expected_err_re_or_predicate, text) is not None
        try:
            yield
        except Exception as e:  # noqa: BLE001 - checked below
            if not isinstance(e, exception_type) or not predicate(e):
                raise AssertionError(f"Exception of type {type(e)}: {e}") from e
            return
        self.fail(f"{exception_type.__name__} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        return self.assertRaisesWithPredicateMatch(errors.OpError,
                                                   expected_err_re_or_predicate)

    def assertItemsEqual(self, expected_seq, actual_seq, msg=None):  # noqa: N802
        self.assertCountEqual(expected_seq, actual_seq, msg)

    def assertNDArrayNear(self, ndarray1, ndarray2, err, msg=None):  # noqa: N802
        """Every element within `err` (absolute) of the other array's."""
        self.assertTrue(np.allclose(ndarray1, ndarray2, atol=err, rtol=0),
                        f"{ndarray1} != {ndarray2} +/- {err} {msg or ''}")

    @contextlib.contextmanager
    def assertRaisesIncompatibleShapesError(self, exception_type=errors.InvalidArgumentError):  # noqa: N802
        with self.assertRaisesWithPredicateMatch(
                exception_type, r"Incompatible shapes|Dimensions must be equal|"
                                r"required broadcastable shapes"):
            yield

    def assertSameStructure(self, a, b, aname="a", bname="b", msg=None):  # noqa: N802
        """The same nesting of lists, tuples and dicts (tf.nest's notion), leaves aside."""
        from tensorweave.framework import nest
        try:
            nest.assert_same_structure(a, b)
        except (ValueError, TypeError) as e:
            self.fail(f"{aname} and {bname} differ in structure: {e} {msg or ''}")

    # absltest's assertions, which TensorFlow's TestCase has too
    def assertLen(self, container, expected_len, msg=None):  # noqa: N802
        if len(container) != expected_len:
            self.fail(f"{container!r} has length of {len(container)}, expected "
                      f"{expected_len}. {msg or ''}")

    def assertEmpty(self, container, msg=None):  # noqa: N802
        if len(container):
            self.fail(f"{container!r} has length of {len(container)}. {msg or ''}")

    def assertNotEmpty(self, container, msg=None):  # noqa: N802
        if not len(container):
            self.fail(f"{container!r} has length of 0. {msg or ''}")

    def assertBetween(self, value, minv, maxv, msg=None):  # noqa: N802
        if not minv <= value <= maxv:
            self.fail(f"{value!r} is not between {minv!r} and {maxv!r}. {msg or ''}")

    def assertContainsSubset(self, expected_subset, actual_set, msg=None):  # noqa: N802
        missing = set(expected_subset) - set(actual_set)
        if missing:
            self.fail(f"Missing elements {sorted(missing, key=repr)}. {msg or ''}")

    def assertNoCommonElements(self, expected_seq, actual_seq, msg=None):  # noqa: N802
        common = set(expected_seq) & set(actual_seq)
        if common:
            self.fail(f"Common elements {sorted(common, key=repr)}. {msg or ''}")

    def assertSameElements(self, expected_seq, actual_seq, msg=None):  # noqa: N802
        """The same elements, ignoring order and repetition."""
        expected, actual = set(expected_seq), set(actual_seq)
        if expected != actual:
            self.fail(f"Expected, but missing: {sorted(expected - actual, key=repr)}; "
                      f"unexpected, but present: {sorted(actual - expected, key=repr)}. "
                      f"{msg or ''}")

    def assertContainsInOrder(self, strings, target, msg=None):  # noqa: N802
        """Each string found in `target` after the previous one."""
        if isinstance(strings, str):
            strings = (strings,)
        position = 0
        for text in strings:
            found = target.find(text, position)
            if found == -1:
                self.fail(f"Did not find {text!r} after {target[:position]!r} in {target!r}. "
                          f"{msg or ''}")
            position = found + len(text)

    def assertEndsWith(self, actual, expected_end, msg=None):  # noqa: N802
        if not actual.endswith(expected_end):
            self.fail(f"{actual!r} does not end with {expected_end!r} {msg or ''}")

    def assertNotStartsWith(self, actual, unexpected_start, msg=None):  # noqa: N802
        if actual.startswith(unexpected_start):
            self.fail(f"{actual!r} does start with {unexpected_start!r} {msg or ''}")

    def assertNotEndsWith(self, actual, unexpected_end, msg=None):  # noqa: N802
        if actual.endswith(unexpected_end):
            self.fail(f"{actual!r} does end with {unexpected_end!r} {msg or ''}")

    def assertSequenceStartsWith(self, prefix, whole, msg=None):  # noqa: N802
        if list(whole[:len(prefix)]) != list(prefix):
            self.fail(f"{whole!r} does not start with {prefix!r} {msg or ''}")

    @contextlib.contextmanager
    def assertRaisesWithLiteralMatch(self, expected_exception, expected_exception_message):  # noqa: N802
        """A block raising `expected_exception` whose str() is exactly the message."""
        with self.assertRaises(expected_exception) as caught:
            yield caught
        if str(caught.exception) != expected_exception_message:
            self.fail(f"Exception message does not match.\nExpected: "
                      f"{expected_exception_message!r}\nActual: {str(caught.exception)!r}")

    # --- threads ------------------------------------------------------------------------------
    def checkedThread(self, target, args=None, kwargs=None):  # noqa: N802
        """A thread running `target` whose `join()` re-raises its exception here; tearDown
        fails the test if one was never joined."""
        thread = CheckedThread(self, target, args, kwargs)
        self._threads.append(thread)
        return thread


def _is_sequence(x) -> bool:
    return isinstance(x, (list, tuple))   # namedtuples too


def _as_arrays(a, b):
    """(a, b) as numeric arrays when both are plain nested numbers, else None."""
    try:
        arrays = np.asarray(a), np.asarray(b)
    except (ValueError, TypeError):
        return None
    return arrays if all(x.dtype.kind in "fcbiu" for x in arrays) else None


def _numpy_dtype(dtype):
    return getattr(dtype, "as_numpy_dtype", dtype)


_TEMP_DIR = None


def get_temp_dir() -> str:
    """A directory for this process's tests (TEST_TMPDIR if set), made once."""
    global _TEMP_DIR
    if _TEMP_DIR is None:
        base = os.environ.get("TEST_TMPDIR") or None
        _TEMP_DIR = tempfile.mkdtemp(prefix="tensorweave_test_", dir=base)
    return _TEMP_DIR


class CheckedThread:
    """A thread of a test (`TestCase.checkedThread`): `join()` re-raises what it raised."""

    def __init__(self, testcase, target, args=None, kwargs=None):
        self._testcase, self._target = testcase, target
        self._args, self._kwargs = args or (), kwargs or {}
        self._thread = threading.Thread(target=self._run)
        self._exception = None
        self._joined = False

    def _run(self) -> None:
        try:
            self._target(*self._args, **self._kwargs)
        except Exception as e:  # noqa: BLE001 - reported by join
            self._exception = e

    def start(self) -> None:
        self._thread.start()

    def join(self) -> None:
        self._thread.join()
        self._joined = True
        if self._exception is not None:
            self._testcase.fail(f"Error in checkedThread: {self._exception}")

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def is_joined(self) -> bool:
        return self._joined
