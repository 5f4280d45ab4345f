"""Certabo RFID boards (protocols.md §5).

* :mod:`drivers.certabo.codec`: pure line codec, calibration, majority filter, LED frames;
* :mod:`drivers.certabo.driver`: the asyncio driver (:class:`CertaboDriver`);
* :mod:`drivers.certabo.emulator`: a byte-level board on a pty.
"""

from drivers.certabo.driver import CertaboDriver, CertaboOptions, Options, create_driver

__all__ = ["CertaboDriver", "CertaboOptions", "Options", "create_driver"]
