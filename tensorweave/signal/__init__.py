"""tf.signal: Fourier transforms, framing, windows, STFTs, mel, DCT and MDCT (re-exports only).

The transforms tf.spectral also has come from there."""
from tensorweave.ops.signal_ops import (
    fftshift,
    frame,
    hamming_window,
    hann_window,
    ifftshift,
    inverse_stft,
    inverse_stft_window_fn,
    kaiser_bessel_derived_window,
    kaiser_window,
    overlap_and_add,
    stft,
    vorbis_window,
)
from tensorweave.signal.dct_ops import mfccs_from_log_mel_spectrograms
from tensorweave.signal.mdct_ops import inverse_mdct, mdct
from tensorweave.signal.mel_ops import linear_to_mel_weight_matrix
from tensorweave.signal.spectral import *
