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
CUSTOM_PLANE_PREFIX = "/device:CUSTOM:"  # planes of other tracers (XProf shows them last)
# a TPU TensorCore plane ("/device:TPU:3"); SparseCore planes add " SparseCore <n>"
TPU_TENSOR_CORE_PLANE = r"^/device:TPU:(\d+)$"

# ---- lines ----------------------------------------------------------------------------------
STEPS_LINE = "Steps"
XLA_MODULES_LINE = "XLA Modules"
XLA_OPS_LINE = "XLA Ops"
ASYNC_XLA_OPS_LINE = "Async XLA Ops"
XLA_TRACEME_LINE = "XLA TraceMe"
FRAMEWORK_OPS_LINE = "Framework Ops"  # derived from XLA Ops by the profiler
FRAMEWORK_NAME_SCOPE_LINE = "Framework Name Scope"  # derived from XLA Ops
SOURCE_LINE = "Source code"  # derived from XLA Ops
# TPU device lines: those whose events are ops (XProf reads both; derived framework ops
# carry no program and symbol, so only their extent counts), and those shown in the trace only
TPU_OP_LINES = (XLA_OPS_LINE, FRAMEWORK_OPS_LINE)
# a device plane's hardware counter samples (TPU unit utilisation; GPUs with CUPTI's PM sampling)
COUNTERS_LINE = "_counters_"
TPU_TRACE_ONLY_LINES = (ASYNC_XLA_OPS_LINE, XLA_TRACEME_LINE, FRAMEWORK_NAME_SCOPE_LINE,
                        SOURCE_LINE, "Overlay", "Host Offload Ops", COUNTERS_LINE,
                        "Tensor Core Sync Flag")

# ---- step-time categories -------------------------------------------------------------------
# the columns of prof.steps that split a step's duration (they sum to duration_ms);
# device_idle_ms: TPU steps (a TensorCore's time without ops in the step)
CATEGORY_COLUMNS = ["device_compute_ms", "device_to_device_ms", "device_collectives_ms",
                    "host_compute_ms", "kernel_launch_ms", "input_ms", "output_ms",
                    "compilation_ms", "other_ms", "device_idle_ms"]

# ---- verdict thresholds (% of step time) ----------------------------------------------------
HIGHLY_INPUT_BOUND_PCT = 20.0  # waiting for input: highly input-bound
MODERATELY_INPUT_BOUND_PCT = 5.0  # waiting for input: moderately input-bound
HIGH_SHARE_PCT = 15.0  # a category this large is a "high" finding (all others, launch, ...)
MODERATE_SHARE_PCT = 3.0  # ... and this large a "moderate" one

# ---- ids read from the file -----------------------------------------------------------------
# a kernel whose correlation id several launches carry is linked to the last of them, as
# xprof's grouping links it (ConnectInterThread keeps one parent per id, the last one it
# reads); the others are counted in the reasons
CORRELATION_ID_KEEP = "last"
