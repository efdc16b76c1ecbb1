#!/bin/bash
# Integration tests: the real hook binary against the resctrlfs emulator, with
# sleeper processes standing in for container inits.
#   test_hook.sh HOOK RESCTRLFS
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" integration
log_level=debug

# --- one pod, three containers: the group lives until the last poststop ------

test_three_containers() {
        mount_emulator
        write_config
        local g=$MNT/mon_groups/$UID1 p1 p2 p3
        sleeper p1 p2 p3
        check "create c1" create c1 "$p1" "$UID1"
        check "group created" test -d "$g"
        check "c1's pid in tasks" has_task "$g" "$p1"
        check "create c2" create c2 "$p2" "$UID1"
        check "create c3" create c3 "$p3" "$UID1"
        check "all three pids in tasks" [ "$(tasks_of "$g")" = "$(printf '%s\n' "$p1" "$p2" "$p3" | sort -n | tr '\n' ' ')" ]
        check "three members" [ "$(member_count "$UID1")" -eq 3 ]
        stop "$p1"; check "poststop c1" poststop c1 "$UID1"
        check "group kept after c1" test -d "$g"
        check "two members" [ "$(member_count "$UID1")" -eq 2 ]
        stop "$p2"; check "poststop c2" poststop c2 "$UID1"
        check "group kept after c2" test -d "$g"
        stop "$p3"; check "poststop c3" poststop c3 "$UID1"
        check "group removed after the last" test ! -e "$g"
        check "state files removed" no_state "$UID1"
        check "no temp files" no_temp_files
}

# --- compact upper-case UID lands in the canonical group --------------------

test_compact_uid() {
        mount_emulator
        write_config
        local p
        sleeper p
        check "create with compact UID" create c1 "$p" "$(echo "${UID1//-/}" | tr a-f A-F)"
        check "canonical group name" has_task "$MNT/mon_groups/$UID1" "$p"
        stop "$p"; check "poststop" poststop c1 "${UID1//-/}"
        check "group removed" test ! -e "$MNT/mon_groups/$UID1"
}

# --- a pod whose containers sit in different control groups -----------------

test_mixed_class() {
        mount_emulator --ctrl-groups gold,silver
        write_config
        local p1 p2 p3
        bundle "$WORK/b-gold" '{"closID":"gold"}'
        bundle "$WORK/b-root" '{"closID":"/"}'
        sleeper p1 p2 p3
        echo "$p1" >"$MNT/gold/tasks"  # what the runtime does for closID gold
        check "create in gold" create c1 "$p1" "$UID1" "$WORK/b-gold"
        check "create in root (closID /)" create c2 "$p2" "$UID1" "$WORK/b-root"
        check "create in root (no intelRdt)" create c3 "$p3" "$UID1"
        check "gold group holds c1" has_task "$MNT/gold/mon_groups/$UID1" "$p1"
        check "root group holds c2" has_task "$MNT/mon_groups/$UID1" "$p2"
        check "root group holds c3" has_task "$MNT/mon_groups/$UID1" "$p3"
        check "c1 still in gold" has_task "$MNT/gold" "$p1"
        stop "$p1"; check "poststop c1" poststop c1 "$UID1"
        check "gold group removed with its last member" test ! -e "$MNT/gold/mon_groups/$UID1"
        check "root group kept" test -d "$MNT/mon_groups/$UID1"
        stop "$p2"; poststop c2 "$UID1"; stop "$p3"; poststop c3 "$UID1"
        check "root group removed" test ! -e "$MNT/mon_groups/$UID1"
        check "state removed" no_state "$UID1"
}

# --- out of RMIDs: the container starts unmonitored, nothing half-made ------

test_enospc() {
        mount_emulator --num-rmids 2   # RMID 0 is the root's: one group fits
        write_config
        local p1 p2
        sleeper p1 p2
        check "first pod gets the last RMID" create a1 "$p1" "$UID1"
        check "second pod: exit 0 under ignore" create b1 "$p2" "$UID2"
        check "no group for the second pod" test ! -e "$MNT/mon_groups/$UID2"
        check "logged with the kernel's reason" grep -q "Out of RMIDs" "$LOG"
        check "recorded as unmonitored" grep -q '"monitored":false' "$STATE/$UID2.members"
        write_config "failurePolicy: fail"
        check "RMID exhaustion is not a failure, even under fail" create b2 "$p2" "$UID2"
        stop "$p2"
        check "poststop of the unmonitored" poststop b1 "$UID2"
        poststop b2 "$UID2"
        check "unmonitored pod leaves no state" no_state "$UID2"
        stop "$p1"; poststop a1 "$UID1"
}

test_ebusy() {
        mount_emulator --num-rmids 2 --limbo-ms 60000
        write_config
        local p1 p2
        sleeper p1 p2
        create a1 "$p1" "$UID1"
        stop "$p1"; poststop a1 "$UID1"      # its RMID goes to limbo
        : >"$LOG"
        check "EBUSY: exit 0" create b1 "$p2" "$UID2"
        check "EBUSY logged" grep -q "EBUSY\|busy" "$LOG"
        check "no group while in limbo" test ! -e "$MNT/mon_groups/$UID2"
        check "recorded as unmonitored (limbo)" grep -q 'limbo' "$STATE/$UID2.members"
        stop "$p2"; poststop b1 "$UID2"
        check "no state left" no_state "$UID2"
}

# RMIDs that leave limbo while createRuntime has time left: it waits for one.
test_ebusy_waited_out() {
        mount_emulator --num-rmids 2 --limbo-ms 600
        write_config
        local p1 p2
        sleeper p1 p2
        create a1 "$p1" "$UID1"
        stop "$p1"; poststop a1 "$UID1"      # its RMID goes to limbo for 0.6 s
        : >"$LOG"
        check "EBUSY waited out: exit 0" create b1 "$p2" "$UID2"
        check "the group made once limbo drained" has_task "$MNT/mon_groups/$UID2" "$p2"
        check "recorded as monitored" grep -q '"monitored":true' "$STATE/$UID2.members"
        stop "$p2"; poststop b1 "$UID2"
        check "no state left" no_state "$UID2"
}

# --- the task sits in another control group than config.json says -----------

test_class_mismatch() {
        mount_emulator --ctrl-groups gold,silver
        write_config
        local p
        bundle "$WORK/b-gold2" '{"closID":"gold"}'
        sleeper p
        echo "$p" >"$MNT/silver/tasks"
        check "class mismatch: exit 0" create c1 "$p" "$UID1" "$WORK/b-gold2"
        check "no group left behind" test ! -e "$MNT/gold/mon_groups/$UID1"
        check "task not moved out of silver" has_task "$MNT/silver" "$p"
        check "recorded as class mismatch" grep -q 'class mismatch' "$STATE/$UID1.members"
        stop "$p"; poststop c1 "$UID1"
        check "no state left" no_state "$UID1"
}

# --- createRuntime twice (prestart and createRuntime both registered) -------

test_duplicate_create() {
        mount_emulator
        write_config
        local p before
        sleeper p
        check "first" create c1 "$p" "$UID1"
        before=$(cat "$STATE/$UID1.members")
        check "second" create c1 "$p" "$UID1"
        check "prestart is createRuntime" hook prestart "$(state c1 "$p" "$UID1")"
        check "state unchanged" [ "$before" = "$(cat "$STATE/$UID1.members")" ]
        check "one member" [ "$(member_count "$UID1")" -eq 1 ]
        stop "$p"; poststop c1 "$UID1"
        check "group removed" test ! -e "$MNT/mon_groups/$UID1"
}

# --- poststop for a container the hook never saw ---------------------------

test_poststop_unknown() {
        mount_emulator
        write_config
        local p
        check "unknown pod: exit 0" poststop ghost "$UID2"
        check "no state made for it" no_state "$UID2"
        sleeper p
        create c1 "$p" "$UID1"
        check "unknown container of a known pod" poststop ghost "$UID1"
        check "known member kept" [ "$(member_count "$UID1")" -eq 1 ]
        check "group kept" has_task "$MNT/mon_groups/$UID1" "$p"
        stop "$p"; poststop c1 "$UID1"
}

# --- someone removes the group between two containers ------------------------

test_group_removed_by_someone_else() {
        mount_emulator
        write_config
        local p1 p2
        sleeper p1 p2
        create c1 "$p1" "$UID1"
        rmdir "$MNT/mon_groups/$UID1"
        : >"$LOG"
        check "second container" create c2 "$p2" "$UID1"
        check "warned" grep -q "removed by someone else" "$LOG"
        check "group re-created with c2" has_task "$MNT/mon_groups/$UID1" "$p2"
        check "c1 put back" has_task "$MNT/mon_groups/$UID1" "$p1"
        stop "$p1"; poststop c1 "$UID1"; stop "$p2"; poststop c2 "$UID1"
        check "removed at the end" test ! -e "$MNT/mon_groups/$UID1"
        check "no state left" no_state "$UID1"
}

# --- a group of the same name the hook did not create is never removed -------

test_foreign_group() {
        mount_emulator
        write_config
        local p
        mkdir "$MNT/mon_groups/$UID1"
        sleeper p
        check "joins the existing group" create c1 "$p" "$UID1"
        check "pid in it" has_task "$MNT/mon_groups/$UID1" "$p"
        stop "$p"; poststop c1 "$UID1"
        check "foreign group not removed" test -d "$MNT/mon_groups/$UID1"
        check "no state left" no_state "$UID1"
}

# A group the hook found, then lost and made itself, is the hook's: its last
# poststop removes it (no RMID leaks), and the record says so from the start.
test_foreign_group_recreated() {
        mount_emulator
        write_config
        local p1 p2
        mkdir "$MNT/mon_groups/$UID1"
        sleeper p1 p2
        create c1 "$p1" "$UID1"
        check "found: recorded as not the hook's" \
                jq -e '[.groups[].owned] == [false]' "$STATE/$UID1.members"
        rmdir "$MNT/mon_groups/$UID1" # its maker removed it
        check "second container" create c2 "$p2" "$UID1"
        check "made again: recorded as the hook's" \
                jq -e '[.groups[].owned] == [true]' "$STATE/$UID1.members"
        check "c1 put back" has_task "$MNT/mon_groups/$UID1" "$p1"
        stop "$p1"; poststop c1 "$UID1"; stop "$p2"; poststop c2 "$UID1"
        check "made again: removed at the last poststop" test ! -e "$MNT/mon_groups/$UID1"
        check "made again: no state left" no_state "$UID1"
}

# A createRuntime killed after it recorded its intent and before its mkdir:
# the next container completes what it began, and says so, not "removed by
# someone else"; the killed run's container, still alive, is put in too.
test_interrupted_create() {
        mount_emulator
        write_config
        local p1 p2
        sleeper p1 p2
        { strace -f -qq -o /dev/null -e inject=mkdirat:signal=KILL:when=1 \
                "$HOOK" --config "$CONFIG" createRuntime <<<"$(state c1 "$p1" "$UID1")" \
                2>>"$LOG"; } 2>/dev/null
        check "killed run: recorded as not finished" \
                jq -e '.members == [{"id":"c1","ctrl":"/","pid":'"$p1"',"start_time":.members[0].start_time,"monitored":false,"reason":"createRuntime did not finish"}] and ([.groups[].owned] == [true])' \
                "$STATE/$UID1.members"
        check "killed run: no group yet" test ! -e "$MNT/mon_groups/$UID1"
        : >"$LOG"
        check "second container" create c2 "$p2" "$UID1"
        check "says the run did not finish" grep -q "was not made by a createRuntime that did not finish; made it" "$LOG"
        check "does not blame someone else" not grep -q "removed by someone else" "$LOG"
        check "c1 put in" has_task "$MNT/mon_groups/$UID1" "$p1"
        check "c2 in" has_task "$MNT/mon_groups/$UID1" "$p2"
        # The runtime retries the killed container: it is recorded anew, not "already recorded".
        : >"$LOG"
        check "retried createRuntime of c1" create c1 "$p1" "$UID1"
        check "retry completes it" jq -e '[.members[].monitored] == [true, true]' "$STATE/$UID1.members"
        stop "$p1"; poststop c1 "$UID1"; stop "$p2"; poststop c2 "$UID1"
        check "interrupted: removed at the end" test ! -e "$MNT/mon_groups/$UID1"
        check "interrupted: no state left" no_state "$UID1"
}

# --- outside text in log lines and status rows --------------------------------

# Namespace and pod name come from annotations that users can set (Podman,
# hand-written bundles): a newline, an escape sequence or a megabyte of text
# must leave every log line and every status row one line of the hook's own.
test_annotations_printed() {
        mount_emulator
        local p text log_level=info # no debug lines beside the one
        write_config
        sleeper p
        printf 'shop\nresctrl-mon-hook: FORGED outcome=monitored \e[31mred\e[0m' >"$WORK/evil.txt"
        head -c $((1024 * 1024)) /dev/zero | tr '\0' 'n' >"$WORK/big.txt"
        for text in "$WORK/evil.txt" "$WORK/big.txt"; do
                jq -cn --rawfile ns "$text" --argjson pid "$p" --arg uid "$UID1" \
                        --arg b "$WORK/bundle-default" \
                        '{ociVersion: "1.2.0", id: "c1", status: "creating", pid: $pid, bundle: $b,
                          annotations: {"io.kubernetes.pod.uid": $uid,
                                        "io.kubernetes.pod.namespace": $ns,
                                        "io.kubernetes.pod.name": ($ns + "-pod")}}' >"$WORK/evil.json"
                bundle "$WORK/bundle-default"
                run_hook createRuntime "$WORK/evil.json"
                check "outside text: created" [ "$rc" -eq 0 ]
                check "outside text: one log line, the hook's" one_hook_line "$ERR"
                "$HOOK" --config "$CONFIG" status >"$WORK/status.txt" 2>>"$LOG"
                check "outside text: status rows are the hook's" plain_rows "$WORK/status.txt"
                # A name longer than Kubernetes allows is not kept at all.
                check "outside text: status shows it escaped, or not at all" \
                        grep -q '^pod .*  shop\\x0aresctrl-mon-hook: FORGED.*/shop\|^pod .*  -/-$' \
                        "$WORK/status.txt"
                run_hook poststop "$WORK/evil.json"
        done
}

# Exactly one line, starting with the hook's prefix, printable and short.
one_hook_line() { # FILE
        [ "$(wc -l <"$1")" -eq 1 ] && grep -q '^resctrl-mon-hook: ' "$1" && plain_rows "$1"
}

# No control character but the newline, no row over 8 KiB, no forged row.
plain_rows() { # FILE
        ! LC_ALL=C grep -q '[[:cntrl:]]' "$1" && [ "$(wc -L <"$1")" -lt 8192 ] &&
                ! grep -q '^resctrl-mon-hook: FORGED' "$1"
}

# --- failurePolicy and inputs that are not ours ------------------------------

test_failure_policy() {
        mount_emulator
        local p
        sleeper p
        write_config
        echo '{"ociVersion":"1.2.0","id":"x","status":"creating","pid":'"$p"',"bundle":"/","annotations":{}}' |
                "$HOOK" --config "$CONFIG" createRuntime 2>>"$LOG"
        check "no pod UID: exit 0" [ $? -eq 0 ]
        check "no pod UID: nothing made" [ -z "$(ls "$MNT/mon_groups")" ]
        resctrl_path=$WORK/nowhere write_config "failurePolicy: fail"
        create c1 "$p" "$UID1"
        check "fail: createRuntime error exits 1" [ $? -eq 1 ]
        resctrl_path=$WORK/nowhere write_config
        check "ignore: createRuntime error exits 0" create c1 "$p" "$UID1"
        write_config "failurePolicy: fail"
        hook createRuntime '{"id": "x", "pid": "12"}'
        check "fail: bad state exits 1" [ $? -eq 1 ]
        check "bad state logged" grep -q "pid" "$LOG"
        hook poststop 'not json'
        check "poststop: always 0" [ $? -eq 0 ]
        write_config
        check "bad UID refused" create c9 "$p" "../../etc"
        check "bad UID logged" grep -q "UID annotation is not a" "$LOG"
        check "nothing made for a bad UID" [ -z "$(ls "$MNT/mon_groups")" ]
}

not() { ! "$@"; }

only_line() { # PATTERN: $ERR is one line, and it matches
        [ "$(wc -l <"$ERR")" -eq 1 ] && grep -q "$1" "$ERR"
}

# A stage run is the runtime's: a bad command line never refuses a container
# unless the operator chose failurePolicy: fail, and then only at createRuntime.
# The commands keep exit 2 for misuse.
test_fail_open_command_line() {
        local p policy expected
        sleeper p
        state c1 "$p" "$UID1" >"$WORK/in.json"
        mkdir -p -m 0700 "$STATE" # counts go where state is; counting never makes it
        for policy in ignore fail; do
                write_config "failurePolicy: $policy"
                expected=0
                [ "$policy" = fail ] && expected=1
                "$HOOK" --config "$CONFIG" --log-level verbose createRuntime <"$WORK/in.json" 2>"$ERR"
                check "bad log level, $policy: createRuntime exits $expected" [ $? -eq "$expected" ]
                check "bad log level, $policy: one line, naming it" \
                        only_line "unknown log level 'verbose'"
                "$HOOK" --config "$CONFIG" --log-level verbose poststop <"$WORK/in.json" 2>"$ERR"
                check "bad log level, $policy: poststop exits 0" [ $? -eq 0 ]
                "$HOOK" --config "$CONFIG" createContainer <"$WORK/in.json" 2>"$ERR"
                check "unknown stage, $policy: exits 0" [ $? -eq 0 ]
                check "unknown stage, $policy: one line, naming it" \
                        only_line "unknown stage 'createContainer'"
                "$HOOK" --config "$CONFIG" --bogus createRuntime <"$WORK/in.json" 2>"$ERR"
                check "unknown option, $policy: createRuntime exits $expected" [ $? -eq "$expected" ]
                "$HOOK" --config "$CONFIG" createRuntime extra <"$WORK/in.json" 2>"$ERR"
                check "extra argument, $policy: createRuntime exits $expected" [ $? -eq "$expected" ]
        done
        check "bad command lines made nothing" [ -z "$(ls "$MNT/mon_groups")" ]
        check "bad command lines are counted" [ "$(stat -c %s "$STATE/outcome.usage.error" 2>/dev/null)" -ge 8 ]
        "$HOOK" --config "$CONFIG" gc --bogus 2>"$ERR"
        check "gc: unknown option exits 2" [ $? -eq 2 ]
        "$HOOK" --config "$CONFIG" --bogus status 2>"$ERR"
        check "status: unknown option before it exits 2" [ $? -eq 2 ]
}

for t in test_three_containers test_compact_uid test_mixed_class test_enospc test_ebusy \
        test_ebusy_waited_out \
        test_class_mismatch test_duplicate_create test_poststop_unknown \
        test_group_removed_by_someone_else test_foreign_group test_foreign_group_recreated \
        test_interrupted_create test_annotations_printed test_failure_policy \
        test_fail_open_command_line; do
        : >"$LOG"
        echo "== $t"
        $t
done

harness_done
