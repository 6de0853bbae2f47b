// libpng's simplified API (Debian: libpng-dev): errors come back as return values, no setjmp.
#include <png.h>
