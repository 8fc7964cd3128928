"""The system calls a learner's kernel may make: a seccomp filter, built with libseccomp
(pyseccomp, its Python interface, over Debian's libseccomp2) once per grading process, and
installed in every kernel before any of its code runs (zygote.py for warm kernels,
bubblewrap's ``--seccomp`` for cold ones).

It allows what a Python process, numpy, IPython, ipykernel and ZeroMQ use, and denies the
rest with EPERM: what Docker's default profile denies, and more that Docker allows but that
no grading kernel needs (``ptrace``, ``process_vm_readv``/``writev``, ``kcmp``,
``pidfd_getfd``, ``io_uring``). Among what is denied: the kernel key store (``keyctl``,
``add_key``, ``request_key``: keys outlive every namespace, so one submission could leave
something for another), new namespaces (``unshare``, ``setns``, and ``clone`` with a
namespace flag), mounts (old and new API), ``bpf``, ``perf_event_open``, ``userfaultfd``,
loading kernel modules or a new kernel, changing the personality (but for the values Docker
allows), the clock, swap, quotas and the system log. ``clone3``, whose flags a filter cannot
read, answers ENOSYS, so that the C library falls back to ``clone``, which is checked. System
calls of another architecture (x86's 32-bit ABI on x86-64) kill the process.

Two calls are allowed only with some arguments, since what they would share reaches past every
namespace: ``socket`` and ``socketpair`` for the families a kernel uses (Unix, IPv4, IPv6 and
netlink, all scoped by the kernel's network namespace; not vsock, which reaches the host of a
virtual machine, nor the others), and ``fcntl`` for its commands but locks, leases and
directory notices (a lock on a file every kernel may read, such as a module of the standard
library, is seen by every other kernel: ``F_GETLK``, ``F_OFD_GETLK``, /proc/locks; and the
locks' memory is charged to no cgroup). ``flock`` is denied for the same reason. And
``setsockopt`` for every option but the buffer sizes (unix-socket buffers are charged to no
cgroup either).
Rule (sandbox/): never judges; each protection is named in kernel.PROTECTIONS and attacked in tests.
"""
import errno
import functools

# Allowed outright, by purpose; names that this libseccomp or architecture does not know are
# skipped (an older libseccomp, another architecture): they stay denied.
ALLOWED = {
    "processes and threads": """exit exit_group fork vfork execve execveat wait4 waitid waitpid getpid getppid gettid
        getpgid getpgrp setpgid getsid setsid kill tkill tgkill pidfd_open pidfd_send_signal set_tid_address
        set_robust_list get_robust_list rseq arch_prctl prctl getcpu sched_yield sched_getaffinity sched_setaffinity
        sched_getattr sched_setattr sched_getparam sched_setparam sched_getscheduler sched_setscheduler
        sched_get_priority_max sched_get_priority_min sched_rr_get_interval getpriority setpriority ioprio_get
        ioprio_set getrlimit setrlimit prlimit64 ugetrlimit getrusage times capget capset restart_syscall
        seccomp membarrier process_mrelease""",
    "identity": """getuid geteuid getgid getegid getresuid getresgid getgroups setuid setgid setreuid setregid
        setresuid setresgid setgroups setfsuid setfsgid""",
    "signals": """rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigsuspend rt_sigtimedwait rt_sigqueueinfo
        rt_tgsigqueueinfo sigaltstack signalfd signalfd4 pause alarm""",
    "memory": """brk mmap munmap mremap mprotect madvise mincore msync mlock mlock2 munlock mlockall munlockall
        memfd_create memfd_secret pkey_alloc pkey_free pkey_mprotect map_shadow_stack remap_file_pages""",
    "files": """read write readv writev pread64 pwrite64 preadv preadv2 pwritev pwritev2 open openat openat2 creat
        close close_range lseek dup dup2 dup3 fsync fdatasync sync syncfs sync_file_range fadvise64
        readahead fallocate ftruncate truncate stat lstat fstat newfstatat statx statfs fstatfs access faccessat
        faccessat2 getdents getdents64 getcwd chdir fchdir mkdir mkdirat rmdir rename renameat renameat2 link linkat
        unlink unlinkat symlink symlinkat readlink readlinkat chmod fchmod fchmodat fchmodat2 chown fchown lchown
        fchownat umask utime utimes utimensat futimesat mknod mknodat copy_file_range sendfile splice tee vmsplice
        getxattr lgetxattr fgetxattr setxattr lsetxattr fsetxattr listxattr llistxattr flistxattr removexattr
        lremovexattr fremovexattr inotify_init inotify_init1 inotify_add_watch inotify_rm_watch fanotify_mark
        name_to_handle_at ioctl cachestat""",
    "waiting and time": """poll ppoll select pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait
        epoll_pwait2 eventfd eventfd2 futex futex_waitv futex_wait futex_wake futex_requeue nanosleep clock_nanosleep
        clock_gettime clock_getres gettimeofday time timer_create timer_delete timer_settime timer_gettime
        timer_getoverrun timerfd_create timerfd_settime timerfd_gettime getitimer setitimer""",
    "sockets and pipes": """bind listen accept accept4 connect getsockname getpeername getsockopt
        shutdown sendto recvfrom sendmsg recvmsg sendmmsg recvmmsg pipe pipe2""",
    "System V and POSIX IPC (private to the kernel's IPC namespace)": """shmget shmat shmdt shmctl semget semop
        semtimedop semctl msgget msgsnd msgrcv msgctl mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify
        mq_getsetattr""",
    "asynchronous I/O (not io_uring)": "io_setup io_destroy io_submit io_cancel io_getevents io_pgetevents",
    "the system": "uname sysinfo getrandom",
}
# socket families a kernel may use: AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
SOCKET_FAMILIES = (1, 2, 10, 16)
# fcntl's commands a kernel may use: F_DUPFD, F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_SETOWN,
# F_GETOWN, F_SETSIG, F_GETSIG, F_SETOWN_EX, F_GETOWN_EX, F_DUPFD_CLOEXEC, F_SETPIPE_SZ,
# F_GETPIPE_SZ, F_ADD_SEALS, F_GET_SEALS; not F_GETLK/F_SETLK/F_SETLKW (5-7),
# F_OFD_GETLK/SETLK/SETLKW (36-38), F_SETLEASE/F_GETLEASE (1024, 1025) nor F_NOTIFY (1026)
FCNTL_COMMANDS = (0, 1, 2, 3, 4, 8, 9, 10, 11, 15, 16, 1030, 1031, 1032, 1033, 1034)
# setsockopt's levels a kernel may use but SOL_SOCKET (IP, TCP, UDP, IPv6, ICMPv6, raw, netlink),
# and SOL_SOCKET's options but the buffer sizes (SO_SNDBUF, SO_RCVBUF and their FORCE forms, 7,
# 8, 32, 33): a socket's buffers stay at the host's default (net.core.wmem_default and
# rmem_default), and unix-socket buffers, which no cgroup counts, are bounded per kernel by
# that default times its descriptors (RLIMIT_NOFILE) and processes
SOCKOPT_LEVELS = (0, 6, 17, 41, 58, 255, 270)
SOCKET_OPTIONS = tuple(n for n in range(100) if n not in (7, 8, 32, 33))
# clone's flags that make namespaces: a clone with any of them is denied (unshare is denied)
NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
# the personalities Docker allows: the default, and reading it (0xffffffff), with or without
# 32-bit addressing and the 2.6 uname
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)


def allowed_names():
    return sorted({name for group in ALLOWED.values() for name in group.split()})


@functools.lru_cache(maxsize=None)
def program():
    """The filter as a BPF program (bytes: 8 per instruction), for the machine's architecture."""
    import tempfile

    import pyseccomp as seccomp
    arch = seccomp.system_arch()
    f = seccomp.SyscallFilter(seccomp.ERRNO(errno.EPERM))
    try:   # a binary tree of the system calls' numbers: each call tests a few of them, not hundreds
        f.set_attr(seccomp.Attr.CTL_OPTIMIZE, 2)
    except OSError:   # libseccomp before 2.5: the filter is the same, tested in a line
        pass
    for name in allowed_names():
        if seccomp.resolve_syscall(arch, name) >= 0:
            f.add_rule(seccomp.ALLOW, name)
    f.add_rule(seccomp.ALLOW, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, NAMESPACE_FLAGS, 0))
    for name in ("socket", "socketpair"):
        for family in SOCKET_FAMILIES:
            f.add_rule(seccomp.ALLOW, name, seccomp.Arg(0, seccomp.EQ, family))
    low = 0xFFFFFFFF   # an int argument: the kernel reads its low 32 bits
    for level in SOCKOPT_LEVELS:
        f.add_rule(seccomp.ALLOW, "setsockopt", seccomp.Arg(1, seccomp.MASKED_EQ, low, level))
    for option in SOCKET_OPTIONS:
        f.add_rule(seccomp.ALLOW, "setsockopt", seccomp.Arg(1, seccomp.MASKED_EQ, low, 1),
                   seccomp.Arg(2, seccomp.MASKED_EQ, low, option))
    for command in FCNTL_COMMANDS:
        f.add_rule(seccomp.ALLOW, "fcntl", seccomp.Arg(1, seccomp.EQ, command))
    for value in PERSONALITIES:
        f.add_rule(seccomp.ALLOW, "personality", seccomp.Arg(0, seccomp.EQ, value))
    if seccomp.resolve_syscall(arch, "clone3") >= 0:
        f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as out:
        f.export_bpf(out)
        out.seek(0)
        data = out.read()
    if not data or len(data) % 8:
        raise RuntimeError(f"libseccomp exported a filter of {len(data)} bytes")
    return data


def problem():
    """Why the filter cannot be built here (None when it can)."""
    try:
        program()
    except Exception as exc:   # no libseccomp2, a libseccomp too old for this machine
        return f"the kernels' system-call filter cannot be built ({type(exc).__name__}: {exc}): apt-get install libseccomp2"
    return None
