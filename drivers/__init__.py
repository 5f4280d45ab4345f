"""Hardware drivers: one module per board family (codec + async transport + emulator)."""
