"""nbgrader's collect (`nbgrader collect`, formgrader's Collect button), copying a submission
from the exchange without following a symbolic link.

The exchange's inbound folder is writable by every student, and nbgrader's ``do_copy`` is
``shutil.copytree``, which follows links: a student's submission that is a link to the course's
source notebook, or holds one, came back into ``submitted/`` as the solutions themselves, read
with the instructor's rights. Here a link is copied as a link (the grader then refuses the
submission, naming it: run/pipeline.py's ``stage``), and a pipe, socket or device is left out
(nbgrader's copy would hang on a pipe). nbgrader's own checks (size, ignore and include
patterns, groupshared modes) run as they do in its copy.
Rule (upstream/): relies on another package's internals, and says which (fingerprints.json):
overrides ``nbgrader.exchange.default.exchange.Exchange.do_copy``.
"""
import os
import shutil
import stat

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import ignore_patterns


class LinkKeepingCollect(ExchangeCollect):
    """ExchangeCollect whose copy keeps links as links and leaves special files out."""

    def do_copy(self, src, dest, log=None):
        if os.path.islink(src):   # the submission's folder itself: kept as the link it is
            self.log.error("%s is a symbolic link: kept as one, and the grader will not grade it", src)
            os.symlink(os.readlink(src), dest)
            return
        size = self.get_size(src)
        if size > 1000 * self.coursedir.max_dir_size:
            self.log.error("Directory size is too big")
            raise RuntimeError(f"Directory size is too big. Size is {size}, maximum size is "
                               f"{1000 * self.coursedir.max_dir_size}")
        patterns = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                   max_file_size=self.coursedir.max_file_size, log=self.log)

        def ignore(folder, names):
            left_out = set(patterns(folder, names))
            for name in names:
                mode = os.lstat(os.path.join(folder, name)).st_mode
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                    self.log.error("%s is not a regular file: not collected", os.path.join(folder, name))
                    left_out.add(name)
            return left_out

        shutil.copytree(src, dest, symlinks=True, ignore=ignore)
        if self.coursedir.groupshared:   # the modes nbgrader's copy leaves in a group-shared course
            for folder, _, files in os.walk(dest):
                self._share(folder, 0o2770, 0o2777)
                for name in files:
                    if not os.path.islink(os.path.join(folder, name)):
                        self._share(os.path.join(folder, name), 0o660, 0o777)

    def _share(self, path, bits, keep):
        mode = os.stat(path).st_mode
        if mode & bits != bits:
            try:
                os.chmod(path, (mode | bits) & keep)
            except PermissionError:
                self.log.warning("Could not update permissions of %s to make it groupshared", path)
