// Compile-check stand-in: DIPU's vendorapi.h includes this ACL header; nothing of it is used.
#pragma once
#include <acl/acl.h>
