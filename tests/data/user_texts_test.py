"""Tests of triehh.data.user_texts: what the readers share."""

import pyarrow as pa

from triehh.data import user_texts


def test_chunk_buffers_handles_slices():
  arr = pa.array([b"ab", b"", b"cde", b"f"], pa.binary()).slice(1, 3)
  data, offsets = user_texts.chunk_buffers(arr)
  assert data.tobytes() == b"cdef"
  assert offsets.tolist() == [0, 0, 3, 4]
