"""Where a learner's code runs: the kernel manager, the zygote that forks kernels and the
grader's end of its pipes, the cgroups and the system-call filter around each kernel. Rule:
nothing here judges; every protection it gives a kernel is named in kernel.PROTECTIONS and
attacked in tests/test_sandbox.py."""
