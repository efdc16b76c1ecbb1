#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# resctrl-mon-hook(8): renders without a warning from man(1) and names every
# config key of the sample config and every long option of the hook and its
# commands; each command answers --help with each of its options. Its FILES
# section holds stateDir's layout and formats: every name common/statedir.h
# spells and no other, the keys of the JSON files as their writers write
# them, finished/'s caps as finished.h sets them.
#   test_man.sh SOURCE_DIR MANPAGE HOOK
set -u
top=$1
man_page=$2
hook=$3

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

command -v go-md2man >/dev/null 2>&1 || { echo "SKIP: go-md2man is not installed" >&2; exit 77; }
command -v man >/dev/null 2>&1 || { echo "SKIP: man is not installed" >&2; exit 77; }
[ -f "$man_page" ] || fail "'$man_page' was not built"

# The widths man(1) uses on a terminal and lintian's check.
for width in 80 100; do
        warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=$width \
                man --warnings -E UTF-8 -l -Tutf8 -Z "$man_page" 2>&1 >/dev/null)
        [ -z "$warnings" ] || fail "man warns at width $width: $warnings"
done
text=$(MANWIDTH=200 man -l "$man_page" 2>/dev/null) || fail "man -l $man_page"

# Keys are the sample's commented-out defaults; log.* are written as log.level etc.
keys=$(sed -n 's/^#\([a-zA-Z]*\):.*/\1/p' "$top/config/config.yaml")
[ -n "$keys" ] || fail "no keys found in config/config.yaml"
for key in $keys removeDelaySeconds log.level log.syslog log.stderr; do
        [ "$key" = log ] && continue
        printf '%s\n' "$text" | grep -qF -- "$key" || fail "the man page does not name '$key'"
done

# The options of a source file's getopt tables.
options_of() { sed -n 's/^ *{"\([a-z-]*\)", [a-z_]*_argument,.*/\1/p' "$1"; }
options=$(options_of "$top/hook/main.c")
[ -n "$options" ] || fail "no long options found in hook/main.c"
for option in $options; do
        printf '%s\n' "$text" | grep -qF -- "--$option" || fail "the man page does not name --$option"
done
# The commands: the rows of main.c's table.
commands=$(sed -n 's/^ *{"\([a-z]*\)", [a-z]*_main,.*/\1/p' "$top/hook/main.c")
[ -n "$commands" ] || fail "no command table found in hook/main.c"
for name in $commands; do
        help=$("$hook" "$name" --help 2>&1) || fail "$name --help exits $?"
        printf '%s\n' "$help" | grep -q "^Usage: .* $name" || fail "$name --help shows no usage: $help"
        [ "$("$hook" "$name" -h 2>&1)" = "$help" ] || fail "$name -h is not --help"
        # An unknown option: exit 2 and one line naming it.
        bad=$("$hook" "$name" --no-such-option 2>&1 >/dev/null)
        rc=$?
        [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$bad" | wc -l)" -eq 1 ] &&
                printf '%s\n' "$bad" | grep -q -- "'--no-such-option'" ||
                fail "$name --no-such-option: exit $rc, said: $bad"
        options=$(options_of "$top/hook/$name.c")
        [ -n "$options" ] || fail "no long options found in hook/$name.c"
        for option in $options; do
                printf '%s\n' "$help" | grep -qF -- "--$option" ||
                        fail "$name --help does not name --$option"
                printf '%s\n' "$text" | grep -qF -- "--$option" ||
                        fail "the man page does not name $name's --$option"
        done
done
# The man page is the one table of the config keys: no other document grows
# its own (a row per key that names it and its default).
for doc in "$top"/README.md "$top"/CONTRIBUTING.md "$top"/docs/*.md "$top"/deploy/README.md; do
        [ "$doc" = "$top/docs/resctrl-mon-hook.8.md" ] && continue
        rows=$(grep -cE '^\| `(resctrlPath|stateDir|lockTimeoutMs|failurePolicy)` \|' "$doc")
        [ "$rows" -eq 0 ] || fail "$doc has its own table of config keys; the man page is the reference"
done

# FILES holds the stateDir layout: one entry a name of common/statedir.h,
# which spells them all, and none it lacks. A name there is <uid>.members,
# here UID.members; a file below a directory of stateDir counts as that
# directory's.
md=$top/docs/resctrl-mon-hook.8.md
statedir_h=$top/common/statedir.h
files_section=$(sed -n '/^# FILES$/,/^# [A-Z]/p' "$md")
[ -n "$files_section" ] || fail "the man page has no FILES section"
man_names=$(printf '%s\n' "$files_section" |
        sed -n 's|^\*/run/resctrl-mon-hook/\([^*]\{1,\}\)\*$|\1|p' | sed 's|/.*|/|' | sort -u)
# The layout of statedir.h's first comment: " *   NAME   what it is".
layout=$(sed -n '1,/\*\//{s/^ \*   \([^ ]\{1,\}\) .*/\1/p}' "$statedir_h" |
        sed 's/<\([a-z]*\)>/\U\1/g' | sort -u)
[ -n "$layout" ] || fail "no layout found in common/statedir.h"
for name in $layout; do
        printf '%s\n' "$man_names" | grep -qxF -- "$name" ||
                fail "FILES has no entry for stateDir's '$name' (common/statedir.h)"
done
for name in $man_names; do
        printf '%s\n' "$layout" | grep -qxF -- "$name" ||
                fail "FILES names stateDir's '$name', which common/statedir.h does not"
done
# Every name statedir.h and statedir.c spell is part of a name of FILES.
spelled=$(sed -n 's/^#define STATEDIR_[A-Z_]* "\([^"]*\)"$/\1/p' "$statedir_h"
        sed -n 's/^ *\[STATEDIR_[A-Z_]*\] = "\([^"]*\)",$/UID\1/p' "$top/common/statedir.c")
[ -n "$spelled" ] || fail "no names found in common/statedir.h"
for part in $spelled; do
        printf '%s\n' "$man_names" | grep -qF -- "$part" ||
                fail "no stateDir file of FILES has '$part' (common/statedir.h) in its name"
done

# entry NAME: FILES's entry of stateDir's NAME, its heading to the next.
entry() {
        printf '%s\n' "$files_section" |
                awk -v h="*/run/resctrl-mon-hook/$1*" '$0 == h { on = 1; next } /^\*\/[^ ]*\*$/ { on = 0 } on'
}
# keys_agree WHAT ENTRY KEYS: each key of the writer is named in the entry
# (*key*), and each key of the entry's example is one of the writer's.
keys_agree() {
        [ -n "$2" ] || fail "FILES has no entry for $1"
        [ -n "$3" ] || fail "no keys found for $1"
        for key in $3; do
                printf '%s\n' "$2" | grep -qF -- "*$key*" || fail "FILES does not say what $1's '$key' is"
        done
        for key in $(printf '%s\n' "$2" | grep -oE '"[a-z_]+":' | tr -d '":' | sort -u); do
                printf '%s\n' "$3" | grep -qxF -- "$key" ||
                        fail "FILES shows '$key' in $1, which its writer does not write"
        done
}
# The keys of a source's JSON: its string literals that are lowercase words
# (a prefix such as "mon_" is none).
json_keys() { grep -oE '"[a-z][a-z_]*[a-z]"' | tr -d '"' | sort -u; }
# watch.state: watch_state_save's keys.
keys_agree watch.state "$(entry watch.state)" \
        "$(sed -n '/^int watch_state_save(/,/^}/p' "$top/common/watch_state.c" | json_keys)"
# The member file: the keys of its writer and parser.
keys_agree "the member file" "$(entry UID.members)" "$(json_keys <"$top/common/pod_state.c")"
# A final counters record: finished_format's keys.
keys_agree "a final counters record" "$(entry finished/UID.CREATED.HASH)" \
        "$(sed -n '/^int finished_format(/,/^}/p' "$top/common/finished.c" | json_keys)"

# The caps the man page states are the code's: finished/'s bytes and records.
finished_h=$top/common/finished.h
max_records=$(sed -n 's/^#define FINISHED_MAX_RECORDS \([0-9]*\)$/\1/p' "$finished_h")
max_mib=$(sed -n 's/^#define FINISHED_MAX_BYTES ((size_t) \([0-9]*\) << 20)$/\1/p' "$finished_h")
[ -n "$max_records" ] && [ -n "$max_mib" ] || fail "no FINISHED_MAX_* found in common/finished.h"
max_records=$(printf '%s\n' "$max_records" | sed -E ':a; s/([0-9])([0-9]{3})($|,)/\1,\2\3/; ta')
for doc_part in "finalCountersSeconds" "finished/UID.CREATED.HASH"; do
        if [ "$doc_part" = finalCountersSeconds ]; then
                part=$(sed -n '/^\*\*finalCountersSeconds\*\*/,/^\*\*log.level\*\*/p' "$md")
        else
                part=$(entry "$doc_part")
        fi
        part=$(printf '%s\n' "$part" | tr '\n' ' ' | tr -s ' ')
        printf '%s\n' "$part" | grep -qF -- "$max_mib MiB" ||
                fail "the man page's $doc_part does not say $max_mib MiB (FINISHED_MAX_BYTES)"
        printf '%s\n' "$part" | grep -qF -- "$max_records records" ||
                fail "the man page's $doc_part does not say $max_records records (FINISHED_MAX_RECORDS)"
done

for word in createRuntime prestart poststop gc check status watch "EXIT STATUS" FILES hooks.d \
        /usr/share/containers/oci/hooks.d /etc/resctrl-mon-hook/config.yaml; do
        printf '%s\n' "$text" | grep -qF -- "$word" || fail "the man page does not mention '$word'"
done
echo PASS
