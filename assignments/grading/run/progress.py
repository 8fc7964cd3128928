"""What the instructor sees while a class is graded: a progress bar on a terminal, a line
per submission otherwise, and each submission's time in timings.csv.
Rule (run/): only the grading process writes the class's gradebook and folders."""
import csv
import sys
import time

from ..measure import steps


class Progress:
    def __init__(self, total, stream=None, enabled=True):
        self.total, self.done, self.started = total, 0, time.perf_counter()
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.rows = []

    def refused(self):
        """One submission fewer to grade: staging refused it (it is no job)."""
        self.total -= 1
        self.enabled = self.enabled and self.total > 0

    def update(self, result, status):
        self.done += 1
        self.rows.append({"student": result["student"], "status": status, "seconds": result.get("seconds", 0.0),
                          "cpu_seconds": result.get("cpu", 0.0), "worker": result.get("worker", ""),
                          **{f"cpu:{name}": seconds for name, seconds in result.get("steps", {}).items()}})
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.started
        eta = elapsed / self.done * (self.total - self.done)
        line = (f"{self.done}/{self.total}  {result['student']} {status} in {result.get('seconds', 0.0):.1f} s"
                f"  | {elapsed:.0f} s elapsed, ~{eta:.0f} s left")
        if self.stream.isatty():
            filled = round(30 * self.done / self.total)
            self.stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {line}\x1b[K")
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(f"graded {line}\n")
        self.stream.flush()

    def write_csv(self, path, keep=()):
        """This run's rows, with ``keep`` (earlier rows of students it did not grade)."""
        fields = ["student", "status", "seconds", "cpu_seconds", "worker", *(f"cpu:{name}" for name in steps.STEPS)]
        with open(path, "w", newline="", encoding="utf-8") as f:
            out = csv.DictWriter(f, fieldnames=fields)
            out.writeheader()
            out.writerows(sorted([*({k: r.get(k, "") for k in fields} for r in keep), *self.rows], key=lambda r: r["student"]))
