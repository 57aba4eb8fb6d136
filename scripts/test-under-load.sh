#!/usr/bin/env bash
# Runs the suite as a busy machine would: `npm test` (vitest run) beside CPU-bound processes that
# compete for the cores the whole time, then prints each test file that took longer than a limit
# and the pass/fail summary. The suite must pass like this: tests wait for conditions, never for a
# given speed (README "Development").
#
#   scripts/test-under-load.sh                      # the whole suite beside 2 busy processes
#   scripts/test-under-load.sh test/cluster         # arguments go to vitest run
#   BUSY=3 SLOW_FILE_S=20 scripts/test-under-load.sh
#   RUNS=3 scripts/test-under-load.sh               # three runs in a row, stopping at the first red one
#
# BUSY: how many busy processes (default 2). SLOW_FILE_S: files slower than this are listed
# (default 30). RUNS: how many runs in a row (default 1); a run is red when a test fails or a file
# is slower than SLOW_FILE_S. Exit status: 0 when every run was green.
set -u
cd "$(dirname "$0")/.."

busy_count=${BUSY:-2}
slow_file_s=${SLOW_FILE_S:-30}
report=$(mktemp "${TMPDIR:-/tmp}/market-relay-vitest-XXXXXX")
busy=()

stop_busy() {
  local pid
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  busy=()
}
trap 'stop_busy; rm -f "$report"' EXIT
trap 'exit 130' INT TERM

summarize() {
node - "$report" "$slow_file_s" <<'JS'
const { readFileSync } = require('node:fs');
const [file, limit] = process.argv.slice(2);
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  console.log('test-under-load: no JSON report (vitest did not finish)');
  process.exit(1);
}
const root = `${process.cwd()}/`;
const files = report.testResults
  .map((result) => ({
    name: result.name.startsWith(root) ? result.name.slice(root.length) : result.name,
    seconds: (result.endTime - result.startTime) / 1000,
    status: result.status,
  }))
  .sort((a, b) => b.seconds - a.seconds);
const slow = files.filter((entry) => entry.seconds > Number(limit));
console.log(`\nFiles over ${limit} s: ${slow.length === 0 ? 'none' : ''}`);
for (const entry of slow) console.log(`  ${entry.seconds.toFixed(1).padStart(6)} s  ${entry.name} (${entry.status})`);
console.log(`Slowest: ${files.slice(0, 5).map((entry) => `${entry.name} ${entry.seconds.toFixed(1)} s`).join(', ')}`);
const failed = files.filter((entry) => entry.status !== 'passed');
console.log(
  `Tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests + report.numTodoTests} skipped, of ${report.numTotalTests}; ` +
    `files: ${files.length - failed.length} passed, ${failed.length} failed, of ${files.length}`,
);
for (const entry of failed) console.log(`  failed: ${entry.name}`);
const green = report.success && slow.length === 0;
console.log(green ? 'PASS' : `FAIL${report.success ? ` (files over ${limit} s)` : ''}`);
process.exit(green ? 0 : 1);
JS
}

runs=${RUNS:-1}
for ((run = 1; run <= runs; run++)); do
  for ((i = 0; i < busy_count; i++)); do
    node -e 'for (;;) {}' &
    busy+=("$!")
  done
  echo "test-under-load: run ${run} of ${runs}, vitest run beside ${busy_count} busy processes (pids ${busy[*]:-none})"
  started=$(date +%s)
  rm -f "$report"
  npx vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@"
  stop_busy
  echo "test-under-load: ${busy_count} busy processes stopped; $(($(date +%s) - started)) s in all"
  if ! summarize; then
    echo "test-under-load: run ${run} of ${runs} was red"
    exit 1
  fi
done
echo "test-under-load: ${runs} of ${runs} runs green"
