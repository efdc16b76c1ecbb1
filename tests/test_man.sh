#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# resctrl-mon-hook(8): renders without a warning from man(1) and names every
# config key of the sample config and every long option of the hook and its
# commands; each command answers --help with each of its options.
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
for word in createRuntime prestart poststop gc check status watch "EXIT STATUS" FILES hooks.d \
        /usr/share/containers/oci/hooks.d /etc/resctrl-mon-hook/config.yaml; do
        printf '%s\n' "$text" | grep -qF -- "$word" || fail "the man page does not mention '$word'"
done
echo PASS
