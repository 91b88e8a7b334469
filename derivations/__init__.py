"""Runnable SymPy derivations of the closed forms (imported by the tests)."""
