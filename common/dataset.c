/*
 * dataset: see dataset.h.  The word lists below are part of the scheme:
 * editing one renames every seeded user, article or tag, so a database
 * seeded before the edit no longer matches what the load generator asks
 * for.  Append nothing, reorder nothing, without reseeding.
 */
#include "config.h"

#include "common/dataset.h"

#include <stdio.h>
#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const first_names[] = {
    "maya",  "liam",  "sofia", "noah",  "amara",  "ethan", "yuki",  "omar",   "elena",  "lucas",
    "priya", "mateo", "chloe", "ravi",  "ingrid", "kofi",  "hana",  "felix",  "zara",   "diego",
    "leila", "oscar", "mei",   "jonas", "nadia",  "hugo",  "aisha", "tomas",  "freya",  "kenji",
    "lucia", "samir", "grace", "ivan",  "nora",   "arjun", "emma",  "pablo",  "sara",   "theo",
    "anika", "leo",   "iris",  "malik", "clara",  "aleks", "rosa",  "daniel", "fatima", "jin",
    "olga",  "marco", "ruth",  "tariq", "alice",  "bruno", "nina",  "sven",   "laila",  "carlos",
    "vera",  "ahmed", "julia", "emil",
};

static const char *const last_names[] = {
    "okafor",    "smith",    "tanaka", "garcia", "novak",   "haddad",  "kim",      "rossi",
    "muller",    "silva",    "nguyen", "patel",  "ivanova", "cohen",   "larsen",   "mensah",
    "dubois",    "kowalski", "santos", "yilmaz", "fischer", "moreau",  "nakamura", "ali",
    "bauer",     "costa",    "hansen", "lopez",  "wong",    "schmidt", "osei",     "brown",
    "petrov",    "jensen",   "martin", "sato",   "khan",    "ferrari", "nowak",    "reyes",
    "lindqvist", "adeyemi",  "horvat", "park",   "weber",   "romero",  "chen",     "obi",
    "andersen",  "moretti",  "kaya",   "duarte", "ito",     "walker",  "popescu",  "salazar",
    "berg",      "farah",    "keller", "rahman", "olsen",   "vargas",  "suzuki",   "quinn",
};

static const char *const title_words[] = {
    "understanding", "building",   "scaling",    "testing",    "debugging",
    "designing",     "learning",   "writing",    "running",    "measuring",
    "shipping",      "rethinking", "simple",     "fast",       "reliable",
    "modern",        "practical",  "hidden",     "small",      "large",
    "distributed",   "concurrent", "secure",     "lazy",       "servers",
    "databases",     "queries",    "indexes",    "caches",     "threads",
    "processes",     "sockets",    "protocols",  "compilers",  "interfaces",
    "pipelines",     "workers",    "schedulers", "allocators", "parsers",
    "networks",      "kernels",    "in",         "with",       "without",
    "for",           "beyond",     "under",      "practice",   "production",
    "depth",         "ten",        "minutes",    "steps",      "a",
    "the",           "every",      "your",       "our",        "one",
    "lessons",       "notes",      "patterns",   "mistakes",   "tricks",
    "myths",         "on",         "about",      "from",       "after",
    "before",        "through",    "postgres",   "linux",      "http",
    "json",          "c",          "rust",       "go",         "python",
    "java",          "latency",    "throughput", "memory",     "garden",
    "coffee",        "travel",     "music",      "books",      "cities",
    "weekend",       "morning",    "winter",     "summer",     "mountains",
    "rivers",        "why",        "how",        "when",       "what",
    "where",         "who",        "really",     "quietly",    "finally",
    "slowly",        "carefully",  "again",
};

/* 200 distinct tag names (dataset.h: DATASET_TAGS). */
static const char *const tag_names[] = {
    "programming",
    "javascript",
    "python",
    "rust",
    "golang",
    "java",
    "c",
    "cpp",
    "haskell",
    "elixir",
    "ruby",
    "php",
    "typescript",
    "kotlin",
    "swift",
    "scala",
    "clojure",
    "erlang",
    "ocaml",
    "zig",
    "lua",
    "perl",
    "r",
    "julia",
    "sql",
    "postgres",
    "mysql",
    "sqlite",
    "redis",
    "mongodb",
    "kafka",
    "rabbitmq",
    "nginx",
    "apache",
    "linux",
    "bsd",
    "windows",
    "macos",
    "android",
    "ios",
    "web",
    "css",
    "html",
    "react",
    "vue",
    "svelte",
    "angular",
    "node",
    "wasm",
    "graphql",
    "rest",
    "grpc",
    "http",
    "tcp",
    "dns",
    "tls",
    "security",
    "cryptography",
    "privacy",
    "devops",
    "docker",
    "kubernetes",
    "terraform",
    "ansible",
    "cloud",
    "aws",
    "serverless",
    "microservices",
    "architecture",
    "design",
    "testing",
    "tdd",
    "debugging",
    "profiling",
    "performance",
    "benchmarks",
    "concurrency",
    "parallelism",
    "async",
    "threads",
    "memory",
    "garbage-collection",
    "compilers",
    "interpreters",
    "parsing",
    "types",
    "functional",
    "oop",
    "algorithms",
    "data-structures",
    "math",
    "statistics",
    "machine-learning",
    "ai",
    "robotics",
    "iot",
    "embedded",
    "hardware",
    "fpga",
    "networking",
    "distributed-systems",
    "databases",
    "storage",
    "filesystems",
    "kernels",
    "virtualization",
    "observability",
    "logging",
    "metrics",
    "tracing",
    "monitoring",
    "sre",
    "incidents",
    "postmortems",
    "career",
    "interviews",
    "management",
    "leadership",
    "remote-work",
    "productivity",
    "startups",
    "open-source",
    "licensing",
    "community",
    "education",
    "books",
    "writing",
    "documentation",
    "api",
    "ux",
    "accessibility",
    "i18n",
    "mobile",
    "games",
    "graphics",
    "audio",
    "video",
    "streaming",
    "blockchain",
    "fintech",
    "ecommerce",
    "marketing",
    "seo",
    "analytics",
    "data-engineering",
    "spark",
    "search",
    "elasticsearch",
    "caching",
    "cdn",
    "load-balancing",
    "scaling",
    "reliability",
    "chaos",
    "backups",
    "migrations",
    "refactoring",
    "legacy",
    "code-review",
    "git",
    "ci",
    "build-systems",
    "cmake",
    "bazel",
    "vim",
    "emacs",
    "vscode",
    "terminal",
    "shell",
    "bash",
    "regex",
    "unicode",
    "time",
    "json",
    "xml",
    "yaml",
    "protobuf",
    "compression",
    "travel",
    "food",
    "coffee",
    "music",
    "photography",
    "design-systems",
    "history",
    "philosophy",
    "science",
    "space",
    "climate",
    "energy",
    "health",
    "fitness",
    "gardening",
    "diy",
    "parenting",
    "personal",
    "opinion",
    "tutorial",
    "news",
    "review",
};

_Static_assert(NELEM(tag_names) == DATASET_TAGS, "the tag vocabulary has DATASET_TAGS names");

int
dataset_init(struct dataset *d, double scale, uint64_t seed)
{
    if (!(scale > 0 && scale <= 100))
        return -1;
    memset(d, 0, sizeof(*d));
    d->scale = scale;
    d->seed = seed;
    /* Rounded to the nearest row; never an empty table. */
#define SIZE(n) ((int64_t)((n)*scale + 0.5) > 0 ? (int64_t)((n)*scale + 0.5) : 1)
    d->users = SIZE(100000.0);
    d->articles = SIZE(500000.0);
    d->favorites = SIZE(5000000.0);
    d->comments = SIZE(2500000.0);
    d->follows = SIZE(2000000.0);
#undef SIZE
    d->tags = DATASET_TAGS;
    return 0;
}

static uint64_t
splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t
dataset_hash(uint64_t seed, uint64_t stream, uint64_t i)
{
    return splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ i);
}

/* snprintf's length, or 0 when it did not fit (or failed). */
static size_t
fits(int n, size_t cap)
{
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

size_t
dataset_username(const struct dataset *d, int64_t user, char *out, size_t cap)
{
    uint64_t h;

    if (user < 1 || user > d->users)
        return 0;
    h = dataset_hash(d->seed, DATASET_STREAM_USERNAME, (uint64_t)user);
    return fits(snprintf(out, cap, "%s_%s%lld", first_names[h % NELEM(first_names)],
                         last_names[(h >> 16) % NELEM(last_names)], (long long)user),
                cap);
}

size_t
dataset_email(const struct dataset *d, int64_t user, char *out, size_t cap)
{
    char name[DATASET_NAME_MAX];

    if (!dataset_username(d, user, name, sizeof(name)))
        return 0;
    return fits(snprintf(out, cap, "%s@example.org", name), cap);
}

size_t
dataset_title(const struct dataset *d, int64_t article, char *out, size_t cap)
{
    uint64_t h;
    size_t len = 0;
    int words;

    if (article < 1 || article > d->articles || cap < DATASET_TITLE_MAX)
        return 0;
    h = dataset_hash(d->seed, DATASET_STREAM_TITLE, (uint64_t)article);
    words = 3 + (int)(h % 5);
    h /= 5;
    for (int k = 0; k < words; k++) {
        /* 7 bits a word: 7 words use 49 of the 61 bits left. */
        const char *w = title_words[(h & 0x7f) % NELEM(title_words)];
        h >>= 7;
        len += (size_t)snprintf(out + len, cap - len, "%s%s", k ? " " : "", w);
    }
    if (out[0] >= 'a' && out[0] <= 'z')
        out[0] = (char)(out[0] - 'a' + 'A');
    return len;
}

size_t
dataset_slug(const struct dataset *d, int64_t article, char *out, size_t cap)
{
    char title[DATASET_TITLE_MAX], base[SLUG_MAX_BASE + 1];
    size_t n = dataset_title(d, article, title, sizeof(title));

    if (!n)
        return 0;
    slug_from_title(title, n, base, sizeof(base));
    return slug_with_suffix(base, (uint64_t)article, out, cap);
}

size_t
dataset_tag(const struct dataset *d, int64_t tag, char *out, size_t cap)
{
    size_t perm[DATASET_TAGS], n;

    if (tag < 1 || tag > d->tags)
        return 0;
    /*
     * The seed's shuffle of the vocabulary (Fisher-Yates driven by the
     * hash), rebuilt on each call: 200 steps is nothing next to an HTTP
     * request, and it keeps this module free of state.
     */
    for (size_t i = 0; i < DATASET_TAGS; i++)
        perm[i] = i;
    for (size_t i = DATASET_TAGS - 1; i > 0; i--) {
        size_t j = dataset_hash(d->seed, DATASET_STREAM_TAGORDER, i) % (i + 1);
        size_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    n = strlen(tag_names[perm[tag - 1]]);
    if (n + 1 > cap)
        return 0;
    memcpy(out, tag_names[perm[tag - 1]], n + 1);
    return n;
}

static uint64_t
gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* (a * r) mod n without overflow for any n < 2^63. */
static uint64_t
mulmod(uint64_t a, uint64_t r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)a * r) % n);
}

void
dataset_perm_init(struct dataset_perm *p, uint64_t key, int64_t n)
{
    p->n = n > 0 ? (uint64_t)n : 1;
    /* a = 1 would keep the order; any a coprime to n is a bijection. */
    p->a = splitmix64(key) % p->n;
    while (gcd(p->a, p->n) != 1)
        p->a = (p->a + 1) % p->n;
    p->b = splitmix64(key ^ 0x5851f42d4c957f2dULL) % p->n;
}

int64_t
dataset_perm_apply(const struct dataset_perm *p, int64_t r)
{
    if (r < 0 || (uint64_t)r >= p->n)
        return 0;
    return (int64_t)((mulmod(p->a, (uint64_t)r, p->n) + p->b) % p->n);
}

static int64_t
popular(uint64_t seed, uint64_t stream, int64_t n, int64_t rank)
{
    struct dataset_perm p;

    if (rank < 0 || rank >= n)
        return 0;
    dataset_perm_init(&p, dataset_hash(seed, stream, 0), n);
    return 1 + dataset_perm_apply(&p, rank);
}

int64_t
dataset_popular_article(const struct dataset *d, int64_t rank)
{
    return popular(d->seed, DATASET_STREAM_ARTICLE_POP, d->articles, rank);
}

int64_t
dataset_popular_user(const struct dataset *d, int64_t rank)
{
    return popular(d->seed, DATASET_STREAM_USER_POP, d->users, rank);
}

int64_t
dataset_skewed_rank(uint64_t h, int64_t n)
{
    double u = (double)(h >> 11) * 0x1p-53;
    int64_t r;

    if (n < 1)
        return 0;
    r = (int64_t)((double)n * (u * u));
    return r < n ? r : n - 1;
}
