#!/bin/sh
# The install and the daemon recipe agree.  configure runs (into a scratch
# build folder, from this source tree) with the flags of the README's
# recipe ("As a daemon"), and with none (the /usr/local defaults); `make
# install-data DESTDIR=...` then puts the config, the unit, the rc script,
# logrotate's file, the schema and the man pages in a scratch root.  Every
# path under /etc or /usr that the recipe, the unit, the rc script,
# logrotate's file and the man pages name must be there.  Before: the
# recipe edited /etc/conduitd/conduitd.conf while a plain install put it
# under /usr/local/etc (where the unit read it), and conduitd(8) named
# .../share/conduitd/conduitd/schema.sql, one folder too deep.  The
# programs themselves (install-exec) are not built here: their folder is
# checked through the unit's and rc script's ExecStart and DAEMON lines.
. "$top_srcdir/t/lib.sh"

src=$(cd "$top_srcdir" && pwd)
readme="$src/README.md"
[ -x "$src/configure" ] || skip "no configure script in $top_srcdir (run autoreconf -fi)"

# The recipe: the first sh block of the README's "As a daemon" section.
sed -n '/^## As a daemon/,/^## /p' "$readme" |
    sed -n '/^```sh$/,/^```$/{/^```/d;p}' | sed '/^```sh$/,$d' >"$T/recipe"
check "the README has a daemon recipe" [ -s "$T/recipe" ]
flags=$(sed -n 's|.*\.\./configure \([^&;]*\).*|\1|p' "$T/recipe" | head -n 1 | sed 's/ *$//')
check "the recipe says how to configure (a ../configure line)" [ -n "$flags" ]
note "recipe's configure flags: $flags"

# names FILE...: the absolute paths under /etc and /usr the files name
# (troff's \- and \% and \e taken out of the man pages first).
names() {
    sed -e 's/\\-/-/g' -e 's/\\%//g' -e 's/\\e//g' -e '/^PATH=/d' "$@" 2>/dev/null |
        grep -oE '(^|[^A-Za-z0-9_.@-])/(etc|usr)/[A-Za-z0-9_./-]*' |
        sed -e 's|^[^/]||' -e 's|[.]*$||' -e 's|/*$||' | sort -u
}

# installed ROOT SBINDIR PATH: PATH is in the scratch root, or is a place
# the programs go (not installed here), or the optional local settings.
installed() {
    case "$3" in
    "$2" | "$2"/conduitd | "${2%/sbin}"/bin/conduit-*) [ -n "$2" ]; return ;;
    /usr/sbin | /usr/bin) return 0 ;; # the system's (PATH, nginx), not ours
    */default/conduitd) return 0 ;; # "Local settings go in": made by the operator
    esac
    [ -e "$1$3" ]
}

# try NAME FLAGS: configure with FLAGS, install the data, check the names.
try() {
    _n=$1; shift
    _b="$T/build-$_n" _r="$T/root-$_n"
    mkdir -p "$_b"
    # shellcheck disable=SC2086 # the flags are words
    if ! (cd "$_b" && "$src/configure" "$@" >configure.out 2>&1); then
        fail "$_n: configure $*"
        tail -n 20 "$_b/configure.out" | sed 's/^/# /'
        return
    fi
    if ! make -C "$_b" install-data DESTDIR="$_r" >"$_b/install.out" 2>&1; then
        fail "$_n: make install-data"
        tail -n 20 "$_b/install.out" | sed 's/^/# /'
        return
    fi
    _unit=$(cd "$_r" && find . -path '*/lib/systemd/system/conduitd.service' | sed 's|^\.||')
    _sbin=$(sed -n 's|^ExecStart=\([^ ]*\)/conduitd .*|\1|p' "$_r$_unit" 2>/dev/null)
    _etc=$(cd "$_r" && find . -path '*/conduitd/conduitd.conf' | sed 's|^\.||')
    _etc=${_etc%/conduitd/conduitd.conf}
    _share=$(cd "$_r" && find . -name schema.sql | sed 's|^\.||')
    note "$_n: unit $_unit, config $_etc/conduitd/conduitd.conf, schema $_share, programs in $_sbin"
    for _f in "$_etc/init.d/conduitd" "$_etc/logrotate.d/conduitd" "$_unit" "$_share"; do
        check "$_n: $_f is installed" [ -n "$_f" ] && [ -f "$_r$_f" ]
    done
    check "$_n: the rc script is executable" [ -x "$_r$_etc/init.d/conduitd" ]
    for _f in "$_r$_unit" "$_r$_etc/init.d/conduitd" "$_r$_etc/logrotate.d/conduitd"; do
        check "$_n: ${_f#"$_r"} reads $_etc/conduitd/conduitd.conf" \
            grep -q "$_etc/conduitd/conduitd.conf" "$_f"
    done
    check "$_n: the rc script starts $_sbin/conduitd" \
        grep -q "^DAEMON=$_sbin/conduitd\$" "$_r$_etc/init.d/conduitd"
    _missing=
    for _p in $(names "$_r$_unit" "$_r$_etc/init.d/conduitd" "$_r$_etc/logrotate.d/conduitd" \
        $(find "$_r" -path '*/share/man/man*' -type f)); do
        installed "$_r" "$_sbin" "$_p" || _missing="$_missing $_p"
    done
    is "$_n: every path the unit, rc script, logrotate and man pages name is installed" \
        "${_missing:-none}" none
    if [ "$_n" = recipe ]; then
        _missing=
        for _p in $(names "$T/recipe"); do
            installed "$_r" "$_sbin" "$_p" || _missing="$_missing $_p"
        done
        is "recipe: every /etc and /usr path the README's recipe names is installed" \
            "${_missing:-none}" none
        check "recipe: the config it edits is the one the unit reads" \
            grep -q "$_etc/conduitd/conduitd.conf" "$T/recipe"
    fi
}

# shellcheck disable=SC2086 # the recipe's flags are words
[ -n "$flags" ] && try recipe $flags
try default
done_testing
