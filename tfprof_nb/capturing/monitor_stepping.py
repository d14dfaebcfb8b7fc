"""How a training loop's steps reach a monitor: ``iterate`` (a loop over the data), ``step()``
(a context manager per step), ``stop`` and the monitor as a ``with`` block; each hands its
steps to the training thread's driver (``monitor_driver``).  Keras' fit reaches it through
``monitor_keras`` instead."""

from __future__ import annotations

from .monitor_driver import WindowDriver

__all__ = ["Stepping"]


class Stepping:
    """The driving methods of :class:`~.monitor.Monitor` (a mixin over its ``_driver`` and
    ``_schedule``)."""

    def iterate(self, iterable):
        """Yield every element of ``iterable``, each one training step; the element is
        taken inside the step, so input time is part of it, and in a window that fetch is
        marked as input (``IteratorGetNext (loop input)``: see ``Capture.iterate``).  When
        the loop ends or is left (``break``, an error), an open window stops with the steps
        that ran."""
        driver = self._driver
        it = iter(iterable)
        note = "the loop ended"
        try:
            while True:
                driver.begin_step()
                try:
                    with driver.input_marker():
                        item = next(it)
                except StopIteration:
                    driver.abandon_step()
                    return
                yield item
                driver.end_step()
        except GeneratorExit:
            note = "the loop was left (break or an error in the step)"
            raise
        except BaseException as exc:
            note = f"the data raised {type(exc).__name__}"
            raise
        finally:
            driver.close(note)

    def step(self):
        """A context manager marking one training step, for loops that fetch their own
        data: ``with mon.step(): train_step(batch)``."""
        return _Step(self._driver)

    def input(self):
        """A context manager marking the fetch of a step's batch as input, for loops that
        fetch their own data: ``with mon.step(): with mon.input(): batch = next(loader)``
        (what ``iterate`` does for you); nothing outside the windows."""
        return self._driver.input_marker()

    def stop(self) -> None:
        """Profile no more windows; an open window stops with the steps that ran."""
        self._schedule.stop()
        self._driver.close("the monitor was stopped")

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._driver.close("the block ended" if exc is None
                           else f"the block raised {type(exc).__name__}")
        return False


class _Step:
    """One training step of a monitor (``Monitor.step()``)."""

    def __init__(self, driver: WindowDriver):
        self.driver = driver

    def __enter__(self):
        self.driver.begin_step()
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None:
            self.driver.end_step()
        else:
            self.driver.close(f"the step raised {type(exc).__name__}")
        return False
