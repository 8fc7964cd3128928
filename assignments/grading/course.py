"""nbgrader's configuration for one run: the course's nbgrader_config.py, with the course
directories pointed at the run's own folders."""
import os

from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG_FILE = os.path.join(REPO, "nbgrader_config.py")


def load_config(root, db_url=None, **directories):
    """The course config, rooted at ``root``. The gradebook is ``db_url``, else the config
    file's ``CourseDirectory.db_url``, else SQLite in ``root``. ``directories`` overrides
    CourseDirectory's *_directory traits (relative to root)."""
    config = Config()
    config.merge(PyFileConfigLoader(os.path.basename(CONFIG_FILE), os.path.dirname(CONFIG_FILE)).load_config())
    config.CourseDirectory.root = os.path.abspath(root)
    if db_url or "db_url" not in config.CourseDirectory:
        config.CourseDirectory.db_url = db_url or "sqlite:///" + os.path.join(os.path.abspath(root), "gradebook.db")
    for trait, value in directories.items():
        setattr(config.CourseDirectory, trait, value)
    return config


def coursedir(config, assignment_id, student_id="*"):
    cd = CourseDirectory(config=config)
    cd.assignment_id = assignment_id
    cd.student_id = student_id
    return cd
