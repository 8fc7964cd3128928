"""What the course's assignments share: the template of their notebooks' utilities (utils.py,
written beside each notebook as <id>_utils.py with its title). Not an assignment: it has no
source/ folder."""
