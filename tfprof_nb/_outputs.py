"""How a profile shows and saves itself: charts, the dashboard, reports, trace exports.

:class:`ProfileOutputs` is the part of ``Profile`` that hands the profile to the layers that
draw or write it (plot, widgets, report, export); each method imports its layer when called,
so ``import tfprof_nb`` stays light.
"""

from __future__ import annotations

__all__ = ["ProfileOutputs"]


class ProfileOutputs:
    """Charts, views and files of a profile (mixed into ``Profile``)."""

    @property
    def plot(self):
        """The profile's charts as plotly figures (``prof.plot.step_time()``, ...)."""
        from .plot import ProfilePlots

        return ProfilePlots(self)

    def show(self):
        """The dashboard widget of this profile (overview, trace viewer, stats, memory)."""
        from .widgets.dashboard_view import DashboardView

        return DashboardView(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        from ._display import view_bundle

        return view_bundle(self.show, self.summary, include, exclude)

    def _ipython_display_(self):
        from ._display import display_view

        display_view(self.show, self.summary)

    def hlo_graph(self, op: str, hops: int = 2, program=None):
        """The HLO graph around ``op`` (an HLO op, or a GPU kernel's name): ``.nodes`` and
        ``.edges`` (DataFrames; fusions with their fused instructions, times from
        ``hlo_stats``), ``.show()`` draws it; ``program`` (an id, a module name or (host, id))
        picks among programs holding the name (else a ValueError names them)."""
        from .widgets.hlo_graph_view import hlo_graph

        return hlo_graph(self, op, hops, program)

    def what_if(self, scale: dict | None = None):
        """Each step's duration predicted with some durations scaled: ``scale`` maps step-time
        categories (``"input"``, ``"device_compute"``, ...) or glob patterns of event names to
        factors; one row per step (measured, predicted, range); ``attrs``: matched events,
        notes, the new ``critical_path`` (see ``analysis.critical.what_if``)."""
        from .analysis.critical.path_summary import TPU_PATH_WHY, untold_on
        from .analysis.critical.what_if import what_if

        if untold_on(self.result("environment")):
            raise ValueError(f"what_if does not predict TPU steps: {TPU_PATH_WHY}, and a replay "
                             "could not move the host's calls with the programs they run.")
        return what_if(self.result("replay_graph"), self.event_offsets, scale)

    def to_html(self, path, title: str | None = None):
        """Write one self-contained offline HTML report (the whole dashboard)."""
        from .reporting.html import write_report

        return write_report(self, path, title)

    def export_notebook(self, path, title: str | None = None):
        """Write a small report notebook (summary and dashboard, rendered offline)."""
        from .reporting.notebook import export_notebook

        return export_notebook(self, path, title)

    def to_chrome_trace(self, path, compress: bool | None = None):
        """Write every event as Chrome Trace Event Format JSON (gzip by ``.gz`` or
        ``compress``)."""
        from .export import write_chrome_trace

        return write_chrome_trace(self, path, compress=compress)

    def to_perfetto(self, path):
        """Write every event and the steps as a Perfetto protobuf trace."""
        from .export import write_perfetto

        return write_perfetto(self, path)
