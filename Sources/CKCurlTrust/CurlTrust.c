// URLSession on Linux runs on libcurl and offers no way to choose the certificates it trusts:
// it never reads SSL_CERT_FILE (libcurl sets its compiled-in CA bundle, which OpenSSL then uses
// instead of the environment's), and swift-corelibs-foundation reads its own variable for a CA
// bundle on Android only. So the helper wraps libcurl's curl_easy_init: every handle URLSession
// creates gets CURLOPT_CAINFO set to the chosen file and CURLOPT_CAPATH cleared, before
// URLSession configures it (it then sees a CA file set and leaves it). Verification itself is
// never touched. Written in C because curl_easy_setopt is variadic, which Swift cannot call.
#if defined(__linux__)
#define _GNU_SOURCE  // RTLD_NEXT
#endif
#include "CKCurlTrust.h"

#if defined(__linux__)
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// libcurl's option numbers, fixed by its ABI (curl.h: CURLOPTTYPE_STRINGPOINT + 65 and + 97).
enum { CK_CURLOPT_CAINFO = 10065, CK_CURLOPT_CAPATH = 10097 };

typedef void *(*ck_easy_init_fn)(void);
typedef int (*ck_easy_setopt_fn)(void *, int, ...);

static char *trusted_file;

int ck_curl_trust_only(const char *path) {
    char *copy = path ? strdup(path) : NULL;
    if (path && !copy) return -1;
    free(trusted_file);
    trusted_file = copy;
    return 0;
}

// The executable's definition takes the place of libcurl's for every caller, URLSession
// included; the real one is the next in the lookup order.
void *curl_easy_init(void) {
    static ck_easy_init_fn real_init;
    static ck_easy_setopt_fn real_setopt;
    if (!real_init) {
        real_init = (ck_easy_init_fn)dlsym(RTLD_NEXT, "curl_easy_init");
        real_setopt = (ck_easy_setopt_fn)dlsym(RTLD_NEXT, "curl_easy_setopt");
        if (!real_init) return NULL;
    }
    void *handle = real_init();
    if (handle && trusted_file) {
        // Should either fail, the handle would trust the system's store: a test CA is then
        // refused, never a certificate accepted that should not be.
        if (real_setopt) {
            real_setopt(handle, CK_CURLOPT_CAINFO, trusted_file);
            real_setopt(handle, CK_CURLOPT_CAPATH, (char *)NULL);
        }
    }
    return handle;
}

#else

int ck_curl_trust_only(const char *path) { return path ? -1 : 0; }

#endif
