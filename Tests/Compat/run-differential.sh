#!/usr/bin/env bash
# Differential check of Mailbox against ReactiveSwift 7.2.1: builds Differential/main.swift once
# against each library (for Mailbox with `import ReactiveSwift` replaced by `import Mailbox`, and
# nothing else), runs both, and compares their output line by line.
#
#   Tests/Compat/run-differential.sh
#
# Needs a ReactiveSwift 7.2.1 checkout in $RS_REF (default /tmp/rs-ref; docs/tools/rs-api-diff.sh
# makes one). Without it the script says so and exits 0: it fetches nothing, and it is not part
# of `swift test` or CI.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
RS_REF="${RS_REF:-/tmp/rs-ref}"
work="${WORK:-/tmp/mailbox-differential}"

if [ ! -f "$RS_REF/Package.swift" ] || [ ! -d "$RS_REF/Sources" ]; then
    echo "skipped: no ReactiveSwift checkout in $RS_REF (run docs/tools/rs-api-diff.sh, or set RS_REF)"
    exit 0
fi

make_package() { # name, dependency path, product, main.swift import line
    local dir="$work/$1"
    mkdir -p "$dir/Sources/Differential"
    cat > "$dir/Package.swift" <<PACKAGE
// swift-tools-version:5.9
import PackageDescription
let package = Package(
    name: "Differential",
    dependencies: [.package(path: "$2")],
    targets: [.executableTarget(name: "Differential", dependencies: [.product(name: "$3", package: "$(basename "$2")")], path: "Sources/Differential")],
    swiftLanguageVersions: [.v5]
)
PACKAGE
    sed "s/^import ReactiveSwift\$/$4/" "$here/Differential/main.swift" > "$dir/Sources/Differential/main.swift"
}

make_package reactiveswift "$RS_REF" ReactiveSwift "import ReactiveSwift"
make_package mailbox "$repo" Mailbox "import Mailbox"

for side in reactiveswift mailbox; do
    echo "== building against $side"
    (cd "$work/$side" && swift build 2>&1 | grep -E "error|warning: unre|Compiling Differential|Build complete" | tail -3)
    (cd "$work/$side" && ./.build/debug/Differential > "$work/$side.out")
done

# Scenarios listed in known-differences.txt are shown, not compared.
known="$(grep -v '^#' "$here/known-differences.txt" | sed '/^$/d' || true)"
filter() { # file: the lines whose scenario title is not a known difference
    python3 - "$1" "$known" <<'PY'
import sys
known = set(sys.argv[2].splitlines())
for line in open(sys.argv[1]):
    if line.split(": ", 1)[0] not in known:
        print(line, end="")
PY
}
filter "$work/reactiveswift.out" > "$work/reactiveswift.compared"
filter "$work/mailbox.out" > "$work/mailbox.compared"
while IFS= read -r title; do
    echo "known difference: $title"
    echo "  ReactiveSwift: $(grep -F "$title: " "$work/reactiveswift.out" | cut -d: -f2-)"
    echo "  Mailbox:       $(grep -F "$title: " "$work/mailbox.out" | cut -d: -f2-)"
done <<< "$known"
if diff -u "$work/reactiveswift.compared" "$work/mailbox.compared"; then
    echo "same output: $(wc -l < "$work/mailbox.compared") scenarios ($(echo "$known" | sed '/^$/d' | wc -l) known difference(s) listed above)"
else
    echo "outputs differ (- ReactiveSwift 7.2.1, + Mailbox)"
    exit 1
fi
