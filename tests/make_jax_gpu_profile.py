"""Capture real JAX profiles on a GPU (CUPTI kernels, memcpys, step markers) for tests/data.

    python tests/make_jax_gpu_profile.py OUTDIR SCENARIO [STEPS [MAX_SECONDS]]

Not run by the test suite (CI has no GPU): this is how the committed ``jax_*_gpu`` fixtures
under ``tests/data`` were made, on a lent NVIDIA machine.  It runs on CPU too (no kernels then),
which is how the script itself is checked.  Each scenario writes ``OUTDIR/SCENARIO.xplane.pb``;
with MAX_SECONDS, tracing stops after the step that passes that many seconds (a bounded
capture on a machine lent for minutes).

Scenarios:
  transformer  a small decoder-only transformer trained with SGD: bf16 matmuls (cuBLAS),
               attention through ``jax.nn.dot_product_attention``, fusions; every step's batch
               is made on the host with NumPy and copied to the device (host-to-device
               memcpy); ``StepTraceAnnotation`` step markers; XLA's defaults (command buffers)
  nocmdbuf     the same with XLA's command buffers off (``--xla_gpu_enable_command_buffer=``),
               so every kernel is launched on its own
  inputbound   the same model with a slow host input (the batch is built in Python loops):
               the device waits for input every step
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
import tempfile
import time


def _model(jax, jnp, vocab=4096, d=512, heads=8, layers=4, seq=256):
    """Parameters and a jitted SGD train step of a small decoder-only transformer."""
    keys = iter(jax.random.split(jax.random.PRNGKey(0), 4 + 6 * layers))

    def dense(m, n):
        return (jax.random.normal(next(keys), (m, n), jnp.float32) / m ** 0.5)

    params = {"embed": dense(vocab, d), "out": dense(d, vocab),
              "layers": [{"qkv": dense(d, 3 * d), "proj": dense(d, d), "up": dense(d, 4 * d),
                          "down": dense(4 * d, d), "ln1": jnp.ones(d), "ln2": jnp.ones(d)}
                         for _ in range(layers)]}

    def norm(x, g):
        x = x - x.mean(-1, keepdims=True)
        return g * x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-5)

    def forward(p, tokens):
        b = tokens.shape[0]
        x = p["embed"][tokens].astype(jnp.bfloat16)
        for lp in p["layers"]:
            h = norm(x.astype(jnp.float32), lp["ln1"]).astype(jnp.bfloat16)
            qkv = (h @ lp["qkv"].astype(jnp.bfloat16)).reshape(b, seq, 3, heads, d // heads)
            a = jax.nn.dot_product_attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2],
                                             is_causal=True)
            x = x + a.reshape(b, seq, d) @ lp["proj"].astype(jnp.bfloat16)
            h = norm(x.astype(jnp.float32), lp["ln2"]).astype(jnp.bfloat16)
            x = x + jax.nn.gelu(h @ lp["up"].astype(jnp.bfloat16)) @ \
                lp["down"].astype(jnp.bfloat16)
        return (x @ p["out"].astype(jnp.bfloat16)).astype(jnp.float32)

    def loss(p, tokens, targets):
        logp = jax.nn.log_softmax(forward(p, tokens))
        return -jnp.take_along_axis(logp, targets[..., None], -1).mean()

    @jax.jit
    def step(p, tokens, targets):
        value, grads = jax.value_and_grad(loss)(p, tokens, targets)
        return jax.tree_util.tree_map(lambda w, g: w - 0.01 * g, p, grads), value

    return params, step, vocab, seq


def _batch(np, rng, vocab, seq, batch, slow):
    if not slow:
        t = rng.integers(0, vocab, (batch, seq + 1), dtype=np.int32)
    else:  # a deliberately slow Python-level input pipeline
        t = np.empty((batch, seq + 1), np.int32)
        for i in range(batch):
            for j in range(seq + 1):
                t[i, j] = (i * 31 + j * 17 + int(rng.integers(0, 7))) % vocab
    return t[:, :-1], t[:, 1:]


def capture(outdir: str, scenario: str, steps: int = 8, max_seconds: float = float("inf"),
            warmup: int = 3) -> str:
    if scenario == "nocmdbuf":
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_gpu_enable_command_buffer=").strip()
    import jax
    import jax.numpy as jnp
    import numpy as np

    params, step, vocab, seq = _model(jax, jnp)
    batch = 16
    rng = np.random.default_rng(0)
    slow = scenario == "inputbound"
    for _ in range(warmup):
        x, y = _batch(np, rng, vocab, seq, batch, slow)
        params, value = step(params, jax.device_put(x), jax.device_put(y))
    value.block_until_ready()
    logdir = tempfile.mkdtemp(prefix=f"jaxprof_{scenario}_")
    options = jax.profiler.ProfileOptions()
    options.host_tracer_level = 2
    options.python_tracer_level = 0
    t0 = time.perf_counter()
    jax.profiler.start_trace(logdir, profiler_options=options)
    try:
        for i in range(steps):
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                x, y = _batch(np, rng, vocab, seq, batch, slow)
                params, value = step(params, jax.device_put(x), jax.device_put(y))
                value.block_until_ready()
            if time.perf_counter() - t0 > max_seconds:
                steps = i + 1
                break
    finally:
        jax.profiler.stop_trace()
    files = glob.glob(f"{logdir}/plugins/profile/*/*.xplane.pb")
    assert len(files) == 1, files
    os.makedirs(outdir, exist_ok=True)
    dest = os.path.join(outdir, f"{scenario}.xplane.pb")
    shutil.copy(files[0], dest)
    print(f"{scenario}: {steps} steps in {time.perf_counter() - t0:.2f} s, loss "
          f"{float(value):.3f}, {os.path.getsize(dest)} bytes, jax {jax.__version__}, "
          f"{jax.devices()[0].device_kind}", flush=True)
    return dest


if __name__ == "__main__":
    capture(sys.argv[1], sys.argv[2], *(int(a) for a in sys.argv[3:4]),
            *(float(a) for a in sys.argv[4:5]))
