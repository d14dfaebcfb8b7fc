"""Captures into a logdir URL on a real S3 server (moto's server mode on 127.0.0.1): the run
is written locally by TensorFlow's or JAX's profiler, uploaded, checked in the bucket's
listing, and the profile loaded from the URL without downloading it back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tfprof_nb as tp

from ..s3_server import FaultyProxy
from .conftest import step_markers


@pytest.fixture()
def s3_env(s3_server, monkeypatch, object_cache):
    """AWS_* variables pointing at the moto server through a proxy that counts downloads
    (TensorFlow, JAX and fsspec take credentials from the environment here)."""
    proxy = FaultyProxy(s3_server.port)
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
    yield proxy
    proxy.close()


def _listing(s3_server, prefix: str) -> dict[str, int]:
    import s3fs

    fs = s3fs.S3FileSystem(skip_instance_cache=True, **s3_server.options())
    return {k: v["size"] for k, v in fs.find(prefix, detail=True).items()}


def test_tensorflow_capture_into_s3(s3_server, s3_bucket, s3_env, object_cache, dataset,
                                    train_step):
    url = f"s3://{s3_bucket}/logs"
    with tp.Capture(steps=3, warmup=1, logdir=url, progress=False) as cap:
        for batch in cap.iterate(dataset):
            train_step(batch)
    assert cap.logdir == url
    run_url = cap.run_dir
    assert isinstance(run_url, str) and run_url.startswith(f"{url}/plugins/profile/")
    landed = _listing(s3_server, run_url[5:])
    hosts = [k for k in landed if k.endswith(".xplane.pb")]
    assert len(hosts) == 1 and landed[hosts[0]] > 1000
    assert cap.profile.source == [f"s3://{hosts[0]}"]
    assert step_markers(cap.profile) == [1, 2, 3]
    assert s3_env.gets == 0  # loaded from the cache the upload filled, nothing read back
    staging = Path(cap._window.session._local)
    assert not staging.exists()  # the local copy is gone
    again = tp.load(url)  # the newest run of the logdir, from the cache
    assert again.source == cap.profile.source and s3_env.gets == 0
    assert len(again.events) == len(cap.profile.events)


def test_runs_of_the_same_second_are_kept_apart(s3_server, s3_bucket, s3_env, object_cache,
                                                cpu_logdir):
    from tfprof_nb.xspace.upload import upload_run

    from ..conftest import xplane_files

    run = xplane_files(cpu_logdir)[0].parent
    url = f"s3://{s3_bucket}/logs"
    first, second = upload_run(run, url), upload_run(run, url)
    assert first == f"{url}/plugins/profile/{run.name}"
    assert second == f"{first}_1"
    assert tp.load(url).source[0].startswith(second + "/")


def test_refused_upload_keeps_the_local_run(s3_server, s3_bucket, s3_env, monkeypatch,
                                            object_cache, dataset, train_step):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", s3_server.nobody.key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", s3_server.nobody.secret)
    url = f"s3://{s3_bucket}/denied"
    denied = pytest.raises(tp.CaptureError, match=f"could not be written to {url}: .*access "
                                                  "denied.*It is kept in")
    with denied as info, tp.Capture(steps=2, warmup=0, logdir=url, progress=False) as cap:
        for batch in cap.iterate(dataset):
            train_step(batch)
    kept = Path(str(info.value).rsplit("It is kept in ", 1)[1])
    assert list(kept.glob("*.xplane.pb"))
    assert _listing(s3_server, s3_bucket) == {}


JAX_CELLS = """
import json, jax, jax.numpy as jnp
import tfprof_nb as tp

@jax.jit
def train_step(w, x):
    loss, grad = jax.value_and_grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    return w - 0.01 * grad, loss

w, x = jnp.ones((32, 32)), jnp.ones((64, 32))
"""


def test_magic_with_jax_writes_to_s3(s3_server, s3_bucket, s3_env, object_cache, tmp_path):
    """%%tfprof --logdir s3://... in a real kernel (the AWS_* variables are inherited), JAX's
    profiler, never TensorFlow."""
    from ..test_magic import _run, _text

    url = f"s3://{s3_bucket}/jaxlogs"
    magic = (f"%%tfprof --logdir {url} --steps 3 --warmup 1 --out prof --no-show\n"
             "with tp.Capture(progress=False) as cap:\n"
             "    for i in cap.iterate(range(10)):\n"
             "        w, loss = train_step(w, x)")
    report = ("import sys\n"
              "print(json.dumps({'source': prof.source, 'steps': prof.steps.index.tolist(),"
              " 'backend': cap.backend, 'tensorflow': 'tensorflow' in sys.modules}))")
    nb = _run(["%load_ext tfprof_nb", JAX_CELLS, magic, report], tmp_path)
    out = json.loads(_text(nb.cells[3]).strip().splitlines()[-1])
    assert out["backend"] == "jax" and out["tensorflow"] is False
    assert out["steps"] == [1, 2, 3]
    (source,) = out["source"]
    assert source.startswith(f"{url}/plugins/profile/") and source.endswith(".xplane.pb")
    assert source[5:] in _listing(s3_server, f"{s3_bucket}/jaxlogs")
