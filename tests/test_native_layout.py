"""The C code and Python share their table layouts through one definition: the checked-in
``layout.h`` is what ``tfprof_nb._native.layout`` generates, and the decoder reads columns by
those names."""

from __future__ import annotations

import re

import pytest

from tfprof_nb._native import layout
from tfprof_nb._native.kernels import N_TYPES
from tfprof_nb.xspace import KIND_NAMES


def test_header_is_generated_from_the_python_layout():
    assert layout.HEADER.read_text() == layout.header_text(), \
        "layout.h is stale: run `python -m tfprof_nb._native.layout`"


def test_c_sources_use_names_not_numbers():
    """The walker takes every table's width and columns from the header: it defines none of
    its own and indexes no row by a bare number."""
    wire = "\n".join((layout.HEADER.parent / name).read_text() for name in ("walk.c", "wire.h"))
    assert not re.findall(r"#define (\w+_COLS)", wire)
    for table, columns in layout.SMALL_TABLES.items():
        assert f"{table}_COLS" in wire
        assert f"{table}_{columns[0].upper()}" in wire
    assert not re.search(r"\b(?:P|L|M|SM|EX|CH|X)\[\d\]", wire)
    assert not re.search(r"_COLS \+ \d\]", wire)


def test_python_sides_agree():
    assert N_TYPES == layout.N_STEP_TYPES
    assert list(KIND_NAMES.values()) == list(layout.KINDS)
    assert layout.COLUMNS["L"].duration_ps == len(layout.SMALL_TABLES["L"]) - 1


# ---- the exported functions and the error codes: one source ---------------------------------

_EXPORTED = re.compile(r'__attribute__\(\(visibility\("default"\)\)\)\s*([^;{}()]*?)\b(tfp_\w+)'
                       r"\s*\(([^)]*)\)\s*\{")


def _c_definitions() -> dict[str, tuple[str, list[str]]]:
    """{function: (return type, [argument types])} of every EXPORT definition in the C
    sources, read from the preprocessor's output (so macro-made ones count too)."""
    import subprocess

    from tfprof_nb._native.build import SOURCE_DIR, _compiler

    found = {}
    for path in sorted(SOURCE_DIR.glob("*.c")):
        text = subprocess.run([*_compiler(), "-E", "-P", "-std=gnu99", str(path)], check=True,
                              capture_output=True, text=True).stdout
        for m in _EXPORTED.finditer(text):
            ret, name, args = m.groups()
            decl = f"{' '.join(ret.split())} {name}({' '.join(args.split())})"
            found.update(layout.prototypes(decl + ";"))
    return found


def test_c_definitions_match_the_declared_prototypes():
    """Every function the library exports is declared in layout.py with exactly its C types
    (the compiler also checks each definition against layout.h's prototype), and every
    declared one is defined."""
    defined, declared = _c_definitions(), layout.prototypes()
    assert len(declared) > 50
    assert sorted(defined) == sorted(declared)
    for name, proto in declared.items():
        assert defined[name] == proto, name


def test_library_exports_exactly_the_api_with_its_ctypes_signatures():
    import subprocess

    from tfprof_nb import _native

    lib = _native.lib()
    symbols = subprocess.run(["nm", "-D", "--defined-only", lib._name], check=True,
                             capture_output=True, text=True).stdout
    exported = {line.split()[-1] for line in symbols.splitlines() if " T " in line}
    assert exported == set(layout.prototypes())
    for name, (restype, argtypes) in layout.signatures().items():
        fn = getattr(lib, name)
        assert fn.restype == restype and fn.argtypes == argtypes, name


def test_prototype_types_become_ctypes():
    import ctypes

    sig = layout.signatures()
    assert sig["tfp_space_open"][0] is ctypes.c_void_p
    assert sig["tfp_tl_window"][1][5] is ctypes.c_double
    assert sig["tfp_code_gather_i32"][1][5] is ctypes.c_int32
    assert sig["tfp_join_free"] == (None, [ctypes.c_void_p])
    assert layout.prototypes("/* a.c */ const int8_t *tfp_f(void);") == \
        {"tfp_f": ("const int8_t *", [])}
    with pytest.raises(ValueError, match="not a prototype"):
        layout.prototypes("static int helper(void);")
    assert layout.signatures("void tfp_f(const int32_t *const p, void **h, int8_t k);") == \
        {"tfp_f": (None, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int8])}
    for bad in ("void tfp_f(int64_t info[4]);", "void tfp_f(double t[]);",
                "void tfp_f(void (*cb)(int));"):
        with pytest.raises(ValueError):
            layout.prototypes(bad)
    for unknown in ("void tfp_f(uint64_t n);", "float tfp_f(void);", "void tfp_f(const x);"):
        with pytest.raises(ValueError):
            layout.signatures(unknown)


def test_error_codes_are_defined_once():
    """The error codes are layout.py's: no C file or Python module numbers its own."""
    from tfprof_nb._native.build import SOURCE_DIR

    for path in SOURCE_DIR.glob("*.[ch]"):
        if path.name == "layout.h":
            continue
        text = path.read_text()
        assert not re.search(r"#define ERR_\w+|\bERR_\w+\s*=\s*-?\d", text), path.name
    package = SOURCE_DIR.parent
    for path in package.rglob("*.py"):
        if path.name == "layout.py":
            continue
        assert not re.search(r"\bERR_\w+\s*=\s*\(?-\d", path.read_text()), path
    codes = [code for _, code, _ in layout.ERRORS]
    assert len(set(codes)) == len(codes) and all(c < 0 for c in codes)
    assert layout.MESSAGES[layout.ERR.TOO_MANY_ROWS] == \
        "too many events for one host (limit 2^31)"
