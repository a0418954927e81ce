/* Prelude of docs/embedding.md's C import: the tensor to import and the descriptor. */
#include <dlbridge/dlbridge_c.h>
#include <stddef.h>

static DLManagedTensorVersioned* t = NULL;
static dlb_descriptor* d = NULL;
