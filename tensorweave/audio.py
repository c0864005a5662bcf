"""tf.audio: WAV decoding and encoding (re-exports only)."""
# ruff: noqa: F401 - re-exports
from tensorweave.ops.audio_ops import decode_wav, encode_wav
