"""Benchmarks: python -m bench runs them all; each module also runs alone."""
