"""Keras' callback protocol for a monitor, without importing Keras.

Keras 3 (``keras`` and TensorFlow's ``tf.keras``) takes any object with a callback's methods
in ``model.fit(callbacks=[...])``; importing Keras to subclass its ``Callback`` would load
TensorFlow in a JAX process.  The hooks a monitor does not use are marked as Keras marks its
defaults (``_is_default``), so Keras still dispatches evaluation and prediction batches as it
would without the monitor.  Each training batch is a step (with ``steps_per_execution`` > 1,
one call covers several: each is counted, one marker covers them); a batch whose data ran out
(Keras ends the epoch there) is no step, and the window goes on into the next epoch; a batch
that raises otherwise inside ``train_function`` stops the window before the error goes on (an
error outside it, in a Keras backend that fetches data outside, leaves the window to the end
of the notebook cell or to the next window's start, which stop it).
"""

from __future__ import annotations

__all__ = ["KerasHooks"]


def _default(method):
    method._is_default = True
    return method


def _out_of_data(exc: BaseException) -> bool:
    """Whether ``exc`` is how a train function says the data ran out (StopIteration, or
    TensorFlow's OutOfRangeError), which Keras catches to end the epoch."""
    return isinstance(exc, StopIteration) or any(
        c.__name__ == "OutOfRangeError" for c in type(exc).__mro__)


class KerasHooks:
    """The callback methods Keras calls (a mixin of :class:`~.monitor.Monitor`, whose
    ``_driver`` steps and whose ``_keras_backend(name)`` hears Keras' backend)."""

    params = None
    _model = None
    _wrapped = None
    _batch = None

    def set_params(self, params) -> None:
        self.params = params

    def set_model(self, model) -> None:
        self._model = model

    @property
    def model(self):
        """The model being trained (Keras sets it)."""
        return self._model

    def on_train_begin(self, logs=None) -> None:
        import keras  # fit is running: Keras is imported

        self._keras_backend(keras.backend.backend())
        self._unwrap()  # left by a fit that raised
        model = self._model
        original = getattr(model, "train_function", None)
        if original is None:
            return
        driver = self._driver

        def train_function(*args, **kwargs):
            try:
                return original(*args, **kwargs)
            except BaseException as exc:
                if _out_of_data(exc):  # Keras ends the epoch: the window goes on
                    driver.abandon_step()
                else:
                    driver.close(f"training raised {type(exc).__name__}")
                raise

        self._wrapped = (model, original)
        model.train_function = train_function

    def on_train_batch_begin(self, batch, logs=None) -> None:
        self._batch = batch
        self._driver.begin_step()

    def on_train_batch_end(self, batch, logs=None) -> None:
        # with steps_per_execution > 1 Keras calls the hooks once per execution: the first
        # and the last of its batches
        first = self._batch if isinstance(self._batch, int) else batch
        self._driver.end_step(max(1, batch - first + 1) if isinstance(batch, int) else 1)

    def on_train_end(self, logs=None) -> None:
        self._unwrap()
        self._driver.close("training ended")

    def _unwrap(self) -> None:
        if self._wrapped is not None:
            model, original = self._wrapped
            model.train_function = original
            self._wrapped = None

    @_default
    def on_batch_begin(self, batch, logs=None) -> None:
        pass

    @_default
    def on_batch_end(self, batch, logs=None) -> None:
        pass

    @_default
    def on_epoch_begin(self, epoch, logs=None) -> None:
        pass

    @_default
    def on_epoch_end(self, epoch, logs=None) -> None:
        pass

    @_default
    def on_test_begin(self, logs=None) -> None:
        pass

    @_default
    def on_test_end(self, logs=None) -> None:
        pass

    @_default
    def on_test_batch_begin(self, batch, logs=None) -> None:
        pass

    @_default
    def on_test_batch_end(self, batch, logs=None) -> None:
        pass

    @_default
    def on_predict_begin(self, logs=None) -> None:
        pass

    @_default
    def on_predict_end(self, logs=None) -> None:
        pass

    @_default
    def on_predict_batch_begin(self, batch, logs=None) -> None:
        pass

    @_default
    def on_predict_batch_end(self, batch, logs=None) -> None:
        pass
