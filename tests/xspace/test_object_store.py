"""tp.load from object stores and web servers, against real servers on 127.0.0.1: moto's S3
server (IAM authentication on), a proxy in front of it that cuts or stalls downloads, Python's
HTTP server, and a Dask LocalCluster whose workers read their hosts from the bucket."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.xspace.stores import is_url

from ..conftest import xplane_files
from ..s3_server import Credential, FaultyProxy

RUN_OLD, RUN_NEW = "2024_01_01_00_00_00", "2024_02_01_00_00_00"


def _fs(s3_server, **options):
    import s3fs

    return s3fs.S3FileSystem(skip_instance_cache=True, **s3_server.options(**options))


@pytest.fixture()
def local_run(tmp_path, cpu_file, gpu_fixture_file) -> Path:
    """A two-host run on local disk: the reference for what the bucket holds."""
    run = tmp_path / "local" / "plugins" / "profile" / RUN_NEW
    run.mkdir(parents=True)
    shutil.copy(cpu_file, run / "worker-0.xplane.pb")
    shutil.copy(gpu_fixture_file, run / "worker-1.xplane.pb")
    return run


@pytest.fixture()
def s3_logdir(s3_server, s3_bucket, local_run, cpu_slowmap_logdir) -> str:
    """s3://<bucket>/logdir with an older one-host run and the newer two-host ``local_run``."""
    fs = _fs(s3_server)
    root = f"{s3_bucket}/logdir/plugins/profile"
    fs.put_file(str(xplane_files(cpu_slowmap_logdir)[0]), f"{root}/{RUN_OLD}/old.xplane.pb")
    for f in sorted(local_run.iterdir()):
        fs.put_file(str(f), f"{root}/{RUN_NEW}/{f.name}")
    return f"s3://{s3_bucket}/logdir"


def _cached(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


def _same_profile(remote, local) -> None:
    assert remote.hosts == local.hosts
    pd.testing.assert_frame_equal(remote.events, local.events)
    pd.testing.assert_frame_equal(remote.steps, local.steps)


def test_url_detection():
    assert is_url("s3://b/k") and is_url("gs://b") and is_url("https://h/x.xplane.pb")
    assert is_url("abfs://c/p") and not is_url("/tmp/x") and not is_url("logs/run")
    assert not is_url(Path("s3:/b"))


def test_logdir_on_s3_loads_the_newest_run_like_a_local_one(s3_server, s3_logdir, local_run,
                                                             object_cache):
    prof = tp.load(s3_logdir, storage_options=s3_server.options())
    assert prof.hosts == ["worker-0", "worker-1"]
    assert prof.source == [f"{s3_logdir}/plugins/profile/{RUN_NEW}/worker-{i}.xplane.pb"
                           for i in (0, 1)]
    _same_profile(prof, tp.load(local_run))
    from tfprof_nb.reporting.notebook import _source_of  # what a report notebook reloads

    assert _source_of(prof) == repr(f"{s3_logdir}/plugins/profile/{RUN_NEW}")
    assert len(_cached(object_cache)) == 2 and all(n.endswith(".xplane.pb")
                                                   for n in _cached(object_cache))


def test_run_dir_file_and_list_urls(s3_server, s3_logdir, object_cache):
    opts = s3_server.options()
    run = f"{s3_logdir}/plugins/profile/{RUN_NEW}"
    assert tp.load(run + "/", storage_options=opts).hosts == ["worker-0", "worker-1"]
    assert tp.load(f"{run}/worker-1.xplane.pb", storage_options=opts).hosts == ["worker-1"]
    both = tp.load([f"{run}/worker-0.xplane.pb", f"{s3_logdir}/plugins/profile/{RUN_OLD}"],
                   storage_options=opts)
    assert both.hosts == ["old", "worker-0"]


def test_second_load_reads_the_cache_and_a_new_version_is_fetched(s3_server, s3_logdir,
                                                                  object_cache, cpu_file):
    proxy = FaultyProxy(s3_server.port)
    try:
        opts = s3_server.options(endpoint=proxy.endpoint)
        first = tp.load(s3_logdir, storage_options=opts)
        assert proxy.gets >= 2  # both hosts downloaded
        gets, cached = proxy.gets, _cached(object_cache)
        second = tp.load(s3_logdir, storage_options=opts)
        assert proxy.gets == gets  # listed, not downloaded again
        assert _cached(object_cache) == cached
        _same_profile(second, first)
        # the object changes (a new ETag): fetched again, and the old copy leaves the cache
        _fs(s3_server).put_file(str(cpu_file), f"{s3_logdir[5:]}/plugins/profile/{RUN_NEW}/"
                                "worker-1.xplane.pb")
        third = tp.load(s3_logdir, storage_options=opts)
        assert proxy.gets > gets
        assert len(_cached(object_cache)) == 2 and _cached(object_cache) != cached
        assert len(third.spaces["worker-1"].events) == len(third.spaces["worker-0"].events)
    finally:
        proxy.close()


def test_environment_credentials_and_endpoint(s3_server, s3_logdir, monkeypatch, object_cache):
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    assert tp.load(s3_logdir).hosts == ["worker-0", "worker-1"]


def test_missing_bucket_and_prefix(s3_server, s3_bucket, object_cache):
    opts = s3_server.options()
    with pytest.raises(FileNotFoundError, match=r"s3://no-such-bucket-here/logdir: bucket "
                                                r"does not exist"):
        tp.load("s3://no-such-bucket-here/logdir", storage_options=opts)
    with pytest.raises(FileNotFoundError, match=f"s3://{s3_bucket}/nothing: no such object"):
        tp.load(f"s3://{s3_bucket}/nothing", storage_options=opts)
    _fs(s3_server).pipe(f"{s3_bucket}/empty/README.txt", b"not a profile")
    with pytest.raises(tp.ProfileFormatError, match=f"s3://{s3_bucket}/empty: holds no "
                                                    "profile"):
        tp.load(f"s3://{s3_bucket}/empty", storage_options=opts)


@pytest.mark.parametrize("who", ["no permission", "unknown key"])
def test_denied_credential(s3_server, s3_logdir, object_cache, who):
    cred = s3_server.nobody if who == "no permission" else Credential("AKIAUNKNOWN", "wrong")
    t0 = time.monotonic()
    with pytest.raises(PermissionError, match=f"{s3_logdir}: access denied"):
        tp.load(s3_logdir, storage_options=s3_server.options(cred))
    assert time.monotonic() - t0 < 30
    assert _cached(object_cache) == []


def test_truncated_object_names_the_url_and_is_not_kept(s3_server, s3_bucket, gpu_fixture_file,
                                                        object_cache):
    data = gpu_fixture_file.read_bytes()
    _fs(s3_server).pipe(f"{s3_bucket}/run/cut.xplane.pb", data[: len(data) // 2])
    url = f"s3://{s3_bucket}/run/cut.xplane.pb"
    with pytest.raises(tp.ProfileFormatError, match=rf"^{url}: .*truncated") as info:
        tp.load(url, storage_options=s3_server.options(), on_error="raise")
    assert info.value.path == url
    assert _cached(object_cache) == []
    with pytest.raises(tp.ProfileFormatError, match=f"no host could be read.*{url}"):
        tp.load(f"s3://{s3_bucket}/run", storage_options=s3_server.options())


def test_connection_dropped_mid_read(s3_server, s3_logdir, object_cache):
    proxy = FaultyProxy(s3_server.port, mode="drop")
    try:
        opts = s3_server.options(endpoint=proxy.endpoint)
        t0 = time.monotonic()
        with pytest.raises(tp.ObjectStoreError, match=rf"{s3_logdir}/plugins/profile/"
                           rf"{RUN_NEW}/worker-\d\.xplane\.pb: failed while downloading") as info:
            tp.load(s3_logdir, storage_options=opts, on_error="raise")
        assert "payload is not completed" in str(info.value)
        assert time.monotonic() - t0 < 60
        assert proxy.gets >= 1
        assert _cached(object_cache) == []  # no partial file, no temporary file left
        with pytest.raises(tp.ProfileFormatError, match="no host could be read") as info:
            tp.load(s3_logdir, storage_options=opts)
        for host in ("worker-0", "worker-1"):  # each host's error names its URL
            assert f"{host}: {s3_logdir}/plugins/profile/{RUN_NEW}/{host}.xplane.pb: " \
                "failed while downloading it" in str(info.value)
        # the cache is off: read into memory, and the drop is reported the same way
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TFPROF_NB_CACHE", "0")
            with pytest.raises(tp.ObjectStoreError, match="failed while reading"):
                tp.load(f"{s3_logdir}/plugins/profile/{RUN_NEW}/worker-0.xplane.pb",
                        storage_options=opts, on_error="raise")
    finally:
        proxy.close()
    assert _cached(object_cache) == []


def test_stalled_server_times_out(s3_server, s3_logdir, object_cache):
    proxy = FaultyProxy(s3_server.port, mode="stall")
    try:
        opts = s3_server.options(endpoint=proxy.endpoint, config_kwargs={"read_timeout": 1})
        url = f"{s3_logdir}/plugins/profile/{RUN_NEW}/worker-1.xplane.pb"
        for cache, doing in (("1", "downloading it"), ("0", "reading bytes")):
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("TFPROF_NB_CACHE", cache)
                t0 = time.monotonic()
                with pytest.raises(tp.ObjectStoreError, match=f"{url}: timed out while {doing}"):
                    tp.load(url, storage_options=opts, on_error="raise")
                assert time.monotonic() - t0 < 30
    finally:
        proxy.close()
    assert _cached(object_cache) == []


def test_cache_off_and_budget(s3_server, s3_logdir, local_run, object_cache, monkeypatch):
    opts = s3_server.options()
    reference = tp.load(local_run)
    monkeypatch.setenv("TFPROF_NB_CACHE", "0")
    _same_profile(tp.load(s3_logdir, storage_options=opts), reference)
    assert _cached(object_cache) == []
    monkeypatch.delenv("TFPROF_NB_CACHE")
    sizes = sorted(f.stat().st_size for f in local_run.iterdir())
    monkeypatch.setenv("TFPROF_NB_CACHE_MAX_GB", str(sizes[0] / 2 / 2**30))  # fits neither
    _same_profile(tp.load(s3_logdir, storage_options=opts), reference)
    assert _cached(object_cache) == []
    # room for the larger host alone: the least recently used one is evicted
    monkeypatch.setenv("TFPROF_NB_CACHE_MAX_GB", str(sizes[1] * 1.01 / 2**30))
    tp.load(s3_logdir, storage_options=opts, parallel=False)
    assert len(_cached(object_cache)) == 1
    from tfprof_nb.xspace.cache import clear_cache

    assert clear_cache() > 0 and _cached(object_cache) == []


@pytest.fixture()
def web_root(tmp_path, local_run):
    """Python's HTTP server on 127.0.0.1 serving a logdir (with index pages)."""
    root = tmp_path / "www"
    shutil.copytree(local_run.parent.parent.parent, root / "logdir")
    handler = partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join(5)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_https_form_on_a_web_server(web_root, local_run, object_cache):
    base = f"http://127.0.0.1:{web_root}/logdir"
    reference = tp.load(local_run)
    _same_profile(tp.load(base + "/"), reference)  # index pages followed to the newest run
    files = [f"{base}/plugins/profile/{RUN_NEW}/worker-{i}.xplane.pb" for i in (0, 1)]
    _same_profile(tp.load(files), reference)
    assert len(_cached(object_cache)) == 2  # versioned by Last-Modified and size
    with pytest.raises(FileNotFoundError, match=f"{base}/missing.xplane.pb: no such object"):
        tp.load(f"{base}/missing.xplane.pb")
    proxy = FaultyProxy(web_root, mode="drop")
    try:
        url = f"{proxy.endpoint}/logdir/plugins/profile/{RUN_NEW}/worker-1.xplane.pb"
        with pytest.raises(tp.ObjectStoreError, match=f"{url}: failed while downloading it"):
            tp.load(url, on_error="raise")
    finally:
        proxy.close()
    assert len(_cached(object_cache)) == 2


def test_unreachable_server_and_unknown_protocol(object_cache):
    from ..conftest import free_port

    url = f"http://127.0.0.1:{free_port()}/run/host.xplane.pb"
    t0 = time.monotonic()
    with pytest.raises(tp.ObjectStoreError, match=f"{url}: failed while looking it up: "
                                                  "Cannot connect"):
        tp.load(url)
    assert time.monotonic() - t0 < 30
    with pytest.raises(ValueError, match="nosuchproto://x/y"):
        tp.load("nosuchproto://x/y")
    with pytest.raises(ValueError, match="simplecache::s3://b/k: chained fsspec URLs are not"):
        tp.load("simplecache::s3://b/k")


def test_pod_on_dask_workers_reads_from_the_bucket(s3_server, s3_logdir, local_run,
                                                   tmp_path, monkeypatch, object_cache):
    """The workers get URLs, not local files: each reads its host from the bucket into its
    own cache; nothing is downloaded in the client process."""
    distributed = pytest.importorskip("distributed")
    worker_cache = tmp_path / "worker_cache"
    monkeypatch.setenv("TFPROF_NB_CACHE_DIR", str(worker_cache))  # inherited by the workers
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    try:
        with distributed.Client(cluster) as client:
            monkeypatch.setenv("TFPROF_NB_CACHE_DIR", str(object_cache))
            prof = tp.load(s3_logdir, client=client, timeout=120,
                           storage_options=s3_server.options())
            assert not prof.spaces._fetched
            local = tp.load(local_run)
            pd.testing.assert_frame_equal(prof.steps, local.steps)
            pd.testing.assert_frame_equal(prof.op_stats, local.op_stats)
            assert len(_cached(worker_cache)) == 2
            assert _cached(object_cache) == []
    finally:
        cluster.close()


GCS_SCRIPT = """
import json, sys
import gcsfs
import tfprof_nb as tp

endpoint, logdir = sys.argv[1], sys.argv[2]
opts = {"endpoint_url": endpoint, "token": "anon", "project": "test"}
fs = gcsfs.GCSFileSystem(skip_instance_cache=True, **opts)
fs.mkdir("profiles")
for f in sorted(__import__("pathlib").Path(logdir).rglob("*.xplane.pb")):
    fs.put_file(str(f), "profiles/logdir/" + f.relative_to(logdir).as_posix())
prof = tp.load("gs://profiles/logdir", storage_options=opts)
again = tp.load("gs://profiles/logdir", storage_options=opts)
try:
    tp.load("gs://profiles/nothing", storage_options=opts)
except FileNotFoundError as exc:
    missing = str(exc)
print(json.dumps({"hosts": prof.hosts, "source": prof.source, "events": len(prof.events),
                  "again": len(again.events), "missing": missing}))
"""


def test_gs_form_on_a_gcs_emulator(tmp_path, local_run, object_cache):
    """gs:// through gcsfs against a GCS emulator on 127.0.0.1, in a child process: gcsfs's
    experimental bucket-type probe (gRPC, on by default) is switched off there, since an
    emulator has no control plane to answer it."""
    from ..conftest import free_port
    from ..s3_server import wait_for_port

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "gcp_storage_emulator", "start",
                               "--host", "127.0.0.1", "--port", str(port), "--in-memory"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, 60)
        env = dict(os.environ, GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT="false")
        done = subprocess.run([sys.executable, "-c", GCS_SCRIPT, f"http://127.0.0.1:{port}",
                               str(local_run.parent.parent.parent)], env=env,
                              capture_output=True, text=True, timeout=240, check=False)
    finally:
        server.terminate()
        server.wait(10)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    local = tp.load(local_run)
    assert out["hosts"] == local.hosts
    assert out["source"] == [f"gs://profiles/logdir/plugins/profile/{RUN_NEW}/{h}.xplane.pb"
                             for h in local.hosts]
    assert out["events"] == out["again"] == len(local.events)
    assert out["missing"].startswith("gs://profiles/nothing: no such object")
    assert len(_cached(object_cache)) == 2  # the child inherited TFPROF_NB_CACHE_DIR
