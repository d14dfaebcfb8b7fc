"""Charts of a profile as plotly figures: ``prof.plot.step_time()``, ``prof.plot.memory()``,
``op_stats()``, ``kernels()``, ``input_pipeline()``, ``pod()``, ``roofline()``,
``gpu_utilization()``, ``gpu_overlap()``, ``launch_latency()``, ``launch_queue()``, ``hardware()``,
``program_memory(program)``, ``source_flame()``.

Every chart the dashboard draws is built here, in Python, as a ``plotly.graph_objects.Figure``:
restyle it (``fig.update_layout(...)``), save it (``fig.write_html(...)``,
``fig.write_image(...)`` with kaleido), or show it anywhere plotly renders.  The views draw the
very same figures with the plotly.js bundled in tfprof_nb (no CDN).  ``theme`` is "light" or
"dark"; the views recolour a figure to the page's theme either way.
"""

from __future__ import annotations

__all__ = ["ProfilePlots"]


class ProfilePlots:
    """The charts of one profile (``prof.plot``)."""

    def __init__(self, prof):
        self._prof = prof

    def __repr__(self) -> str:
        names = ", ".join(n for n in dir(self) if not n.startswith("_"))
        return f"<tfprof_nb plots: {names}>"

    def step_time(self, theme: str = "light"):
        """Stacked step-time categories per step, step numbers on x (``prof.steps``); the
        steps XProf's figures leave out (the first and last, a pod's steps not aligned across
        its hosts) faded."""
        from ..analysis.steps.xprof_counted import xprof_counted_mask
        from .step_figures import step_time_figure

        steps = self._prof.steps
        return step_time_figure(steps, theme, counted=xprof_counted_mask(steps))

    def memory(self, theme: str = "light", max_points: int = 4000):
        """Stack, heap and free memory over time per allocator, every allocation hoverable,
        the peak marked (``prof.memory_timeline``); timelines longer than ``max_points``
        keep each time bucket's extremes."""
        from .memory_figures import memory_figure

        return memory_figure(self._prof.memory_timeline, self._prof.memory_summary, theme,
                             max_points)

    def op_stats(self, include_idle: bool = True, theme: str = "light", top: int = 10):
        """Self time by op and by type, host and device, as pies (``prof.op_stats``), with a
        caption saying what the IDLE slices count (XProf's rule, beside the page's own idle
        measure), why a device shows no op where its kernels name none and, where kernels ran
        inside XLA's command buffers, that XProf files them under no op."""
        from .op_figures import op_stats_figure
        from .op_words import idle_note, xprof_device_op_notes

        ops = self._prof.op_stats_table(include_idle=include_idle)
        notes = [idle_note(self._prof, ops), *xprof_device_op_notes(self._prof, ops)]
        return op_stats_figure(ops, theme, top, notes)

    def kernels(self, theme: str = "light", top: int = 20):
        """The top GPU kernels by total time (``prof.kernel_stats``)."""
        from .op_figures import kernels_figure

        return kernels_figure(self._prof.kernel_stats, theme, top)

    def input_pipeline(self, theme: str = "light"):
        """Input wait per step, from the source of the page's one input-wait measure (the
        GPUs' own time where they compute in the steps, else the step breakdown), and the
        host-side input breakdown (``prof.input_pipeline``)."""
        from ..analysis.findings.input_wait import input_wait_per_step
        from ..analysis.findings.measure_words import get
        from .step_figures import input_pipeline_figure, say_the_pages_input_wait

        prof = self._prof
        wait, source = input_wait_per_step(prof.steps, prof.gpu_utilization,
                                           prof.result("input_wait"))
        fig = input_pipeline_figure(prof.input_pipeline, prof.steps, theme, wait, source)
        return say_the_pages_input_wait(fig, wait, prof.steps,
                                        get(prof.measures, "input_wait_pct"))

    def roofline(self, theme: str = "light", peak_flops_per_s: float | None = None,
                 memory_bw_bytes_per_s: float | None = None):
        """XLA ops on the device's rooflines, as XProf's chart: bottleneck arithmetic
        intensity (FLOPs per byte of the memory that bounds the op) against achieved FLOP/s
        (``prof.roofline``, against ``prof.device_peaks``: ``prof.set_device_peaks(...)``
        sets them).  The peak arguments are deprecated (they go in the next release)."""
        from .roofline_figures import roofline_figure

        prof = self._prof
        if peak_flops_per_s is not None or memory_bw_bytes_per_s is not None:
            return roofline_figure(_roofline_for(prof, peak_flops_per_s,
                                                 memory_bw_bytes_per_s), theme)
        return roofline_figure(prof.roofline, theme)

    def program_memory(self, program, memory_space: int = 0, theme: str = "light",
                       top: int = 20, max_points: int = 4000):
        """An XLA program's heap over its program order, the peak marked, and the ``top``
        largest buffers live at the peak (``prof.program_memory(program, memory_space)``);
        heaps longer than ``max_points`` keep each bucket's extremes."""
        from .program_memory_figures import program_memory_figure

        return program_memory_figure(self._prof.program_memory(program, memory_space), theme,
                                     top, max_points)

    def pod(self, theme: str = "light"):
        """The step-time breakdown of every host side by side (``prof.pod``), its title
        saying the steps it averages and the overview's mean where that counts others."""
        from ..analysis.findings.measure_words import get
        from .pod_figures import pod_figure

        mean = get(self._prof.measures, "step_time_mean_ms")
        return pod_figure(self._prof.pod, theme, None if mean is None else
                          {"value": float(mean["value"]), "scope": str(mean["scope"])})

    def gpu_utilization(self, theme: str = "light", left_out: bool = True):
        """Busy and idle time by cause per device and step (``prof.gpu_utilization``; where
        the host has no input events, waiting for input is unknown and not drawn); with
        ``left_out``, the title names the devices that ran nothing in the steps (a view that
        says so in its own words passes False)."""
        from ..analysis.findings.input_wait import devices_input_unknown
        from ..analysis.findings.measure_words import get
        from .gpu_figures import utilization_figure

        idle = get(self._prof.measures, "device_idle_pct") if left_out else None
        return utilization_figure(self._prof.gpu_utilization, theme,
                                  input_known=not devices_input_unknown(self._prof.result),
                                  left_out=str(idle["excluded"]) if idle is not None and
                                  idle["time"] == "steps" else "")

    def gpu_overlap(self, theme: str = "light"):
        """Collective time hidden under compute and exposed, per device and step."""
        from .gpu_figures import overlap_figure

        return overlap_figure(self._prof.gpu_overlap, theme)

    def launch_latency(self, theme: str = "light"):
        """Histogram of kernel launch latency per device (``prof.launch_latency``; its
        title names the copies and memsets where they are among the launches)."""
        from .gpu_figures import launch_latency_figure, launched_words

        ll = self._prof.launch_latency
        return launch_latency_figure(ll.histogram, theme, launched_words(ll.per_kernel))

    def launch_queue(self, theme: str = "light"):
        """Kernels launched and not yet started, per device over time."""
        from .gpu_figures import queue_figure

        return queue_figure(self._prof.launch_latency.queue, theme)

    def hardware(self, theme: str = "light"):
        """Each device's SM clock and power and each host's CPU per step: the mean of the
        hardware samples inside each step, their max dotted (``prof.counters``)."""
        from ..analysis.findings.hardware_steps import samples_in_steps, step_means
        from .hardware_figures import hardware_figure

        inside = samples_in_steps(self._prof.counters, self._prof.steps)
        return hardware_figure(step_means(inside[inside.step >= 0]), theme,
                               self._prof.steps.index.to_numpy())

    def source_flame(self, theme: str = "light", all_frames: bool = False):
        """Device time by the user's Python stack as an icicle (``prof.source_stacks``): the
        outermost frames on top, each frame's callees under it, widths by device time; the
        outer frames every stack shares (a notebook kernel's) left out but the innermost of
        them, unless ``all_frames``."""
        from ..analysis.xla.source_lines import stack_tree
        from .source_figures import source_flame_figure, summed_devices

        stacks = self._prof.source_stacks
        why = "" if len(stacks) else "; ".join(stacks.attrs.get("reasons", []))
        return source_flame_figure(stack_tree(stacks, all_frames), theme,
                                   summed_devices(self._prof.duty_cycle), why)


def _roofline_for(prof, peak_flops_per_s, memory_bw_bytes_per_s):
    """The roofline table against the peaks given to ``plot.roofline`` (deprecated)."""
    from .._deprecated import renamed
    from ..analysis.xla.device_peaks import user_peaks
    from ..analysis.xla.roofline import roofline_for

    if not (peak_flops_per_s and memory_bw_bytes_per_s):
        raise ValueError("give both peak_flops_per_s and memory_bw_bytes_per_s")
    renamed("prof.plot.roofline(peak_flops_per_s=..., memory_bw_bytes_per_s=...)",
            "prof.set_device_peaks(...), then prof.plot.roofline()", stacklevel=4)
    return roofline_for(prof.result("xla"), user_peaks(
        peak_flops_per_s, memory_bw_bytes_per_s, "user", "argument"))
