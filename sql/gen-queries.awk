# gen-queries.awk: turn a file of named statements into a C header and a
# C table.
#
#   awk -v out_h=queries.h -v out_c=queries.c -f sql/c-string.awk \
#       -f sql/gen-queries.awk sql/queries.sql
#   awk -v out_h=direct.h -v out_c=direct.c -v table=sql_direct \
#       -v prefix=SQL_DIRECT_ -f sql/c-string.awk -f sql/gen-queries.awk sql/direct.sql
#
# queries.sql gives enum sql_query_id { SQL_NAME, ..., SQL_QUERY_COUNT } and
# sql_queries[] (the worker prepares them all); with table=T and prefix=P,
# enum T_id { P<NAME>, ..., P<COUNT> } and T[].  Both use struct sql_query.
#
# POSIX awk (mawk, gawk, busybox awk).  Input format: a query starts at a
# line "-- name: snake_case_name" and ends at the first line whose last
# non-blank character is ";" (that ";" is dropped).  Other lines starting
# with "--" and blank lines are dropped.  Text before the first name line
# is ignored.  nparams is the highest $N in the text.  A line "-- read-only"
# before the text sets read_only (a standby may answer the statement).
#
# Fragments, so that text several statements share is written once while
# each statement stays whole (its own text, so its own plan): a line
# "-- fragment: name" starts one, which runs to the next "-- name:" or
# "-- fragment:" line (a ";" does not end it).  A line "-- use: name
# key=value ..." in a query or a later fragment stands for the fragment's
# lines, each "{key}" in them replaced by its value (a value has no blank).
# A placeholder left without a value, a value no placeholder takes, an
# unknown fragment and a fragment no statement uses are errors.
#
# Any format error (a duplicate or malformed name, an empty or unterminated
# query) prints file:line: message on stderr and exits 1 without writing
# anything.

function fail(msg) {
    printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
    failed = 1
    exit 1
}

function max_param(s,    m, n, best) {
    best = 0
    while (match(s, /\$[0-9]+/)) {
        n = substr(s, RSTART + 1, RLENGTH - 1) + 0
        if (n > best)
            best = n
        s = substr(s, RSTART + RLENGTH)
    }
    return best
}

# s with every "{key}" of the use line's arguments (ukey[1..nu], uval[])
# replaced, literally (gsub() would read "&" and "\\" in a value).
function substitute(s,    i, out, tok, at) {
    for (i = 1; i <= nu; i++) {
        tok = "{" ukey[i] "}"
        out = ""
        while ((at = index(s, tok)) > 0) {
            out = out substr(s, 1, at - 1) uval[i]
            s = substr(s, at + length(tok))
            uhit[i] = 1
        }
        s = out s
    }
    return s
}

# A line of the current query: params, the ";" that ends it.
function query_line(line,    last, p) {
    if (!in_query) {
        if (nq == 0)
            fail("SQL text before the first '-- name:' line")
        fail("SQL text after the end of query " names[nq] " (missing '-- name:'?)")
    }
    last = (line ~ /;$/)
    if (last)
        sub(/;$/, "", line)
    p = max_param(line)
    if (p > params[nq])
        params[nq] = p
    if (line !~ /^[ \t]*$/) {
        nlines[nq]++
        text[nq, nlines[nq]] = line
    }
    if (last)
        finish_query()
}

# A line of the fragment being defined.
function fragment_line(line) {
    frag_len[in_frag]++
    frag_text[in_frag, frag_len[in_frag]] = line
}

# "-- use: name key=value ...": the fragment's lines, substituted, into the
# fragment being defined or the current query.
function use_fragment(spec,    f, n, i, j, line) {
    n = split(spec, f, /[ \t]+/)
    if (!(f[1] in frag_len))
        fail("no fragment '" f[1] "' defined before this line")
    frag_used[f[1]] = 1
    nu = 0
    for (i = 2; i <= n; i++) {
        if (f[i] !~ /^[a-z_]+=[^ \t]+$/)
            fail("'" f[i] "' is not key=value")
        nu++
        j = index(f[i], "=")
        ukey[nu] = substr(f[i], 1, j - 1)
        uval[nu] = substr(f[i], j + 1)
        uhit[nu] = 0
    }
    for (i = 1; i <= frag_len[f[1]]; i++) {
        line = substitute(frag_text[f[1], i])
        if (match(line, /\{[a-z_]+\}/))
            fail("fragment " f[1] " wants a value for " substr(line, RSTART, RLENGTH))
        if (in_frag != "")
            fragment_line(line)
        else
            query_line(line)
    }
    for (i = 1; i <= nu; i++)
        if (!uhit[i])
            fail("fragment " f[1] " has no {" ukey[i] "}")
}

# The name of a "-- KEY: name" line, which must be snake_case; what
# names the thing for the message.
function line_name(key, what,    name) {
    name = $0
    sub("^--[ \t]*" key ":[ \t]*", "", name)
    sub(/[ \t]+$/, "", name)
    if (name !~ /^[a-z][a-z0-9_]*$/)
        fail("bad " what " name '" name "' (want snake_case)")
    return name
}

function finish_query() {
    if (nlines[nq] == 0)
        fail("query " names[nq] " has no text")
    in_query = 0
}

BEGIN {
    in_frag = ""
    if (out_h == "" || out_c == "") {
        print "gen-queries.awk: set -v out_h=FILE -v out_c=FILE" > "/dev/stderr"
        failed = 1
        exit 1
    }
    if (table == "")
        table = "sql_queries"
    if (prefix == "")
        prefix = "SQL_"
    enum_id = (table == "sql_queries") ? "sql_query_id" : table "_id"
    count = (table == "sql_queries") ? "SQL_QUERY_COUNT" : prefix "COUNT"
    nq = 0
    in_query = 0
}

{ sub(/\r$/, "") }

/^--[ \t]*fragment:/ {
    if (in_query)
        fail("query " names[nq] " is not terminated by ';' before the next fragment")
    name = line_name("fragment", "fragment")
    if (name in frag_len)
        fail("duplicate fragment name '" name "'")
    frag_len[name] = 0
    frag_line[name] = FNR
    in_frag = name
    next
}

/^--[ \t]*name:/ {
    in_frag = ""
    if (in_query)
        fail("query " names[nq] " is not terminated by ';' before the next name")
    name = line_name("name", "query")
    if (name in seen)
        fail("duplicate query name '" name "'")
    seen[name] = 1
    nq++
    names[nq] = name
    nlines[nq] = 0
    params[nq] = 0
    readonly[nq] = 0
    in_query = 1
    next
}

/^--[ \t]*read-only[ \t]*$/ {
    if (!in_query || nlines[nq] > 0)
        fail("'-- read-only' belongs before the text of a query")
    readonly[nq] = 1
    next
}

/^--[ \t]*use:/ {
    spec = $0
    sub(/^--[ \t]*use:[ \t]*/, "", spec)
    sub(/[ \t]+$/, "", spec)
    use_fragment(spec)
    next
}

/^[ \t]*--/ { next }
/^[ \t]*$/ { next }

{
    line = $0
    sub(/[ \t]+$/, "", line)
    if (in_frag != "")
        fragment_line(line)
    else
        query_line(line)
}

END {
    if (failed)
        exit 1
    if (in_query)
        fail("query " names[nq] " is not terminated by ';' at end of file")
    if (nq == 0)
        fail("no query found")
    for (name in frag_len) {
        if (!(name in frag_used)) {
            FNR = frag_line[name]
            fail("fragment " name " is used by no statement")
        }
        if (frag_len[name] == 0) {
            FNR = frag_line[name]
            fail("fragment " name " has no text")
        }
    }

    hdr = out_h
    sub(/.*\//, "", hdr)
    guard = toupper(hdr)
    gsub(/[^A-Z0-9]/, "_", guard)
    guard = "CONDUITD_" guard

    src = FILENAME
    sub(/.*\//, "", src)
    printf "/* Generated by sql/gen-queries.awk from sql/%s: do not edit. */\n", src > out_h
    print "#ifndef " guard > out_h
    print "#define " guard > out_h
    print "" > out_h
    printf "enum %s {\n", enum_id > out_h
    for (i = 1; i <= nq; i++)
        printf "    %s%s,\n", prefix, toupper(names[i]) > out_h
    printf "    %s\n", count > out_h
    print "};" > out_h
    print "" > out_h
    print "#ifndef CONDUITD_SQL_QUERY_STRUCT" > out_h
    print "#define CONDUITD_SQL_QUERY_STRUCT" > out_h
    print "struct sql_query {" > out_h
    print "    const char *name; /* as in the file (queries.sql: the PQprepare name) */" > out_h
    print "    const char *text;" > out_h
    print "    int nparams;      /* highest $N in text */" > out_h
    print "    int read_only;    /* \"-- read-only\": a standby may answer it */" > out_h
    print "};" > out_h
    print "#endif" > out_h
    print "" > out_h
    printf "extern const struct sql_query %s[%s];\n", table, count > out_h
    print "" > out_h
    print "#endif" > out_h
    close(out_h)

    printf "/* Generated by sql/gen-queries.awk from sql/%s: do not edit. */\n", src > out_c
    printf "#include \"%s\"\n", hdr > out_c
    print "" > out_c
    printf "const struct sql_query %s[%s] = {\n", table, count > out_c
    for (i = 1; i <= nq; i++) {
        printf "    [%s%s] = {\n", prefix, toupper(names[i]) > out_c
        printf "        \"%s\",\n", names[i] > out_c
        for (j = 1; j <= nlines[i]; j++) {
            sep = (j < nlines[i]) ? "\\n" : ""
            printf "        \"%s%s\"%s\n", c_escape(text[i, j]), sep, (j < nlines[i]) ? "" : "," > out_c
        }
        printf "        %d,\n", params[i] > out_c
        printf "        %d,\n", readonly[i] > out_c
        print "    }," > out_c
    }
    print "};" > out_c
    close(out_c)
}
