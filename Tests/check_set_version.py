"""scripts/set-version rewrites every copy, and the check catches one left behind.

    check_set_version.py REPO WORK

Runs on a copy of the files involved, never on the source tree.
"""

import shutil
import subprocess
import sys
from pathlib import Path

repo, work = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
sys.path.insert(0, str(repo / "Tests"))
import check_version  # noqa: E402

shutil.rmtree(work, ignore_errors=True)
files = ["VERSION", "scripts/set-version", "Tests/check_version.py", "include/netlayer.h",
         "bindings/python/pyproject.toml"] + [name for name, _ in check_version.COPIES]
files += [str(p.relative_to(repo)) for g in check_version.DOC_GLOBS for p in repo.glob(g)]
for name in set(files):
    (work / name).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(repo / name, work / name)

failures = []
# VERSION changed by hand, copies left behind: the check must notice every one.
(work / "VERSION").write_text("7.8.9\n")
left_behind = check_version.problems(work)
for name, _ in check_version.COPIES:
    if not any(p.startswith(name) for p in left_behind):
        failures.append(f"the check missed the stale copy in {name}")
# set-version brings them all along.
result = subprocess.run([sys.executable, str(work / "scripts/set-version"), "1.2.3"], capture_output=True, text=True)
print(result.stdout + result.stderr)
if result.returncode != 0 or check_version.problems(work):
    failures.append(f"after set-version 1.2.3: {check_version.problems(work)}")
header = (work / "include/netlayer.h").read_text()
for line in ("#define NL_VERSION_MAJOR 1", "#define NL_VERSION_MINOR 2", "#define NL_VERSION_PATCH 3",
             '#define NL_VERSION_STRING "1.2.3"'):
    if line not in header:
        failures.append(f"include/netlayer.h lacks {line}")
if subprocess.run([sys.executable, str(work / "scripts/set-version"), "1.2"], capture_output=True).returncode == 0:
    failures.append("set-version accepted '1.2'")
shutil.rmtree(work, ignore_errors=True)
for failure in failures:
    print(f"FAIL: {failure}")
sys.exit(1 if failures else 0)
