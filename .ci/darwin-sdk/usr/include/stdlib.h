// Stand-in for the SDK's stdlib.h (see ../../README.md).
#ifndef STDLIB_STANDIN_H
#define STDLIB_STANDIN_H
#include <stddef.h>
char *getenv(const char *);
void *malloc(size_t);
void *calloc(size_t, size_t);
void *realloc(void *, size_t);
void free(void *);
#endif
