"""A file's events are walked in chunks sized so that the threads finish together: at least
CHUNKS_PER_THREAD chunks a thread (never under MIN_CHUNK_BYTES, never over CHUNK_BYTES), and
the columns are the same however the file is cut."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tfprof_nb.xspace import decoder, read_xspace

from .reference import assert_same, canonical_from_ours, framed_count

FILE = Path(__file__).resolve().parents[1] / "data" / "jax_h200_transformer.xplane.pb"


def test_chunk_size_gives_each_thread_many_chunks(monkeypatch):
    mb = 1 << 20
    size = 35 * mb  # the benchmark's profile: 1.1 M events
    chunk = decoder.chunk_bytes(size, 2)
    assert decoder.MIN_CHUNK_BYTES <= chunk < decoder.CHUNK_BYTES
    assert size // chunk >= 2 * decoder.CHUNKS_PER_THREAD
    assert decoder.chunk_bytes(size, 64) == decoder.MIN_CHUNK_BYTES
    assert decoder.chunk_bytes(4 << 30, 2) == decoder.CHUNK_BYTES  # large files: as before
    monkeypatch.setattr(decoder, "CHUNK_BYTES", 512)  # (tests cut files finer still)
    assert decoder.chunk_bytes(size, 2) == 512


def _chunks(threads: int) -> int:
    return framed_count(FILE, threads, decoder.C_CHUNKS)


def test_columns_do_not_depend_on_the_cut(monkeypatch):
    monkeypatch.setattr(decoder, "MIN_CHUNK_BYTES", 1 << 40)
    monkeypatch.setattr(decoder, "CHUNK_BYTES", 1 << 40)
    whole = _chunks(2)  # a chunk a line
    space = read_xspace(FILE, threads=2)
    monkeypatch.setattr(decoder, "CHUNK_BYTES", 8 << 20)
    monkeypatch.setattr(decoder, "MIN_CHUNK_BYTES", 4096)  # (a 1.2 MB file: 36 KB chunks)
    assert _chunks(2) >= whole + 8  # the long lines cut
    again = read_xspace(FILE, threads=2)
    assert_same(canonical_from_ours(space), canonical_from_ours(again))
    for name in ("line", "metadata_row", "name_code", "start_ps", "duration_ps"):
        assert np.array_equal(getattr(space.events, name), getattr(again.events, name))
    for name in ("owner", "owner_kind", "name_code", "kind", "raw_value"):
        assert np.array_equal(getattr(space.stats, name), getattr(again.stats, name))
