"""Synthetic DGT captures shaped like real recordings (see :mod:`tests.drivers.captures.realistic`)."""
