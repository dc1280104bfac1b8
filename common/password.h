/*
 * password: bcrypt hashing and checking through libxcrypt's thread-safe
 * calls (crypt_rn, crypt_gensalt_rn).  Slow on purpose (tens of ms at
 * cost 10): worker/bcrypt_pool.c runs these on helper threads.
 *
 * bcrypt reads at most 72 bytes of a password.  Rather than let two long
 * passwords that share their first 72 bytes collide silently, longer ones
 * are refused (PASSWORD_MAX); the API says so with a 422.
 */
#ifndef CONDUITD_PASSWORD_H
#define CONDUITD_PASSWORD_H

#include <stddef.h>

#define PASSWORD_MAX 72
#define PASSWORD_HASH_LEN 128

/* Hashes pw with a fresh random salt as "$2b$COST$...".  0 or -1. */
int password_hash(const char *pw, int cost, char out[PASSWORD_HASH_LEN]);

/*
 * The same with the salt made from the given bytes (16 of them) instead of
 * the OS's: the same bytes give the same hash.  For the seeder, whose one
 * hash of the published password must be the same at every run.
 */
int password_hash_salted(const char *pw, int cost, const unsigned char rbytes[16],
                         char out[PASSWORD_HASH_LEN]);

/* 1 if pw matches hash, 0 if not (or the hash is unusable). Constant time. */
int password_verify(const char *pw, const char *hash);

#endif
