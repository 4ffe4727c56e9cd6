// Stand-in for the SDK's string.h (see ../../README.md).
#ifndef STRING_STANDIN_H
#define STRING_STANDIN_H
#include <stddef.h>
void *memcpy(void *__restrict, const void *__restrict, size_t);
int memcmp(const void *, const void *, size_t);
size_t strlen(const char *);
#endif
