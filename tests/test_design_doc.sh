#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Each fact once, and the facts the documents once got wrong kept right:
# - a pod's lifetime and the ownership table are in docs/design.md alone,
#   which the other documents link; a member file's format is in the man
#   page alone; design.md is the one "how it works", and no other document
#   has a section of that name;
# - the table of modules is CONTRIBUTING.md's (test_contributing.sh), not
#   design.md's;
# - design.md's hot path says which run lists finished/, with finished.h's
#   cap, and never that a run scans nothing of stateDir;
# - design.md's bounds of a thread walk are common/cgroup.h's;
# - operations.md's list of gc's actions is hook/gc.c's table of their
#   names, both ways.
#   test_design_doc.sh SOURCE_DIR
set -u
top=$1
design=$top/docs/design.md
man_md=$top/docs/resctrl-mon-hook.8.md
failures=0

fail() {
        echo "FAIL: $*" >&2
        failures=$((failures + 1))
}

for f in "$design" "$man_md" "$top/CONTRIBUTING.md"; do
        [ -f "$f" ] || { echo "FAIL: $f does not exist" >&2; exit 1; }
done
others="$top/README.md $top/CONTRIBUTING.md $top/docs/operations.md $top/docs/readers.md $man_md"
others="$others $top/deploy/README.md"

# section FILE HEADING: "## HEADING" to the next "## ", as one line.
section() {
        awk -v h="## $2" '$0 == h { on = 1; next } /^## / { on = 0 } on' "$1" | tr '\n' ' ' | tr -s ' '
}
# 1234567 -> 1,234,567, as the documents write numbers.
thousands() { printf '%s\n' "$1" | sed -E ':a; s/([0-9])([0-9]{3})($|,)/\1,\2\3/; ta'; }
# define FILE NAME: the number a #define of FILE gives NAME.
define() { sed -n "s/^#define $2 \\([0-9]*\\)\$/\\1/p" "$1"; }

# A pod's lifetime: design.md's section, linked from where readers look.
lifetime=$(section "$design" "A pod's lifetime")
[ -n "$lifetime" ] || fail "docs/design.md has no section \"A pod's lifetime\""
for key in removeDelaySeconds emptyPodLingerSeconds; do
        printf '%s\n' "$lifetime" | grep -qF -- "\`$key\`" ||
                fail "design.md's \"A pod's lifetime\" does not name $key"
done
for doc in "$top/docs/operations.md" "$top/docs/readers.md"; do
        grep -qF '(design.md#a-pods-lifetime)' "$doc" || fail "$doc does not link design.md#a-pods-lifetime"
done
for doc in "$top/README.md" "$top/CONTRIBUTING.md" "$man_md"; do
        grep -qi "a pod's lifetime" "$doc" || fail "$doc does not send readers to design.md's \"A pod's lifetime\""
done
# ... and no other document spells the rules out: no list of how long a
# group lingers, as each once had ("for `emptyPodLingerSeconds`" beside
# "for `removeDelaySeconds`").
for doc in $others; do
        [ "$doc" = "$man_md" ] && continue
        n=$(grep -cE '^ *- (for|while) .*(`removeDelaySeconds`|kubelet.s cgroup of the pod|`emptyPodLingerSeconds`)' "$doc")
        [ "$n" -eq 0 ] || fail "$doc lists a pod's lifetime rules; design.md has them"
done
# Ownership: its table's rows are design.md's alone.
grep -qE '^\| none \| missing \|' "$design" || fail "design.md has no ownership table"
for doc in $others; do
        ! grep -qE '^\| (none|`owned: (true|false)`) \| (missing|there) \|' "$doc" ||
                fail "$doc has its own ownership table; design.md has it"
done
grep -qF '(design.md#ownership)' "$top/docs/operations.md" || fail "docs/operations.md does not link design.md#ownership"
# A member file's format: the man page's FILES alone shows one.
for doc in $others "$design"; do
        [ "$doc" = "$man_md" ] && continue
        ! grep -qE '"members": ?\[' "$doc" || fail "$doc shows a member file; the man page's FILES has its format"
done
grep -qF 'resctrl-mon-hook.8.md#files)' "$design" || fail "design.md does not link the man page's FILES"

# "How it works" is design.md: who says where it is says design.md, and no
# other document has a section of that name.
for doc in $others; do
        ! grep -qiE '^#+ how it works' "$doc" || fail "$doc has a section 'How it works'; design.md is that"
        grep -inE 'how (the hook|it) works' "$doc" | cut -d: -f1 | while read -r n; do
                sed -n "${n},$((n + 1))p" "$doc" | grep -qF 'design.md' ||
                        echo "$doc:$n"
        done
done >"${TMPDIR:-/tmp}/design_doc.$$"
while read -r where; do
        fail "$where says where the hook's workings are without linking design.md"
done <"${TMPDIR:-/tmp}/design_doc.$$"
rm -f "${TMPDIR:-/tmp}/design_doc.$$"

# Modules: CONTRIBUTING.md's table, not one of design.md's own.
! grep -qE '^\| `(common|hook)/[a-z0-9_]+\.c` \|' "$design" ||
        fail "design.md has a table of modules; CONTRIBUTING.md's is the one"
grep -qF '(../CONTRIBUTING.md#where-each-concern-lives)' "$design" ||
        fail "design.md does not link CONTRIBUTING.md's table of concerns"
grep -qxF '## Where each concern lives' "$top/CONTRIBUTING.md" ||
        fail "CONTRIBUTING.md has no section 'Where each concern lives'"

# The hot path: a removal lists finished/, within finished.h's cap.
hot=$(section "$design" "Hot path")
[ -n "$hot" ] || fail "design.md has no section 'Hot path'"
records=$(define "$top/common/finished.h" FINISHED_MAX_RECORDS)
[ -n "$records" ] || fail "no FINISHED_MAX_RECORDS in common/finished.h"
printf '%s\n' "$hot" | grep -qF -- '`finished/`' || fail "design.md's hot path does not say that a removal lists finished/"
printf '%s\n' "$hot" | grep -qF -- "$(thousands "$records") records" ||
        fail "design.md's hot path does not give finished/'s cap, $(thousands "$records") records"
! printf '%s\n' "$hot" | grep -qiE 'never scans[^.]*(state directory|statedir)' ||
        fail "design.md's hot path says a run never scans stateDir; a removal lists finished/"

# A thread walk's bounds: common/cgroup.h's.
walk=$(section "$design" "Every thread of the container")
for name in CGROUP_SUBTREE_DEPTH CGROUP_SUBTREE_CGROUPS CGROUP_SUBTREE_THREADS; do
        value=$(define "$top/common/cgroup.h" "$name")
        [ -n "$value" ] || { fail "no $name in common/cgroup.h"; continue; }
        case $name in
        *DEPTH) words="$value levels" ;;
        *CGROUPS) words="$(thousands "$value") cgroups" ;;
        *THREADS) words="$(thousands "$value") threads" ;;
        esac
        printf '%s\n' "$walk" | grep -qF -- "$words" ||
                fail "design.md's thread walk does not say '$words' ($name)"
done

# gc's actions: operations.md's list (the names with a hyphen in its
# "Actions:" paragraph) against the table of names in hook/gc.c.
code_actions=$(sed -n 's/^ *\[GC_[A-Z_]*\] = "\([a-z-]*\)",$/\1/p' "$top/hook/gc.c" | sort)
doc_actions=$(awk '/^Actions: /, /^$/' "$top/docs/operations.md" | grep -o '`[a-z][a-z]*-[a-z-]*`' | tr -d '`' | sort -u)
[ -n "$code_actions" ] || fail "no action names in hook/gc.c's table"
for a in $code_actions; do
        printf '%s\n' "$doc_actions" | grep -qx -- "$a" || fail "operations.md's list of gc's actions lacks $a"
done
for a in $doc_actions; do
        printf '%s\n' "$code_actions" | grep -qx -- "$a" || fail "operations.md lists gc action $a, which gc.c does not have"
done

[ "$failures" -eq 0 ] || exit 1
echo PASS
