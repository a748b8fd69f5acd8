"""Packs squiggle's wheel around a binary built elsewhere (`cargo xtask dist --binary`): what
maturin's "bin" bindings make, with the metadata read from pyproject.toml's [project] table.

usage: wheel.py WORKSPACE VERSION TAG BINARY NAME OUT
"""

import base64
import hashlib
import pathlib
import sys
import tomllib
import zipfile

workspace, version, tag, binary, name, out = sys.argv[1:7]
root = pathlib.Path(workspace)
project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
dist = project["name"].replace("-", "_")

metadata = ["Metadata-Version: 2.4", f"Name: {project['name']}", f"Version: {version}"]
metadata += [f"Classifier: {c}" for c in project.get("classifiers", [])]
if project.get("keywords"):
    metadata.append("Keywords: " + ",".join(project["keywords"]))
metadata.append(f"Summary: {project['description']}")
metadata.append(f"License-Expression: {project['license']}")
metadata += [f"License-File: {f}" for f in project.get("license-files", [])]
metadata.append(f"Requires-Python: {project['requires-python']}")
metadata += [f"Project-URL: {k}, {v}" for k, v in project.get("urls", {}).items()]
metadata.append("Description-Content-Type: text/markdown; charset=UTF-8; variant=GFM")
readme = (root / project["readme"]).read_text()
wheel = f"Wheel-Version: 1.0\nGenerator: squiggle xtask\nRoot-Is-Purelib: false\nTag: py3-none-{tag}\n"

info = f"{dist}-{version}.dist-info"
files = [
    (f"{dist}-{version}.data/scripts/{name}", pathlib.Path(binary).read_bytes(), 0o755),
    (f"{info}/METADATA", ("\n".join(metadata) + "\n\n" + readme).encode(), 0o644),
    (f"{info}/WHEEL", wheel.encode(), 0o644),
]
files += [
    (f"{info}/licenses/{f}", (root / f).read_bytes(), 0o644)
    for f in project.get("license-files", [])
]


def digest(data):
    hashed = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + hashed.decode()


record = "".join(f"{path},{digest(data)},{len(data)}\n" for path, data, _ in files)
record += f"{info}/RECORD,,\n"
files.append((f"{info}/RECORD", record.encode(), 0o644))

path = pathlib.Path(out) / f"{dist}-{version}-py3-none-{tag}.whl"
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
    for member, data, mode in files:
        entry = zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0))
        entry.external_attr = (0o100000 | mode) << 16
        entry.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(entry, data)
print(path)
