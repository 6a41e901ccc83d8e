#!/usr/bin/env bash
# `npm test`: every test file on SQLite, then the storage folders again on PostgreSQL when
# TEST_DATABASE_URL names a server (test/helper.ts gives each data folder a schema of its own).
#
# Which suites run twice is decided by folder, never by a list of files, so a storage test added
# to one of these folders cannot run on SQLite only:
#   test/routes/    route suites (routes/ and the HTTP behaviour of the whole app)
#   test/src/       the framework-free core, one folder per folder of src/ (services, storage), and
#                   test/src/*.test.ts (createServices) — but for the folders in STORE_FREE below
#   test/postgres/  what only PostgreSQL has; these run in the second pass only
# The folders of test/src in STORE_FREE open no store, so on PostgreSQL they ran the very same
# code a second time (none imports what builds an app or opens a store — build, testConfig and the
# like from test/helper.ts, src/app.ts, src/db/ — and test/app/layout.test.ts fails on such an
# import). They run once, in the first pass:
#   breached-passwords/  the blocklist's builder and binary search, on files in a temporary folder
#   config/      loadConfig on given values, and src/server.ts started with DATA_DIR alone, which is
#                SQLite whatever the pass (an app on TRUST_PROXY is test/routes/throttle.test.ts)
#   http/        the access rules and the credential parsing: functions of their arguments
#   limits/      the address groups, and the failure throttle on memory and on Redis (whatever the pass)
#   logging/     the lazy logger and the request ids
#   portal/      the return-URL rule, the CSRF and Origin rules, the sealed flow cookie, the loop guard
#   runtime/     npm start's entry, compiled and run in a child process that opens nothing
#   two-factor/  TOTP codes
#   api-keys/    the API key format and its checksum
# A folder added to test/src runs in both passes until it is added here.
# The other folders run once, on SQLite: test/plugins (a plugin on a bare Fastify, or one the
# store does not matter to), test/app (the document, the SDK, the property test, which snapshots
# the SQLite file), test/browser, test/proxies (nginx and Caddy in front of the server), test/oidc
# (real relying parties of the OpenID Connect provider: openid-client, Apache with mod_auth_openidc,
# Authlib, and two instances on PostgreSQL and Redis whatever the pass), test/idp (sign-in through
# upstream identity providers: oidc-provider, a jose signer and a GitHub double on loopback),
# test/process (the CLI, shutdown, workers, the soak and the multi-instance suite, which uses
# PostgreSQL and Redis whatever the pass), test/redis (the Redis-backed pieces, which use Redis
# whatever the pass) and test/mail (the SMTP servers the mail tests use).
# In CI the second pass is mandatory. Exits non-zero if either pass failed.
set -uo pipefail
if [ "${CI:-}" = true ] && [ -z "${TEST_DATABASE_URL:-}" ]; then
  echo "CI=true but TEST_DATABASE_URL is unset: the PostgreSQL pass cannot be skipped in CI" >&2
  exit 1
fi
# each test process of the PostgreSQL pass makes a database of its own, gh_<run id>_… (test/helper.ts):
# this run's id, so that the clean-up drops what this run made and nothing of another run on the server
export GATEHOUSE_TEST_RUN_ID=${GATEHOUSE_TEST_RUN_ID:-$(od -An -tx1 -N6 /dev/urandom | tr -d ' \n')}

STORAGE_FOLDERS=routes,postgres
STORE_FREE='api-keys|breached-passwords|config|http|limits|logging|portal|runtime|two-factor'

# tap is built for a set of plugins, and the one `npm ci` installs is built for tap's defaults,
# @tapjs/typescript among them, which .taprc removes (tsx compiles the tests: test/tsx.js). The first
# run after an install rebuilds tap for its test files, but takes the node arguments of every test
# process from the build it started with: in CI every test file of pass 1 also loaded
# @tapjs/typescript's ts-node loader, about 3 s more CPU and 280 MB more memory per file
# (test/routes/auth, 25 files: 212 s of CPU with it, 134 s without). So build for .taprc first
# whenever the installed build differs from it (the build that first run makes anyway, once).
if ! node --input-type=module -e "
  import { TapConfig } from '@tapjs/config'
  import { signature } from '@tapjs/test/test-built'
  process.exit((await TapConfig.load()).pluginSignature === signature ? 0 : 1)
" 2> /dev/null; then
  echo "# tap build: the installed build is not .taprc's plugin set"
  tap build || exit 1
fi

echo "# pass 1: SQLite"
GATEHOUSE_TEST_STORE=sqlite tap --exclude='test/postgres/**' "$@"
sqlite=$?
postgres=0
if [ -n "${TEST_DATABASE_URL:-}" ]; then
  echo "# pass 2: PostgreSQL (${TEST_DATABASE_URL%%\?*})"
  # the coverage threshold (.taprc) is the first pass's, over every suite; this pass runs a part
  GATEHOUSE_TEST_STORE=postgres tap --disable-coverage "$@" "test/{$STORAGE_FOLDERS}/**/*.test.ts" \
    "test/src/*.test.ts" "test/src/!($STORE_FREE)/**/*.test.ts"
  postgres=$?
  "$(dirname "$0")/drop-test-databases.sh" "$TEST_DATABASE_URL" "$GATEHOUSE_TEST_RUN_ID"
else
  echo "# pass 2 skipped: TEST_DATABASE_URL is unset"
fi
[ "$sqlite" -eq 0 ] && [ "$postgres" -eq 0 ]
