#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# docs/readers.md, the readers' contract: each statement about the hook's
# output names the test that checks it, and every test it names exists and
# runs. A reference is
#   (test: tests/integration/test_status.sh "description")
# naming a `check "description" ...` of that script, or
#   (test: tests/test_oci.c test_uid_canonicalise)
# naming a START_TEST of that unit suite. The script, or the suite, must be
# one that tests/CMakeLists.txt registers. The document's relative links must
# lead to files that exist; README.md, docs/operations.md and docs/design.md
# must link to it.
#   test_readers_doc.sh SOURCE_DIR
set -u
top=$1
doc=$top/docs/readers.md
cmake=$top/tests/CMakeLists.txt
failures=0

fail() {
        echo "FAIL: $*" >&2
        failures=$((failures + 1))
}

[ -f "$doc" ] || { echo "FAIL: $doc does not exist" >&2; exit 1; }
[ -f "$cmake" ] || { echo "FAIL: $cmake does not exist" >&2; exit 1; }

# The document as one line: a reference may be wrapped across lines.
text=$(tr '\n' ' ' <"$doc" | tr -s ' ')

# Everything that starts like a reference must be one: a mistyped reference
# must not pass for prose.
refs=$(printf '%s\n' "$text" | grep -oE '\(test[^a-z)][^)]*\)')
[ -n "$refs" ] || fail "$doc references no test"
bad=$(printf '%s\n' "$refs" |
        grep -vE '^\(test: tests/[A-Za-z0-9_/.-]+\.(sh "[^"]+"|c test_[a-z0-9_]+)\)$')
[ -z "$bad" ] || fail "references not of the form (test: tests/FILE.sh \"check\") or (test: tests/FILE.c test_NAME): $bad"

tab=$(printf '\t')
tmp=
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
tmp=$(mktemp -d /tmp/rmh-readers.XXXXXX) || exit 1
list=$tmp/list files=$tmp/files
: >"$files"
# One reference a line: FILE<TAB>NAME.
printf '%s\n' "$refs" |
        sed -nE 's/^\(test: (tests\/[^ ]+) ("([^"]+)"|(test_[a-z0-9_]+))\)$/\1\t\3\4/p' >"$list"
while IFS="$tab" read -r file name; do
        path=$top/$file
        if [ ! -f "$path" ]; then
                fail "$file (named for \"$name\") does not exist"
                continue
        fi
        case $file in
        *.sh)
                grep -qF -- "check \"$name\"" "$path" ||
                        fail "$file has no check \"$name\""
                # Registered: its path below tests/ appears in tests/CMakeLists.txt.
                grep -qF -- "/${file#tests/}" "$cmake" ||
                        fail "$file is not run by any test in tests/CMakeLists.txt"
                ;;
        *.c)
                grep -qE -- "^START_TEST\\($name\\)" "$path" ||
                        fail "$file has no START_TEST($name)"
                suite=$(basename "$file" .c)
                suite=${suite#test_}
                grep -qE -- "^rmh_check_suite\\(${suite}[ )]" "$cmake" ||
                        fail "$file is not a unit suite of tests/CMakeLists.txt"
                ;;
        esac
        printf '%s\n' "$file" >>"$files"
done <"$list"
n=$(wc -l <"$list")

# Relative links of the document lead to files that exist, and to headings
# of theirs (as GitHub makes anchors of them).
anchors() { # FILE
        sed -n 's/^#\{1,6\} //p' "$1" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}
grep -oE '\]\([^)#: ]+(#[^) ]*)?\)' "$doc" | sed -E 's/^\]\(([^)]*)\)$/\1/' | sort -u >"$list"
while read -r link; do
        file=${link%%#*}
        if [ ! -e "$top/docs/$file" ]; then
                fail "$doc links to '$file', which does not exist"
        elif [ "$file" != "$link" ]; then
                anchors "$top/docs/$file" | grep -qxF -- "${link#*#}" ||
                        fail "$doc links to '$link': $file has no such heading"
        fi
done <"$list"

# The documents that send readers to it.
grep -qF '(docs/readers.md)' "$top/README.md" || fail "README.md does not link docs/readers.md"
grep -qF '(readers.md)' "$top/docs/operations.md" || fail "docs/operations.md does not link readers.md"
grep -qF '(readers.md)' "$top/docs/design.md" || fail "docs/design.md does not link readers.md"

[ "$failures" -eq 0 ] || exit 1
echo "PASS: $n references to $(sort -u "$files" | wc -l) test files"
