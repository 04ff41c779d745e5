"""Deprecated: use :mod:`dpkme.reproduce` (this alias goes in the next release; see :mod:`dpkme._shim`)."""

from dpkme._shim import alias

alias(__name__, "dpkme.reproduce")
