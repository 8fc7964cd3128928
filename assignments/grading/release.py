"""Build the student release from source/ with nbgrader's generate_assignment."""
import os
import shutil
import tempfile

from . import record
from .course import load_config


def build(assignment, source_root, release_root):
    """Refresh the generated parts of ``source_root/<id>``, then write the student version
    to ``release_root/<id>`` (replacing it). Uses a throwaway gradebook."""
    aid = assignment.id
    assignment.refresh_source(os.path.join(source_root, aid))
    with tempfile.TemporaryDirectory() as work:
        shutil.copytree(os.path.join(source_root, aid), os.path.join(work, "source", aid),
                        ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        assignment.finish_release_source(os.path.join(work, "source", aid))
        config = load_config(work, "sqlite:///" + os.path.join(work, "gradebook.db"))
        config.GenerateAssignment.force = True
        record.prepare(config, aid)
        target = os.path.join(release_root, aid)
        if os.path.exists(target):
            shutil.rmtree(target)
        shutil.copytree(os.path.join(work, "release", aid), target)
        for dirpath, _, files in os.walk(target):
            for name in files:
                os.chmod(os.path.join(dirpath, name), 0o644)
    return target
