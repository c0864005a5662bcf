"""Reading every element of a tf.data pipeline in a test, up to its end or its error."""
from __future__ import annotations


def drain_dataset(dataset, out: list | None = None, limit: int | None = None) -> list:
    """Every element of `dataset` through an initializable iterator, in the default graph.

    With `out` given, elements are appended to it as they come, so a test can check those
    yielded before an error the call raises. With `limit`, at most that many are read (a
    test's guard against a pipeline that does not end).
    """
    from tensorweave.data.iterator_ops import make_initializable_iterator
    from tensorweave.framework import errors
    from tensorweave.runtime.session import Session
    it = make_initializable_iterator(dataset)
    nxt = it.get_next()
    out = out if out is not None else []
    with Session() as sess:
        sess.run(it.initializer)
        while limit is None or len(out) < limit:
            try:
                out.append(sess.run(nxt))
            except errors.OutOfRangeError:
                break
    return out


def file_writer(directory):
    """`write(name, data)`: writes `data` (bytes, or str as UTF-8) to `directory/name` and
    returns the path as a string; for the file datasets' tests."""
    def write(name: str, data) -> str:
        path = directory / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return str(path)
    return write
