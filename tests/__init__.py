"""dpkme's test suite: one folder per area of the package and the app (see CONTRIBUTING.md)."""
