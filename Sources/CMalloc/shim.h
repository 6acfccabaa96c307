// glibc's allocator settings (mallopt, malloc_stats), which Swift's Glibc module does not import,
// and the process's transparent huge page switch.
#include <malloc.h>
#include <sys/prctl.h>

// prctl is variadic, which Swift cannot call: one fixed-argument wrapper per use.
static inline int CMalloc_setTransparentHugePagesDisabled(int disabled) { return prctl(PR_SET_THP_DISABLE, disabled, 0, 0, 0); }
static inline int CMalloc_transparentHugePagesDisabled(void) { return prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0); }
