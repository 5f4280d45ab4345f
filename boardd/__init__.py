"""boardd: electronic chess boards and clocks to the tournament hall, under the FIDE Laws."""

__version__ = "0.1.0"

__all__ = ["__version__"]
