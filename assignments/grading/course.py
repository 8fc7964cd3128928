"""nbgrader's configuration for one run: the course's nbgrader_config.py, with the course
directories pointed at the run's own folders."""
import os

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from nbgrader.coursedir import CourseDirectory

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG_FILE = os.path.join(REPO, "nbgrader_config.py")


def load_config(root, db_path, **directories):
    """The course config, rooted at ``root`` with a SQLite gradebook at ``db_path``.
    ``directories`` overrides CourseDirectory's *_directory traits (relative to root)."""
    config = Config()
    config.merge(PyFileConfigLoader(os.path.basename(CONFIG_FILE), os.path.dirname(CONFIG_FILE)).load_config())
    config.CourseDirectory.root = os.path.abspath(root)
    config.CourseDirectory.db_url = "sqlite:///" + os.path.abspath(db_path)
    for trait, value in directories.items():
        setattr(config.CourseDirectory, trait, value)
    return config


def coursedir(config, assignment_id, student_id="*"):
    cd = CourseDirectory(config=config)
    cd.assignment_id = assignment_id
    cd.student_id = student_id
    return cd
