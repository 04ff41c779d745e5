"""Deprecated: use :mod:`dpkme.privacy.sensitivity` (this alias goes in the next release; see :mod:`dpkme._shim`)."""

from dpkme._shim import alias

alias(__name__, "dpkme.privacy.sensitivity")
