"""The catalog of mistakes as a page of docs/, generated from the assignment's catalog so
that the codes users read in results.json are documented exactly as the grader knows them.
Rule (authoring/): runs in the course staff's process, never on a learner's code."""
import os


def catalog_markdown(assignment):
    """docs/mistakes/<id>.md for ``assignment``: every code, its function, and what it means."""
    lines = [f"# The mistakes the grader names: `{assignment.id}`", "",
             "Generated from the assignment's catalog by `python -m assignments release`; do not edit.",
             "A code appears in `results.json` (`diagnoses`) only when the submission's behaviour",
             "shows that mistake. Codes are stable: new ones may be added, none is renamed.", ""]
    for ex in assignment.exercises:
        found = assignment.mistakes.for_function(ex.name)
        if not found:
            continue
        lines += [f"## `{ex.name}`", "", "| code | what the student is told |", "|---|---|"]
        lines += ["| `%s` | %s |" % (m.code, m.feedback.replace("|", "\\|")) for m in found]
        lines.append("")
    return "\n".join(lines)


def path(repo, assignment):
    return os.path.join(repo, "docs", "mistakes", assignment.id + ".md")


def write(assignment, repo):
    os.makedirs(os.path.dirname(path(repo, assignment)), exist_ok=True)
    with open(path(repo, assignment), "w", encoding="utf-8") as f:
        f.write(catalog_markdown(assignment))


def drift(assignment, repo):
    """Problems if docs/mistakes.md is not what the catalog generates."""
    try:
        with open(path(repo, assignment), encoding="utf-8") as f:
            current = f.read()
    except OSError:
        current = None
    if current != catalog_markdown(assignment):
        return [f"docs/mistakes/{assignment.id}.md is not what the catalog generates: run `python -m assignments release`"]
    return []
