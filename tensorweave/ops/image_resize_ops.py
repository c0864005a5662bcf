"""Image resizing: ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea and the
gradient ops ResizeBilinearGrad, ResizeNearestNeighborGrad, ResizeBicubicGrad.

Every resize takes a 4-D `[batch, height, width, channels]` image and a 1-D int32 `size` of
two elements; bilinear, bicubic and area output float32, nearest neighbour keeps the dtype.
`align_corners` maps corner pixel centres onto each other, `half_pixel_centers` samples at pixel
centres (TF2's convention); both together are a run-time error, as in TensorFlow. Gradients are
registered as TensorFlow registers them: ResizeBilinearGrad is declared not differentiable,
ResizeArea and the other gradient ops have no gradient at all (a LookupError, like TF). The
wrappers here are `tf.image.resize_bilinear` and friends; `tf.image.resize_images` lives in
`tensorweave/image/resize.py`. Kernels: `kernels/image_resize.py`.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_shape as _ts
from tensorweave.framework.apply_op import apply_op
from tensorweave.framework.op_def import Attr, TypeAttr, define_op
from tensorweave.framework.shape_checks import dims_with_rank

__all__: list[str] = []

_d = _dtypes
RESIZE_TYPES = (_d.int8, _d.uint8, _d.int16, _d.uint16, _d.int32, _d.int64, _d.bfloat16,
                _d.float16, _d.float32, _d.float64)
_NEAREST_GRAD_TYPES = (_d.uint8, _d.int8, _d.int32, _d.float16, _d.float32, _d.float64,
                       _d.bfloat16)
_ALIGN = Attr("align_corners", "bool", False)
_HALF_PIXEL = Attr("half_pixel_centers", "bool", False)


def _dims(shape):
    return shape._dims


def _sized_image(ctx, batch, channels, size_index: int = 1):
    """[batch, size[0], size[1], channels] for the size input `size_index`, a 1-D tensor of 2
    elements. A size entry that is not a known non-negative constant is an unknown
    dimension."""
    (n,) = dims_with_rank(_dims(ctx.input_shape(size_index)), 1)
    if n is not None and n != 2:
        raise ValueError(f"Dimension must be 2 but is {n}")
    value = ctx.static_value(size_index)
    height, width = (None, None) if value is None else (
        int(v) if v >= 0 else None for v in value.reshape(-1)[:2])
    return _ts.TensorShape([batch, height, width, channels])


def _resize_shape(ctx):
    batch, _, _, channels = dims_with_rank(_dims(ctx.input_shape(0)), 4)
    return _sized_image(ctx, batch, channels)


def _resize_op(name, output="resized_images: float32", attrs=(_ALIGN, _HALF_PIXEL)):
    return define_op(name, inputs=["images: T", "size: int32"], outputs=[output],
                     attrs=[TypeAttr("T", RESIZE_TYPES), *attrs], shape_fn=_resize_shape)


ResizeBilinear = _resize_op("ResizeBilinear")
ResizeNearestNeighbor = _resize_op("ResizeNearestNeighbor", output="resized_images: T")
ResizeBicubic = _resize_op("ResizeBicubic")
ResizeArea = _resize_op("ResizeArea", attrs=(_ALIGN,))


def _like_original_shape(ctx):
    """The gradient has the original image's shape (TF checks the ranks only at run time)."""
    return ctx.input_shape(1)


def _grad_op(name, types, **kwargs):
    return define_op(name, inputs=["grads: float32", "original_image: T"], outputs=["output: T"],
                     attrs=[TypeAttr("T", types), _ALIGN, _HALF_PIXEL],
                     shape_fn=_like_original_shape, **kwargs)


# The adjoints of bilinear and bicubic resizing: each incoming gradient is spread over the
# source pixels with the interpolation weights.
ResizeBilinearGrad = _grad_op("ResizeBilinearGrad", (_d.float32, _d.bfloat16, _d.float16,
                                                     _d.float64), not_differentiable=True)
ResizeBicubicGrad = _grad_op("ResizeBicubicGrad", (_d.float32, _d.float64))


def _nearest_grad_shape(ctx):
    batch, _, _, channels = dims_with_rank(_dims(ctx.input_shape(0)), 4)
    return _sized_image(ctx, batch, channels)


# The adjoint of nearest-neighbour resizing: sums every output pixel's gradient into the
# pixel it copied. `size` is the original image's [height, width].
ResizeNearestNeighborGrad = define_op(
    "ResizeNearestNeighborGrad", inputs=["grads: T", "size: int32"], outputs=["output: T"],
    attrs=[TypeAttr("T", _NEAREST_GRAD_TYPES), _ALIGN, _HALF_PIXEL],
    shape_fn=_nearest_grad_shape)


def _crop_and_resize_shape(ctx):
    """[num_boxes, crop_height, crop_width, depth]: boxes [num_boxes, 4], box_ind
    [num_boxes]."""
    depth = dims_with_rank(_dims(ctx.input_shape(0)), 4)[3]
    boxes, four = dims_with_rank(_dims(ctx.input_shape(1)), 2)
    (indices,) = dims_with_rank(_dims(ctx.input_shape(2)), 1)
    if boxes is not None and indices is not None and boxes != indices:
        raise ValueError(f"Dimensions must be equal, but are {boxes} and {indices}")
    if four is not None and four != 4:
        raise ValueError(f"Dimension must be 4 but is {four}")
    return _sized_image(ctx, boxes if boxes is not None else indices, depth, size_index=3)


_METHOD = Attr("method", "string", "bilinear")
_CROP_TYPES = (_d.uint8, _d.uint16, _d.int8, _d.int16, _d.int32, _d.int64, _d.float16,
               _d.float32, _d.float64)
# Bilinear (or nearest) samples of the boxes [y1, x1, y2, x2] (normalized coordinates) of the
# images box_ind picks; samples outside the image get extrapolation_value.
CropAndResize = define_op(
    "CropAndResize", inputs=["image: T", "boxes: float32", "box_ind: int32",
                             "crop_size: int32"], outputs=["crops: float32"],
    attrs=[TypeAttr("T", _CROP_TYPES), _METHOD, Attr("extrapolation_value", "float", 0.0)],
    shape_fn=_crop_and_resize_shape)


def _grad_image_shape(ctx):
    """The image's shape, from the `image_size` vector (known entries)."""
    dims_with_rank(_dims(ctx.input_shape(3)), 1)
    return _ts.TensorShape(dims_with_rank(_dims(ctx.static_shape(3)), 4))


# The adjoints of CropAndResize: with respect to the image (sampling weights scattered back)
# and to the boxes (the image gradient at each sample times its coordinate's derivative).
CropAndResizeGradImage = define_op(
    "CropAndResizeGradImage", inputs=["grads: float32", "boxes: float32", "box_ind: int32",
                                      "image_size: int32"], outputs=["output: T"],
    attrs=[TypeAttr("T", (_d.float32, _d.float16, _d.float64)), _METHOD],
    shape_fn=_grad_image_shape)
CropAndResizeGradBoxes = define_op(
    "CropAndResizeGradBoxes", inputs=["grads: float32", "image: T", "boxes: float32",
                                      "box_ind: int32"], outputs=["output: float32"],
    attrs=[TypeAttr("T", _CROP_TYPES), _METHOD], shape_fn=lambda ctx: ctx.input_shape(2))


@CropAndResize.gradient
def _crop_and_resize_grad(op, grad):
    """To the image when it is float (TF), always to the boxes (TF's bilinear formula even
    for nearest sampling); none to box_ind and crop_size."""
    from tensorweave.ops.array_ops import shape
    image, boxes, box_ind, _ = op.inputs
    grad_image = None
    if image.dtype.base_dtype in (_d.float16, _d.float32, _d.float64):
        size = image.shape.as_list() if image.shape.is_fully_defined() else shape(image)
        grad_image = apply_op(CropAndResizeGradImage, [grad, boxes, box_ind, size],
                              {"T": image.dtype.base_dtype, "method": op.attrs["method"]})
    grad_boxes = apply_op(CropAndResizeGradBoxes, [grad, image, boxes, box_ind])
    return [grad_image, grad_boxes, None, None]


def crop_and_resize(image, boxes, box_ind=None, crop_size=None, method="bilinear",
                    extrapolation_value=0, name=None, box_indices=None):
    """Crops boxes out of images and resizes each to `crop_size` (TF1's
    tf.image.crop_and_resize).

    Box b is `boxes[b] = [y1, x1, y2, x2]` in normalized coordinates of image
    `box_ind[b]` (y * (height - 1) is the pixel row); y1 > y2 flips the crop. Samples falling
    outside the image are `extrapolation_value`.

    Args:
      image: a 4-D Tensor `[batch, height, width, depth]` of a real number type.
      boxes: a float32 Tensor `[num_boxes, 4]`.
      box_ind: an int32 Tensor `[num_boxes]` of image indices in [0, batch) (deprecated
        name of `box_indices`).
      crop_size: a 1-D int32 Tensor `[crop_height, crop_width]`, both positive.
      method: "bilinear" or "nearest".
      extrapolation_value: the value of samples outside the image.
      name: the op name (default "CropAndResize").
      box_indices: the new name of `box_ind`.

    Returns:
      A float32 Tensor `[num_boxes, crop_height, crop_width, depth]`.

    Raises:
      ValueError: for incompatible static shapes, an unknown method, or both `box_ind` and
        `box_indices`.
      InvalidArgumentError: (at run time) for bad shapes, non-positive sizes or non-finite
        boxes; OutOfRangeError for a box index outside [0, batch).
    """
    from tensorweave.ops.image_ops import check_choice
    if box_ind is not None and box_indices is not None:
        raise ValueError("Cannot specify both 'box_indices' and 'box_ind'")
    box_ind = box_indices if box_ind is None else box_ind
    attrs = {"method": check_choice("CropAndResize", "method", method, ("bilinear", "nearest")),
             "extrapolation_value": extrapolation_value}
    return apply_op(CropAndResize, [image, boxes, box_ind, crop_size], attrs, name=name)


def _resize_attrs(op) -> dict:
    return {"align_corners": op.get_attr("align_corners"),
            "half_pixel_centers": op.get_attr("half_pixel_centers")}


@ResizeBilinear.gradient
def _resize_bilinear_grad(op, grad):
    return [apply_op(ResizeBilinearGrad, [grad, op.inputs[0]], _resize_attrs(op)), None]


@ResizeBicubic.gradient
def _resize_bicubic_grad(op, grad):
    """Only float32/float64 images get a gradient (ResizeBicubicGrad's types), as in TF."""
    if op.inputs[0].dtype.base_dtype not in (_d.float32, _d.float64):
        return [None, None]
    return [apply_op(ResizeBicubicGrad, [grad, op.inputs[0]], _resize_attrs(op)), None]


@ResizeNearestNeighbor.gradient
def _resize_nearest_neighbor_grad(op, grad):
    """The image's [height, width] from its static shape when known, else from Shape."""
    from tensorweave.ops.array_ops import shape
    image = op.inputs[0]
    size = image.shape[1:3]
    size = size.as_list() if size.is_fully_defined() else shape(image)[1:3]
    return [apply_op(ResizeNearestNeighborGrad, [grad, size], _resize_attrs(op)), None]


def _resize(op_def, images, size, align_corners, name, half_pixel_centers=None):
    attrs = {"align_corners": align_corners}
    if half_pixel_centers is not None:
        attrs["half_pixel_centers"] = half_pixel_centers
    return apply_op(op_def, [images, size], attrs, name=name)


_HALF_PIXEL_DOC = """
      half_pixel_centers: if True, sample at pixel centres (`(x + 0.5) * scale - 0.5`);
        requires align_corners=False."""


def _doc(summary: str, returns: str, half_pixel: bool = True) -> str:
    """The shared Google-style docstring of the four resize wrappers."""
    both = ",\n        or both align_corners and half_pixel_centers" if half_pixel else ""
    return f"""{summary}

    Args:
      images: a 4-D Tensor `[batch, height, width, channels]` of a real number type.
      size: a 1-D int32 Tensor of 2 elements `[new_height, new_width]`, both positive.
      align_corners: if True, the centres of the 4 corner pixels of input and output are
        aligned (scale `(in - 1) / (out - 1)`).
      name: the op name (default the op type).{_HALF_PIXEL_DOC if half_pixel else ""}

    Returns:
      A 4-D Tensor `[batch, new_height, new_width, channels]` {returns}.

    Raises:
      ValueError: if `images` is not of rank 4 or `size` not a 1-D Tensor of 2 elements.
      TypeError: for an unsupported image dtype.
      InvalidArgumentError: (at run time) for a non-positive size or an empty image{both}.
    """


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    return _resize(ResizeBilinear, images, size, align_corners, name, half_pixel_centers)


def resize_nearest_neighbor(images, size, align_corners=False, name=None,
                            half_pixel_centers=False):
    return _resize(ResizeNearestNeighbor, images, size, align_corners, name,
                   half_pixel_centers)


def resize_bicubic(images, size, align_corners=False, name=None, half_pixel_centers=False):
    return _resize(ResizeBicubic, images, size, align_corners, name, half_pixel_centers)


def resize_area(images, size, align_corners=False, name=None):
    return _resize(ResizeArea, images, size, align_corners, name)


resize_bilinear.__doc__ = _doc(
    "Resizes images with bilinear interpolation (TF1's tf.image.resize_bilinear).", "of float32")
resize_nearest_neighbor.__doc__ = _doc(
    "Resizes images by copying the nearest pixel (TF1's tf.image.resize_nearest_neighbor).",
    "of the images' dtype")
resize_bicubic.__doc__ = _doc(
    "Resizes images with bicubic interpolation (TF1's tf.image.resize_bicubic; Keys' cubic\n"
    "    a = -0.5 with half-pixel centres, else a = -0.75).", "of float32")
resize_area.__doc__ = _doc(
    "Resizes images by averaging the area each output pixel covers (TF1's\n"
    "    tf.image.resize_area).", "of float32", half_pixel=False)
