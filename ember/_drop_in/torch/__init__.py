"""`import torch` in a child process of `python -m ember.run` (see ember/run.py): the child
inherits the parent's sys.path, which lists this folder ahead of site-packages, so this file
runs instead of a real torch and hands the child ember's module, with the hook installed."""
from ember.run import stand_in

stand_in(__name__)
