"""Deprecated: use :mod:`dpkme.privacy.calibration` (this alias goes in the next release; see :mod:`dpkme._shim`)."""

from dpkme._shim import alias

alias(__name__, "dpkme.privacy.calibration")
