// strtod in the C locale whatever the process's locale, for reading the
// numbers of cascade files as OpenCV writes them (a '.' decimal point).
#include <locale.h>

// glibc's, declared only under _GNU_SOURCE, which would change the system headers'
// structures for this module alone.
extern double strtod_l(const char *restrict text, char **restrict end, locale_t locale);

/// The C locale (glibc hands out its static object for "C": nothing to free).
static inline locale_t sentry_c_locale(void) { return newlocale(LC_ALL_MASK, "C", (locale_t)0); }
