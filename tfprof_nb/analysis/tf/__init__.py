"""The TensorFlow tools: op stats, the memory profile, the input pipeline, tf.data, name
scopes."""
