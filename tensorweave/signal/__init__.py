"""tf.signal: Fourier transforms, framing, windows, spectrograms, mel and DCT (re-exports only).

The transforms tf.spectral also has come from there."""
from tensorweave.ops.signal_ops import (
    fftshift,
    frame,
    hamming_window,
    hann_window,
    ifftshift,
    inverse_stft,
    inverse_stft_window_fn,
    overlap_and_add,
    stft,
)
from tensorweave.signal.dct_ops import mfccs_from_log_mel_spectrograms
from tensorweave.signal.mel_ops import linear_to_mel_weight_matrix
from tensorweave.signal.spectral import *
