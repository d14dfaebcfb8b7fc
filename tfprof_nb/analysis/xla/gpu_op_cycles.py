"""Clock cycles per output element of XLA's GPU elementwise ops: the "sm_86" profile.

XLA's GPU cost analysis (which XProf runs on every GPU program, NVIDIA and AMD alike) counts
an elementwise op's FLOPs as these cycles times its output elements, looked up by opcode and
the OUTPUT element type; a pair missing here costs 3 per element.  XProf builds its analysis
without a device description, so XLA falls back to its default profile, "sm_86", whatever
GPU ran the program.

Data: the "sm_86" entries of XLA's measured op profiles (openxla/xla,
``xla/service/gpu/model/hlo_op_profiles_data.h`` at aef00636b355, Apache-2.0), as numbers;
checked against XProf 2.24.2's HLO stats on the real captures in ``tests/data``.
"""

from __future__ import annotations

__all__ = ["SM86_CYCLES", "DEFAULT_CYCLES", "cycles_per_element"]

DEFAULT_CYCLES = 3

# opcode -> {output element type: clock cycles per element}
SM86_CYCLES: dict[str, dict[str, int]] = {
    "add": {"f64": 97, "c128": 97},
    "atan2": {"f16": 482, "f32": 486, "f64": 3747, "c64": 5353, "c128": 39027},
    "cbrt": {"f16": 925, "f32": 867, "f64": 6339},
    "cosine": {"f16": 691, "f32": 662, "f64": 1717, "c128": 6613},
    "divide": {
        "s8": 370, "s16": 367, "s32": 306, "s64": 918, "u8": 306, "u16": 302, "u32": 115,
        "u64": 838, "f64": 2016, "c64": 687, "c128": 7941},
    "exponential": {"f16": 108, "f32": 86, "f64": 1652, "c64": 1360, "c128": 4028},
    "exponential-minus-one": {"f16": 396, "f32": 381, "f64": 1900, "c64": 1400, "c128": 4161},
    "log": {"f16": 266, "f32": 244, "f64": 608, "c64": 950, "c128": 7599},
    "log-plus-one": {"f16": 284, "f32": 262, "f64": 2073, "c64": 842, "c128": 6962},
    "logistic": {"f16": 226, "f32": 176, "f64": 2412},
    "multiply": {"f64": 97, "c128": 270},
    "power": {
        "s8": 392, "s16": 396, "s64": 601, "u8": 388, "u16": 399, "u64": 604, "f16": 975,
        "f32": 925, "f64": 5511, "c64": 3351, "c128": 18205},
    "rsqrt": {"f16": 97, "f32": 75, "f64": 698, "c64": 2383, "c128": 11318},
    "sine": {"f32": 662, "f64": 1789, "c128": 5878},
    "sqrt": {"f16": 97, "f32": 75, "f64": 986, "c64": 3193, "c128": 15606},
    "subtract": {"f64": 97, "c128": 97},
    "tanh": {"f16": 212, "f32": 190, "f64": 1609, "c128": 9939},
}


def cycles_per_element(opcode: str, element_type: str) -> int:
    """XLA's GPU FLOPs per output element of ``opcode`` producing ``element_type``."""
    return SM86_CYCLES.get(opcode, {}).get(element_type, DEFAULT_CYCLES)
