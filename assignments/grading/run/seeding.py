"""The seed: a gradebook holding only the assignment, and the run's release, both written by
nbgrader's GenerateAssignment (half a second to a second each time it runs). Every worker
grades against the seed's bytes. It is made once and reused while its inputs are the same:
kept on disk from run to run (WORK/cache/<their digest>/), and in this process for the runs it
makes next in other folders (a test session, a service grading course after course). A class's
first gradebook, a new SQLite file, starts as the seed's copy instead of running
GenerateAssignment again (``record.start_from_seed``).
Rule (run/): only the grading process writes the class's gradebook and folders."""
from __future__ import annotations

import json
import os
import shutil
import stat
from typing import TYPE_CHECKING

from .. import GRADING
from . import folders, receipts, record
from .start import CACHE

if TYPE_CHECKING:
    from traitlets.config import Config

# What the seed depends on, besides the source folder, the code and nbgrader: the configuration,
# but not where this run's course lives (its root and gradebook), which the seed never names.
_WHERE = ("root", "db_url")
_KEPT_IN_PROCESS = 4   # seeds of different assignments or configurations, the latest kept
_made: dict[str, tuple[bytes, dict[str, tuple[int, bytes]]]] = {}   # digest -> (the seed's bytes, the release's files)


def seed_key(config: Config, aid: str, work: str) -> str:
    """The digest of what the seed and the release are made from."""
    import nbgrader
    settings = {section: ({k: v for k, v in values.items() if k not in _WHERE} if section == "CourseDirectory" else values)
                for section, values in config.items()}
    return receipts.of([receipts.files_digest(os.path.join(work, "source", aid)), nbgrader.__version__,
                        json.dumps(settings, sort_keys=True, default=repr), receipts.files_digest(GRADING)]).split(":")[1]


def seeded(config: Config, aid: str, work: str) -> tuple[bytes, str]:
    """``record.seed``'s bytes (also in WORK/seed.db), with the run's release in WORK/release/:
    from WORK/cache/<seed_key>/ when an earlier run in this folder kept it, else from this
    process's memory when it made the same seed for another folder, else made by nbgrader (and
    kept in both). Only the latest is kept on disk. Returns (the bytes, that folder)."""
    key = seed_key(config, aid, work)
    kept = os.path.join(work, CACHE, key)
    if not (os.path.isfile(os.path.join(kept, "seed.db")) and os.path.isdir(os.path.join(kept, "release"))):
        if key not in _made:
            seed = record.seed(config, aid, os.path.join(work, "seed.db"))   # writes the release too
            _remember(key, seed, _snapshot(os.path.join(work, "release", aid)))
            _keep(work, kept, *_made[key])
            return seed, kept
        _keep(work, kept, *_made[key])
    shutil.copytree(os.path.join(kept, "release"), os.path.join(work, "release", aid))
    shutil.copyfile(os.path.join(kept, "seed.db"), os.path.join(work, "seed.db"))
    with open(os.path.join(kept, "seed.db"), "rb") as f:
        return f.read(), kept


def _remember(key, seed, release_files):
    _made[key] = (seed, release_files)
    while len(_made) > _KEPT_IN_PROCESS:   # the oldest goes
        del _made[next(iter(_made))]


def _keep(work, kept, seed, release_files):
    """Write the seed and the release into ``kept``, in place of any earlier seed of this folder."""
    cache = os.path.join(work, CACHE)
    for name in os.listdir(cache) if os.path.isdir(cache) else ():
        if os.path.isdir(os.path.join(cache, name)):   # an earlier seed (the files beside are evidence.Cache's)
            shutil.rmtree(os.path.join(cache, name), ignore_errors=True)
    os.makedirs(os.path.join(kept + ".part", "release"))
    for rel, (mode, data) in release_files.items():
        path = os.path.join(kept + ".part", "release", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, mode)
    with open(os.path.join(kept + ".part", "seed.db"), "wb") as f:
        f.write(seed)
    os.replace(kept + ".part", kept)


def _snapshot(folder):
    """Every file under ``folder``: {its relative path: (its permission bits, its bytes)}."""
    return {rel: (stat.S_IMODE(os.stat(os.path.join(folder, rel)).st_mode), data)
            for rel, data in folders.read_files(folder).items()}
