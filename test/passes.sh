#!/usr/bin/env bash
# `npm test`: every test file on SQLite, then the storage folders again on PostgreSQL when
# TEST_DATABASE_URL names a server (test/helper.ts gives each data folder a schema of its own).
#
# Which suites run twice is decided by folder, never by a list of files, so a storage test added
# to one of these folders cannot run on SQLite only:
#   test/routes/    route suites (routes/ and the HTTP behaviour of the whole app)
#   test/src/       the framework-free core, one folder per folder of src/ (services, storage, config)
#   test/postgres/  what only PostgreSQL has; these run in the second pass only
# The other folders run once, on SQLite: test/plugins (a plugin on a bare Fastify, or one the
# store does not matter to), test/app (the document, the SDK, the property test, which snapshots
# the SQLite file), test/browser, test/proxies (nginx and Caddy in front of the server), test/process
# (the CLI, shutdown, workers, the soak and the multi-instance suite, which uses PostgreSQL and Redis
# whatever the pass), test/redis (the Redis-backed pieces, which use Redis whatever the pass) and
# test/mail (the SMTP servers the mail tests use).
# In CI the second pass is mandatory. Exits non-zero if either pass failed.
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

STORAGE_FOLDERS=routes,src,postgres

echo "# pass 1: SQLite"
GATEHOUSE_TEST_STORE=sqlite tap --exclude='test/postgres/**' "$@"
sqlite=$?
postgres=0
if [ -n "${TEST_DATABASE_URL:-}" ]; then
  echo "# pass 2: PostgreSQL (${TEST_DATABASE_URL%%\?*})"
  drop_test_databases
  # the coverage threshold (.taprc) is the first pass's, over every suite; this pass runs a part
  GATEHOUSE_TEST_STORE=postgres tap --disable-coverage "$@" "test/{$STORAGE_FOLDERS}/**/*.test.ts"
  postgres=$?
  drop_test_databases
else
  echo "# pass 2 skipped: TEST_DATABASE_URL is unset"
fi
[ "$sqlite" -eq 0 ] && [ "$postgres" -eq 0 ]
