# plans.sh: sourced by the tests that compare statements of
# sql/queries.sql case by case (t/integration/sql_lists.sh,
# t/integration/feed_inbox.sh), after t/lib.sh and with the query table
# built into $T/q (t/sql/prepare-all.sh -b).  The statements a comparison
# runs are the PREPAREs collected in $T/stmts.sql; a cases file holds one
# line of EXECUTE arguments per case.

# plans_build: the query table into $T/q (a pass), or bail out.
plans_build() {
    if sh "$top_srcdir/t/sql/prepare-all.sh" -b "$T/q" >"$T/build.log" 2>&1; then
        pass "the query table builds"
    else
        sed 's/^/# /' "$T/build.log"
        bail "cannot build the query table"
    fi
}

# stmt NAME [NEWNAME]: the PREPARE of query NAME as the server prepares it,
# renamed to NEWNAME.
stmt() {
    awk -v n="$1" -v m="${2:-$1}" '
        $0 == "PREPARE " n " AS" { on = 1; print "PREPARE " m " AS"; next }
        on { print; if ($0 ~ /;$/) exit }' "$T/q/prepare.sql"
}

# run STATEMENT CASES OUT: every case through the prepared statement, in one
# session (generic plans, as the server's connections have them), each
# answer after a line naming its case.
run() {
    {
        cat "$T/stmts.sql"
        while read -r _c; do
            printf '\\echo == %s\nEXECUTE %s(%s);\n' "$_c" "$1" "$_c"
        done <"$2"
    } | psql -X -q -At -P null=NULL -v ON_ERROR_STOP=1 >"$3" 2>>"$T/psql.err"
}

# same DESCRIPTION STATEMENT REFERENCE CASES: identical answers, row for row.
same() {
    run "$2" "$4" "$T/got"
    _rc1=$?
    run "$3" "$4" "$T/want"
    _rc2=$?
    if [ "$_rc1" = 0 ] && [ "$_rc2" = 0 ] && cmp -s "$T/got" "$T/want"; then
        pass "$1 ($(grep -vc '^== ' "$T/want") rows)"
    else
        fail "$1 (psql rc $_rc1 $_rc2)"
        diff "$T/want" "$T/got" | head -n 20 | tr '\037' ',' | sed 's/^/# /'
    fi
}

# differs DESCRIPTION STATEMENT REFERENCE CASES: a mutant is caught.
differs() {
    run "$2" "$4" "$T/got"
    run "$3" "$4" "$T/want"
    if [ -s "$T/want" ] && ! cmp -s "$T/got" "$T/want"; then
        pass "$1"
    else
        fail "$1: the comparison did not see it"
    fi
}

# mutant NAME NEWNAME SED: adds statement NAME with one change, as
# NEWNAME, to the session's statements; the change must apply (else the
# mutant would be the statement itself).
mutant() {
    stmt "$1" "$2" >"$T/m.sql"
    sed "$3" "$T/m.sql" >"$T/m2.sql"
    check "mutant $2 differs from $1" sh -c "! cmp -s '$T/m.sql' '$T/m2.sql'"
    cat "$T/m2.sql" >>"$T/stmts.sql"
}

