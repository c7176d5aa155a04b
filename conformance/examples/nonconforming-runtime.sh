#!/usr/bin/env bash
# A deliberately non-conforming runtime, to show that the kit certifies any process and that
# baselines name exactly what a runtime breaks: the reference runtime with one kind of message
# rewritten on its way out — "method not found" (-32601) becomes "invalid request" (-32600).
# Nothing else changes, so only REQ-RPC-006 (and the batch scenario that quotes -32601) fail.
#
#   cargo build -p agent-runtime
#   cargo xtask certify --runtime conformance/examples/nonconforming-runtime.sh \
#     --tags "@REQ-RPC-005 or @REQ-RPC-006 or @REQ-RPC-010" \
#     --baseline conformance/examples/nonconforming.baseline.toml
#
# The wrapped binary: a first argument that is not an option, else REFERENCE_RUNTIME, else
# the workspace's debug build (the kit itself adds no arguments over stdio).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
runtime="${REFERENCE_RUNTIME:-$here/../../target/debug/agent-runtime}"
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then
  runtime="$1"
  shift
fi
# sed -u: one line in, one line out, at once (the kit waits for each answer).
"$runtime" "$@" | sed -u -e 's/"code":-32601/"code":-32600/g'
