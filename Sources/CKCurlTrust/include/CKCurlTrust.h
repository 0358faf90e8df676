#ifndef CK_CURL_TRUST_H
#define CK_CURL_TRUST_H

/// Makes every libcurl handle created from now on trust the certificates in `path` alone
/// (NULL: the system's trust store, libcurl's default). The string is copied. Returns 0, or -1
/// where libcurl cannot be reached this way (not Linux).
int ck_curl_trust_only(const char *path);

#endif
