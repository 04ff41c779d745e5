"""Helpers shared by the test modules (imported as ``tests.support.<module>``; no tests here)."""
