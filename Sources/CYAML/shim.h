/* libyaml (Debian's libyaml-dev), the C YAML parser that Yams also wraps; Netlayer reads
 * YAML OpenAPI documents with its event API. Used as a system library so that the
 * C library's build resolves no Swift package. */
#ifndef NETLAYER_CYAML_SHIM_H
#define NETLAYER_CYAML_SHIM_H
#include <yaml.h>
#endif
