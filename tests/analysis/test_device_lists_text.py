"""Shardings as XLA prints them: our printer (:mod:`tfprof_nb.analysis.xla.device_lists_text`)
on OpSharding messages against XLA's own (jaxlib's ``HloSharding``), every kind the profiler's
HLO can carry; replica groups are checked against xprof in test_hlo_stats."""

from __future__ import annotations

from jax._src.lib import xla_client as xc

from tfprof_nb.analysis.xla.device_lists_text import sharding_text
from tfprof_nb.xspace.hlo_proto import _message_classes


def _sharding(kind, **fields):
    proto = xc.OpSharding()
    proto.type = kind
    for name, value in fields.items():
        setattr(proto, name, value)
    return proto


def _cases() -> list:
    t = xc.OpSharding.Type
    cases = [
        _sharding(t.REPLICATED), _sharding(t.MANUAL), _sharding(t.UNKNOWN),
        _sharding(t.MAXIMAL, tile_assignment_devices=[3]),
        _sharding(t.OTHER, tile_assignment_dimensions=[2, 1], tile_assignment_devices=[1, 0]),
        _sharding(t.OTHER, tile_assignment_dimensions=[4, 2], iota_reshape_dims=[2, 4],
                  iota_transpose_perm=[1, 0]),
        _sharding(t.OTHER, tile_assignment_dimensions=[8, 1], iota_reshape_dims=[8],
                  iota_transpose_perm=[0]),
        _sharding(t.OTHER, tile_assignment_dimensions=[2, 2],
                  tile_assignment_devices=[0, 1, 2, 3], replicate_on_last_tile_dim=True),
        _sharding(t.OTHER, tile_assignment_dimensions=[2, 2], iota_reshape_dims=[4],
                  iota_transpose_perm=[0], last_tile_dims=[t.MANUAL])]
    # a tuple long enough for XLA's index comment, and the one-element tuple of a callback
    cases.append(_sharding(t.TUPLE, tuple_shardings=cases[:7]))
    cases.append(_sharding(t.TUPLE, tuple_shardings=[cases[3]]))
    return cases


def test_shardings_are_written_as_xla_writes_them():
    ours = _message_classes()["OpSharding"]
    for case in _cases():
        theirs = str(xc.HloSharding.from_proto(case))
        parsed = ours()
        parsed.ParseFromString(case.SerializeToString())
        assert sharding_text(parsed) == theirs
    said = [str(xc.HloSharding.from_proto(c)) for c in _cases()]
    assert any("/*index=5*/" in s for s in said) and "{{maximal device=3}}" in said
