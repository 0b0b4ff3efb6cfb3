#!/usr/bin/env bash
# Builds the helm CLI used by the chart tests (tests/deploy) from its Go module, into a cache
# outside the repository, and prints the path of the binary.
#
#   hack/build-helm.sh               build when missing or stale, then print the binary's path
#   hack/build-helm.sh --print-path  only print where the binary is (or will be)
#
# The version lives in hack/e2e-versions.env (HELM_VERSION); the cache root is shared with
# hack/build-e2e-binaries.sh and can be moved with KUBE_PYSCHEDULER_E2E_CACHE.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=e2e-versions.env
source "${repo_root}/hack/e2e-versions.env"

cache_root="${KUBE_PYSCHEDULER_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-pyscheduler/e2e}"
helm_dir="${cache_root}/helm-${HELM_VERSION}"
helm_bin="${helm_dir}/bin/helm"

export GOTOOLCHAIN=local CGO_ENABLED=0

log() { printf '[build-helm] %s\n' "$*" >&2; }

case "${1:-}" in
  "") ;;
  --print-path) printf '%s\n' "${helm_bin}"; exit 0 ;;
  *) log "usage: $0 [--print-path]"; exit 2 ;;
esac

command -v go >/dev/null || { log "error: the Go toolchain ('go') is not on PATH"; exit 1; }
stamp="module=helm.sh/helm/v3 version=${HELM_VERSION} go=$(go env GOVERSION)"

mkdir -p "${cache_root}"
# Concurrent runs wait for each other instead of racing on one build.
exec 9>"${cache_root}/.helm.lock"
flock 9

if [[ -x "${helm_bin}" && -f "${helm_dir}/stamp" && "$(cat "${helm_dir}/stamp")" == "${stamp}" ]]; then
  log "helm ${HELM_VERSION}: up to date in ${helm_dir}/bin"
else
  start=$SECONDS
  rm -rf "${helm_dir}"
  mkdir -p "${helm_dir}/bin"
  log "compile helm ${HELM_VERSION} ..."
  GOBIN="${helm_dir}/bin" go install -trimpath -ldflags "-s -w" \
    "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
  printf '%s\n' "${stamp}" >"${helm_dir}/stamp"
  log "helm ${HELM_VERSION}: built in $((SECONDS - start)) s"
fi
printf '%s\n' "${helm_bin}"
