#!/bin/sh
# The source tree keeps its own rules: every C file includes autoconf's
# config.h first (and no other header of that name exists to be taken for
# it: quoted includes look in the including file's folder first),
# nothing in the repository points to documents outside it or to the
# folders of the machine a result was measured on, no header includes
# itself through others, and no two modules include each other.
. "$top_srcdir/t/lib.sh"

cd "$top_srcdir" || bail "no source tree"
files=$(find common master worker bench seed sql -name '*.c' | sort)
[ -n "$files" ] || bail "no C files found under $top_srcdir"
bad=
for f in $files; do
    first=$(grep -m1 '^#include' "$f")
    [ "$first" = '#include "config.h"' ] || bad="$bad $f"
done
is "every C file includes config.h first" "${bad:-none}" none
# In the source folders (a build tree, even one inside the source tree as
# make distcheck makes, holds autoconf's own).
others=$(find common master worker bench seed sql t -name config.h | sort | tr '\n' ' ')
is "no header named config.h in the source tree" "${others:-none}" none
refs=$(grep -rIl -e '\.\./shared' -e '/work/shared' -e 'DESIGN\.md' -e 'PITFALLS' -e 'WORKLOAD\.md' \
    -e '[^/a-z]API\.md' --exclude-dir=.git --exclude-dir='build*' --exclude-dir='_build' \
    --exclude-dir=autom4te.cache --exclude-dir=var \
    --exclude=tree.sh . 2>/dev/null | sort | tr '\n' ' ')
is "nothing points to documents outside the repository" "${refs:-none}" none
# Measured results and their scripts name paths from the top of the tree,
# never the folders of the machine they ran on.
abs=$(grep -rIl -e '/work/' -e '/home/' --exclude-dir=.git --exclude-dir='build*' \
    --exclude-dir='_build' --exclude-dir=autom4te.cache --exclude-dir=var --exclude=.git --exclude=tree.sh . 2>/dev/null |
    sort | tr '\n' ' ')
is "no absolute path of a build machine in the tree" "${abs:-none}" none
# The include graph has no cycle: tsort(1) names any loop among the edges
# "file header" of every quoted #include (a header is found from the top of
# the tree, else beside the file; generated headers are not in the tree).
find common master worker bench seed sql t -name '*.[ch]' | sort | while read -r f; do
    sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r h; do
        if [ -f "$h" ]; then echo "$f $h"; elif [ -f "$(dirname "$f")/$h" ]; then
            echo "$f $(dirname "$f")/$h"
        fi
    done
done >"$T/includes"
check "the include graph was read" [ "$(wc -l <"$T/includes")" -gt 100 ]
loops=$(tsort "$T/includes" 2>&1 >/dev/null | tr '\n' ' ')
is "the include graph has no cycle" "${loops:-none}" none
# Nor do two modules (a .c and its .h) include each other: two such files
# are one module, or a context that wants to be passed.
pairs=$(sed 's/\.[ch]\( \|$\)/\1/g' "$T/includes" | awk '$1 != $2 { e[$1 " " $2] = 1 }
    END { for (k in e) { split(k, m, " "); if ((m[2] " " m[1]) in e && m[1] < m[2]) print m[1] "<->" m[2] } }' |
    sort | tr '\n' ' ')
is "no two modules include each other" "${pairs:-none}" none
# The README's Layout names every folder at the top of the tree, and no
# folder that is not there.
layout=$(sed -n '/^## Layout/,/^## /p' README.md | sed -n 's|^\([.a-z]*\)/ .*|\1|p' | sort)
folders=$(find . -mindepth 1 -maxdepth 1 -type d ! -name .git ! -name 'build*' ! -name _build ! -name _inst \
    ! -name autom4te.cache ! -name build-aux ! -name var ! -name 'conduitd-*' | sed 's|^\./||' | sort)
is "the README's Layout names the top folders" "$(echo $layout)" "$(echo $folders)"
done_testing
