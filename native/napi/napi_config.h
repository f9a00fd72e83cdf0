// The one include of napi.h for this folder, with the configuration every file must share.
#pragma once

// When a worker_thread or renderer is torn down while a call is settling, N-API can no longer
// throw into JS; swallow that instead of terminating the process.
#ifndef NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS
#define NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS
#endif
#include <napi.h>
