"""Build the sample class, samples/submitted/<student>/<assignment>/, from the answer files
in samples/answers/<assignment>/ and the release (generated, so not committed).

Each student's answers are one correct solution with that student's own functions laid over
it. ``python -m assignments demo`` builds it before grading; ``python samples/build.py`` too.
"""
import os
import shutil

import nbformat

from assignments.grading.assignment import load
from assignments.grading.submissions import answer_cells, fill

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

CLASSES = {  # assignment -> student -> answer files, later ones overriding earlier ones
    "rnn_step_by_step": {"ada": ["ada.py"], "ben": ["ada.py", "ben.py"], "chloe": ["ada.py", "chloe.py"],
                         "dev": ["ada.py", "dev.py"], "eve": ["ada.py", "eve.py"]},
    "gru_step_by_step": {"ada": ["ada.py"], "ben": ["ada.py", "ben.py"], "chloe": ["ada.py", "chloe.py"],
                         "dev": ["ada.py", "dev.py"], "eve": ["ada.py", "eve.py"]},
}
NOT_A_NOTEBOOK = {("finn", "rnn_step_by_step"): "I ran out of time, sorry! I'll send the notebook tomorrow.\n"}


def build(out=os.path.join(HERE, "submitted")):
    """Write the class to ``out`` (replacing it); return ``out``."""
    shutil.rmtree(out, ignore_errors=True)
    for aid, students in CLASSES.items():
        a = load(aid)
        name = a.notebook + ".ipynb"
        release = os.path.join(REPO, "release", aid, name)
        for student, files in students.items():
            answers = {}
            for f in files:
                with open(os.path.join(HERE, "answers", aid, f), encoding="utf-8") as fh:
                    answers.update(answer_cells(fh.read()))
            folder = os.path.join(out, student, aid)
            os.makedirs(folder, exist_ok=True)
            nbformat.write(fill(release, answers), os.path.join(folder, name))
    for (student, aid), text in NOT_A_NOTEBOOK.items():
        folder = os.path.join(out, student, aid)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, load(aid).notebook + ".ipynb"), "w", encoding="utf-8") as f:
            f.write(text)
    return out


if __name__ == "__main__":
    build()
