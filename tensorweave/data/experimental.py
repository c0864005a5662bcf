"""tf.data.experimental: the AUTOTUNE sentinel (tf.data picks the parallelism itself)."""

AUTOTUNE = -1
