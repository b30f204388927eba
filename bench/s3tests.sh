#!/usr/bin/env bash
# Run the ceph/s3-tests conformance suite against a scratch gateway (docs/gateway.md has the figures).
#
#   bench/s3tests.sh <s3-tests checkout or bare git dir> [pytest args...]
#
# Fetches nothing: the suite comes from the path given (a bare git dir is exported to a temp dir) and its
# Python from S3TESTS_PYTHON (a venv with the suite's requirements.txt installed). A fresh data dir gets
# the three demo tiers and three users (main, alt, tenant) whose keys go into the suite's config; the gateway
# runs on a free port until the suite ends. Scope: test_s3.py + test_headers.py without the features no
# archive gateway here claims (IAM/STS/SNS, bucket logging, SSE-KMS/SSE-C/bucket encryption, S3 Select)
# and without tests marked fails_on_aws/fails_on_rgw. The JUnit XML lands in $S3TESTS_OUT (default /tmp).
set -euo pipefail

src=${1:?usage: bench/s3tests.sh <s3-tests path> [pytest args...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
py=${S3TESTS_PYTHON:-/tmp/s3tests-venv/bin/python}
out=${S3TESTS_OUT:-/tmp}
work=$(mktemp -d /tmp/s3tests-run.XXXXXX)
gw_pid=""
cleanup() { [ -n "$gw_pid" ] && kill "$gw_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

if [ -d "$src/s3tests" ]; then
  suite=$src
else
  suite=$work/suite
  mkdir -p "$suite"
  git -C "$src" archive HEAD | tar -x -C "$suite"
fi

export TIERPILOT_DATA_DIR=$work/data TIERPILOT_SECRET_KEY=s3tests-scratch-secret-key-0123456789abcdef
export TIERPILOT_DATABASE_URL="" TIERPILOT_REDIS_URL=""
mkdir -p "$TIERPILOT_DATA_DIR"
"$root/.venv/bin/tierpilot" db upgrade >/dev/null
users=$("$root/.venv/bin/python" - <<'EOF'
import json
from tierpilot.auth import service as auth
from tierpilot.app.bootstrap import demo_tiers
from tierpilot.drivers import registry
from tierpilot.kit.db import transaction

with transaction(write=True) as s:
    tiers = demo_tiers()
    s.add_all(tiers)
    s.flush()
    for tier in tiers:  # a posix tier writes only to a root carrying its marker
        registry.claim_location(tier)
    out = {}
    for name in ("main", "alt", "tenant"):
        user, key = auth.create_user(s, f"s3tests-{name}", f"{name}-password-123")
        out[name] = (user.id, key.access_key_id, key.secret_access_key)
print(json.dumps(out))
EOF
)
port=$("$root/.venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$root/.venv/bin/tierpilot" gateway --host 127.0.0.1 --port "$port" --log-level warning >"$work/gateway.log" 2>&1 &
gw_pid=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.2
done

"$root/.venv/bin/python" - "$users" "$port" >"$work/s3tests.conf" <<'EOF'
import json, sys
users, port = json.loads(sys.argv[1]), sys.argv[2]
print(f"[DEFAULT]\nhost = 127.0.0.1\nport = {port}\nis_secure = False\nssl_verify = False\n")
print("[fixtures]\nbucket prefix = s3t-{random}-\niam name prefix = s3-tests-\niam path prefix = /s3-tests/\n")
for name, (uid, ak, sk) in users.items():
    print(f"[s3 {name}]\ndisplay_name = s3tests-{name}\nuser_id = {uid}\nemail = {name}@example.com\n"
          f"access_key = {ak}\nsecret_key = {sk}\n" + ("tenant = testx\n" if name == "tenant" else ""))
print("[iam]\nemail = s3@example.com\nuser_id = 0\naccess_key = X\nsecret_key = X\ndisplay_name = iam\n")
for section in ("iam root", "iam alt root"):
    print(f"[{section}]\naccess_key = X\nsecret_key = X\nuser_id = 0\nemail = root@example.com\n")
EOF

scope='not fails_on_aws and not fails_on_rgw and not bucket_logging and not bucket_logging_cleanup
  and not encryption and not bucket_encryption and not sse_s3 and not s3select and not sns
  and not iam_account and not iam_user and not iam_role and not iam_tenant and not iam_cross_account
  and not test_of_sts and not webidentity_test'
cd "$suite"
uptime
set +e
env -u AWS_CA_BUNDLE S3TEST_CONF=$work/s3tests.conf "$py" -m pytest -q -p no:cacheprovider \
  s3tests/functional/test_s3.py s3tests/functional/test_headers.py -m "$(echo $scope)" \
  -k 'not sse_kms and not sse_c and not encryption and not logging' \
  --junitxml="$out/s3tests-junit.xml" -o junit_family=xunit1 "$@" | tail -n 3
rc=${PIPESTATUS[0]}
set -e
uptime
exit "$rc"
