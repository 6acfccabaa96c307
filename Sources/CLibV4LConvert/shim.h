#include <stdio.h>
#include <libv4lconvert.h>
