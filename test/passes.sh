#!/usr/bin/env bash
# `npm test`: every test file on SQLite, then every storage-touching suite again on PostgreSQL
# when TEST_DATABASE_URL names a server (test/helper.ts gives each data folder a schema of its
# own). The second pass leaves out what does not depend on the store (the document, the browser,
# the SDK, rules, configuration, the CLI, shutdown, workers, soak and the property test, which
# snapshots the SQLite file) and the suites that use PostgreSQL and Redis whatever the pass
# (multi-instance, redis-counters, revocation-sync). Files under test/postgres/ test what only
# PostgreSQL has and run in the second pass only. In CI the second pass is mandatory.
# Exits non-zero if either pass failed.
set -uo pipefail
if [ "${CI:-}" = true ] && [ -z "${TEST_DATABASE_URL:-}" ]; then
  echo "CI=true but TEST_DATABASE_URL is unset: the PostgreSQL pass cannot be skipped in CI" >&2
  exit 1
fi
# each test process of the PostgreSQL pass makes a gh_* database of its own (test/helper.ts)
drop_test_databases () {
  local url=${TEST_DATABASE_URL%%\?*}
  for db in $(psql "$url" -Atc "select datname from pg_database where datname like 'gh\_%'" 2>/dev/null); do
    psql "$url" -qc "drop database if exists $db with (force)" >/dev/null 2>&1
  done
}

echo "# pass 1: SQLite"
GATEHOUSE_TEST_STORE=sqlite tap --exclude='test/postgres/**' "$@"
sqlite=$?
postgres=0
if [ -n "${TEST_DATABASE_URL:-}" ]; then
  echo "# pass 2: PostgreSQL (${TEST_DATABASE_URL%%\?*})"
  drop_test_databases
  GATEHOUSE_TEST_STORE=postgres tap "$@" \
    test/postgres/*.test.ts \
    test/routes/api-*.test.ts test/routes/auth-*.test.ts test/routes/throttle.test.ts \
    test/routes/metrics.test.ts test/routes/health.test.ts \
    test/bootstrap.test.ts test/logging.test.ts test/passwords.test.ts test/revocations.test.ts \
    test/tokens.test.ts test/security.test.ts test/user-reads.test.ts
  postgres=$?
  drop_test_databases
else
  echo "# pass 2 skipped: TEST_DATABASE_URL is unset"
fi
[ "$sqlite" -eq 0 ] && [ "$postgres" -eq 0 ]
