"""A Keras 3 callback that profiles N batches of ``model.fit`` after a warm-up."""

from __future__ import annotations

import keras

from .loop import WindowResults, make_window

__all__ = ["KerasProfiler"]


class KerasProfiler(WindowResults, keras.callbacks.Callback):
    """Profile ``steps`` training batches of ``model.fit`` after ``warmup`` batches.

        prof_cb = tp.KerasProfiler(steps=10, warmup=3)
        model.fit(ds, epochs=1, callbacks=[prof_cb])
        prof_cb.profile

    Each profiled batch is wrapped in a ``train`` step marker (Keras 3 emits none, which is why
    TensorBoard finds no steps in its profiles).  The batch's input is fetched inside
    ``train_function``, so it falls inside the marker.  If a batch raises, the profiler is
    stopped, the partial profile saved and attached to the exception; the exception propagates.
    Does not need the tensorboard package.  ``backend="auto"`` follows Keras' backend (JAX's
    profiler for ``KERAS_BACKEND=jax``, TensorFlow's for ``tensorflow``).  ``sample_ms``
    (default 50, 0 off): the hardware sampler's period (host CPU and memory, GPUs and TPUs,
    as in :class:`~tfprof_nb.Capture`), its ``<host>.hardware.npz`` beside the profile.
    """

    def __init__(self, steps: int | None = None, warmup: int | None = None,
                 logdir: str | None = None, *, host_tracer_level: int | None = None,
                 python_tracer_level: int | None = None,
                 device_tracer_level: int | None = None, delay_ms: int | None = None,
                 sample_ms: int | None = None, progress: bool | None = None,
                 backend: str | None = None):
        super().__init__()
        if backend in (None, "auto") and keras.backend.backend() in ("jax", "tensorflow"):
            backend = keras.backend.backend()
        self._window = make_window(
            steps, warmup, logdir,
            {"host_tracer_level": host_tracer_level, "python_tracer_level": python_tracer_level,
             "device_tracer_level": device_tracer_level, "delay_ms": delay_ms,
             "sample_ms": sample_ms},
            "train", progress, owner="tp.KerasProfiler", backend=backend)
        self._wrapped = None

    # ---- fit hooks ----------------------------------------------------------------------
    def on_train_begin(self, logs=None):
        model = self.model
        original = getattr(model, "train_function", None)
        if original is None or self._wrapped is not None:
            return
        window = self._window

        def train_function(*args, **kwargs):
            try:
                return original(*args, **kwargs)
            except BaseException as exc:
                window.finish(exc)
                raise

        self._wrapped = (model, original)
        model.train_function = train_function

    def on_train_batch_begin(self, batch, logs=None):
        if self._window.done < self._window.total:
            self._window.begin_step()

    def on_train_batch_end(self, batch, logs=None):
        if self._window.done < self._window.total:
            self._window.end_step()

    def on_train_end(self, logs=None):
        if self._wrapped is not None:
            model, original = self._wrapped
            model.train_function = original
            self._wrapped = None
        self._window.finish()
