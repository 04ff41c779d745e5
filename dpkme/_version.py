"""The single source of dpkme's version (read by ``pyproject.toml`` and stamped into every release's metadata).

Bump it together with an entry in ``CHANGELOG.md``.
"""

__version__ = "0.5.0"
