"""DP review of the one orchestration core (dpkme.release.tabular.table_release, shared by release_table and
dpkme.distributed.release_table): every public argument is refused before any private row is read.

Finding (fixed): ``n_private="private"`` passed the row-count policy check (Algorithms 1 and 2 accept it under
add/remove), so the table release encoded every private row (on a cluster: read every partition) and only then
refused it ("n_private must be an integer"). Nothing was released, but the rows were read for a call that could
never run; the refusal now comes first, like every other bad public argument.
"""

from __future__ import annotations

import pytest

from dpkme.release.tabular import release_table
from dpkme.schema.table import TableSchema
from tests.support.adaptive import _schema, _table


@pytest.mark.parametrize(("neighbouring", "n_private", "match"), [
    ("add-remove", "private", "n_private must be an integer"),
    ("add-remove", None, "n_private"),
    ("add-remove", 0, "n_private"),
    ("replace-one", "private", "replace-one"),
    ("replace-one", "many", "n_private"),
])
def test_a_bad_row_count_is_refused_before_any_private_row_is_read(monkeypatch, neighbouring, n_private, match):
    reads: list[int] = []
    real = TableSchema.encode

    def spy(self, *args, **kwargs):
        reads.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TableSchema, "encode", spy)
    with pytest.raises(ValueError, match=match):
        release_table(_table(40, 1), schema=_schema(), epsilon=1.0, delta=1e-6, neighbouring=neighbouring,
                      n_private=n_private)
    assert not reads, "the private rows were read before a public argument was refused"
