"""Build the sample class, samples/submitted/<student>/<assignment>/, from the answer files
in samples/answers/<assignment>/ and the release (generated, so not committed).

Each student's answers are one correct solution with that student's own functions laid over
it. Each folder also holds what nbgrader's exchange puts beside a notebook that a student
submits (``timestamp.txt``, ``submission_secret.txt``), as ``nbgrader collect`` leaves them, so
the class's feedback can be handed back with ``nbgrader release_feedback``. They are fixed, not
drawn, so that the class is the same on every machine. ``python -m assignments demo`` builds it
before grading; ``python samples/build.py`` too.
"""
import hashlib
import os
import shutil

import nbformat

from assignments.grading.authoring.submissions import answer_cells, fill
from assignments.grading.contract.assignment import load

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

CLASSES = {  # assignment -> student -> answer files, later ones overriding earlier ones
    "rnn_step_by_step": {"ada": ["ada.py"], "ben": ["ada.py", "ben.py"], "chloe": ["ada.py", "chloe.py"],
                         "dev": ["ada.py", "dev.py"], "eve": ["ada.py", "eve.py"]},
    "gru_step_by_step": {"ada": ["ada.py"], "ben": ["ada.py", "ben.py"], "chloe": ["ada.py", "chloe.py"],
                         "dev": ["ada.py", "dev.py"], "eve": ["ada.py", "eve.py"]},
}
NOT_A_NOTEBOOK = {("finn", "rnn_step_by_step"): "I ran out of time, sorry! I'll send the notebook tomorrow.\n"}
SUBMITTED_AT = "2026-10-02 16:45:00.000000 UTC"   # nbgrader's timestamp format


def exchange_files(folder, student, aid):
    """What nbgrader's submit writes beside the notebook: when, and the secret that names the
    student's feedback in the exchange (128 hex digits, here derived, not random)."""
    with open(os.path.join(folder, "timestamp.txt"), "w", encoding="utf-8") as f:
        f.write(SUBMITTED_AT)
    with open(os.path.join(folder, "submission_secret.txt"), "w", encoding="utf-8") as f:
        f.write(hashlib.sha512(f"sample class/{aid}/{student}".encode()).hexdigest())


def build(out=os.path.join(HERE, "submitted"), lang="en"):
    """Write the class to ``out`` (replacing it); return ``out``. ``lang``: the edition the
    students filled in (``zh-CN``: release-zh-CN/'s notebooks, with the same answers)."""
    shutil.rmtree(out, ignore_errors=True)
    for aid, students in CLASSES.items():
        a = load(aid)
        name = a.notebook + ".ipynb"
        release = os.path.join(REPO, "release" if lang == "en" else f"release-{lang}", aid, name)
        for student, files in students.items():
            answers = {}
            for f in files:
                with open(os.path.join(HERE, "answers", aid, f), encoding="utf-8") as fh:
                    answers.update(answer_cells(fh.read()))
            folder = os.path.join(out, student, aid)
            os.makedirs(folder, exist_ok=True)
            nbformat.write(fill(release, answers), os.path.join(folder, name))
            exchange_files(folder, student, aid)
    for (student, aid), text in NOT_A_NOTEBOOK.items():
        folder = os.path.join(out, student, aid)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, load(aid).notebook + ".ipynb"), "w", encoding="utf-8") as f:
            f.write(text)
        exchange_files(folder, student, aid)
    return out


if __name__ == "__main__":
    build()
