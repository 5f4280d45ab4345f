"""The DGT 3000 clock on I²C, as on the DGT Pi (protocols.md §2).

* :mod:`drivers.dgt3000_i2c.codec`: pure packet codec (CRC-8, commands, Time/Button/Ack/Hello);
* :mod:`drivers.dgt3000_i2c.mapping`: pure mapping to :class:`boardd.core.events.ClockReading`;
* :mod:`drivers.dgt3000_i2c.bus`: the bus interface and the Raspberry Pi bus (extra ``i2c``, lazy);
* :mod:`drivers.dgt3000_i2c.driver`: the asyncio driver (:class:`Dgt3000Driver`);
* :mod:`drivers.dgt3000_i2c.emulator`: an emulated bus with the clock on it.
"""

from drivers.dgt3000_i2c.driver import Dgt3000Driver, Dgt3000Options, Options, create_driver

__all__ = ["Dgt3000Driver", "Dgt3000Options", "Options", "create_driver"]
