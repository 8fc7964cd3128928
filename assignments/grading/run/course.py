"""nbgrader's configuration for one run: the course's nbgrader_config.py, with the course
directories pointed at the run's own folders.
Rule (run/): only the grading process writes the class's gradebook and folders."""
import os

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from .. import REPO

CONFIG_FILE = os.path.join(REPO, "nbgrader_config.py")


def config_files(root):
    """The nbgrader_config.py files nbgrader's own commands would read for a course at ``root``,
    lowest priority first: Jupyter's system, environment and user folders (a hub's settings,
    say), this course's file, then the course folder's own when it is another file."""
    from jupyter_core.paths import jupyter_config_path
    found = [os.path.join(d, "nbgrader_config.py") for d in reversed(jupyter_config_path())]
    found = [f for f in found if os.path.isfile(f)] + [CONFIG_FILE]
    own = os.path.join(os.path.abspath(root), "nbgrader_config.py")
    if os.path.isfile(own) and not os.path.samefile(own, CONFIG_FILE):
        found.append(own)
    return found


def load_config(root, db_url=None, course=False, **directories):
    """The course config, rooted at ``root``: this course's nbgrader_config.py, and with
    ``course`` (grading, as nbgrader's commands do) every file of ``config_files``. The
    gradebook is ``db_url``, else the config's ``CourseDirectory.db_url``, else SQLite in
    ``root``. ``directories`` overrides CourseDirectory's *_directory traits (relative to
    root)."""
    config = Config()
    for path in config_files(root) if course else [CONFIG_FILE]:
        config.merge(PyFileConfigLoader(os.path.basename(path), os.path.dirname(path)).load_config())
    config.CourseDirectory.root = os.path.abspath(root)
    if db_url or "db_url" not in config.CourseDirectory:
        config.CourseDirectory.db_url = db_url or "sqlite:///" + os.path.join(os.path.abspath(root), "gradebook.db")
    for trait, value in directories.items():
        setattr(config.CourseDirectory, trait, value)
    return config


def coursedir(config, assignment_id, student_id="*"):
    # imported here: run/start.py loads the config before nbgrader is imported
    from nbgrader.coursedir import CourseDirectory
    cd = CourseDirectory(config=config)
    cd.assignment_id = assignment_id
    cd.student_id = student_id
    return cd
