"""How long the copying evidence takes for a large class (issue 33: at most 30 s for 1,000
submissions on 2 cores).

The class is synthesised from the corpus: each submission takes each function from a random
independent solution and rewrites its comments (so no two cells are the same text and every
cell is tokenised afresh), and 20 of them are planted copies of another. Behaviour signatures
are synthesised too. It measures time only: every mixed cell is held by some 30 submissions,
so the copies are the class's common stock and are not flagged. Run from the repository root:

    python benchmarks/similarity.py [--students 1000] [--jobs 2]
"""
import argparse
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "tests")]

import similarity_corpus as corpus  # noqa: E402

from assignments.grading import similarity  # noqa: E402


def synthesise(students, seed=1):
    """{student: {function: cell}} and {student: {function: signature}} for a large class."""
    rng = random.Random(seed)
    release = corpus.release_code()
    pool = corpus.independent()
    names = sorted(pool)
    subs, sigs = {}, {}
    for i in range(students):
        cells = {fn: pool[rng.choice(names)][fn] for fn in corpus.FUNCTIONS}
        subs[f"s{i:04d}"] = corpus.with_docstrings(corpus.plant(cells, "comments", rng), release)
        sigs[f"s{i:04d}"] = {fn: f"sig{rng.randrange(40)}" for fn in corpus.FUNCTIONS if rng.random() < 0.2}
    for i in range(20):
        a, b = rng.sample(sorted(subs), 2)
        subs[b], sigs[b] = dict(subs[a]), dict(sigs[a])
    return subs, sigs, release


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    subs, sigs, release = synthesise(args.students)
    web = {k: corpus.with_docstrings(v, release) for k, v in corpus.known().items()}
    similarity.normalised_code.cache_clear()
    start = time.perf_counter()
    report = similarity.compare("rnn_step_by_step", subs, release, corpus.reference_code(), known=web,
                                signatures=sigs, catalogued={"sig0", "sig1"}, jobs=args.jobs)
    seconds = time.perf_counter() - start
    flagged = sum(p["flagged"] for p in report["pairs"])
    print(f"[measure] similarity for {len(subs)} submissions ({len(subs) * len(release)} cells, "
          f"{len(web)} known solutions), {args.jobs} jobs: {seconds:.1f} s; "
          f"{len(report['pairs'])} pairs reported, {flagged} flagged")
    return seconds


if __name__ == "__main__":
    main()
