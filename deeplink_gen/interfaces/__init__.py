"""The fixed outside interfaces, as data plus readers: torch's ATen op table
(through torchgen), DIOPI's operator prototypes, and DIPU's device and
communicator function table with its vendor table."""
