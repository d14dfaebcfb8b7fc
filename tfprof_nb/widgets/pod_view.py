"""The pod viewer as a standalone widget (the dashboard's "Pod viewer" tab): the step-time
breakdown of every host side by side."""

from __future__ import annotations

from ._view import View, ViewState
from .traits import FigureTrait

__all__ = ["PodView"]


class PodView(View):
    """The step-time breakdown of every host side by side, the mean of the aligned steps or
    one of them (``prof.plot.pod()``)."""

    tab, title, bundle, position = "pod", "Pod viewer", "podview", 90
    figure = FigureTrait()

    @classmethod
    def reason(cls, prof) -> str | None:
        if len(prof.hosts) < 2:
            return ("This profile has one host: the pod viewer compares the step times of "
                    "several hosts (capture with tp.capture_remote).")
        if prof.pod.empty:
            return ("No step lines up across the hosts of this profile (XProf's pod viewer "
                    "aligns the hosts' steps by their times; a host without steps leaves "
                    "none): there is nothing to compare.")
        return None

    @classmethod
    def state(cls, prof) -> ViewState:
        return ViewState({"figure": prof.plot.pod()})
