"""The vendor runtime: DIPU's device/communicator interface as data, the
runtime and build sections of a vendor file (model, parsing, checks)."""
