"""Find and read Core ML bundles: ``.mlpackage`` (protobuf, via the coreml extra), ``.mlmodelc`` (``model.mil``
text, no extra), a single ``.mlmodel``, or a folder of them (one program per submodel, in name order).

Weight references (``BLOBFILE``) are resolved against the bundle's ``weights/`` folder and every record is
validated, so a missing or truncated ``weight.bin`` is reported here, naming the file and the byte offset.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from ..mil_model import MilProgram
from .milblob import read_records
from .mlpackage import CoreMLBundleError

BUNDLE_SUFFIXES = (".mlpackage", ".mlmodelc", ".mlmodel")


def is_bundle(path: Path) -> bool:
    return path.suffix in BUNDLE_SUFFIXES or (path.is_dir() and ((path / "Manifest.json").is_file()
                                                                 or (path / "model.mil").is_file()))


def find_bundles(path) -> list[Path]:
    """The bundle itself, or the bundles directly inside a folder (sorted by name)."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "no such file or folder")
    if is_bundle(path):
        return [path]
    if path.is_dir():
        found = sorted(p for p in path.iterdir() if is_bundle(p))
        if found:
            return found
    raise CoreMLBundleError(path, "not a Core ML bundle (.mlpackage, .mlmodelc or .mlmodel) nor a folder holding one")


def read_bundle(path) -> MilProgram:
    path = Path(path)
    if path.suffix == ".mlpackage" or (path.is_dir() and (path / "Manifest.json").is_file()):
        if not path.is_dir():
            raise CoreMLBundleError(path, "an .mlpackage must be a folder (a zipped package? unzip it first)")
        from .mlpackage import program_from_spec, read_spec, spec_path

        spec_file = spec_path(path)
        prog = program_from_spec(read_spec(spec_file), str(path))
        base = spec_file.parent
    elif path.suffix == ".mlmodelc" or (path.is_dir() and (path / "model.mil").is_file()):
        if not path.is_dir():
            raise CoreMLBundleError(path, "an .mlmodelc must be a folder")
        from .mil_text import parse_mil_text

        mil = path / "model.mil"
        try:
            text = mil.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CoreMLBundleError(path, "no model.mil in the compiled model (a neural-network model? only ML "
                                          "Programs have one)") from None
        except (OSError, UnicodeDecodeError) as e:
            raise CoreMLBundleError(mil, f"unreadable model.mil ({type(e).__name__}: {e})") from None
        prog = parse_mil_text(text, mil)
        prog.source = str(path)
        base = path
    elif path.suffix == ".mlmodel" and path.is_file():
        from .mlpackage import program_from_spec, read_spec

        prog = program_from_spec(read_spec(path), str(path))
        base = path.parent
    else:
        raise CoreMLBundleError(path, "not a Core ML bundle")
    resolve_weights(prog, base, path)
    return prog


def _weight_path(ref: str, base: Path, bundle: Path) -> Path:
    """``@model_path/weights/weight.bin`` → the file inside the bundle; anything reaching outside it is refused."""
    rel = ref[len("@model_path/"):] if ref.startswith("@model_path/") else None
    if not rel or "\0" in rel or any(part in ("", ".", "..") for part in rel.split("/")):
        raise CoreMLBundleError(bundle, f"weight reference {ref[:80]!r} does not name a file inside the bundle")
    f = base / rel
    if not os.path.realpath(f).startswith(os.path.realpath(base) + os.sep):
        raise CoreMLBundleError(bundle, f"weight reference {ref[:80]!r} leads outside the bundle")
    return f


def resolve_weights(prog: MilProgram, base: Path, bundle: Path) -> None:
    """Fill every blob reference with its record (dtype, stored size, data offset), one read per record."""
    by_file: dict[str, list] = {}
    for blob in prog.blobs():
        by_file.setdefault(blob.path, []).append(blob)
    for ref, blobs in by_file.items():
        f = _weight_path(ref, base, bundle)
        records = read_records(f, [b.offset for b in blobs])
        prog.weight_files[ref] = f.stat().st_size
        for b in blobs:
            b.dtype, b.size, b.data_offset = records[b.offset]
