// The loader behind the stubs scripts/gen-lazy-stubs writes (CFFmpeg/lazy.c, CGStreamer/lazy.c):
// a family of shared libraries camd does not link but opens on first use (issue 16).
#include <pthread.h>
#include <stddef.h>

/// One family: the sonames to dlopen (searched in order for each function) and the functions
/// camd calls in them, all resolved the first time any is needed.
typedef struct {
    const char *const *libraries;
    size_t library_count;
    const char *const *names;
    void **symbols;
    size_t count;
    pthread_once_t once;
    char failure[512];  // why the family could not be loaded; empty if it was (or is not yet tried)
} camd_lazy_family;

/// Opens the family's libraries and resolves its functions; run once, through `pthread_once`.
void camd_lazy_open(camd_lazy_family *family);

/// Function `index` of a family `failed` says is loaded (NULL): a stub's call that comes
/// although loading failed has nothing to jump to, and aborts saying why.
void *camd_lazy_symbol(const camd_lazy_family *family, const char *failed, size_t index);
