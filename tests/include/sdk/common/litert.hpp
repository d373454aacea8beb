// Compile-check stand-in for DIOPI diopi_test/diopi_stub/include/litert.hpp
// (DIOPI 02f03c6a): of that header, a vendor's conform_test.cpp uses only the
// diopiTensor class, whose copy assignment buildGeneratorState relies on. The
// real header also declares Storage and the sparse tensors and includes pybind11
// and DIOPI's function headers.
#pragma once

#include <conform_test.h>
#include <diopi/diopirt.h>

struct diopiTensor {
  diopiTensor() {}
  virtual ~diopiTensor() {}
  diopiTensor& operator=(const diopiTensor& other);
};
