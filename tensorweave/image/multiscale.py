"""Multi-scale structural similarity: tf.image.ssim_multiscale.

SSIM's contrast-structure term at each of several scales (each scale an average-pooled half of
the previous one, symmetric padding first when a side is odd) and the full SSIM at the last,
combined as a weighted geometric mean (Wang, Simoncelli and Bovik 2003). Built from the same
ops as TensorFlow's image_ops_impl, so its gradient follows.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.image.convert import convert_image_dtype
from tensorweave.image.quality import per_channel_ssim, verify_compatible
from tensorweave.ops.array_join_ops import concat, stack
from tensorweave.ops.array_ops import expand_dims, identity, reshape, shape_n
from tensorweave.ops.array_tile_pad_ops import pad
from tensorweave.ops.cond import cond
from tensorweave.ops.constant_op import constant
from tensorweave.ops.math_ops import cast, not_equal
from tensorweave.ops.math_ops import pow as _pow
from tensorweave.ops.nn_ops import relu
from tensorweave.ops.nn_pool_ops import avg_pool
from tensorweave.ops.reduction_ops import reduce_any, reduce_mean, reduce_prod

__all__ = ["ssim_multiscale"]

# The weights of the five scales fitted by Wang et al.
_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)
_DIVISOR = [1, 2, 2, 1]


def _halved(images, heads, tails):
    """Both images average-pooled 2x2 (after symmetric padding of odd sides), back in their
    batch shape; with their new [height, width, channels]."""
    flat = [reshape(x, concat([[-1], t], 0)) for x, t in zip(images, tails)]
    remainder = tails[0] % constant(_DIVISOR[1:], dtype=_dtypes.int32)
    need_padding = reduce_any(not_equal(remainder, 0))

    def do_pad():
        padding = pad(expand_dims(remainder, -1), [[1, 0], [1, 0]])
        return [pad(x, padding, mode="SYMMETRIC") for x in flat]

    padded = cond(need_padding, do_pad, lambda: flat)
    down = [avg_pool(x, ksize=_DIVISOR, strides=_DIVISOR, padding="VALID") for x in padded]
    tails = [s[1:] for s in shape_n(down)]
    return [reshape(x, concat([h, t], 0)) for x, h, t in zip(down, heads, tails)], tails


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11,
                    filter_sigma=1.5, k1=0.01, k2=0.03):
    """Multi-scale structural similarity between images, averaged over channels (TF1's
    tf.image.ssim_multiscale).

    Scale k (from 0) compares the images downsampled k times by 2x2 average pooling; the
    result is prod_k relu(cs_k) ** power_factors[k], the last factor being relu(ssim) of the
    last scale instead of its contrast-structure term.

    Args:
      img1: an image Tensor `[..., height, width, channels]`; after the last downsampling the
        images must still be at least `filter_size` high and wide.
      img2: an image Tensor of the same shape (leading dimensions broadcast).
      max_val: the dynamic range of the images (1.0 for float images in [0, 1], 255 ...).
      power_factors: the weight of each scale (their number is the number of scales).
      filter_size: the Gaussian window's size.
      filter_sigma: the Gaussian window's standard deviation.
      k1: the luminance stabilizer (c1 = (k1 * max_val)^2).
      k2: the contrast stabilizer (c2 = (k2 * max_val)^2).

    Returns:
      A float32 Tensor of the leading (batch) shape.

    Raises:
      ValueError: if the shapes are statically incompatible.
      InvalidArgumentError: (at run time) if a scale is smaller than the filter.
    """
    with name_scope(None, "MS-SSIM", [img1, img2]):
        img1 = convert_to_tensor(img1, name="img1")
        img2 = convert_to_tensor(img2, name="img2")
        checks = verify_compatible(img1, img2)
        shapes = shape_n([img1, img2])
        with control_dependencies(checks):
            img1 = identity(img1)
        max_val = convert_image_dtype(cast(max_val, img1.dtype), _dtypes.float32)
        images = [convert_image_dtype(img1, _dtypes.float32),
                  convert_image_dtype(img2, _dtypes.float32)]
        heads = [s[:-3] for s in shapes]
        tails = [s[-3:] for s in shapes]
        mcs = []
        for k in range(len(power_factors)):
            with name_scope(None, f"Scale{k}", images):
                if k > 0:
                    images, tails = _halved(images, heads, tails)
                ssim_per_channel, cs = per_channel_ssim(*images, max_val, filter_size,
                                                        filter_sigma, k1, k2, False)
                mcs.append(relu(cs))
        mcs.pop()  # the last scale contributes its full SSIM instead
        mcs_and_ssim = stack(mcs + [relu(ssim_per_channel)], axis=-1)
        ms_ssim = reduce_prod(_pow(mcs_and_ssim, power_factors), [-1])
        return reduce_mean(ms_ssim, [-1])
