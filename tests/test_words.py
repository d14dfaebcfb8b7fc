"""Counts in words (tfprof_nb._words): no message says "host(s)"."""

import tfprof_nb
from tfprof_nb._words import counted


def test_a_count_is_singular_only_for_one():
    assert counted(1, "host") == "1 host"
    assert counted(0, "step") == "0 steps"
    assert counted(2, "host file") == "2 host files"
    assert counted(1_234, "event") == "1,234 events"
    assert counted(3, "process", "processes") == "3 processes"


def test_no_message_in_the_package_says_a_plural_in_brackets():
    """Every count in a message goes through counted (or says its own plural): no "(s)"
    in an f-string of the package, but XProf's own name of a group of duplicate HLO ops in
    the op profile ("fusion.3 and its duplicate(s)", as its tree names the node)."""
    import re
    from pathlib import Path

    root = Path(tfprof_nb.__file__).parent
    said = [(str(p.relative_to(root)), line.strip()) for p in root.rglob("*.py")
            for line in p.read_text().splitlines()
            if re.search(r"""f["'].*[a-z]\(s\)[ "']""", line)]
    assert [where for where, _ in said] == ["analysis/xla/op_profile.py"], said
    assert "and its duplicate(s)" in said[0][1]


def test_the_monitors_schedule_is_said_in_words():
    """A schedule of one step every step after one warm-up step, at most one window: no
    '1 steps' (the monitor's status said '1 steps profiled every 1 steps after 1 warm-up
    steps')."""
    from tfprof_nb.capturing.monitor_schedule import Schedule

    one = Schedule(steps=1, warmup=1, every_steps=1, max_windows=1).describe()
    assert one == "1 step profiled every 1 step after 1 warm-up step, at most 1 window"
    many = Schedule(steps=5, warmup=0, every_steps=50, max_windows=3).describe()
    assert many == "5 steps profiled every 50 steps after 0 warm-up steps, at most 3 windows"
