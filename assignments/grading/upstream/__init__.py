"""Everything that relies on the internals of nbgrader, nbconvert, nbclient, jupyter_client
or IPython: faster or stricter versions of their steps, and code copied from them.
fingerprints.json records the versions and a hash of each upstream body relied on
(tests/test_rooms.py names what changed after an upgrade); configure() in this package
switches every piece back to stock nbgrader (nbgrader_config.py's STOCK_NBGRADER)."""
