"""Rebuild the sample class in samples/submitted/ from samples/answers/ and the release.

Each student's answers are Ada's correct solution with that student's own functions laid
over it. Run from the repository root: python samples/build.py
"""
import os
import sys

import nbformat

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from assignments import rnn_step_by_step as assignment  # noqa: E402
from assignments.grading.submissions import answer_cells, fill  # noqa: E402

CLASS = {  # student -> answer files, later ones overriding earlier ones
    "ada": ["ada.py"], "ben": ["ada.py", "ben.py"], "chloe": ["ada.py", "chloe.py"],
    "dev": ["ada.py", "dev.py"], "eve": ["ada.py", "eve.py"],
}
NOT_A_NOTEBOOK = {"finn": "I ran out of time, sorry! I'll send the notebook tomorrow.\n"}


def build(out=os.path.join(HERE, "submitted")):
    aid, name = assignment.ASSIGNMENT_ID, assignment.NOTEBOOK + ".ipynb"
    release = os.path.join(os.path.dirname(HERE), "release", aid, name)
    for student, files in CLASS.items():
        answers = {}
        for f in files:
            with open(os.path.join(HERE, "answers", f), encoding="utf-8") as fh:
                answers.update(answer_cells(fh.read()))
        folder = os.path.join(out, student, aid)
        os.makedirs(folder, exist_ok=True)
        nbformat.write(fill(release, answers), os.path.join(folder, name))
    for student, text in NOT_A_NOTEBOOK.items():
        folder = os.path.join(out, student, aid)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    build()
