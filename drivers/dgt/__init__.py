"""DGT e-boards (USB, serial, Bluetooth SPP) and the clocks on their jack (protocols.md §1).

* :mod:`drivers.dgt.codec`: pure framing, decoding and encoding of the byte protocol;
* :mod:`drivers.dgt.mapping`: pure mapping of messages to :mod:`boardd.core.events`;
* :mod:`drivers.dgt.driver`: the asyncio driver (:class:`DgtDriver`, a ``BoardDriver``);
* :mod:`drivers.dgt.emulator`: a byte-level board + clock on a pty, for tests and demos.
"""

from drivers.dgt.driver import DgtDriver, DgtOptions, Options, create_driver

__all__ = ["DgtDriver", "DgtOptions", "Options", "create_driver"]
