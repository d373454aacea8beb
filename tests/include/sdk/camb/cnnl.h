// Compile-check declarations of the Cambricon CNNL handle type (deeplink-gen tests).
#pragma once

extern "C" {
typedef enum { CNNL_STATUS_SUCCESS = 0 } cnnlStatus_t;
typedef struct cnnlContext* cnnlHandle_t;
}
