#!/usr/bin/env bash
# Builds the real control plane used by the e2e tests (kube-apiserver, kube-scheduler, etcd)
# from Go modules, into a cache outside the repository.
#
#   hack/build-e2e-binaries.sh                  build what is missing, then print the bin dirs
#   hack/build-e2e-binaries.sh --print-bin-dir  only print the directory that holds (or will
#                                               hold) links to all three binaries
#
# k8s.io/kubernetes and go.etcd.io/etcd/server/v3 cannot be installed with `go install pkg@v`
# (their go.mod files carry replace directives), so each is built inside a throw-away wrapper
# module generated here. Versions live in hack/e2e-versions.env; the cache root can be moved
# with KUBE_PYSCHEDULER_E2E_CACHE. Progress goes to stderr, the resulting paths to stdout.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=e2e-versions.env
source "${repo_root}/hack/e2e-versions.env"

cache_root="${KUBE_PYSCHEDULER_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-pyscheduler/e2e}"
k8s_dir="${cache_root}/kubernetes-${KUBERNETES_VERSION}"
etcd_dir="${cache_root}/etcd-${ETCD_VERSION}"
combined_bin_dir="${cache_root}/bin-${KUBERNETES_VERSION}-${ETCD_VERSION}"

# Never fetch another toolchain, and build static binaries as upstream does.
export GOTOOLCHAIN=local CGO_ENABLED=0

log() { printf '[build-e2e-binaries] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Runs a command, then reports how long it took.
timed() {
  local what="$1"; shift
  local start=$SECONDS
  log "${what} ..."
  "$@"
  log "${what}: done in $((SECONDS - start)) s"
}

usage() {
  # The header comment above, without its comment markers.
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" >&2
}

print_only=false
case "${1:-}" in
  "") ;;
  --print-bin-dir) print_only=true ;;
  -h|--help) usage; exit 0 ;;
  *) usage; exit 2 ;;
esac

if "${print_only}"; then
  printf '%s\n' "${combined_bin_dir}"
  exit 0
fi

command -v go >/dev/null || die "the Go toolchain ('go') is not on PATH; the e2e binaries need it"
if ! command -v jq >/dev/null; then
  # jq reads the go command's JSON output. A fresh Debian machine may lack it; install it when
  # we can (CI runs as root), otherwise say what is missing.
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    log "installing jq"
    apt-get update -qq >/dev/null && apt-get install -y -qq jq >/dev/null
  fi
  command -v jq >/dev/null || die "'jq' is not on PATH; it reads the go command's JSON output"
fi
go_version="$(go env GOVERSION)"

# The stamp records everything that decides the binaries' content (including this script, the
# recipe); a mismatch means rebuild.
recipe_sum="$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"
stamp_text() {
  printf 'module=%s\nversion=%s\ngo=%s\nrecipe=%s\n' "$1" "$2" "${go_version}" "${recipe_sum}"
}

is_current() {
  local dir="$1" stamp="$2"; shift 2
  [[ -f "${dir}/stamp" ]] && [[ "$(cat "${dir}/stamp")" == "${stamp}" ]] || return 1
  local bin
  for bin in "$@"; do [[ -x "${dir}/bin/${bin}" ]] || return 1; done
}

# Prints the file path of a module's go.mod in the module cache, downloading it if needed.
cached_go_mod() {
  go mod download -json "$1" | jq -er '.GoMod'
}

# Copies the go and godebug lines of a dependency's go.mod into the wrapper, so the main
# module (which decides default GODEBUG settings) behaves like the upstream build.
copy_go_and_godebug() {
  local upstream_go_mod="$1" parsed go_line
  parsed="$(go mod edit -json "${upstream_go_mod}")"
  go_line="$(jq -r '.Go // empty' <<<"${parsed}")"
  if [[ -n "${go_line}" ]]; then go mod edit -go="${go_line}"; fi
  local setting
  while IFS= read -r setting; do
    if [[ -n "${setting}" ]]; then go mod edit -godebug="${setting}"; fi
  done < <(jq -r '(.GoDebug // [])[] | "\(.Key)=\(.Value)"' <<<"${parsed}")
}

# Starts a fresh wrapper module in "$1/module".
new_wrapper_module() {
  local dir="$1" name="$2"
  rm -rf "${dir}/module" "${dir}/stamp"
  mkdir -p "${dir}/module" "${dir}/bin"
  (cd "${dir}/module" && go mod init "${name}" 2>/dev/null)
}

build_kubernetes() {
  local version="${KUBERNETES_VERSION}" stamp
  stamp="$(stamp_text k8s.io/kubernetes "${version}")"
  if is_current "${k8s_dir}" "${stamp}" kube-apiserver kube-scheduler; then
    log "kubernetes ${version}: up to date in ${k8s_dir}/bin"
    return
  fi
  local staging_version="v0.${version#v1.}"
  local minor="${version#v1.}"; minor="${minor%%.*}"
  local total_start=$SECONDS

  new_wrapper_module "${k8s_dir}" local/kube-pyscheduler-e2e/kubernetes
  cd "${k8s_dir}/module"
  local k8s_go_mod
  log "fetch the go.mod of k8s.io/kubernetes@${version}"
  k8s_go_mod="$(cached_go_mod "k8s.io/kubernetes@${version}")"
  copy_go_and_godebug "${k8s_go_mod}"

  # Every staging module is required at the fake version v0.0.0 and replaced by a directory
  # inside the kubernetes repo; each has a published tag v0.<minor>.<patch> to use instead.
  # The replaces must be in place before the first `go get`, or resolution stops at v0.0.0.
  local staging=()
  mapfile -t staging < <(go mod edit -json "${k8s_go_mod}" |
    jq -r '(.Replace // [])[] | select(.New.Path | startswith("./staging/")) | .Old.Path')
  [[ ${#staging[@]} -gt 0 ]] || die "no staging replaces found in ${k8s_go_mod}"
  log "pinning ${#staging[@]} staging modules to ${staging_version}"
  local module
  for module in "${staging[@]}"; do
    go mod edit -replace="${module}=${module}@${staging_version}"
  done
  go mod edit -require="k8s.io/kubernetes@${version}"

  timed "resolve and download kube-apiserver + kube-scheduler dependencies" \
    go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@${version}" \
    "k8s.io/kubernetes/cmd/kube-scheduler@${version}"

  local ldflags="-s -w"
  local pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X ${pkg}.gitVersion=${version} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
    ldflags+=" -X ${pkg}.gitTreeState=clean"
  done
  local cmd
  for cmd in kube-apiserver kube-scheduler; do
    timed "compile ${cmd} ${version}" \
      go build -trimpath -tags selinux,notest,grpcnotrace -ldflags "${ldflags}" \
      -o "${k8s_dir}/bin/${cmd}" "k8s.io/kubernetes/cmd/${cmd}"
  done
  cd "${repo_root}"
  printf '%s\n' "${stamp}" >"${k8s_dir}/stamp"
  log "kubernetes ${version}: built in $((SECONDS - total_start)) s"
}

build_etcd() {
  local version="${ETCD_VERSION}" stamp
  stamp="$(stamp_text go.etcd.io/etcd/server/v3 "${version}")"
  if is_current "${etcd_dir}" "${stamp}" etcd; then
    log "etcd ${version}: up to date in ${etcd_dir}/bin"
    return
  fi
  local total_start=$SECONDS

  # The server module's own replaces point at sibling directories; they are ignored in a
  # dependency, where the siblings resolve to their published modules at the same tag.
  new_wrapper_module "${etcd_dir}" local/kube-pyscheduler-e2e/etcd
  cd "${etcd_dir}/module"
  copy_go_and_godebug "$(cached_go_mod "go.etcd.io/etcd/server/v3@${version}")"
  timed "resolve and download etcd dependencies" \
    go get -tool "go.etcd.io/etcd/server/v3@${version}"
  timed "compile etcd ${version}" \
    go build -trimpath -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=${version}" \
    -o "${etcd_dir}/bin/etcd" go.etcd.io/etcd/server/v3
  cd "${repo_root}"
  printf '%s\n' "${stamp}" >"${etcd_dir}/stamp"
  log "etcd ${version}: built in $((SECONDS - total_start)) s"
}

# One directory holding all three, for callers that want a single path.
link_combined_bin_dir() {
  mkdir -p "${combined_bin_dir}"
  ln -sfn "${k8s_dir}/bin/kube-apiserver" "${combined_bin_dir}/kube-apiserver"
  ln -sfn "${k8s_dir}/bin/kube-scheduler" "${combined_bin_dir}/kube-scheduler"
  ln -sfn "${etcd_dir}/bin/etcd" "${combined_bin_dir}/etcd"
}

mkdir -p "${cache_root}"
# Concurrent runs (two test sessions, say) wait for each other instead of racing on one module.
exec 9>"${cache_root}/.lock"
flock 9

log "cache: ${cache_root} (${go_version})"
build_etcd
build_kubernetes
link_combined_bin_dir
"${k8s_dir}/bin/kube-apiserver" --version >&2
# Read the whole output before keeping its first line: under pipefail, `| head -n 1` can close
# the pipe while etcd still writes, and its SIGPIPE (exit 141) would fail the script.
etcd_version="$("${etcd_dir}/bin/etcd" --version)"
printf '%s\n' "${etcd_version%%$'\n'*}" >&2

printf '%s\n' "${k8s_dir}/bin" "${etcd_dir}/bin" "${combined_bin_dir}"
