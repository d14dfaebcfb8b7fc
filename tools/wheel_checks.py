"""Checks that a wheel's native library is good for the platforms its tag names.

Read from the library's own headers (standard library only): an ELF library's machine and
the newest glibc symbol version it needs (its ``.gnu.version_r`` section lists every version
its undefined symbols ask for); a Mach-O library's CPU type and minimum macOS version (its
``LC_BUILD_VERSION`` or ``LC_VERSION_MIN_MACOSX`` load command).  Linux wheels are also shown
to ``auditwheel``, which must find the tag they carry.
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ELF_MACHINES = {62: "x86_64", 183: "aarch64"}  # e_machine: EM_X86_64, EM_AARCH64
MACHO_CPUS = {0x01000007: "x86_64", 0x0100000C: "arm64"}  # CPU_TYPE_X86_64, CPU_TYPE_ARM64
_SHT_GNU_VERNEED = 0x6FFFFFFE
_LC_BUILD_VERSION, _LC_VERSION_MIN_MACOSX, _PLATFORM_MACOS = 0x32, 0x24, 1


@dataclass
class Library:
    """What a compiled library says about where it runs."""

    format: str                      # "ELF" or "Mach-O"
    arch: str                        # x86_64, aarch64 (ELF), arm64 (Mach-O)
    glibc: tuple[int, int] | None = None     # newest GLIBC_x.y needed (ELF)
    macos: tuple[int, int] | None = None     # minimum macOS (Mach-O)
    needs: list[str] = field(default_factory=list)  # ELF: every version needed, by library


def _elf_sections(data: bytes) -> list[tuple[int, int, int, int]]:
    """(type, offset, size, link) of each section of a 64-bit little-endian ELF."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for i in range(shnum):
        base = shoff + i * shentsize
        sh_type, = struct.unpack_from("<I", data, base + 4)
        offset, size, link = struct.unpack_from("<QQI", data, base + 0x18)
        out.append((sh_type, offset, size, link))
    return out


def _cstr(data: bytes, at: int) -> str:
    return data[at:data.index(b"\0", at)].decode()


def read_elf(data: bytes) -> Library:
    """Machine and needed symbol versions of a 64-bit little-endian ELF library."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    machine, = struct.unpack_from("<H", data, 0x12)
    sections = _elf_sections(data)
    needs = []
    for sh_type, offset, _size, link in sections:
        if sh_type != _SHT_GNU_VERNEED:
            continue
        strtab = sections[link][1]
        entry = offset
        while True:  # Elf64_Verneed entries, each with its Elf64_Vernaux list
            _ver, count, file_at, aux, nxt = struct.unpack_from("<HHIII", data, entry)
            at = entry + aux
            for _ in range(count):
                _hash, _flags, _other, name_at, aux_next = struct.unpack_from("<IHHII", data, at)
                needs.append(f"{_cstr(data, strtab + file_at)}:{_cstr(data, strtab + name_at)}")
                at += aux_next
            if not nxt:
                break
            entry += nxt
    glibc = [tuple(map(int, m.groups())) for n in needs
             if (m := re.search(r":GLIBC_(\d+)\.(\d+)", n))]
    return Library("ELF", ELF_MACHINES.get(machine, f"e_machine {machine}"),
                   glibc=max(glibc) if glibc else None, needs=sorted(needs))


def read_macho(data: bytes) -> Library:
    """CPU type and minimum macOS version of a 64-bit Mach-O library."""
    magic, cputype, _sub, _ftype, ncmds = struct.unpack_from("<IIIII", data, 0)
    if magic != 0xFEEDFACF:
        raise ValueError("not a 64-bit little-endian Mach-O file")
    at, macos = 32, None
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, at)
        if cmd == _LC_BUILD_VERSION:
            platform, minos = struct.unpack_from("<II", data, at + 8)
            if platform == _PLATFORM_MACOS:
                macos = (minos >> 16, (minos >> 8) & 0xFF)
        elif cmd == _LC_VERSION_MIN_MACOSX:
            minos, = struct.unpack_from("<I", data, at + 8)
            macos = (minos >> 16, (minos >> 8) & 0xFF)
        at += size
    return Library("Mach-O", MACHO_CPUS.get(cputype, f"cputype {cputype:#x}"), macos=macos)


def read_library(data: bytes) -> Library:
    return read_elf(data) if data[:4] == b"\x7fELF" else read_macho(data)


def wheel_tags(wheel: Path) -> list[str]:
    """The ``Tag:`` lines of a wheel's WHEEL file."""
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/WHEEL"))
        text = zf.read(name).decode()
    return re.findall(r"^Tag: (\S+)$", text, flags=re.M)


def wheel_library(wheel: Path) -> tuple[str, bytes]:
    """The one compiled library in a wheel: its name and bytes."""
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.startswith("tfprof_nb/_native/lib")]
        return name, zf.read(name)


def tag_problems(platform: str, lib: Library) -> list[str]:
    """Why ``lib`` does not run everywhere the platform tag says (empty: it does)."""
    linux = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)|manylinux2014_(\w+)", platform)
    mac = re.fullmatch(r"macosx_(\d+)_(\d+)_(\w+)", platform)
    if linux:
        glibc, arch = ((2, 17), linux[4]) if linux[4] else ((int(linux[1]), int(linux[2])),
                                                            linux[3])
        problems = [] if lib.format == "ELF" else [f"{platform}: a {lib.format} library"]
        if lib.glibc is None or lib.glibc > glibc:
            problems.append(f"{platform}: needs glibc {lib.glibc}, newer than {glibc}")
    elif mac:
        macos, arch = (int(mac[1]), int(mac[2])), mac[3]
        problems = [] if lib.format == "Mach-O" else [f"{platform}: a {lib.format} library"]
        if lib.macos is None or lib.macos > macos:
            problems.append(f"{platform}: needs macOS {lib.macos}, newer than {macos}")
    else:
        return [f"{platform}: not a platform these checks know"]
    if lib.arch != arch:
        problems.append(f"{platform}: the library is for {lib.arch}")
    return problems


def auditwheel_tag(wheel: Path) -> str:
    """The platform tag ``auditwheel show`` finds the wheel consistent with."""
    done = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)],
                          capture_output=True, text=True, timeout=120)
    found = re.search(r'consistent\s+with\s+the\s+following\s+platform\s+tag:\s+"([^"]+)"',
                      done.stdout)
    if done.returncode != 0 or not found:
        raise RuntimeError(f"auditwheel show {wheel.name} failed:\n{done.stdout}{done.stderr}")
    return found.group(1)


def check_wheel(wheel: Path, auditwheel: bool = True) -> dict:
    """Check every tag of ``wheel`` against its library (and auditwheel's verdict on a Linux
    wheel); return what was read, ``problems`` listing what is wrong."""
    wheel = Path(wheel)
    name, data = wheel_library(wheel)
    lib = read_library(data)
    tags = wheel_tags(wheel)
    problems = [p for tag in tags for p in tag_problems(tag.split("-")[2], lib)]
    report = {"wheel": wheel.name, "library": name, "tags": tags, "format": lib.format,
              "arch": lib.arch, "glibc": lib.glibc, "macos": lib.macos, "problems": problems}
    if auditwheel and lib.format == "ELF":
        report["auditwheel"] = found = auditwheel_tag(wheel)
        platforms = {tag.split("-")[2] for tag in tags}
        if found not in platforms:
            problems.append(f"auditwheel show: {found}, not one of {sorted(platforms)}")
    return report
