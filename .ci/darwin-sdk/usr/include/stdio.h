// Stand-in for the SDK's stdio.h (see ../../README.md).
#ifndef STDIO_STANDIN_H
#define STDIO_STANDIN_H
#include <stddef.h>
int snprintf(char *__restrict, size_t, const char *__restrict, ...) __attribute__((__format__(__printf__, 3, 4)));
#endif
