"""TF's CPU resize kernels transcribed loop by loop (one output element at a time, float32
arithmetic in TF's order): the references of the resize tests."""
import numpy as np

F32 = np.float32


def _scale(n_in, n_out, align):
    if align and n_out > 1 and n_in > 1:
        return F32(n_in - 1) / F32(n_out - 1)
    return F32(n_in) / F32(n_out)


def _coord(i, scale, half):
    return (F32(i) + F32(0.5)) * scale - F32(0.5) if half else F32(i) * scale


def _linear(i, n_in, scale, half):
    c = _coord(i, scale, half)
    return max(int(np.floor(c)), 0), min(int(np.ceil(c)), n_in - 1), F32(c - F32(np.floor(c)))


def bilinear_ref(img, size, align=False, half=False):
    img = img.astype(F32)
    b, h, w, c = img.shape
    if tuple(size) == (h, w):
        return img
    sy, sx = _scale(h, size[0], align), _scale(w, size[1], align)
    out = np.zeros((b, size[0], size[1], c), F32)
    for y in range(size[0]):
        y0, y1, dy = _linear(y, h, sy, half)
        for x in range(size[1]):
            x0, x1, dx = _linear(x, w, sx, half)
            top = img[:, y0, x0] + (img[:, y0, x1] - img[:, y0, x0]) * dx
            bottom = img[:, y1, x0] + (img[:, y1, x1] - img[:, y1, x0]) * dx
            out[:, y, x] = top + (bottom - top) * dy
    return out


def _nearest(i, n_in, scale, align, half):
    c = (F32(i) + F32(0.5)) * scale if half else F32(i) * scale
    k = int(np.floor(np.float64(c) + 0.5)) if align else int(np.floor(c))
    k = min(k, n_in - 1)
    return max(k, 0) if half else k


def nearest_ref(img, size, align=False, half=False):
    _, h, w, _ = img.shape
    sy, sx = _scale(h, size[0], align), _scale(w, size[1], align)
    ys = [_nearest(y, h, sy, align, half) for y in range(size[0])]
    xs = [_nearest(x, w, sx, align, half) for x in range(size[1])]
    return img[:, ys][:, :, xs]


def _cubic_table(a):
    table = np.zeros((1025, 2), F32)
    for i in range(1025):
        x = float(F32(i * 1.0 / 1024))
        table[i, 0] = ((a + 2) * x - (a + 3)) * x * x + 1
        x = float(F32(x + 1.0))
        table[i, 1] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return table


_TABLES = {True: _cubic_table(-0.5), False: _cubic_table(-0.75)}


def _cubic(i, n_in, scale, half):
    c = _coord(i, scale, half)
    base = int(np.floor(c))
    off = int(np.rint(F32(c - F32(base)) * F32(1024)))
    t = _TABLES[half]
    w = [t[off, 1], t[off, 0], t[1024 - off, 0], t[1024 - off, 1]]
    idx = [min(max(base + k, 0), n_in - 1) for k in (-1, 0, 1, 2)]
    if half:
        w = [wk if idx[k] == base - 1 + k else F32(0) for k, wk in enumerate(w)]
        total = F32(F32(F32(w[0] + w[1]) + w[2]) + w[3])
        if abs(total) >= F32(1000) * np.finfo(F32).tiny:
            w = [wk * (F32(1) / total) for wk in w]
    return idx, w


def bicubic_ref(img, size, align=False, half=False):
    img = img.astype(F32)
    b, h, w, c = img.shape
    sy, sx = _scale(h, size[0], align), _scale(w, size[1], align)
    out = np.zeros((b, size[0], size[1], c), F32)
    for y in range(size[0]):
        yi, yw = _cubic(y, h, sy, half)
        for x in range(size[1]):
            xi, xw = _cubic(x, w, sx, half)
            cols = [img[:, yi[0], k] * yw[0] + img[:, yi[1], k] * yw[1] + img[:, yi[2], k] * yw[2]
                    + img[:, yi[3], k] * yw[3] for k in xi]
            out[:, y, x] = cols[0] * xw[0] + cols[1] * xw[1] + cols[2] * xw[2] + cols[3] * xw[3]
    return out


def _area_weight(i, lo, hi, scale):
    fi = F32(i)
    if fi < lo:
        return scale if fi + 1 > hi else F32(fi + 1 - lo)
    return F32(hi - fi) if fi + 1 > hi else F32(1)


def area_ref(img, size, align=False):
    img = img.astype(F32)
    b, h, w, c = img.shape
    sy, sx = _scale(h, size[0], align), _scale(w, size[1], align)
    norm = F32(1.0 / np.float64(sy * sx))
    out = np.zeros((b, size[0], size[1], c), F32)
    for y in range(size[0]):
        y_lo, y_hi = F32(y) * sy, F32(y + 1) * sy
        for x in range(size[1]):
            x_lo, x_hi = F32(x) * sx, F32(x + 1) * sx
            total = np.zeros((b, c), F32)
            for i in range(int(np.floor(y_lo)), int(np.ceil(y_hi))):
                row = img[:, min(max(i, 0), h - 1)]
                part = None
                for j in range(int(np.floor(x_lo)), int(np.ceil(x_hi))):
                    term = row[:, min(max(j, 0), w - 1)] * _area_weight(j, x_lo, x_hi, sx)
                    part = term if part is None else part + term
                total = total + part * _area_weight(i, y_lo, y_hi, sy)
            out[:, y, x] = total * norm
    return out


def _bilinear_taps(y, x, shape, scales, half):
    y0, y1, dy = _linear(y, shape[1], scales[0], half)
    x0, x1, dx = _linear(x, shape[2], scales[1], half)
    return [(y0, x0, (F32(1) - dy), (F32(1) - dx)), (y0, x1, (F32(1) - dy), dx),
            (y1, x0, dy, (F32(1) - dx)), (y1, x1, dy, dx)]


def bilinear_grad_ref(grad, original, align=False, half=False):
    out = np.zeros(original.shape, original.dtype)
    scales = [_scale(o, g, align) for o, g in zip(original.shape[1:3], grad.shape[1:3])]
    for y in range(grad.shape[1]):
        for x in range(grad.shape[2]):
            for i, j, wy, wx in _bilinear_taps(y, x, original.shape, scales, half):
                out[:, i, j] += (grad[:, y, x] * wy * wx).astype(original.dtype)
    return out


def bicubic_grad_ref(grad, original, align=False, half=False):
    t = original.dtype.type
    out = np.zeros(original.shape, original.dtype)
    scales = [_scale(o, g, align) for o, g in zip(original.shape[1:3], grad.shape[1:3])]
    for y in range(grad.shape[1]):
        yi, yw = _cubic(y, original.shape[1], scales[0], half)
        for x in range(grad.shape[2]):
            xi, xw = _cubic(x, original.shape[2], scales[1], half)
            g = grad[:, y, x].astype(original.dtype)
            for a in range(4):
                for b in range(4):
                    out[:, yi[a], xi[b]] += g * t(yw[a]) * t(xw[b])
    return out


def nearest_grad_ref(grad, size, align=False, half=False):
    b, h, w, c = grad.shape
    out = np.zeros((b, size[0], size[1], c), grad.dtype)
    sy, sx = _scale(size[0], h, align), _scale(size[1], w, align)
    for y in range(h):
        for x in range(w):
            out[:, _nearest(y, size[0], sy, align, half),
                _nearest(x, size[1], sx, align, half)] += grad[:, y, x]
    return out
