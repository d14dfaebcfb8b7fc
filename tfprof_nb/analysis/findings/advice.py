"""The suggested fixes of the findings, in the words of the framework that wrote the profile.

:func:`fix` gives the text for a finding ``kind`` and a framework (``"jax"``, ``"tensorflow"``,
:data:`TF_SESSION` for TensorFlow 1's graph mode, or ``"unknown"``, see :mod:`..trace.framework`);
TensorFlow's text is the default.  Allocator advice also depends on the allocator (device or
host) and the GPU vendor: :func:`allocator_fix`.
"""

from __future__ import annotations

from ..trace.framework import JAX, TENSORFLOW

__all__ = ["TF_SESSION", "fix", "allocator_fix", "is_device_allocator"]

_FIXES = {
    "input_bound": {
        TENSORFLOW: "Overlap input with compute: end the tf.data pipeline with "
                    ".prefetch(tf.data.AUTOTUNE), use num_parallel_calls=tf.data.AUTOTUNE in "
                    "map and interleave, .cache() data that fits in memory, and fetch the next "
                    "batch inside the step.",
        JAX: "Overlap input with compute: prepare batches in a background thread or a loader "
             "with prefetch (grain, tf.data with .prefetch), move the next batch to the device "
             "ahead of time with jax.device_put while the current step runs.",
    },
    "launch_bound": {
        TENSORFLOW: "Fuse ops with XLA: @tf.function(jit_compile=True) on the train step, or "
                    "model.compile(jit_compile=True) in Keras; use steps_per_execution to run "
                    "several steps per call.",
        JAX: "Give XLA more work per call: jit the whole train step (not its parts), run "
             "several steps per call with jax.lax.scan, and avoid many tiny jitted calls.",
    },
    "mixed_precision": {
        TENSORFLOW: "Enable mixed precision: keras.mixed_precision.set_global_policy("
                    "'mixed_float16') (keep the output layer in float32).",
        JAX: "Compute in bfloat16 or float16: cast parameters and activations to jnp.bfloat16 "
             "for the forward and backward pass (a mixed-precision policy, e.g. jmp or the "
             "dtype/param_dtype of Flax layers), keeping the master weights and the loss in "
             "float32.",
    },
    "layout": {
        TENSORFLOW: "Use channels_last (NHWC) tensors, which Tensor Cores prefer with fp16; "
                    "avoid data_format='channels_first'.",
        JAX: "Keep convolutions channels-last (dimension_numbers ('NHWC', 'HWIO', 'NHWC') in "
             "lax.conv_general_dilated; Flax's default) so XLA needs no transposes around them.",
    },
    "host_overhead": {
        TENSORFLOW: "Put the whole train step in one tf.function, avoid Python-side work and "
                    ".numpy() calls per step, and use steps_per_execution in Keras.",
        JAX: "Jit the whole train step, avoid host round trips each step (float(loss), "
             "np.asarray, .block_until_ready(), printing), and dispatch the next step before "
             "reading the last one's results.",
    },
    "command_buffers": {
        TENSORFLOW: "Keep command buffers for training (they cut launch overhead); for per-op "
                    "numbers (HLO op stats, roofline, framework ops) profile once with "
                    "XLA_FLAGS=--xla_gpu_enable_command_buffer= set before TensorFlow starts "
                    "(an empty list turns them off).",
        JAX: "Keep command buffers for training (they cut launch overhead); for per-op numbers "
             "(HLO op stats, roofline, framework ops) profile once with "
             "XLA_FLAGS=--xla_gpu_enable_command_buffer= set before JAX starts (an empty list "
             "turns them off).",
    },
    "memory_capacity": {
        TENSORFLOW: "Reduce the batch size, use mixed precision, or recompute activations; "
                    "check the memory breakdown at peak for the largest tensors.",
        JAX: "JAX's GPU arena is XLA_PYTHON_CLIENT_MEM_FRACTION of the memory (default .75): "
             "raise it (e.g. .9) when the GPU is not shared; otherwise reduce the batch size, "
             "compute in bfloat16, recompute activations with jax.checkpoint, and donate "
             "buffers you replace (jax.jit(..., donate_argnums=...)).",
    },
}

_FIXES.update({
    "sync_memcpy": {
        TENSORFLOW: "Avoid host round trips inside the step (.numpy(), tf.print of tensors, "
                    "Python control flow on tensor values) and overlap copies with compute: "
                    "end the tf.data pipeline with prefetch_to_device or "
                    ".prefetch(tf.data.AUTOTUNE) so batches reach the GPU ahead of the step.",
        JAX: "Avoid blocking the host on the device each step (block_until_ready, float(x), "
             "np.asarray, printing) and put the next batch on the device ahead of time with "
             "jax.device_put while the current step runs.",
    },
    "exposed_collectives": {
        TENSORFLOW: "Overlap gradient all-reduce with the backward pass: pack gradients into "
                    "fewer, larger all-reduces (tf.distribute.experimental."
                    "CommunicationOptions(bytes_per_pack=...)), use NCCL, and compute in "
                    "16 bit to halve the bytes sent.",
        JAX: "Let XLA overlap collectives with compute: "
             "XLA_FLAGS=--xla_gpu_enable_latency_hiding_scheduler=true, shard so that "
             "communication has independent compute beside it, and send bfloat16.",
    },
    "straggler": {
        # (the host that finishes last, as the finding names it: not prof.pod's slowest,
        # which is by step duration)
        TENSORFLOW: "Look at the host that finishes last first: its input pipeline "
                    "(prof.input_pipeline per host), other work on the machine, throttled or "
                    "slower devices; give every worker the same share of data.",
        JAX: "Look at the host that finishes last first: its input loading, other work on "
             "the machine, throttled or slower devices; give every process the same share "
             "of data.",
    },
})

# TensorFlow 1's graph mode (Session.run, no tf.function): the fixes that differ there
TF_SESSION = "tensorflow_session"
_FIXES["input_bound"][TF_SESSION] = (
    "Overlap input with compute: feed the graph from a tf.data iterator instead of feed_dict, "
    "end the pipeline with .prefetch(tf.data.AUTOTUNE) and use "
    "num_parallel_calls=tf.data.AUTOTUNE in map and interleave.")
_FIXES["launch_bound"][TF_SESSION] = (
    "Fuse ops with XLA (tf.config.optimizer.set_jit(True), or the session config's "
    "global_jit_level) and run several steps per sess.run call in a tf.while_loop.")
_FIXES["host_overhead"][TF_SESSION] = (
    "Do more per sess.run call: fetch only what the step needs (each fetched tensor is copied "
    "to Python), feed data from a tf.data iterator instead of feed_dict, and run several steps "
    "per call in a tf.while_loop, or move the step into a TF2 tf.function.")

_STABLE_SHAPES = "keep tensor shapes stable between steps (pad variable-length batches)."
_JAX_DEVICE_FRAGMENTATION = (
    "Keep shapes stable between steps (pad or bucket variable-length batches, which also "
    "avoids recompiling) and donate buffers you replace (jax.jit(..., donate_argnums=...)). "
    "If fragmentation ends in out-of-memory errors, give XLA's arena more room "
    "(XLA_PYTHON_CLIENT_MEM_FRACTION=.9) or, to find the cause, allocate on demand with "
    "XLA_PYTHON_CLIENT_PREALLOCATE=false or XLA_PYTHON_CLIENT_ALLOCATOR=platform (slower).")


def fix(kind: str, framework: str) -> str:
    """The suggested fix of finding ``kind`` for ``framework`` (TensorFlow's by default)."""
    texts = _FIXES[kind]
    return texts.get(framework, texts[TENSORFLOW])


def is_device_allocator(name: str) -> bool:
    """Whether allocator ``name`` manages GPU memory (``GPU_0_bfc``; not the pinned host
    allocators such as ``gpu_host_bfc`` nor CPU ones)."""
    name = str(name).lower()
    return name.startswith("gpu_") and "host" not in name


def allocator_fix(cause: str, device: bool, framework: str, vendors: tuple[str, ...]) -> str:
    """The fix for allocators with ``cause`` (``"fragmentation"`` or ``"memory_capacity"``),
    device (GPU) or host ones, for ``framework`` on GPUs of ``vendors``."""
    if cause == "memory_capacity":
        return fix(cause, framework if device else TENSORFLOW)
    if not device:
        return _STABLE_SHAPES[0].upper() + _STABLE_SHAPES[1:]
    if framework == JAX:
        return _JAX_DEVICE_FRAGMENTATION
    if "amd" in vendors:  # TF_GPU_ALLOCATOR=cuda_malloc_async is CUDA's allocator
        return _STABLE_SHAPES[0].upper() + _STABLE_SHAPES[1:]
    # TF_GPU_ALLOCATOR changes TensorFlow's device allocators only
    lead = "Try" if framework in (TENSORFLOW, TF_SESSION) else "With TensorFlow, try"
    return f"{lead} TF_GPU_ALLOCATOR=cuda_malloc_async, and {_STABLE_SHAPES}"
