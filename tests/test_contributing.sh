#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# CONTRIBUTING.md against the tree: its table of concerns names files that
# exist and every .c file of common/ and hook/; its list of the commands that
# set up with command_setup is the code's, and every command reads its
# options with command_parse_options; the helpers its conventions name are
# common/macro.h's.
#   test_contributing.sh SOURCE_DIR
set -u
top=$1
doc=$top/CONTRIBUTING.md
failures=0

fail() {
        echo "FAIL: $*" >&2
        failures=$((failures + 1))
}

[ -f "$doc" ] || { echo "FAIL: $doc does not exist" >&2; exit 1; }

# section HEADING: the lines of "## HEADING" up to the next "## ".
section() {
        awk -v h="## $1" '$0 == h { on = 1; next } /^## / { on = 0 } on' "$doc"
}

# The table of concerns: each row's files, in backquotes.
table=$(section "Where each concern lives" | grep '^| ')
[ -n "$table" ] || fail "CONTRIBUTING.md has no table under 'Where each concern lives'"
named=$(printf '%s\n' "$table" | grep -oE '`(common|hook)/[a-z0-9_]+\.[ch]`' | tr -d '`' | sort)
[ -n "$named" ] || fail "the table of concerns names no file"
for file in $named; do
        [ -f "$top/$file" ] || fail "the table of concerns names $file, which does not exist"
done
dups=$(printf '%s\n' "$named" | uniq -d)
[ -z "$dups" ] || fail "the table of concerns names a file twice: $dups"
for path in "$top"/common/*.c "$top"/hook/*.c; do
        [ -f "$path" ] || continue
        file=${path#"$top"/}
        printf '%s\n' "$named" | grep -qxF -- "$file" || fail "$file is in no row of the table of concerns"
done

# The commands: main.c's table. Each reads its options with
# command_parse_options; those that call command_setup are the ones listed.
commands=$(sed -n 's/^ *{"\([a-z]*\)", [a-z]*_main,.*/\1/p' "$top/hook/main.c" | sort)
[ -n "$commands" ] || fail "no command table found in hook/main.c"
listed=$(tr '\n' ' ' <"$doc" | tr -s ' ' |
        sed -n 's/.*Commands that set up with `command_setup`: \([^.]*\)\..*/\1/p' |
        grep -oE '`[a-z]+`' | tr -d '`' | sort)
[ -n "$listed" ] || fail "CONTRIBUTING.md does not list the commands that set up with command_setup"
for name in $commands; do
        src=$top/hook/$name.c
        grep -q 'command_parse_options(' "$src" ||
                fail "$name does not read its options with command_parse_options"
        if grep -q 'command_setup(' "$src"; then
                printf '%s\n' "$listed" | grep -qxF -- "$name" ||
                        fail "$name calls command_setup; CONTRIBUTING.md does not list it"
        else
                printf '%s\n' "$listed" | grep -qxF -- "$name" &&
                        fail "CONTRIBUTING.md lists $name as setting up with command_setup; it does not"
        fi
done
for name in $listed; do
        printf '%s\n' "$commands" | grep -qxF -- "$name" || fail "CONTRIBUTING.md lists '$name', no command"
done

# Conventions: the cleanup helpers it names are common/macro.h's.
conventions=$(section Conventions)
[ -n "$conventions" ] || fail "CONTRIBUTING.md has no Conventions section"
helpers=$(printf '%s\n' "$conventions" | grep -oE '`(_cleanup_[a-z_]*|[a-z]+p|TAKE_[A-Z]+)`' |
        tr -d '`' | sort -u)
[ -n "$helpers" ] || fail "the Conventions name no cleanup helper"
for helper in $helpers; do
        grep -qE -- "(define|void) \\*?$helper\\b" "$top/common/macro.h" ||
                grep -qE -- "void $helper\\(" "$top"/common/*.h ||
                fail "the Conventions name $helper, which no header of common/ defines"
done

[ "$failures" -eq 0 ] || exit 1
echo "PASS: $(printf '%s\n' "$named" | wc -l) files in the table of concerns"
