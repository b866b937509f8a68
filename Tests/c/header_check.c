/* Compiled with -std=c99 -Wall -Wextra -pedantic -Werror: the header must stay clean. */
#include "netlayer.h"

int netlayer_header_check(void);
int netlayer_header_check(void) { return NL_ABI_VERSION + NL_VERSION_MAJOR; }
