"""Tests of the benchmark helpers."""
