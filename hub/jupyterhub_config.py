# JupyterHub's configuration for the course (docs/hub.md). hub/deploy.py sets the machine up and
# writes PREFIX/hub.json, which this file reads; RNN_COURSE_HUB names PREFIX (default
# /opt/rnn-course-hub). Start it with `make hub`, or:
#   RNN_COURSE_HUB=/opt/rnn-course-hub /opt/rnn-course-hub/venv/bin/jupyterhub -f hub/jupyterhub_config.py
import json
import os

from tornado.web import RedirectHandler

c = get_config()  # noqa: F821

PREFIX = os.environ.get("RNN_COURSE_HUB", "/opt/rnn-course-hub")
with open(os.path.join(PREFIX, "hub.json"), encoding="utf-8") as f:
    hub = json.load(f)
STATE, VENV = hub["state"], hub["venv"]

# Where it listens. Behind HTTPS in a real course: see docs/hub.md (ssl_cert/ssl_key, or a
# reverse proxy terminating TLS in front of this address).
c.JupyterHub.bind_url = f"http://{hub['ip']}:{hub['port']}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{hub['hub_port']}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{hub['proxy_api_port']}"
c.ConfigurableHTTPProxy.command = [hub["proxy"]]
c.ConfigurableHTTPProxy.pid_file = os.path.join(STATE, "jupyterhub-proxy.pid")
c.JupyterHub.db_url = "sqlite:///" + os.path.join(STATE, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(STATE, "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = os.path.join(STATE, "jupyterhub.pid")

# Who: the machine's own users, by their passwords (PAM, JupyterHub's default authenticator);
# the instructor is the hub's administrator.
c.Authenticator.allowed_users = {hub["instructor"], *hub["students"]}
c.Authenticator.admin_users = {hub["instructor"]}

# Each user's JupyterLab runs as that user (JupyterHub's LocalProcessSpawner), from the one
# environment the course is installed in, its commands (nbgrader, python -m assignments)
# first in PATH. Its terminals keep them first too: their shell, a login shell that sets PATH
# anew, puts them back (ServerApp.terminado_settings, written by hub/deploy.py).
c.Spawner.cmd = [os.path.join(VENV, "bin", "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.environment = {"PATH": os.path.join(VENV, "bin") + ":/usr/local/bin:/usr/bin:/bin"}
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 90

# formgrader's links to the course's folders (an assignment's name, Preview) are nbgrader's
# `/tree/PATH`, `/notebooks/PATH` or `/edit/PATH` at the root of the site, without the user's
# prefix /user/NAME/: right for a lone Jupyter server, a 404 on a hub (nbgrader's formgrader,
# static/js/utils.js linkTo, when formgrader is open in its own tab). The proxy sends them
# to the hub, which sends them on to the same page of the signed-in user's server
# (JupyterHub's /hub/user-redirect/).
c.JupyterHub.extra_handlers = [
    (r"/(tree|notebooks|edit)(/.*|)", RedirectHandler, {"url": "/hub/user-redirect/{0}{1}", "permanent": False}),
]
