"""Capturing profiles: step windows in custom loops and Keras fit, local and remote sessions.

Only this package imports TensorFlow or JAX (whichever profiler a capture uses, see
``backends``), and only when a capture starts.
"""
