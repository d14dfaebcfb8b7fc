"""Capturing profiles: step windows in custom loops and Keras fit, local and remote sessions.

Only this package imports TensorFlow, and only when a capture starts.
"""
