#!/usr/bin/env bash
# Drops the gh_<run id>_* databases of one test run (test/helper.ts names them after
# GATEHOUSE_TEST_RUN_ID): only what this run created, so a run sharing the PostgreSQL server
# (another developer's, CI beside a local run) keeps its databases. test/passes.sh calls it;
# test/postgres/drop-test-databases.test.ts shows a foreign gh_* database survives it.
# Usage: test/drop-test-databases.sh <postgres url> <run id>
set -uo pipefail
url=${1%%\?*}
run=$2
if ! [[ $run =~ ^[a-z0-9]{1,16}$ ]]; then
  echo "drop-test-databases: the run id must be 1 to 16 lower-case letters or digits, not '$run'" >&2
  exit 2
fi
for db in $(psql "$url" -Atc "select datname from pg_database where datname like 'gh\_${run}\_%'" 2>/dev/null); do
  psql "$url" -qc "drop database if exists $db with (force)" >/dev/null 2>&1
done
