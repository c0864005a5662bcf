"""tf.image: TF 2.21 compat.v1's image functions (re-exports only).

Resizing (`resize_images`, `resize_bilinear`, ...), geometry (flips, rot90, crops, pads),
colour (`adjust_*`, `random_*`, HSV and grayscale conversions, `convert_image_dtype`),
measures (`psnr`, `ssim`, `total_variation`, ...) and codecs (`decode_*`, `encode_*`).
"""
# ruff: noqa: F401 - re-exports
from tensorweave.image.color import (
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    grayscale_to_rgb,
    per_image_standardization,
    random_brightness,
    random_contrast,
    random_hue,
    random_saturation,
    rgb_to_grayscale,
)
from tensorweave.image.convert import convert_image_dtype
from tensorweave.ops.image_patches_ops import extract_image_patches, extract_patches
from tensorweave.image.crop import (
    central_crop,
    crop_to_bounding_box,
    pad_to_bounding_box,
    resize_image_with_crop_or_pad,
    resize_with_crop_or_pad,
)
from tensorweave.image.geometry import (
    flip_left_right,
    flip_up_down,
    random_flip_left_right,
    random_flip_up_down,
    rot90,
    transpose,
    transpose_image,
)
from tensorweave.image.quality import image_gradients, psnr, sobel_edges, ssim, total_variation
from tensorweave.image.multiscale import ssim_multiscale
from tensorweave.image.nms_padded import non_max_suppression_padded
from tensorweave.image.jpeg_quality import adjust_jpeg_quality, random_jpeg_quality
from tensorweave.image.yiq_yuv import rgb_to_yiq, rgb_to_yuv, yiq_to_rgb, yuv_to_rgb
from tensorweave.image.resize import (
    ResizeMethod,
    resize,
    resize_image_with_pad,
    resize_images,
)
from tensorweave.ops.image_codec_ops import (
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    is_jpeg,
)
from tensorweave.ops.image_boxes_ops import (
    draw_bounding_boxes,
    extract_glimpse,
    sample_distorted_bounding_box,
)
from tensorweave.ops.image_nms_ops import (
    combined_non_max_suppression,
    non_max_suppression,
    non_max_suppression_overlaps,
    non_max_suppression_with_scores,
)
from tensorweave.ops.image_ops import hsv_to_rgb, random_crop, rgb_to_hsv
from tensorweave.ops.image_resize_ops import (
    crop_and_resize,
    resize_area,
    resize_bicubic,
    resize_bilinear,
    resize_nearest_neighbor,
)
