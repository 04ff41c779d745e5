"""Deprecated: use :mod:`dpkme.release.exponential` (this alias goes in the next release; see :mod:`dpkme._shim`)."""

from dpkme._shim import alias

alias(__name__, "dpkme.release.exponential")
