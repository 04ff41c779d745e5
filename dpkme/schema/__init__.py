"""Declared schemas of mixed tables (the module is being split into a package; see dpkme.schema.table)."""

from __future__ import annotations

from .table import *  # noqa: F403
from .table import __all__, _applicable_fields  # noqa: F401
