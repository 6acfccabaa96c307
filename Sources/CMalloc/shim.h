// glibc's allocator settings (mallopt, malloc_stats), which Swift's Glibc module does not import.
#include <malloc.h>
