"""The wheels ``make wheels`` builds (``tools/build_wheels.py``): each one's native library is
cross-built by zig for its tag, and the checks of ``tools/wheel_checks.py`` (and auditwheel)
agree; the manylinux x86_64 wheel, installed with no C compiler anywhere, loads its own library
and analyses a real capture as the source checkout does.  (The aarch64 and macOS wheels are
only built and checked here: no machine of theirs runs these tests.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("ziglang")
pytest.importorskip("auditwheel")

from tfprof_nb._native import build as native_build  # noqa: E402
from tools import build_wheels  # noqa: E402
from tools.wheel_checks import (check_wheel, read_library, tag_problems,  # noqa: E402
                                wheel_library)

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "tests" / "data" / "jax_h200_nocmdbuf.xplane.pb"
EXPECTED = {  # target: (tags, format, arch)
    "manylinux2014_x86_64": ({"py3-none-manylinux_2_17_x86_64", "py3-none-manylinux2014_x86_64"},
                             "ELF", "x86_64"),
    "manylinux2014_aarch64": ({"py3-none-manylinux_2_17_aarch64",
                               "py3-none-manylinux2014_aarch64"}, "ELF", "aarch64"),
    "macosx_11_0_arm64": ({"py3-none-macosx_11_0_arm64"}, "Mach-O", "arm64"),
    "macosx_10_13_x86_64": ({"py3-none-macosx_10_13_x86_64"}, "Mach-O", "x86_64"),
}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, Path]:
    """The four wheels, built once for this module with zig's own cache, as ``make wheels``
    builds them (zig keys what it keeps by the sources and flags: an edited source is built
    again; a fresh machine builds everything, zig's C libraries for each target included)."""
    out = tmp_path_factory.mktemp("wheels")
    built = build_wheels.build(out, list(build_wheels.TARGETS), sdist=False)
    assert len(built) == len(build_wheels.TARGETS)
    return dict(zip(build_wheels.TARGETS, built))


def test_every_wheel_is_tagged_for_its_library(wheels):
    """Each wheel's tags are the ones its target names; its one library is the zig build for
    that target (the name's hash: sources, zig and the target) with a record naming it, and
    its headers agree with every tag (glibc <= 2.17, macOS minimum, CPU); auditwheel finds
    manylinux_2_17 for the Linux wheels; every wheel carries the widget bundles."""
    bundles = json.loads((ROOT / "tfprof_nb" / "static" / "bundles.json").read_text())
    for target, wheel in wheels.items():
        tags, fmt, arch = EXPECTED[target]
        report = check_wheel(wheel)
        assert report["problems"] == [], report
        assert set(report["tags"]) == tags and (report["format"], report["arch"]) == (fmt, arch)
        if fmt == "ELF":
            assert report["auditwheel"] == f"manylinux_2_17_{arch}"
            assert report["glibc"] <= (2, 17)
        else:
            assert report["macos"] == {"arm64": (11, 0), "x86_64": (10, 13)}[arch]
        toolchain = native_build.zig_toolchain(build_wheels.TARGETS[target].zig)
        name = f"tfprof_nb/_native/{native_build.library_name(toolchain=toolchain)}"
        assert report["library"] == name
        with zipfile.ZipFile(wheel) as zf:
            names = set(zf.namelist())
            record = json.loads(zf.read("tfprof_nb/_native/prebuilt.json"))
        assert record["library"] == Path(name).name
        assert record["sources"] == native_build.sources_hash()
        assert {f"tfprof_nb/static/{f}.js" for f in set(bundles["files"].values())} <= names
        assert "tfprof_nb/_native/walk.c" in names  # (to build elsewhere, edited)


def test_the_checks_refuse_a_library_the_tag_does_not_fit(wheels):
    """The same checks fail on a library for another CPU or OS, and on this machine's own
    build when its glibc is newer than 2.17 (what the wheels had before: linux_x86_64)."""
    x86 = read_library(wheel_library(wheels["manylinux2014_x86_64"])[1])
    arm_mac = read_library(wheel_library(wheels["macosx_11_0_arm64"])[1])
    assert tag_problems("manylinux2014_x86_64", x86) == []
    assert any("aarch64" in p for p in tag_problems("manylinux2014_aarch64", x86))
    assert tag_problems("macosx_11_0_x86_64", x86)  # an ELF file for macOS
    assert any("x86_64" in p or "arm64" in p for p in tag_problems("macosx_11_0_x86_64",
                                                                     arm_mac))
    assert any("macOS" in p for p in tag_problems("macosx_10_9_arm64", arm_mac))
    from tfprof_nb import _native

    host = read_library(Path(_native.lib()._name).read_bytes())
    if host.glibc > (2, 17):
        assert any("glibc" in p for p in tag_problems("manylinux_2_17_x86_64", host))


def test_elf_reader_agrees_with_pyelftools(wheels):
    """The versions the small ELF reader finds are pyelftools' (auditwheel's own reader)."""
    from elftools.elf.elffile import ELFFile
    from io import BytesIO

    for target in ("manylinux2014_x86_64", "manylinux2014_aarch64"):
        data = wheel_library(wheels[target])[1]
        section = ELFFile(BytesIO(data)).get_section_by_name(".gnu.version_r")
        theirs = {f"{need.name}:{aux.name}" for need, auxes in section.iter_versions()
                  for aux in auxes}
        assert set(read_library(data).needs) == theirs and theirs


def _clean_venv(where: Path, wheel: Path) -> Path:
    """A venv holding only the wheel (installed --no-deps); its dependencies come from this
    interpreter's site-packages through a .pth (whose own .pth files, the editable install's
    among them, are not read: the checkout's tfprof_nb is not on its path)."""
    venv.create(where, with_pip=False)
    python = where / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True, timeout=300)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path("
                           "'purelib'))"], capture_output=True, text=True, check=True)
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (Path(site.stdout.strip()) / "project_deps.pth").write_text("\n".join(ours) + "\n")
    return python


_ANALYSE = """
import sys, pathlib
import tfprof_nb as tp
from tfprof_nb import _native
prof = tp.load(sys.argv[1])
prof.hlo_stats.to_pickle(sys.argv[2])
print(tp.__file__)
print(_native.lib()._name)
print(sorted(p.name for p in pathlib.Path(_native.__file__).parent.glob("*.so")))
"""


def test_wheel_installed_without_a_compiler_analyses_a_capture(wheels, tmp_path):
    """The manylinux x86_64 wheel in a clean venv, no compiler on PATH and CC=/bin/false:
    tfprof_nb loads the wheel's own library (nothing built: the cache folder stays empty) and
    ``hlo_stats`` of a real capture equals the source checkout's."""
    python = _clean_venv(tmp_path / "venv", wheels["manylinux2014_x86_64"])
    empty_bin, cache = tmp_path / "bin", tmp_path / "cache"
    empty_bin.mkdir()
    env = {"PATH": f"{python.parent}{os.pathsep}{empty_bin}", "CC": "/bin/false",
           "HOME": str(tmp_path), "XDG_CACHE_HOME": str(cache),
           "TFPROF_NB_NATIVE_DIR": str(cache / "native"), "LANG": "C.UTF-8"}
    out = tmp_path / "hlo_stats.pkl"
    done = subprocess.run([str(python), "-c", _ANALYSE, str(CAPTURE), str(out)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    package, library, libraries = done.stdout.strip().split("\n")[-3:]
    assert Path(package).is_relative_to(tmp_path / "venv")
    name = native_build.library_name(toolchain=native_build.zig_toolchain(
        build_wheels.TARGETS["manylinux2014_x86_64"].zig))
    assert Path(library).name == name and Path(library).is_relative_to(tmp_path / "venv")
    assert libraries == repr([name])  # none built beside it
    assert not (cache / "native").exists() or not any((cache / "native").iterdir())

    import tfprof_nb as tp

    ours = tp.load(CAPTURE).hlo_stats
    assert len(ours) > 0
    pd.testing.assert_frame_equal(pd.read_pickle(out), ours)
