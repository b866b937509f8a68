"""Builds and runs a Swift package whose Package.swift is the README's manifest block.

    run_swift_package.py SWIFT README REPO WORK

The block's `path: "../netlayer"` is pointed at REPO, whatever its folder is called
(the `name:` of the dependency is what makes `package: "Netlayer"` resolve), and the
package's sources are Tests/downstream/swift_package. The build must print no warning.
"""

import shutil
import subprocess
import sys
from pathlib import Path

swift, readme, repo, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]).resolve(), Path(sys.argv[4])
blocks = [b.split("```\n")[0] for b in readme.read_text().split("```swift\n")[1:]]
manifests = [b for b in blocks if "import PackageDescription" in b]
if len(manifests) != 1:
    sys.exit(f"FAIL: expected one Package.swift block in {readme}, found {len(manifests)}")
manifest = manifests[0]
if 'path: "../netlayer"' not in manifest:
    sys.exit('FAIL: the README\'s Package.swift block no longer says path: "../netlayer"')

shutil.rmtree(work, ignore_errors=True)
shutil.copytree(Path(__file__).parent / "swift_package", work)
(work / "Package.swift").write_text(manifest.replace('path: "../netlayer"', f'path: "{repo}"'))
build = subprocess.run([swift, "build", "--package-path", str(work)], capture_output=True, text=True)
output = build.stdout + build.stderr
warnings = [line for line in output.splitlines() if "warning:" in line and "mktemp" not in line]
if build.returncode != 0 or warnings:
    print(output)
    sys.exit("FAIL: the README's Package.swift did not build cleanly")
run = subprocess.run([str(work / ".build" / "debug" / "MoviesApp")], capture_output=True, text=True, check=True)
print(run.stdout.strip())
if "DataTransferPublisher" not in run.stdout:
    sys.exit("FAIL: unexpected output")
print("ok: the README's Package.swift builds a dependent package")
