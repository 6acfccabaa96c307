#include <stdio.h>
#include <libv4lconvert.h>
#include <libv4l-plugin.h>
