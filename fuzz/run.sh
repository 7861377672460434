#!/usr/bin/env bash
# Fuzzes every target (or the ones named) for a given time each, unattended: one after the
# other, or -j at a time.
#
#   fuzz/run.sh [-t SECONDS] [-j JOBS] [--cmin] [--no-build] [TARGET...]
#
#   -t SECONDS  time per target (default 600; 0 with --cmin only minimises); a crash restarts
#               the target for the time left, at most three times, so one bug does not end a run;
#               a timeout that does not recur when replayed alone is not counted (a paused run)
#   -j JOBS     targets fuzzed at once (default 1; one per core is what a quiet machine takes)
#   --cmin      afterwards, minimise each target's corpus (fuzz/corpus/TARGET, committed) with
#               what it found and its seeds (`cargo fuzz cmin` does the same merge), then keep
#               its smallest files up to CORPUS_CAP_KB (default 512)
#   --no-build  use the binaries already built
#
#   SANITIZER=none fuzz/run.sh -j 2 -t 3600 --cmin    # an hour on every target, two at once,
#                 without ASan (no unsafe code to check; many times the executions a second)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). On a stable toolchain the nightly
# flags it passes (-Zsanitizer=address, -Cpasses=sancov-module) are allowed by RUSTC_BOOTSTRAP=1;
# stable's std ships the AddressSanitizer runtime (librustc-stable_rt.asan.a), so the targets run
# with ASan and its LeakSanitizer. SANITIZER=none builds without them (no leak detection).
#
# Every process runs under `nice -n 19`. Each input is held to -timeout seconds (a hang is a
# crash, kept as timeout-*), the process to -rss_limit_mb (a blow-up is kept as oom-*, and so is
# one allocation over the same limit), and inputs to a -max_len that fits the target. Seeds are
# read in place from testdata/ and ../shared/ (plan-samples, spark-conformance, real-world);
# logs made plain and cut to -max_len are written by seeds.py under fuzz/artifacts/seeds/.
# Crashes, logs and seeds of a run go to fuzz/artifacts/TARGET/, and one summary line per target
# to fuzz/artifacts/summary.tsv (and the terminal): runs, execs/s, coverage, crashes.
set -euo pipefail
# All in one function, read whole before it runs, and the exit on its call's line ends the
# script there: editing this file mid-run changes nothing.
main() {
    here="$(cd "$(dirname "$0")" && pwd)"
    root="$(dirname "$here")"
    shared="${SHARED:-$root/../shared}"
    seconds=600
    parallel=1
    cmin=false
    build=true
    targets=()
    while [ $# -gt 0 ]; do
        case "$1" in
            -t) seconds="$2"; shift 2 ;;
            -j) parallel="$2"; shift 2 ;;
            --cmin) cmin=true; shift ;;
            --no-build) build=false; shift ;;
            -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
            -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
            *) targets+=("$1"); shift ;;
        esac
    done
    all_targets=(codec_gzip codec_lz4 codec_lzf codec_snappy codec_zstd read_log model plan
        streaming memory mcp diff)
    [ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

    # -max_len: a codec frame or two, a file for the reader, a plan (64 KiB); a few dozen events of
    # a real log (16 KiB: longer pieces ran at a quarter of the speed and made a corpus of 27 MB;
    # the largest SQL starts, plan and all, are the `plan` and `read_log` targets' to try); an MCP
    # session; two pieces of logs for diff. -timeout: seconds per input.
    max_len_of() {
        case "$1" in
            model|streaming|memory|mcp) echo 16384 ;;
            diff) echo 32768 ;;
            *) echo 65536 ;;
        esac
    }
    timeout_of() {
        case "$1" in
            mcp|diff) echo 30 ;;
            *) echo 10 ;;
        esac
    }
    # Seed folders read in place; targets of plain event lines get generated seeds (seeds.py).
    seed_dirs_of() {
        case "$1" in
            codec_*) echo "$root/testdata/logs" ;;
            read_log) echo "$root/testdata/logs $shared/spark-conformance $shared/real-world" ;;
            plan) echo "$root/testdata/plans $shared/plan-samples" ;;
            *) echo "" ;;
        esac
    }
    generates_seeds() {
        case "$1" in model|streaming|memory|mcp|diff) return 0 ;; *) return 1 ;; esac
    }

    sanitizer="${SANITIZER:-address}"
    export RUSTC_BOOTSTRAP=1
    cd "$here"
    if $build; then
        if [ ${#targets[@]} -eq ${#all_targets[@]} ]; then
            nice -n 19 cargo fuzz build --sanitizer "$sanitizer"
        else
            for t in "${targets[@]}"; do nice -n 19 cargo fuzz build --sanitizer "$sanitizer" "$t"; done
        fi
    fi
    bin_dir="$here/target/x86_64-unknown-linux-gnu/release"
    # Leaks are checked (LeakSanitizer, after an input whose mallocs outnumber its frees); the
    # reader joins its decoder thread so that a thread's teardown is never seen as a leak.
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
    summary="$here/artifacts/summary.tsv"
    mkdir -p "$here/artifacts"
    [ -f "$summary" ] || printf 'date\ttarget\tseconds\truns\texecs_per_s\tcov\tft\tcorpus\tcrashes\n' >"$summary"

    one_target() {
        local target="$1"
        bin="$bin_dir/$target"
        [ -x "$bin" ] || { echo "run.sh: $bin not built" >&2; exit 1; }
        out="$here/artifacts/$target"
        corpus="$here/corpus/$target"
        mkdir -p "$out" "$corpus"
        seeds=()
        for d in $(seed_dirs_of "$target"); do [ -d "$d" ] && seeds+=("$d"); done
        if generates_seeds "$target"; then
            rm -rf "$out/seeds"
            python3 "$here/seeds.py" "$target" "$out/seeds" "$(max_len_of "$target")" "$shared" >/dev/null
            seeds+=("$out/seeds")
        fi
        stamp="$(date -u +%Y%m%dT%H%M%SZ)"
        if [ "$seconds" -gt 0 ]; then
            log="$out/run-$stamp.log"
            before=$(find "$out" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'timeout-*' \
                -o -maxdepth 1 -name 'oom-*' -o -maxdepth 1 -name 'leak-*' | wc -l)
            start=$(date +%s)
            runs=0
            restarts=0
            while :; do
                left=$((seconds - ($(date +%s) - start)))
                [ "$left" -ge 5 ] || break
                set +e
                nice -n 19 "$bin" "$corpus" "${seeds[@]}" \
                    -max_total_time="$left" -timeout="$(timeout_of "$target")" -rss_limit_mb=2048 \
                    -max_len="$(max_len_of "$target")" -artifact_prefix="$out/" -print_final_stats=1 \
                    >>"$log" 2>&1
                status=$?
                set -e
                runs=$((runs + $(grep -o '^stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)))
                [ "$status" -ne 0 ] || break
                restarts=$((restarts + 1))
                [ "$restarts" -lt 3 ] || break
            done
            ran=$(($(date +%s) - start))
            # libFuzzer times an input by the wall clock, so a process stopped (SIGSTOP, to keep
            # a benchmark quiet; a suspended machine) or starved mid-input reports a hang that is
            # not one. Each new timeout is replayed alone; one that finishes within the limit is
            # kept as `unreproduced-timeout-*` for a look, and not counted as a crash.
            while read -r hang; do
                [ -n "$hang" ] || continue
                if nice -n 19 "$bin" -timeout="$(timeout_of "$target")" -rss_limit_mb=2048 \
                    "$hang" >>"$log" 2>&1; then
                    mv "$hang" "$out/unreproduced-$(basename "$hang")"
                    echo "$target: $(basename "$hang") did not hang when replayed alone"
                fi
            done < <(find "$out" -maxdepth 1 -name 'timeout-*' -newermt "@$start")
            after=$(find "$out" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'timeout-*' \
                -o -maxdepth 1 -name 'oom-*' -o -maxdepth 1 -name 'leak-*' | wc -l)
            last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
            cov=$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*' || echo 0)
            ft=$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*' || echo 0)
            eps=$(grep -o '^stat::average_exec_per_sec: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
            files=$(find "$corpus" -type f | wc -l)
            crashes=$((after - before))
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$stamp" "$target" "$ran" "$runs" "$eps" \
                "$cov" "$ft" "$files" "$crashes" >>"$summary"
            echo "$target: ${ran}s, $runs runs, $eps execs/s, cov $cov, ft $ft, corpus $files, crashes $crashes (log $log)"
        fi

        if $cmin; then
            fresh="$out/cmin"
            rm -rf "$fresh" && mkdir -p "$fresh"
            nice -n 19 "$bin" -merge=1 -max_len="$(max_len_of "$target")" \
                -timeout="$(timeout_of "$target")" -rss_limit_mb=2048 "$fresh" "$corpus" "${seeds[@]}" \
                >>"$out/cmin-$stamp.log" 2>&1
            rm -rf "$corpus" && mv "$fresh" "$corpus"
            # Then the smallest files up to CORPUS_CAP_KB (512 KiB) are kept: they carry most
            # features for their size, and the committed corpora stay a few MB in all.
            local total=0 size file
            while read -r size file; do
                total=$((total + size))
                [ "$total" -le $((${CORPUS_CAP_KB:-512} * 1024)) ] || rm -f "$file"
            done < <(find "$corpus" -type f -printf '%s %p\n' | sort -n)
            echo "$target: corpus minimised to $(find "$corpus" -type f | wc -l) files, $(du -sh "$corpus" | cut -f1)"
        fi
    }
    # Each target in a subshell of its own (its variables stay its own), at most `parallel` at once.
    for target in "${targets[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
        (one_target "$target") &
    done
    wait
}
main "$@"; exit
