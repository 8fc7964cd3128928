"""Every generated file is byte-identical whichever CPU builds it.

The last bits of a float depend on the BLAS kernel OpenBLAS picks for the CPU and on the
SIMD loops numpy dispatches to; both can be forced to another CPU's choice with environment
variables. The release is rebuilt from a copy of source/ under such a variant and compared,
byte for byte, with the release and source committed in the repository.
"""
import filecmp
import os
import platform
import shutil
import subprocess
import sys

import pytest
from helpers import REPO

AID = "rnn_step_by_step"
BUILD = ("import sys; from assignments.rnn_step_by_step import ASSIGNMENT as a; from assignments.grading.authoring import release; "
         "release.build(a, sys.argv[1], sys.argv[2])")


def variants():
    """Environments that make this machine compute like other CPUs."""
    if platform.machine() in ("x86_64", "AMD64"):
        return {"prescott-sse3": {"OPENBLAS_CORETYPE": "Prescott", "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4"},
                "nehalem": {"OPENBLAS_CORETYPE": "Nehalem"}}
    if platform.machine() in ("aarch64", "arm64"):
        return {"armv8": {"OPENBLAS_CORETYPE": "ARMV8"}}
    return {}


def differing(left, right):
    cmp = filecmp.dircmp(left, right, ignore=["__pycache__"])
    stack, found = [cmp], []
    while stack:
        d = stack.pop()
        found += d.left_only + d.right_only
        found += [f for f in d.common_files if not filecmp.cmp(os.path.join(d.left, f), os.path.join(d.right, f),
                                                                 shallow=False)]
        stack += d.subdirs.values()
    return sorted(found)


@pytest.mark.parametrize("name,env", sorted(variants().items()), ids=sorted(variants()))
def test_release_is_byte_identical_on_another_cpu(tmp_path, name, env):
    source, release = tmp_path / "source", tmp_path / "release"
    shutil.copytree(os.path.join(REPO, "source", AID), source / AID)
    run = subprocess.run([sys.executable, "-c", BUILD, str(source), str(release)], cwd=REPO,
                         env=dict(os.environ, **env), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert differing(str(source / AID), os.path.join(REPO, "source", AID)) == []
    assert differing(str(release / AID), os.path.join(REPO, "release", AID)) == []


def test_the_variants_do_change_the_arithmetic():
    """The comparison above proves something only if the variants really compute
    differently: some float of the computation must change in its last bits."""
    probe = ("import numpy as np; r = np.random.RandomState(0); a = r.randn(64, 64); b = r.randn(64, 64); "
             "x = r.randn(4096) * 3; print((a @ b).tobytes().hex()[:4000], np.tanh(x).tobytes().hex(), np.exp(x).tobytes().hex())")
    base = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    changed = [name for name, env in variants().items()
               if subprocess.run([sys.executable, "-c", probe], env=dict(os.environ, **env), capture_output=True,
                                 text=True, check=True).stdout != base]
    if not variants():
        pytest.skip(f"no known BLAS variants for {platform.machine()}")
    assert changed, "no variant changed a single bit: the reproducibility test proves nothing on this machine"
