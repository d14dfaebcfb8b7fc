"""Names and thresholds the layers share, each defined once (base layer: imports nothing).

Plane and line names are those the profilers (TensorFlow, JAX, XLA) write into XSpace files;
step-time categories are the ``*_ms`` columns of ``prof.steps`` that add up to a step; the
thresholds are the reference's (XProf's) for its input-bound and step-time verdicts.
"""

from __future__ import annotations

# ---- planes ---------------------------------------------------------------------------------
HOST_PLANE = "/host:CPU"
METADATA_PLANE = "/host:metadata"  # HLO protos, framework versions
TASK_ENVIRONMENT_PLANE = "Task Environment"  # profile start and stop (wall clock)
GPU_PLANE_PREFIX = "/device:GPU"
TPU_PLANE_PREFIX = "/device:TPU"
DEVICE_PLANE_PREFIXES = (GPU_PLANE_PREFIX, TPU_PLANE_PREFIX)

# ---- lines ----------------------------------------------------------------------------------
STEPS_LINE = "Steps"
XLA_MODULES_LINE = "XLA Modules"
XLA_OPS_LINE = "XLA Ops"
ASYNC_XLA_OPS_LINE = "Async XLA Ops"
XLA_TRACEME_LINE = "XLA TraceMe"

# ---- step-time categories -------------------------------------------------------------------
# the columns of prof.steps that split a step's duration (they sum to duration_ms)
CATEGORY_COLUMNS = ["device_compute_ms", "device_to_device_ms", "device_collectives_ms",
                    "host_compute_ms", "kernel_launch_ms", "input_ms", "output_ms",
                    "compilation_ms", "other_ms"]

# ---- verdict thresholds (% of step time) ----------------------------------------------------
HIGHLY_INPUT_BOUND_PCT = 20.0  # waiting for input: highly input-bound
MODERATELY_INPUT_BOUND_PCT = 5.0  # waiting for input: moderately input-bound
HIGH_SHARE_PCT = 15.0  # a category this large is a "high" finding (all others, launch, ...)
MODERATE_SHARE_PCT = 3.0  # ... and this large a "moderate" one
