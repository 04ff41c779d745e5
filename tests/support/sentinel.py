"""The one private-data sentinel of the suite: an array that fails any read after the noise is drawn."""

from __future__ import annotations

import numpy as np


# ------------------------------------------------------------------ post-processing never reads X
class _ReadAfterNoise(Exception):
    pass


class Sentinel:
    """Private data stand-in: readable until the noise is drawn, then every read raises."""

    def __init__(self, data):
        self._data = np.asarray(data)
        self.locked = False
        self.reads_after_lock = 0

    def _check(self):
        if self.locked:
            self.reads_after_lock += 1
            raise _ReadAfterNoise("private data read after the noise was added")

    @property
    def shape(self):
        self._check()
        return self._data.shape

    def __array__(self, dtype=None, copy=None):
        self._check()
        return np.array(self._data, dtype=dtype, copy=True)

    def __len__(self):
        self._check()
        return len(self._data)

    def __getitem__(self, item):
        self._check()
        return self._data[item]

    def __iter__(self):
        self._check()
        return iter(self._data)


