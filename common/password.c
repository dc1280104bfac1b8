/*
 * password: bcrypt via libxcrypt.  See password.h.
 */
#include "config.h"

#include "common/password.h"

#include <crypt.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

/* rbytes NULL: libxcrypt draws the salt's bytes from the OS. */
static int
hash_with(const char *pw, int cost, const unsigned char *rbytes, char out[PASSWORD_HASH_LEN])
{
    char salt[CRYPT_GENSALT_OUTPUT_SIZE];
    struct crypt_data *cd;
    int rc = -1;

    if (strlen(pw) > PASSWORD_MAX)
        return -1;
    if (!crypt_gensalt_rn("$2b$", (unsigned long)cost, (const char *)rbytes, rbytes ? 16 : 0, salt,
                          sizeof(salt)))
        return -1;
    cd = calloc(1, sizeof(*cd));
    if (!cd)
        return -1;
    if (crypt_rn(pw, salt, cd, sizeof(*cd)) && cd->output[0] == '$' &&
        strlen(cd->output) < PASSWORD_HASH_LEN) {
        strcpy(out, cd->output);
        rc = 0;
    }
    explicit_bzero(cd, sizeof(*cd));
    free(cd);
    return rc;
}

int
password_hash(const char *pw, int cost, char out[PASSWORD_HASH_LEN])
{
    return hash_with(pw, cost, NULL, out);
}

int
password_hash_salted(const char *pw, int cost, const unsigned char rbytes[16],
                     char out[PASSWORD_HASH_LEN])
{
    return hash_with(pw, cost, rbytes, out);
}

int
password_verify(const char *pw, const char *hash)
{
    struct crypt_data *cd;
    size_t n = strlen(hash);
    int ok = 0;

    if (strlen(pw) > PASSWORD_MAX || n == 0 || n >= CRYPT_OUTPUT_SIZE)
        return 0;
    cd = calloc(1, sizeof(*cd));
    if (!cd)
        return 0;
    if (crypt_rn(pw, hash, cd, sizeof(*cd)) && cd->output[0] == '$' && strlen(cd->output) == n)
        ok = CRYPTO_memcmp(cd->output, hash, n) == 0;
    explicit_bzero(cd, sizeof(*cd));
    free(cd);
    return ok;
}
