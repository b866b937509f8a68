# Sourced by scripts/test and scripts/demo: installs the Debian packages the build
# and the tests need, when any is missing. The Swift toolchain itself is assumed.
NETLAYER_DEBIAN_PACKAGES=(cmake ninja-build pkg-config libcurl4-openssl-dev libyaml-dev libre2-dev libjansson-dev libwslay-dev libssl-dev zlib1g-dev valgrind python3 python3-venv python3-dev nginx-light openssl tinyproxy)

ensure_system_packages() {
    local missing=()
    for pkg in "${NETLAYER_DEBIAN_PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "== installing missing Debian packages: ${missing[*]}"
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    ensure_python_test_packages
    command -v swift >/dev/null || { echo "error: the Swift toolchain (swift) is not on PATH" >&2; exit 1; }
}

# The Python packages of the tests' loopback servers (Tests/server/requirements.txt),
# for the python3 the tests run.
ensure_python_test_packages() {
    local root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    python3 -c "import websockets" 2>/dev/null && return 0
    echo "== installing the test servers' Python packages (Tests/server/requirements.txt)"
    python3 -m pip install -q -r "$root/Tests/server/requirements.txt" 2>/dev/null \
        || python3 -m pip install -q --break-system-packages -r "$root/Tests/server/requirements.txt"
}
