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
# each test process of the PostgreSQL pass makes a database of its own, gh_<run id>_… (test/helper.ts):
# this run's id, so that the clean-up drops what this run made and nothing of another run on the server
export GATEHOUSE_TEST_RUN_ID=${GATEHOUSE_TEST_RUN_ID:-$(od -An -tx1 -N6 /dev/urandom | tr -d ' \n')}

STORAGE_FOLDERS=routes,src,postgres

echo "# pass 1: SQLite"
GATEHOUSE_TEST_STORE=sqlite tap --exclude='test/postgres/**' "$@"
sqlite=$?
postgres=0
if [ -n "${TEST_DATABASE_URL:-}" ]; then
  echo "# pass 2: PostgreSQL (${TEST_DATABASE_URL%%\?*})"
  # the coverage threshold (.taprc) is the first pass's, over every suite; this pass runs a part
  GATEHOUSE_TEST_STORE=postgres tap --disable-coverage "$@" "test/{$STORAGE_FOLDERS}/**/*.test.ts"
  postgres=$?
  "$(dirname "$0")/drop-test-databases.sh" "$TEST_DATABASE_URL" "$GATEHOUSE_TEST_RUN_ID"
else
  echo "# pass 2 skipped: TEST_DATABASE_URL is unset"
fi
[ "$sqlite" -eq 0 ] && [ "$postgres" -eq 0 ]
