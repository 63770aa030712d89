#!/usr/bin/env bash
# The GitHub Action of this repository (action.yml) in one script, so that it can be run and
# tested outside GitHub: get fuzzlint, check, write the outputs.
#
# 1. fuzzlint: with INPUT_VERSION, the release tarball
#      <repository>/releases/download/v<version>/fuzzfile-toolchain-<version>-x86_64-unknown-linux-gnu-static.tar.gz
#    (<repository> is `repository` of Cargo.toml's [workspace.package], or INPUT_RELEASE_URL as
#    the base before /v<version>/), its SHA-256 checked against the .sha256 file beside it;
#    without, `cargo install --locked --path <action>/crates/fuzzlint` (a Rust toolchain is
#    needed; FUZZLINT_INSTALL_ARGS adds arguments, such as --debug). Its directory is added to
#    GITHUB_PATH.
# 2. `fuzzlint check --output-format github` on INPUT_PATHS (whitespace-separated, default `.`)
#    with INPUT_ARGS (whitespace-separated): each finding an annotation; with
#    INPUT_SARIF=true, also `--output-format sarif --output-file $RUNNER_TEMP/fuzzlint.sarif`.
# 3. GITHUB_OUTPUT: exit-code (fuzzlint's: 0 clean, 1 findings, 2 error), sarif-file (when
#    written), fuzzlint (the binary).
#
# Runs in GITHUB_WORKSPACE; RUNNER_TEMP holds the download and the SARIF file. Exits 0 after
# a check (action.yml fails the step from exit-code, after the SARIF upload); 2 when fuzzlint
# cannot be had or an input is wrong.
set -euo pipefail

die() {
  echo "::error title=fuzzlint action::$*"
  echo "error: $*" >&2
  exit 2
}

: "${GITHUB_WORKSPACE:?GITHUB_WORKSPACE is not set (run by GitHub Actions, or set it)}"
: "${RUNNER_TEMP:?RUNNER_TEMP is not set}"
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set}"
action_path=${ACTION_PATH:-$(cd "$(dirname "$0")/../.." && pwd)}
version=${INPUT_VERSION:-}
version=${version#v}
sarif=${INPUT_SARIF:-false}
case "$sarif" in
  true|false) ;;
  *) die "sarif-upload is \`$sarif\`; it takes true or false" ;;
esac

# --- 1. fuzzlint ---------------------------------------------------------------------------
if [ -n "$version" ]; then
  case "$version" in
    *[!0-9A-Za-z.+-]*) die "version \`$version\` is not a version number (such as 0.1.0)" ;;
  esac
  base=${INPUT_RELEASE_URL:-}
  if [ -z "$base" ]; then
    repo=$(sed -n '/^\[workspace.package\]/,/^\[/s/^repository = "\(.*\)"/\1/p' "$action_path/Cargo.toml")
    [ -n "$repo" ] || die "no repository in [workspace.package] of $action_path/Cargo.toml"
    base="$repo/releases/download"
  fi
  name="fuzzfile-toolchain-$version-x86_64-unknown-linux-gnu-static"
  url="$base/v$version/$name.tar.gz"
  dest="$RUNNER_TEMP/fuzzlint-$version"
  mkdir -p "$dest"
  echo "Downloading $url"
  curl -fsSL --retry 3 -o "$dest/$name.tar.gz" "$url" || die "cannot download $url"
  curl -fsSL --retry 3 -o "$dest/$name.tar.gz.sha256" "$url.sha256" || die "cannot download $url.sha256"
  (cd "$dest" && sha256sum --check --status "$name.tar.gz.sha256") \
    || die "$name.tar.gz does not match its SHA-256 ($url.sha256)"
  tar -xzf "$dest/$name.tar.gz" -C "$dest"
  bin_dir="$dest/$name"
else
  command -v cargo >/dev/null 2>&1 \
    || die "no version given and no cargo to build fuzzlint with: set \`version\` (a release) or install Rust"
  bin_dir="$RUNNER_TEMP/fuzzlint-build/bin"
  echo "Building fuzzlint from $action_path (cargo install)"
  # shellcheck disable=SC2086
  cargo install --locked --quiet --path "$action_path/crates/fuzzlint" \
    --root "$RUNNER_TEMP/fuzzlint-build" ${FUZZLINT_INSTALL_ARGS:-} >&2 \
    || die "cargo install of fuzzlint failed"
fi
fuzzlint="$bin_dir/fuzzlint"
[ -x "$fuzzlint" ] || die "no fuzzlint at $fuzzlint"
"$fuzzlint" --version
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$bin_dir" >> "$GITHUB_PATH"
fi
echo "fuzzlint=$fuzzlint" >> "$GITHUB_OUTPUT"

# --- 2. check ------------------------------------------------------------------------------
read -ra paths <<< "${INPUT_PATHS:-.}"
[ "${#paths[@]}" -gt 0 ] || paths=(.)
read -ra args <<< "${INPUT_ARGS:-}"
cd "$GITHUB_WORKSPACE"
code=0
"$fuzzlint" check --output-format github "${args[@]}" -- "${paths[@]}" || code=$?
if [ "$sarif" = true ]; then
  sarif_file="$RUNNER_TEMP/fuzzlint.sarif"
  scode=0
  "$fuzzlint" check --output-format sarif --output-file "$sarif_file" "${args[@]}" -- "${paths[@]}" || scode=$?
  if [ "$scode" -gt 1 ] || [ ! -s "$sarif_file" ]; then
    die "the SARIF report could not be written (fuzzlint exit $scode)"
  fi
  echo "sarif-file=$sarif_file" >> "$GITHUB_OUTPUT"
fi

# --- 3. outputs ----------------------------------------------------------------------------
echo "exit-code=$code" >> "$GITHUB_OUTPUT"
case "$code" in
  0) echo "fuzzlint: no findings at or above fail-on" ;;
  1) echo "fuzzlint: findings at or above fail-on (see the annotations)" ;;
  *) echo "fuzzlint: exit $code (a usage, I/O or configuration error; see above)" ;;
esac
exit 0
