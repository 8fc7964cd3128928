"""nbgrader preprocessors of the grading pipeline (configured in nbgrader_config.py)."""
import importlib
import json
import secrets

from nbformat.v4 import new_code_cell, new_output
from traitlets import Float, Unicode

from nbgrader.preprocessors import Execute
from nbgrader import utils

from . import harness
from .judge import Judge
from .kernel import GradingKernelManager

HARNESS_FILE = harness.__file__


class JudgedExecute(Execute):
    """Execute the learner's cells as nbgrader does, but judge each graded test cell in
    the grading process: the kernel runs the learner's function on hidden inputs and hands
    back its outputs, and the cell's outputs become the verdict (feedback and score).

    Nothing the learner prints, warns or rebinds reaches a test cell's outputs, so stderr
    cannot zero a passing test and a patched ``np.testing`` cannot pass a failing one.
    """

    assignment = Unicode(
        "assignments.rnn_step_by_step",
        help="Module describing the assignment (exercises, hidden cases, reference, checks).",
    ).tag(config=True)

    test_prefix = Unicode(
        "test_", help="A graded test cell with grade_id test_<name> judges the function <name>."
    ).tag(config=True)

    call_timeout = Float(60, help="Seconds one call of a learner's function may take.").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", GradingKernelManager)
        super().__init__(*args, **kwargs)

    def preprocess(self, nb, resources, *args, **kwargs):
        self._a = importlib.import_module(self.assignment)
        self._judge = Judge(self._a)
        with open(self._a.CHECKS_FILE, encoding="utf-8") as f, open(HARNESS_FILE, encoding="utf-8") as g:
            self._kernel_source = f.read() + "\n\n" + g.read()
        resources.setdefault("verdicts", {})
        return super().preprocess(nb, resources, *args, **kwargs)

    def exercise_of(self, cell):
        if cell.cell_type != "code" or not utils.is_grade(cell) or utils.is_solution(cell):
            return None
        grade_id = cell.metadata["nbgrader"].get("grade_id", "")
        name = grade_id[len(self.test_prefix):] if grade_id.startswith(self.test_prefix) else None
        return name if name in self._a.BY_NAME else None

    def preprocess_cell(self, cell, resources, index):
        name = self.exercise_of(cell)
        if name is None:
            return super().preprocess_cell(cell, resources, index)
        verdict = self._judge.judge(name, lambda n, args, callees: self._call(n, args, callees, index))
        cell.outputs = verdict_outputs(verdict)
        cell.metadata["judge"] = verdict.to_json()
        resources["verdicts"][name] = verdict.to_json()
        return cell, resources

    def _call(self, name, args, callees, index):
        """Run one call in the kernel; return (status, decoded outputs or a message, observations)."""
        nonce = secrets.token_hex(8)
        request = {"name": name, "nonce": nonce, "inputs": self._a.checks.encode(args),
                   "callees": {c: self._a.callee_source(c) for c in callees}}
        # Run harness + check module in a fresh namespace: nothing lands in the learner's.
        code = (f"(lambda g: (exec(compile({self._kernel_source!r}, '<grader>', 'exec'), g), "
                f"g['main']({json.dumps(request)!r})))({{'__name__': '__grader__'}})")
        probe = new_code_cell(code)
        saved_timeout, self.timeout = self.timeout, self.call_timeout
        test_cell = self.nb.cells[index]
        try:
            self.execute_cell(probe, index, store_history=False)
        except Exception as exc:  # a dead kernel, a timeout nbclient could not recover from
            return "fault", f"made the kernel fail ({type(exc).__name__}: {exc})", {}
        finally:
            self.timeout = saved_timeout
            self.nb.cells[index] = test_cell   # nbclient stores the executed cell at index
        for out in probe.outputs:
            data = out.get("data", {}).get(harness.MIME)
            if out.output_type == "display_data" and data and data.get("nonce") == nonce:
                observed = data.get("observed", {})
                if data["status"] == "ok":
                    return "ok", self._a.checks.decode(data["output"]), observed
                return data["status"], data["text"], observed
        errors = [o for o in probe.outputs if o.output_type == "error"]
        if errors:
            return "fault", f"stopped with {errors[-1].ename} before it returned (time limit or crash)", {}
        return "fault", "returned no result the grader could read", {}


def verdict_outputs(v):
    """A test cell's outputs that nbgrader's determine_grade scores as ``v.score``:
    an error for no credit, otherwise the feedback and the score as the cell's result."""
    if v.score == 0:
        lines = v.feedback.splitlines() or ["Failed."]
        return [new_output("error", ename="HiddenTestsFailed", evalue=lines[0],
                           traceback=["\x1b[0;31m✗ " + lines[0] + "\x1b[0m"] + lines[1:])]
    mark = "✓" if v.passed else "✗"
    return [new_output("stream", name="stdout", text=f"{mark} {v.feedback}\n"),
            new_output("execute_result", data={"text/plain": repr(v.score)}, execution_count=None)]
