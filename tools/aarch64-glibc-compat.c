/* Linked into the static aarch64 binary only (tools/aarch64-build).
 *
 * The binary is linked against Debian 12's glibc (2.36), so that it runs on
 * Raspberry Pi OS and Debian 12, not only on Debian unstable whose Swift
 * cross-builds it. Unstable's Swift runtime archives were compiled against
 * glibc 2.43's headers, which send strtol, strtoll and sscanf to their C23
 * versions (glibc 2.38 and later). C23 only adds 0b binary literals to them,
 * which nothing in the runtime parses; the classic functions stand in.
 * libdispatch also calls strlcpy, which glibc has had since 2.38 only. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long __isoc23_strtol(const char *text, char **end, int base) { return strtol(text, end, base); }

long long __isoc23_strtoll(const char *text, char **end, int base) { return strtoll(text, end, base); }

int __isoc23_sscanf(const char *text, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int matched = vsscanf(text, format, arguments);
    va_end(arguments);
    return matched;
}

size_t strlcpy(char *destination, const char *source, size_t size) {
    size_t length = strlen(source);
    if (size > 0) {
        size_t copied = length < size - 1 ? length : size - 1;
        memcpy(destination, source, copied);
        destination[copied] = '\0';
    }
    return length;
}
