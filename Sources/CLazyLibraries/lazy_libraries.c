#include "CLazyLibraries.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

// Hidden, as the stubs are: camd links with -export-dynamic, and the libraries it opens must
// not find these in its symbol table.
#define HIDDEN __attribute__((visibility("hidden")))

HIDDEN void camd_lazy_open(camd_lazy_family *family) {
    void *handles[family->library_count];
    for (size_t i = 0; i < family->library_count; i++) {
        handles[i] = dlopen(family->libraries[i], RTLD_NOW | RTLD_LOCAL);
        if (handles[i] == NULL) {
            snprintf(family->failure, sizeof family->failure, "%s", dlerror());
            return;
        }
    }
    for (size_t n = 0; n < family->count; n++) {
        for (size_t i = 0; i < family->library_count && family->symbols[n] == NULL; i++)
            family->symbols[n] = dlsym(handles[i], family->names[n]);
        if (family->symbols[n] == NULL) {
            snprintf(family->failure, sizeof family->failure, "%s has no %s (was camd built against another version?)",
                     family->libraries[0], family->names[n]);
            return;
        }
    }
}

HIDDEN void *camd_lazy_symbol(const camd_lazy_family *family, const char *failed, size_t index) {
    if (failed != NULL) {
        // camd asks for the libraries before it first calls them and reports a failure as an
        // error; a call that comes anyway has nothing to jump to.
        fprintf(stderr, "camd: %s is needed but could not be loaded: %s\n", family->names[index], failed);
        abort();
    }
    return family->symbols[index];
}
