"""What the grader notices about a submission before running it: tampering with the cells
students must not change, and code that tries to reach what the sandbox hides.
Rule (run/): only the grading process writes the class's gradebook and folders."""
import copy
import functools
import os
import re
import stat

from nbgrader import utils

# (flag, pattern) looked for in the learner's code cells. The sandbox stops these anyway;
# the flags tell the instructor someone tried.
ATTEMPTS = (
    ("reach_files", r"(/work/|/root|/home/|\.\./|\bassignments\b|gradebook|\bsubmitted/|\bautograded/)"),
    ("network", r"\b(socket|urllib|http\.client|requests|httpx|ftplib|smtplib)\b"),
    ("processes", r"\b(subprocess|os\.system|os\.popen|os\.fork|os\.kill|os\._exit|signal\.signal|ctypes)\b"),
    ("grader_machinery", r"(sys\.modules|__subclasses__|showtraceback|set_custom_exc|display_pub|np\.testing\.\w+\s*=|"
                         r"builtins\.\w+\s*=|\w+_checks\.\w+\s*=|sys\.excepthook|socket\.socket\.\w+\s*=)"),
)


def not_regular(folder):
    """The entries of a submission's folder, at any depth, that are neither regular files nor
    folders (symbolic links, pipes, sockets, devices), by path, or ``"."`` when the folder
    itself is not a real folder: a link could
    make the grader, which reads as the course's user, read what the learner may not (another
    learner's work, the course's source with its solutions), and a pipe could hang it. Only
    ``lstat`` is used: nothing is followed or opened."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return ["."]
        listed = sorted(os.listdir(folder))
    except OSError:
        return ["."]
    odd = []
    for name in listed:
        try:
            mode = os.lstat(os.path.join(folder, name)).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            odd += [os.path.join(name, inner) for inner in not_regular(os.path.join(folder, name)) if inner != "."]
        elif not stat.S_ISREG(mode):
            odd.append(name)
    return odd


def read_regular(path):
    """A file's text, opened without following a symbolic link and refused unless regular (a
    file swapped for a link or a pipe after it was listed)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "r", encoding="utf-8") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{os.path.basename(path)} is not a regular file")
        return f.read()


def _protected(nb):
    """grade_id -> cell for the cells students must not change (locked ones: tests, imports)."""
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells
            if utils.is_locked(c) and c.metadata.get("nbgrader", {}).get("grade_id")}


def _signature(cell):
    meta = cell.metadata.get("nbgrader", {})
    return (cell.cell_type, cell.source, meta.get("grade"), meta.get("solution"), meta.get("locked"),
            meta.get("points"))


def tampering(submitted, release):
    """Flags for protected cells that were edited, deleted, re-pointed or duplicated.
    nbgrader restores them (checksums, add_missing_cells); these say it had to."""
    flags = []
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in submitted.cells]
    expected = _protected(release)
    answers = {c.metadata["nbgrader"]["grade_id"] for c in release.cells
               if c.metadata.get("nbgrader", {}).get("grade_id")}
    for grade_id, cell in expected.items():
        mine = [c for c in submitted.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
        if not mine:
            flags.append(f"tampered:deleted:{grade_id}")
        elif len(mine) > 1:
            flags.append(f"tampered:duplicated:{grade_id}")
        elif _signature(mine[0]) != _signature(cell):
            flags.append(f"tampered:edited:{grade_id}")
    for grade_id in sorted({i for i in ids if i and i not in answers}):
        flags.append(f"tampered:unknown_cell:{grade_id}")
    for grade_id in sorted({i for i in ids if i and ids.count(i) > 1 and i not in expected}):
        flags.append(f"tampered:duplicated:{grade_id}")
    return flags


def attempts(submitted, release):
    """Flags for code, outside the cells the release wrote, that looks for hidden things."""
    given = {c.source for c in release.cells}
    code = "\n".join(c.source for c in submitted.cells if c.cell_type == "code" and c.source not in given)
    return [f"attempt:{flag}" for flag, pattern in ATTEMPTS if _found(pattern, code)]


def _found(pattern, code):
    """``re.search(pattern, code)``, asked only when the code holds one of the texts every match
    of ``pattern`` must hold (``needles``): Python's regular expressions try each alternative at
    every character, and most learners' code holds none of them."""
    needles = _needles(pattern)
    if needles is not None and not any(needle in code for needle in needles):
        return False
    return re.search(pattern, code) is not None


@functools.lru_cache(maxsize=None)
def _needles(pattern):
    """Texts one of which every match of ``pattern`` holds: for each alternative of its one
    group of alternatives (word boundaries around it aside), the longest run of literal
    characters in it. None when the pattern is not of that shape or an alternative has no
    literal character."""
    try:   # the parser of the re module itself
        from re import _constants as c
        from re import _parser as parser
    except ImportError:   # Python 3.10
        import sre_constants as c
        import sre_parse as parser
    parsed = parser.parse(pattern)
    items = [item for item in parsed if item != (c.AT, c.AT_BOUNDARY)]
    if parsed.state.flags & re.IGNORECASE or len(items) != 1 or items[0][0] is not c.SUBPATTERN:
        return None
    body = items[0][1][-1]
    branches = [list(branch) for branch in body[0][1][1]] if len(body) == 1 and body[0][0] is c.BRANCH else [list(body)]
    needles = []
    for branch in branches:
        runs, run = [], ""
        for op, av in branch + [(None, None)]:
            if op is c.LITERAL:
                run += chr(av)
            else:
                runs.append(run)
                run = ""
        longest = max(runs, key=len)
        if not longest:
            return None
        needles.append(longest)
    return tuple(needles)


def repair(submitted, release):
    """Give every cell nbgrader knows the metadata the release gave it, so nbgrader's own
    restoration (checksums, add_missing_cells) can work: cells with unknown, duplicated or
    re-typed ids lose their nbgrader metadata, and changed metadata is put back. Metadata
    where the grader records verdicts and events is removed: only the grader writes it."""
    given = {c.metadata["nbgrader"]["grade_id"]: c for c in release.cells
             if c.metadata.get("nbgrader", {}).get("grade_id")}
    seen = set()
    submitted.metadata.pop("grader", None)   # where the grader writes; a submission cannot
    for cell in submitted.cells:
        cell.metadata.pop("judge", None)
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if "nbgrader" not in cell.metadata:
            continue
        if grade_id not in given or grade_id in seen or cell.cell_type != given[grade_id].cell_type:
            del cell.metadata["nbgrader"]
            continue
        seen.add(grade_id)
        cell.metadata["nbgrader"] = copy.deepcopy(given[grade_id].metadata["nbgrader"])
    restore_missing(submitted, release, seen)
    return submitted


def missing_answers(submitted, release):
    """grade_ids of the release's answer cells the submission no longer has."""
    have = {c.metadata.get("nbgrader", {}).get("grade_id") for c in submitted.cells}
    return [c.metadata["nbgrader"]["grade_id"] for c in release.cells
            if c.metadata.get("nbgrader", {}).get("solution") and c.metadata["nbgrader"].get("grade_id") not in have]


def restore_missing(submitted, release, present):
    """Put back, as the release has them, the nbgrader cells a submission deleted, each after
    the cell that precedes it in the release: nbgrader can only restore a deleted test cell
    next to its answer cell, and an emptied notebook must still be graded (with nothing)."""
    position = {}
    for cell in release.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if not grade_id:
            continue
        if grade_id in present:
            position[grade_id] = next(i for i, c in enumerate(submitted.cells)
                                      if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
            last = position[grade_id]
            continue
        if cell.metadata["nbgrader"].get("grade") and not cell.metadata["nbgrader"].get("solution") \
                and position:   # nbgrader's add_missing_cells restores a test cell after its answer
            continue
        at = (last + 1) if position else 0
        restored = copy.deepcopy(cell)
        restored.pop("id", None)
        submitted.cells.insert(at, restored)
        position = {g: (i + 1 if i >= at else i) for g, i in position.items()}
        position[grade_id] = last = at
        present.add(grade_id)
