"""Deprecated: use :mod:`dpkme.release.random_features` (this alias goes in the next release; see :mod:`dpkme._shim`)."""

from dpkme._shim import alias

alias(__name__, "dpkme.release.random_features")
