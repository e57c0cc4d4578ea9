"""perfkit.hdrcodec writes the bytes hdrh writes and reads what hdrh writes."""

from __future__ import annotations

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

import perfkit
from perfkit import hdrcodec
from perfkit.histogram import HIGHEST_US, LatencyHistogram

FIXTURES = "tests/fixtures"


def _histograms():
    runs = perfkit.load(f"{FIXTURES}/wrk2") + perfkit.load(f"{FIXTURES}/locust")
    return [h for r in runs for h in (r.histogram, r.uncorrected_histogram) if h is not None]


def test_encoding_is_byte_for_byte_hdrhs_on_every_fixture_histogram():
    hists = _histograms()
    assert len(hists) > 60
    for h in hists:
        ours = hdrcodec.encode_sparse(h.bucket_indexes, h.bucket_counts)
        assert ours == h.hdr.encode().decode("ascii")
        back = HdrHistogram.decode(ours)
        assert back.get_total_count() == h.total_count


def test_decoding_hdrh_strings_gives_the_sparse_counts():
    for h in _histograms():
        idx, cnt = hdrcodec.decode_sparse(h.hdr.encode())
        assert np.array_equal(idx, h.bucket_indexes) and np.array_equal(cnt, h.bucket_counts)


@pytest.mark.parametrize("values", [[1], [HIGHEST_US], [1, 1, 2, 3000, 10**9],
                                    list(range(1, 5000, 7))])
def test_round_trip_of_edge_values_and_empty(values):
    h = LatencyHistogram.from_values_us(np.array(values))
    text = hdrcodec.encode_sparse(h.bucket_indexes, h.bucket_counts)
    assert text == h.hdr.encode().decode("ascii")
    idx, cnt = hdrcodec.decode_sparse(text)
    assert np.array_equal(idx, h.bucket_indexes) and np.array_equal(cnt, h.bucket_counts)
    empty = hdrcodec.encode_sparse(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert empty == LatencyHistogram().encode()
    assert [len(a) for a in hdrcodec.decode_sparse(empty)] == [0, 0]


def test_huge_counts_and_foreign_layouts_are_left_to_hdrh_and_damage_raises():
    h = HdrHistogram(1, HIGHEST_US, 3)
    h.record_value(100, 2**57)
    assert hdrcodec.decode_sparse(h.encode()) is None  # a 9-byte varint
    other = HdrHistogram(1, 1000, 2)
    other.record_value(5)
    assert hdrcodec.decode_sparse(other.encode()) is None
    with pytest.raises(ValueError):
        hdrcodec.decode_sparse("HISTFAAAAB...not base64")
