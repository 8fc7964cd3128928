#!/usr/bin/env python3
"""Set up a JupyterHub for this course on this machine, and start it (``--start``).

The deployment nbgrader documents for a class with one instructor ("One Class, One Grader"),
made whole:

* local system users (PAM logins): one instructor and the students, created when missing,
  each home private to its owner;
* one Python environment for everybody, in ``PREFIX/venv``: JupyterHub, JupyterLab, nbgrader
  and numpy, and this course, installed once (editable, from the instructor's course folder:
  the grader finds the course's source and release there);
* nbgrader's exchange in ``PREFIX/exchange``, writable by all, sticky (nobody removes what
  another put there);
* the instructor's course folder, ``~instructor/<course folder>``: a copy of this repository,
  readable by the instructor alone, its generated files built by ``python -m assignments
  release`` as the instructor;
* formgrader and the assignment-creation tools for the instructor only; the Assignments panel
  and its Validate button for everybody (nbgrader's extensions, switched at the environment's
  level, and back on in the instructor's own Jupyter folder);
* JupyterHub's proxy (configurable-http-proxy, pinned in hub/package-lock.json) in ``PREFIX/proxy``;
* the hub's state (its database, cookie secret, the users' passwords) in ``PREFIX/state``,
  readable by root alone.

It must run as root, with a Python that every user can run (Debian's ``/usr/bin/python3``):
installs what is missing from Debian's packages (bubblewrap, python3-venv, Node.js), and
packages from PyPI and npm, pinned. Running it again changes only what changed.
``hub/jupyterhub_config.py`` reads ``PREFIX/hub.json``, which this script writes.
See docs/hub.md.
"""
import argparse
import hashlib
import json
import os
import pwd
import secrets
import shlex
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HUB = os.path.join(REPO, "hub")
COURSE_ID = "rnn-step-by-step"
# nbgrader's JupyterLab plugins and server extension that only the instructor gets
INSTRUCTOR_PLUGINS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                      "@jupyter/nbgrader:course-list")
INSTRUCTOR_SERVER_EXTENSIONS = ("nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list")


def say(text):
    print(f"[hub] {text}", flush=True)


def run(cmd, **kw):
    kw.setdefault("check", True)
    return subprocess.run(cmd, **kw)


def digest(*paths, extra=""):
    h = hashlib.sha256(extra.encode())
    for path in paths:
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def debian_packages(python):
    """What the hub needs from Debian, installed when missing."""
    wanted = []
    if not shutil.which("bwrap"):
        wanted.append("bubblewrap")   # the grading sandbox (formgrader's Autograde button too)
    if run([python, "-c", "import ensurepip, venv"], capture_output=True, check=False).returncode != 0:
        wanted.append("python3-venv")
    if not (shutil.which("node") and shutil.which("npm")):
        wanted += ["nodejs", "npm"]
    if not shutil.which("git"):
        wanted.append("git")
    if wanted:
        say(f"installing from Debian: {' '.join(wanted)}")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        run(["apt-get", "update", "-qq"], env=env)
        run(["apt-get", "install", "-y", "-qq", *wanted], env=env, stdout=subprocess.DEVNULL)


def environment(venv, python):
    """The hub's Python environment: the course's pinned requirements and JupyterHub's."""
    files = [os.path.join(REPO, "requirements.txt"), os.path.join(HUB, "requirements.txt"),
             os.path.join(REPO, "constraints.txt")]
    version = run([python, "-c", "import sys; print(sys.version)"], capture_output=True, text=True).stdout
    stamp = digest(*files, extra=version)
    stamp_file = os.path.join(venv, ".rnn-course-hub")
    if os.path.isfile(stamp_file) and open(stamp_file).read() == stamp:
        return
    say(f"making the hub's Python environment in {venv} (a few minutes)")
    run([python, "-m", "venv", "--clear", venv])
    pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "--quiet", "--disable-pip-version-check"]
    run(pip + ["install", "-r", files[0], "-r", files[1], "-c", files[2]])
    with open(stamp_file, "w") as f:
        f.write(stamp)


def proxy(prefix):
    """JupyterHub's proxy, as pinned in hub/package-lock.json."""
    folder = os.path.join(prefix, "proxy")
    lock = os.path.join(HUB, "package-lock.json")
    stamp = digest(os.path.join(HUB, "package.json"), lock)
    stamp_file = os.path.join(folder, ".rnn-course-hub")
    if os.path.isfile(stamp_file) and open(stamp_file).read() == stamp:
        return
    say("installing configurable-http-proxy from npm")
    os.makedirs(folder, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(HUB, name), folder)
    run(["npm", "ci", "--omit=dev", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder)
    with open(stamp_file, "w") as f:
        f.write(stamp)


def user(name, home_root, passwords, full_name=""):
    """A local user with a private home and a password (kept, or made and remembered), and
    their full name when one is given (the system's comment field, GECOS)."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        os.makedirs(home_root, exist_ok=True)
        run(["useradd", "--create-home", "--home-dir", os.path.join(home_root, name), "--shell", "/bin/bash",
             "--user-group", name])
        entry = pwd.getpwnam(name)
        say(f"user {name} created")
    if full_name and entry.pw_gecos.split(",")[0] != full_name:
        run(["usermod", "--comment", full_name, name])
        entry = pwd.getpwnam(name)
    os.chmod(entry.pw_dir, 0o700)
    if name not in passwords:
        passwords[name] = secrets.token_urlsafe(12)
    run(["chpasswd"], input=f"{name}:{passwords[name]}\n", text=True)
    return entry


def as_user(entry, cmd, **kw):
    env = {"HOME": entry.pw_dir, "USER": entry.pw_name, "LOGNAME": entry.pw_name, "LANG": "C.UTF-8",
           "PATH": kw.pop("path", "/usr/local/bin:/usr/bin:/bin")}
    return run(cmd, user=entry.pw_uid, group=entry.pw_gid, extra_groups=[], env=env, cwd=kw.pop("cwd", entry.pw_dir), **kw)


def course_files():
    """This repository's files: those git tracks and those it would track (not what it ignores)."""
    listed = run(["git", "-C", REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                 capture_output=True).stdout.decode().split("\0")
    return sorted(f for f in listed if f and os.path.isfile(os.path.join(REPO, f)))


def course(entry, folder, venv, refresh):
    """The instructor's course folder: a private copy of this repository, with its generated
    files built, and the course installed from it into the hub's environment."""
    fresh = not os.path.isdir(folder)
    if fresh or refresh:
        say(f"copying the course to {folder}")
        for rel in course_files():
            dest = os.path.join(folder, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy2(os.path.join(REPO, rel), dest)
        run(["chown", "-R", f"{entry.pw_uid}:{entry.pw_gid}", folder])
        os.chmod(folder, 0o700)
    run([os.path.join(venv, "bin", "python"), "-m", "pip", "--quiet", "--disable-pip-version-check", "install",
         "--no-deps", "--no-build-isolation", "-e", folder], stdout=subprocess.DEVNULL)
    run(["chown", "-R", f"{entry.pw_uid}:{entry.pw_gid}", folder])
    if fresh or refresh:   # the checks and check data beside the source notebooks, as course staff build them
        as_user(entry, [os.path.join(venv, "bin", "python"), "-m", "assignments", "release"], cwd=folder,
                path=os.path.join(venv, "bin") + ":/usr/bin:/bin", stdout=subprocess.DEVNULL)


def parse_students(text):
    """``--students``: comma-separated ``name`` or ``name:Full Name`` entries, as (name, full name)."""
    found = []
    for item in text.split(","):
        name, _, full_name = item.partition(":")
        if name.strip():
            found.append((name.strip(), full_name.strip()))
    return found


def student_names(entries):
    """The gradebook's rows of the students: id, first and last name, from each user's full
    name on the system (GECOS: "Ada Lovelace" is first name Ada, last name Lovelace); a user
    without one is listed by their user name as last name. Without these rows formgrader
    names every student "None, None" (collect adds them with no names)."""
    rows = []
    for entry in entries:
        full_name = entry.pw_gecos.split(",")[0].strip()
        first, _, last = full_name.rpartition(" ")
        rows.append({"id": entry.pw_name, "first_name": first if full_name else "",
                     "last_name": last if full_name else entry.pw_name})
    return rows


def gradebook_students(instructor, folder, venv, entries):
    """The students in the course's gradebook with their names (nbgrader db student add), as
    the instructor; run again, it updates them."""
    for row in student_names(entries):
        as_user(instructor, [os.path.join(venv, "bin", "nbgrader"), "db", "student", "add", row["id"],
                             f"--first-name={row['first_name']}", f"--last-name={row['last_name']}"],
                cwd=folder, path=os.path.join(venv, "bin") + ":/usr/bin:/bin", stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)


# nbgrader's JupyterLab extension: "(view feedback)" in the Assignments panel shows the feedback's
# folder in the file browser (filebrowser:go-to-path), where the student must then find the page.
# The same link, made to open each notebook's page too (docmanager:open). Its compiled code,
# as nbgrader 0.9.6 ships it (hub/requirements.txt pins it through constraints.txt): deploy.py
# changes that one statement and says so if it is not found.
VIEW_FEEDBACK = 'n.commands.execute("filebrowser:go-to-path",{path:a})'
VIEW_FEEDBACK_PAGES = ('n.commands.execute("filebrowser:go-to-path",{path:a}).then(function(){'
                       '(i.rnnCourseNotebooks||[]).forEach(function(b){n.commands.execute("docmanager:open",'
                       '{path:a+"/"+b.notebook_id+".html"})})})')
VIEW_FEEDBACK_DATA = 'i.innerText=" (view feedback)"'
VIEW_FEEDBACK_DATA_PAGES = 'i.rnnCourseNotebooks=this.data.notebooks,i.innerText=" (view feedback)"'


def feedback_link(venv):
    """Make "(view feedback)" open the feedback pages (VIEW_FEEDBACK); True if it does."""
    static = os.path.join(venv, "share", "jupyter", "labextensions", "@jupyter", "nbgrader", "static")
    for name in sorted(os.listdir(static)) if os.path.isdir(static) else ():
        path = os.path.join(static, name)
        if not name.endswith(".js"):
            continue
        with open(path, encoding="utf-8") as f:
            code = f.read()
        if VIEW_FEEDBACK_PAGES in code:
            return True
        if code.count(VIEW_FEEDBACK) == 1 and code.count(VIEW_FEEDBACK_DATA) == 1:
            with open(path, "w", encoding="utf-8") as f:
                f.write(code.replace(VIEW_FEEDBACK, VIEW_FEEDBACK_PAGES).replace(VIEW_FEEDBACK_DATA, VIEW_FEEDBACK_DATA_PAGES))
            return True
    say("WARNING: nbgrader's Assignments panel is not the one deploy.py knows: "
        "(view feedback) opens the feedback's folder only")
    return False


def write(path, text, owner=None, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, mode)
    if owner is not None:
        os.chown(path, owner.pw_uid, owner.pw_gid)
        parent = os.path.dirname(path)
        while parent.startswith(owner.pw_dir + os.sep):
            os.chown(parent, owner.pw_uid, owner.pw_gid)
            parent = os.path.dirname(parent)


def terminal_shell(venv):
    """The shell of a JupyterLab terminal on the hub. Left to itself, Jupyter starts ``bash -l``
    (a login shell, its user's profile read), and Debian's /etc/profile sets PATH anew: the
    environment's commands (python, nbgrader, jupyter), which JupyterHub put first in PATH
    (Spawner.environment), were no longer found. The same login shell, the environment's bin
    put back in front of PATH, then an interactive bash (~/.bashrc, the prompt) in its place."""
    bin_dir = shlex.quote(os.path.join(venv, "bin"))
    return ["/bin/bash", "-l", "-c", f'PATH={bin_dir}:"$PATH"; exec /bin/bash -i']


def jupyter_settings(venv, exchange, instructor, course_folder):
    """nbgrader's settings for everybody (the environment's Jupyter folder), and the
    instructor's own (their Jupyter folder): where the exchange is, which course; formgrader
    and the course tools for the instructor alone; the terminals' shell (terminal_shell)."""
    etc = os.path.join(venv, "etc", "jupyter")
    write(os.path.join(etc, "nbgrader_config.py"),
          "# Written by hub/deploy.py: nbgrader's settings for every user of the hub.\n"
          "c = get_config()  # noqa: F821\n"
          f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
          f"c.Exchange.root = {exchange!r}\n")
    write(os.path.join(etc, "jupyter_server_config.d", "zz_rnn_course_hub.json"),
          json.dumps({"ServerApp": {"jpserver_extensions": {e: False for e in INSTRUCTOR_SERVER_EXTENSIONS}}}, indent=2))
    # the servers' own settings: in jupyter_server_config.json, as the .d folder beside it is
    # read for jpserver_extensions alone
    write(os.path.join(etc, "jupyter_server_config.json"),
          json.dumps({"ServerApp": {"terminado_settings": {"shell_command": terminal_shell(venv)}}}, indent=2))
    write(os.path.join(etc, "labconfig", "page_config.json"),
          json.dumps({"disabledExtensions": {p: True for p in INSTRUCTOR_PLUGINS}}, indent=2))
    # formgrader's grading page: MathJax from the server itself (hub/templates/formgrade/)
    with open(os.path.join(HUB, "templates", "formgrade", "mathjax.html.j2"), encoding="utf-8") as f:
        write(os.path.join(venv, "share", "jupyter", "nbconvert", "templates", "formgrade", "mathjax.html.j2"), f.read())
    # JupyterLab asks nobody whether to fetch Jupyter's news, nor looks for updates
    write(os.path.join(venv, "share", "jupyter", "lab", "settings", "overrides.json"),
          json.dumps({"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}},
                     indent=2))
    home = os.path.join(instructor.pw_dir, ".jupyter")
    write(os.path.join(home, "nbgrader_config.py"),
          "# Written by hub/deploy.py: where the instructor's course folder is.\n"
          "c = get_config()  # noqa: F821\n"
          f"c.CourseDirectory.root = {course_folder!r}\n", owner=instructor)
    write(os.path.join(home, "jupyter_server_config.json"),
          json.dumps({"ServerApp": {"jpserver_extensions": {e: True for e in INSTRUCTOR_SERVER_EXTENSIONS}}}, indent=2),
          owner=instructor)
    write(os.path.join(home, "labconfig", "page_config.json"),
          json.dumps({"disabledExtensions": {p: False for p in INSTRUCTOR_PLUGINS}}, indent=2), owner=instructor)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prefix", default="/opt/rnn-course-hub", help="where the hub's files go")
    parser.add_argument("--venv", default=None, help="the hub's Python environment (default PREFIX/venv)")
    parser.add_argument("--python", default="/usr/bin/python3", help="a Python every user can run")
    parser.add_argument("--instructor", default="instructor")
    parser.add_argument("--students", default="student1,student2",
                        help="comma-separated user names, each optionally with the student's full name: "
                             "ana:Ana Lima,bo:Bo Chen (formgrader lists students by name)")
    parser.add_argument("--home-root", default="/home", help="where new users' homes are made")
    parser.add_argument("--course-folder", default="rnn-course", help="the course folder, in the instructor's home")
    parser.add_argument("--refresh-course", action="store_true", help="copy this repository over the course folder again")
    parser.add_argument("--ip", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8000, help="the hub's public port")
    parser.add_argument("--hub-port", type=int, default=8081, help="the hub's own API port (local)")
    parser.add_argument("--proxy-api-port", type=int, default=8001, help="the proxy's API port (local)")
    parser.add_argument("--start", action="store_true", help="then start the hub (in the foreground)")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        sys.exit("hub/deploy.py makes users and runs their servers: run it as root (sudo make hub)")
    os.umask(0o022)
    prefix = os.path.abspath(args.prefix)
    venv = os.path.abspath(args.venv or os.path.join(prefix, "venv"))
    state = os.path.join(prefix, "state")
    os.makedirs(state, exist_ok=True)
    os.chmod(prefix, 0o755)
    os.chmod(state, 0o700)
    debian_packages(args.python)
    environment(venv, args.python)
    proxy(prefix)

    exchange = os.path.join(prefix, "exchange")
    os.makedirs(exchange, exist_ok=True)
    os.chmod(exchange, 0o1777)   # nbgrader: everybody writes; sticky: nobody removes another's folder
    passwords_file = os.path.join(state, "passwords.json")
    passwords = json.load(open(passwords_file)) if os.path.isfile(passwords_file) else {}
    named = parse_students(args.students)
    students = [name for name, _ in named]
    instructor = user(args.instructor, args.home_root, passwords)
    entries = [user(name, args.home_root, passwords, full_name) for name, full_name in named]
    write(passwords_file, json.dumps(passwords, indent=2), mode=0o600)
    course_folder = os.path.join(instructor.pw_dir, args.course_folder)
    course(instructor, course_folder, venv, args.refresh_course)
    jupyter_settings(venv, exchange, instructor, course_folder)
    gradebook_students(instructor, course_folder, venv, entries)
    feedback_link(venv)
    settings = {"prefix": prefix, "venv": venv, "proxy": os.path.join(prefix, "proxy", "node_modules", ".bin",
                                                                       "configurable-http-proxy"),
                "state": state, "instructor": args.instructor, "students": students, "ip": args.ip,
                "port": args.port, "hub_port": args.hub_port, "proxy_api_port": args.proxy_api_port,
                "course_folder": course_folder}
    write(os.path.join(prefix, "hub.json"), json.dumps(settings, indent=2))
    say(f"ready: {len(students)} students, instructor {args.instructor}, course folder {course_folder}")
    say(f"passwords: {passwords_file} (root only)")
    if args.start:
        start(settings)


def hub_command(settings):
    return [os.path.join(settings["venv"], "bin", "jupyterhub"), "-f", os.path.join(HUB, "jupyterhub_config.py")]


def start(settings):
    say(f"starting JupyterHub on http://{settings['ip']}:{settings['port']}/ (formgrader: "
        f"/user/{settings['instructor']}/formgrader); Ctrl-C stops it")
    env = dict(os.environ, RNN_COURSE_HUB=settings["prefix"])
    os.chdir(settings["state"])
    os.execve(hub_command(settings)[0], hub_command(settings), env)


if __name__ == "__main__":
    main()
