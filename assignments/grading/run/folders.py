"""What nbgrader's ``autograde`` and ``generate_feedback`` leave in a course directory, made by
the grading process from a worker's result, so that nbgrader's own commands (``release_feedback``,
``fetch_feedback``, formgrader, a later ``autograde`` or ``generate_feedback``) find a course
graded by ``grade`` exactly as if nbgrader had graded it.

``autograded/<student>/<assignment>/``: the submission's other files (``timestamp.txt``,
``submission_secret.txt`` and whatever the student handed in beside the notebook), then the
assignment's source files over them (nbgrader puts the release's helpers back), then the
autograded notebook; files get ``Autograde.permissions``.
``feedback/<student>/<assignment>/``: every file of the autograded folder but notebooks, and
the feedback page; files get ``GenerateFeedback.permissions``.

The helper files are the same for a whole class: each distinct (content, mode) is written once
per run and hard-linked into every student's folder where the file system allows it, so a class
of a thousand costs the disk one copy of them, not a thousand.
Rule (run/): only the grading process writes the class's gradebook and folders.
"""
import hashlib
import os
import shutil

from nbgrader.utils import find_all_files

from .course import coursedir


def read_files(folder):
    """Every file under ``folder``, by its path relative to it: {path: bytes}."""
    found = {}
    for d, _, names in os.walk(folder):
        for name in names:
            with open(os.path.join(d, name), "rb") as f:
                found[os.path.relpath(os.path.join(d, name), folder)] = f.read()
    return found


def permissions(config, converter, default):
    """The octal permissions (e.g. 444) nbgrader's ``converter`` gives the files it writes:
    configured on it or on BaseConverter, else nbgrader's default (``default``, or 664 when
    the course is group-shared)."""
    for section in (converter, "BaseConverter"):
        if "permissions" in config[section]:
            return int(str(config[section].permissions), 8)
    return int("664" if config.CourseDirectory.get("groupshared", False) else str(default), 8)


def folder(config, kind, student, assignment_id):
    """``autograded`` or ``feedback`` folder of one submission, as nbgrader names it."""
    return folders(config, kind, [student], assignment_id)[student]


def folders(config, kind, students, assignment_id):
    """{student: ``folder``} for many students, from one CourseDirectory (making one takes a
    millisecond: a class of hundreds would wait a fraction of a second)."""
    cd = coursedir(config, assignment_id)
    pattern = getattr(cd, f"{kind}_directory")
    return {s: os.path.normpath(cd.format_path(pattern, s, assignment_id)) for s in students}


def students(config, kind, assignment_id):
    """The students with an ``autograded`` or ``feedback`` folder for the assignment."""
    import glob
    import re
    cd = coursedir(config, assignment_id)
    pattern = cd.format_path(getattr(cd, f"{kind}_directory"), "*", assignment_id)
    regexp = re.escape(pattern).replace(r"\*", "(?P<student>[^/]+)")
    return sorted(m.group("student") for m in (re.fullmatch(regexp, p) for p in glob.glob(pattern)) if m)


def other_files(path, ignore):
    """{relative path: absolute path} of the files under ``path`` that nbgrader copies from one
    stage to the next: all but notebooks and what ``CourseDirectory.ignore`` names."""
    if not os.path.isdir(path):
        return {}
    return {os.path.relpath(f, path): f for f in find_all_files(path, list(ignore) + ["*.ipynb"])}


class Placer:
    """Writes files into submission folders, one stored copy per distinct content and mode,
    hard-linked wherever it is needed (copied where links cannot be made)."""

    def __init__(self, store):
        self.store = store
        self.can_link = True
        self._digests = {}   # (device, inode, size, mtime) of a file read already -> its sha256

    def place(self, src, dest, mode):
        found = os.stat(src)
        key = (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns)
        digest = self._digests.get(key)
        if digest is not None and self.can_link and self._link(digest, dest, mode):
            return   # the same file as before (a helper every student gets): linked, not read
        with open(src, "rb") as f:
            data = f.read()
        self._digests[key] = hashlib.sha256(data).hexdigest()
        self.write(data, dest, mode)

    def _link(self, digest, dest, mode):
        kept = os.path.join(self.store, f"{mode:o}", digest)
        if not os.path.exists(kept):
            return False
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if os.path.lexists(dest):
            os.remove(dest)
        try:
            os.link(kept, dest)
        except OSError:
            return False
        return True

    def write(self, data, dest, mode, shared=True):
        """``data`` as the file ``dest``; ``shared=False`` for what only this folder holds."""
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if os.path.lexists(dest):
            os.remove(dest)
        if shared and self.can_link:
            kept = os.path.join(self.store, f"{mode:o}", hashlib.sha256(data).hexdigest())
            if not os.path.exists(kept):
                os.makedirs(os.path.dirname(kept), exist_ok=True)
                with open(kept + ".part", "wb") as f:
                    f.write(data)
                os.chmod(kept + ".part", mode)
                os.replace(kept + ".part", kept)
            try:
                os.link(kept, dest)
                return
            except OSError:   # another file system, or links refused: copies from now on
                self.can_link = False
        with open(dest, "wb") as f:
            f.write(data)
        os.chmod(dest, mode)


def write_autograded(config, assignment_id, student, staged, source, notebook_name, notebook_text, placer):
    """The autograded folder of one submission, as nbgrader's Autograde leaves it. ``staged``:
    the submission as graded; ``source``: the assignment's source folder."""
    dest = folder(config, "autograded", student, assignment_id)
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    mode = permissions(config, "Autograde", 444)
    ignore = config.CourseDirectory.get("ignore", [])
    files = other_files(staged, ignore)
    excluded = set(config.Autograde.get("exclude_overwriting", {}).get(assignment_id, []))
    files.update({rel: path for rel, path in other_files(source, ignore).items() if rel not in excluded})
    for rel, path in sorted(files.items()):
        placer.place(path, os.path.join(dest, rel), mode)
    placer.write(notebook_text.encode("utf-8"), os.path.join(dest, notebook_name + ".ipynb"), mode, shared=False)
    _share_folders(config, dest)
    return dest


def write_feedback(config, assignment_id, student, notebook_name, page, placer):
    """The feedback folder of one submission, as nbgrader's GenerateFeedback leaves it (from the
    autograded folder written first)."""
    dest = folder(config, "feedback", student, assignment_id)
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    mode = permissions(config, "GenerateFeedback", 644)
    autograded = folder(config, "autograded", student, assignment_id)
    for rel, path in sorted(other_files(autograded, config.CourseDirectory.get("ignore", [])).items()):
        placer.place(path, os.path.join(dest, rel), mode)
    placer.write(page.encode("utf-8"), os.path.join(dest, notebook_name + ".html"), mode, shared=False)
    _share_folders(config, dest)
    return dest


def _share_folders(config, dest):
    """nbgrader makes its folders group-writable and setgid in a group-shared course."""
    if not config.CourseDirectory.get("groupshared", False):
        return
    for dirpath, _, _ in os.walk(dest):
        mode = os.stat(dirpath).st_mode
        if mode & 0o2770 != 0o2770:
            try:
                os.chmod(dirpath, (mode | 0o2770) & 0o2777)
            except PermissionError:
                pass


def remove(config, student, assignment_id):
    """Forget a submission's autograded and feedback folders (one that can no longer be graded)."""
    for kind in ("autograded", "feedback"):
        shutil.rmtree(folder(config, kind, student, assignment_id), ignore_errors=True)


def missing_exchange_files(staged):
    """What nbgrader's release_feedback will look for beside the feedback page and not find: a
    submission that did not come through nbgrader's exchange (placed by hand, or collected while
    its student was still submitting) has no timestamp.txt or submission_secret.txt."""
    return [name for name in ("timestamp.txt", "submission_secret.txt") if not os.path.isfile(os.path.join(staged, name))]
